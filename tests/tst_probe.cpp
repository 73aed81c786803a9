// The runtime's probe (runtime/probe.h): the intermediate values of one run that the app's Values
// tab shows, asked for by name — in the main graph and inside If/Loop/Scan bodies.
#include "runtime/probe.h"
#include "testsupport.h"

#include <QTest>

using namespace opscope;

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
};

QTEST_GUILESS_MAIN(TestProbe)
#include "tst_probe.moc"
