// The runtime's probe (runtime/probe.h): the intermediate values of one run that the app's Values
// tab shows, asked for by name — in the main graph and inside If/Loop/Scan bodies — and what
// such values contradict in the model's declarations.
#include "runtime/probe.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QTest>

using namespace opscope;

Q_DECLARE_METATYPE(opscope::TypeInfo)

namespace {

RuntimeTensor floats(std::vector<std::int64_t> shape, std::vector<float> values)
{
    return RuntimeTensor::fromValues(DataType::Float, std::move(shape), values);
}

} // namespace

class TestProbe : public QObject
{
    Q_OBJECT
private slots:
    void probeKeepsTheValuesAskedFor()
    {
        // x → Add(bias) → sum → Relu → y: the intermediate `sum`, the input, the constant and the
        // output, in the order asked for, with the values a run computes.
        const Model model = test::modelOrFail(test::smallModel());
        ProbeOptions options;
        options.given = {{"x", floats({2, 3}, {-1, 0, 1, 2, 3, -4})}};
        const Expected<ProbedValues> r = probeValues(model, {"sum", "x", "bias", "y"}, options);
        QVERIFY2(r, r.status().message().c_str());
        QCOMPARE(r->values.size(), std::size_t(4));
        QCOMPARE(r->values[0].name, std::string("sum"));
        const std::vector<float> sum{-0.5f, -1, 3, 2.5f, 2, -2};
        for (std::size_t i = 0; i < sum.size(); ++i)
            QCOMPARE(r->values[0].as<float>()[i], sum[i]);
        QCOMPARE(r->values[1].as<float>()[0], -1.0f);  // the input as fed
        QCOMPARE(r->values[2].as<float>()[1], -1.0f);  // the constant
        QCOMPARE(r->values[3].as<float>()[2], 3.0f);   // the output
        QCOMPARE(model.graph.outputs().size(), std::size_t(1)); // the model itself is untouched
        // Random inputs when none are given; an unknown name is an error that names it.
        QVERIFY(probeValues(model, {"sum"}));
        const Expected<ProbedValues> bad = probeValues(model, {"nope"});
        QVERIFY(!bad);
        QVERIFY(bad.status().message().find("'nope'") != std::string::npos);
    }

    void probeSeesInsideBodies()
    {
        // If(c) { then: t1 = Relu(x), then_y = Neg(t1)   else: else_y = Sigmoid(x) }: a value of
        // the branch that ran is probed; one of the branch that did not is an error saying so.
        onnx::ModelProto m = test::smallModel();
        auto *g = m.mutable_graph();
        g->clear_node();
        g->clear_initializer();
        g->clear_output();
        *g->add_input() = test::tensorInfo("c", onnx::TensorProto::BOOL, {});
        onnx::NodeProto *ifNode = g->add_node();
        *ifNode = test::node("If", {"c"}, {"y"}, "if");
        test::addBody(*ifNode, "then_branch",
                      {test::node("Relu", {"x"}, {"t1"}, "relu"), test::node("Neg", {"t1"}, {"then_y"}, "neg")}, "then_y");
        test::addBody(*ifNode, "else_branch", {test::node("Sigmoid", {"x"}, {"else_y"}, "sigmoid")}, "else_y");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
        const Model model = test::modelOrFail(m);
        ProbeOptions options;
        options.given = {{"x", floats({2, 3}, {-1, 0, 1, 2, 3, -4})},
                         {"c", RuntimeTensor::fromValues(DataType::Bool, {}, std::vector<std::uint8_t>{1})}};
        const Expected<ProbedValues> r = probeValues(model, {"t1", "then_y", "x"}, options);
        QVERIFY2(r, r.status().message().c_str());
        const std::vector<float> relu{0, 0, 1, 2, 3, 0};
        for (std::size_t i = 0; i < relu.size(); ++i) {
            QCOMPARE(r->values[0].as<float>()[i], relu[i]);
            QCOMPARE(r->values[1].as<float>()[i], -relu[i]);
        }
        const Expected<ProbedValues> other = probeValues(model, {"else_y"}, options);
        QVERIFY(!other);
        QVERIFY2(other.status().message().find("did not run") != std::string::npos, other.status().message().c_str());
    }

    void computedValuesAgainstTheirDeclaration_data()
    {
        QTest::addColumn<TypeInfo>("declared");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("said"); // empty: nothing to say
        const auto declaredAs = [](std::vector<Dim> dims) {
            Shape shape;
            shape.dims = std::move(dims);
            return TypeInfo::tensor(DataType::Float, shape);
        };
        QTest::newRow("agrees") << declaredAs({Dim::known(2), Dim::symbolic("n")}) << int(DataType::Float) << QString();
        QTest::newRow("a fixed dim") << declaredAs({Dim::known(1), Dim::symbolic("n")}) << int(DataType::Float)
                                     << QStringLiteral("tensor 'v' is float32[2,5]; the model declares float32[1,n]");
        QTest::newRow("the rank") << declaredAs({Dim::known(10)}) << int(DataType::Float)
                                  << QStringLiteral("tensor 'v' is float32[2,5]; the model declares float32[10]");
        QTest::newRow("the element type") << declaredAs({Dim::known(2), Dim::known(5)}) << int(DataType::Int64)
                                          << QStringLiteral("tensor 'v' is int64[2,5]; the model declares float32[2,5]");
        QTest::newRow("one symbol, two sizes") << declaredAs({Dim::known(2), Dim::symbolic("m")}) << int(DataType::Float)
                                               << QStringLiteral("('m' is 5 here and 3 in tensor 'w')");
        QTest::newRow("rank unknown") << TypeInfo::tensor(DataType::Float) << int(DataType::Float) << QString();
        QTest::newRow("invented dims say nothing")
            << declaredAs({Dim::known(2), Dim::symbolic("unk__0")}) << int(DataType::Float) << QString();
    }
    void computedValuesAgainstTheirDeclaration()
    {
        QFETCH(TypeInfo, declared);
        QFETCH(int, dtype);
        QFETCH(QString, said);
        // `w` comes first and binds m = 3 (it agrees with its own declaration).
        Shape m;
        m.dims = {Dim::symbolic("m")};
        const TypeInfo w = TypeInfo::tensor(DataType::Float, m);
        const std::vector<ComputedValue> values{{"w", &w, DataType::Float, {3}},
                                                {"v", &declared, DataType(dtype), {2, 5}}};
        const std::vector<std::string> lines = declarationMismatches(values, "tensor");
        if (said.isEmpty()) {
            QVERIFY2(lines.empty(), lines.empty() ? "" : lines.front().c_str());
            return;
        }
        QCOMPARE(lines.size(), std::size_t(1));
        QVERIFY2(QString::fromStdString(lines[0]).contains(said), lines[0].c_str());
    }
};

QTEST_GUILESS_MAIN(TestProbe)
#include "tst_probe.moc"
