// The basic passes, each proven on graphs built in code: op counts after the pass, numeric
// equality of the outputs before/after (several seeds and batch sizes), and the cases where a
// rule must not fire.

#include "passes/passutil.h"
#include "passtest.h"
#include "testsupport.h"

#include <QTest>

using namespace opscope;
using namespace opscope::test;

namespace {

const int F = 1; // TensorProto FLOAT

// x[N,4] → <ops> → y; the caller adds the nodes between.
ModelBuilder unary(const std::vector<std::int64_t> &dims = {-1, 4})
{
    ModelBuilder b;
    b.input("x", dims);
    return b;
}

// A one-node If branch: out = op(input), output type float with shape left to inference.
onnx::GraphProto branch(const std::string &name, const std::string &op, const std::string &input,
                        const std::string &out)
{
    onnx::GraphProto g;
    g.set_name(name);
    *g.add_node() = node(op, {input}, {out});
    *g.add_output() = tensorInfo(out, F, {});
    g.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    return g;
}

} // namespace

class TestPasses : public QObject
{
    Q_OBJECT

private slots:
    void constantFoldingEvaluatesConstantSubgraphs()
    {
        ModelBuilder b = unary({-1, 3});
        b.randomConstant("W", {4, 3})
            .op("Transpose", {"W"}, {"Wt"})
            .op("Neg", {"Wt"}, {"Wn"})
            .op("MatMul", {"x", "Wn"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"constant-folding"});
        QCOMPARE(opCount(o.opsAfter, "Transpose"), 0);
        QCOMPARE(opCount(o.opsAfter, "Neg"), 0);
        QCOMPARE(opCount(o.opsAfter, "MatMul"), 1);
        QVERIFY(o.result.passes[0].changed);
    }

    void constantFoldingFoldsStaticShapes()
    {
        // Reshape(x, Concat(Gather(Shape(x), 0), [-1])) with x[2,3,4] static → constant shape.
        ModelBuilder b = unary({2, 3, 4});
        b.intConstant("zero", {1}, {0})
            .intConstant("minus1", {1}, {-1})
            .op("Shape", {"x"}, {"s"})
            .op("Gather", {"s", "zero"}, {"d0"})
            .op("Concat", {"d0", "minus1"}, {"shape"}, {intAttr("axis", 0)})
            .op("Reshape", {"x", "shape"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"constant-folding"}, {1});
        QCOMPARE(o.after.graph.nodeCount(), std::size_t(1));
        QCOMPARE(opCount(o.opsAfter, "Reshape"), 1);
    }

    void constantFoldingKeepsKnownDimsOfDynamicShapes()
    {
        // x[N,8]: Gather(Shape(x), 1) is 8 even though N is symbolic.
        ModelBuilder b = unary({-1, 8});
        b.intConstant("one", {}, {1})
            .op("Shape", {"x"}, {"s"})
            .op("Gather", {"s", "one"}, {"c"})
            .op("Cast", {"c"}, {"cf"}, {intAttr("to", F)})
            .op("Mul", {"x", "cf"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"constant-folding", "dead-code-elimination"});
        QCOMPARE(opCount(o.opsAfter, "Shape"), 0);
        QCOMPARE(o.after.graph.nodeCount(), std::size_t(1));
    }

    void constantFoldingRespectsTheSizeCap()
    {
        // ConstantOfShape to 64 Mi floats (256 MiB) must stay a node.
        ModelBuilder b = unary({1});
        b.intConstant("big", {1}, {64 << 20})
            .op("ConstantOfShape", {"big"}, {"z"})
            .op("ReduceSum", {"z"}, {"s"}, {intAttr("keepdims", 1)})
            .op("Add", {"x", "s"}, {"y"})
            .output("y");
        Model m = b.build();
        passes::PipelineOptions options;
        options.verify = true;
        const passes::PipelineResult r = passes::runPipeline(m, {"constant-folding"}, options);
        QVERIFY(r.status.isOk());
        QCOMPARE(opCount(countOps(m), "ConstantOfShape"), 1);
    }

    void constantFoldingTurnsConstantNodesIntoInitializers()
    {
        ModelBuilder b = unary({-1, 2});
        onnx::AttributeProto value;
        value.set_name("value");
        value.set_type(onnx::AttributeProto::TENSOR);
        *value.mutable_t() = floatTensor("", {2}, {1.5f, -2.0f});
        b.op("Constant", {}, {"c"}, {value}).op("Mul", {"x", "c"}, {"y"}).output("y");
        const PassOutcome o = runAndCompare(b.build(), {"constant-folding"});
        QCOMPARE(o.after.graph.nodeCount(), std::size_t(1));
        QVERIFY(o.after.graph.value(o.after.graph.findValue("c")).initializer.has_value());
    }

    void constantFoldingSkipsRandomAndQdqOps()
    {
        ModelBuilder b = unary({-1, 4});
        b.randomConstant("w", {4})
            .constant("scale", {}, {0.05f})
            .intConstant("zp", {}, {0})
            .op("QuantizeLinear", {"w", "scale"}, {"q"})
            .op("DequantizeLinear", {"q", "scale"}, {"dq"})
            .op("Add", {"x", "dq"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"constant-folding"});
        QCOMPARE(opCount(o.opsAfter, "QuantizeLinear"), 1);
        QCOMPARE(opCount(o.opsAfter, "DequantizeLinear"), 1);
    }

    void constantPropagationInlinesIfOnConstantCondition()
    {
        const onnx::GraphProto thenG = branch("then", "Relu", "x", "t"),
                               elseG = branch("else", "Neg", "x", "e");
        ModelBuilder b = unary({-1, 4});
        auto *c = b.proto().mutable_graph()->add_initializer();
        c->set_name("cond");
        c->set_data_type(onnx::TensorProto::BOOL);
        c->add_int32_data(1);
        b.op("If", {"cond"}, {"y"}, {graphAttr("then_branch", thenG), graphAttr("else_branch", elseG)})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"constant-propagation", "dead-code-elimination"});
        QCOMPARE(opCount(o.opsAfter, "If"), 0);
        QCOMPARE(opCount(o.opsAfter, "Relu"), 1);
        QCOMPARE(opCount(o.opsAfter, "Neg"), 0);
        QCOMPARE(o.after.graph.value(o.after.graph.outputs()[0]).name, std::string("y"));
    }

    void valuesReadBySubgraphsKeepTheirNames()
    {
        // Silero VAD's shape: a value the If branches read by name sits behind a removable node.
        const onnx::GraphProto thenG = branch("then", "Sigmoid", "r", "t"),
                               elseG = branch("else", "Neg", "r", "e");
        ModelBuilder b = unary({-1, 4});
        b.input("cond", {}, 9)
            .op("Relu", {"x"}, {"a"})
            .op("Identity", {"a"}, {"r"})
            .op("If", {"cond"}, {"y"}, {graphAttr("then_branch", thenG), graphAttr("else_branch", elseG)})
            .output("y");
        const PassOutcome o =
            runAndCompare(b.build(), {"redundant-node-elimination", "dead-code-elimination"});
        QCOMPARE(opCount(o.opsAfter, "Identity"), 0);
        QVERIFY(o.after.graph.producer(o.after.graph.findValue("r")).valid()); // the Relu now produces "r"
    }

    void deadCodeEliminationRemovesUnreachableNodesAndWeights()
    {
        ModelBuilder b = unary();
        b.randomConstant("unused", {4})
            .randomConstant("w", {4})
            .op("Relu", {"x"}, {"y"})
            .op("Mul", {"x", "w"}, {"dead1"})
            .op("Sigmoid", {"dead1"}, {"dead2"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"dead-code-elimination"});
        QCOMPARE(o.after.graph.nodeCount(), std::size_t(1));
        QVERIFY(o.after.graph.initializers().empty());
        QCOMPARE(o.after.graph.inputs().size(), std::size_t(1)); // the interface stays
    }

    void commonSubexpressionEliminationMergesDuplicates()
    {
        ModelBuilder b = unary();
        b.constant("one", {}, {1.0f})
            .constant("one_again", {}, {1.0f})
            .op("Add", {"x", "one"}, {"a"})
            .op("Add", {"x", "one_again"}, {"b"})
            .op("Relu", {"a"}, {"ra"})
            .op("Relu", {"b"}, {"rb"})
            .op("Mul", {"ra", "rb"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"common-subexpression-elimination"});
        QCOMPARE(opCount(o.opsAfter, "Add"), 1);
        QCOMPARE(opCount(o.opsAfter, "Relu"), 1);
        QCOMPARE(o.after.graph.initializers().size(), std::size_t(1));
    }

    void commonSubexpressionEliminationLeavesRandomOps()
    {
        ModelBuilder b = unary();
        b.op("RandomUniformLike", {"x"}, {"r1"})
            .op("RandomUniformLike", {"x"}, {"r2"})
            .op("Sub", {"r1", "r2"}, {"y"})
            .output("y");
        Model m = b.build();
        const passes::PipelineResult r = passes::runPipeline(m, {"common-subexpression-elimination"});
        QVERIFY(r.status.isOk());
        QCOMPARE(opCount(countOps(m), "RandomUniformLike"), 2);
    }

    void redundantNodes_data()
    {
        // x is Relu(input), so what remains is always one node more than the rule leaves.
        QTest::addColumn<QString>("build"); // which graph (see redundantNodes)
        QTest::addColumn<int>("nodesAfter");
        for (const char *c : {"identity", "dropout", "cast-same", "concat-single", "reshape-same",
                              "slice-full", "pad-zero", "transpose-identity", "tile-one", "pool-1x1",
                              "transpose-cancel", "cast-roundtrip", "squeeze-unsqueeze"})
            QTest::newRow(c) << QString(c) << 1;
        QTest::newRow("transpose-merge") << QString("transpose-merge") << 3;
        QTest::newRow("reshape-reshape") << QString("reshape-reshape") << 3;
        QTest::newRow("concat-slice") << QString("concat-slice") << 2;
        QTest::newRow("reshape-after-pool") << QString("reshape-after-pool") << 2;
        // Must not fire:
        QTest::newRow("cast-lossy-roundtrip") << QString("cast-lossy-roundtrip") << 4;
        QTest::newRow("slice-reverse") << QString("slice-reverse") << 2;
        QTest::newRow("dropout-mask-used") << QString("dropout-mask-used") << 2;
    }

    void redundantNodes()
    {
        QFETCH(QString, build);
        QFETCH(int, nodesAfter);
        const std::string c = build.toStdString();
        ModelBuilder b;
        b.input("input", {-1, 4, 6}).op("Relu", {"input"}, {"x"});
        const std::string last = "r";
        if (c == "identity")
            b.op("Identity", {"x"}, {"r"});
        else if (c == "dropout")
            b.op("Dropout", {"x"}, {"r"});
        else if (c == "dropout-mask-used") // the mask is an output: the Dropout must stay
            b.op("Dropout", {"x"}, {"r", "mask"}).output("mask", 9);
        else if (c == "cast-same")
            b.op("Cast", {"x"}, {"r"}, {intAttr("to", F)});
        else if (c == "concat-single")
            b.op("Concat", {"x"}, {"r"}, {intAttr("axis", 1)});
        else if (c == "reshape-same")
            b.intConstant("s", {3}, {0, 4, 6}).op("Reshape", {"x", "s"}, {"r"});
        else if (c == "slice-full")
            b.intConstant("st", {1}, {0})
                .intConstant("en", {1}, {100})
                .intConstant("ax", {1}, {2})
                .op("Slice", {"x", "st", "en", "ax"}, {"r"});
        else if (c == "slice-reverse")
            b.intConstant("st", {1}, {-1})
                .intConstant("en", {1}, {-100})
                .intConstant("ax", {1}, {2})
                .intConstant("sp", {1}, {-1})
                .op("Slice", {"x", "st", "en", "ax", "sp"}, {"r"});
        else if (c == "pad-zero")
            b.intConstant("p", {6}, {0, 0, 0, 0, 0, 0}).op("Pad", {"x", "p"}, {"r"});
        else if (c == "transpose-identity")
            b.op("Transpose", {"x"}, {"r"}, {intsAttr("perm", {0, 1, 2})});
        else if (c == "tile-one")
            b.intConstant("rep", {3}, {1, 1, 1}).op("Tile", {"x", "rep"}, {"r"});
        else if (c == "pool-1x1")
            b.op("MaxPool", {"x"}, {"r"}, {intsAttr("kernel_shape", {1})});
        else if (c == "transpose-cancel")
            b.op("Transpose", {"x"}, {"t"}, {intsAttr("perm", {0, 2, 1})})
                .op("Transpose", {"t"}, {"r"}, {intsAttr("perm", {0, 2, 1})});
        else if (c == "transpose-merge")
            b.op("Transpose", {"x"}, {"t"}, {intsAttr("perm", {1, 0, 2})})
                .op("Transpose", {"t"}, {"t2"}, {intsAttr("perm", {0, 2, 1})})
                .op("Relu", {"t2"}, {"r"});
        else if (c == "cast-roundtrip")
            b.op("Cast", {"x"}, {"d"}, {intAttr("to", 11)}).op("Cast", {"d"}, {"r"}, {intAttr("to", F)});
        else if (c == "cast-lossy-roundtrip")
            b.op("Cast", {"x"}, {"h"}, {intAttr("to", 10)})
                .op("Cast", {"h"}, {"r0"}, {intAttr("to", F)})
                .op("Relu", {"r0"}, {"r"});
        else if (c == "squeeze-unsqueeze")
            b.intConstant("ax", {1}, {1})
                .op("Unsqueeze", {"x", "ax"}, {"u"})
                .op("Squeeze", {"u", "ax"}, {"r"});
        else if (c == "reshape-reshape")
            b.intConstant("s1", {2}, {-1, 24})
                .intConstant("s2", {3}, {-1, 6, 4})
                .op("Reshape", {"x", "s1"}, {"a"})
                .op("Reshape", {"a", "s2"}, {"r0"})
                .op("Relu", {"r0"}, {"r"});
        else if (c == "concat-slice")
            b.op("Relu", {"x"}, {"rx"})
                .op("Sigmoid", {"x"}, {"sx"})
                .op("Concat", {"rx", "sx"}, {"cat"}, {intAttr("axis", 2)})
                .intConstant("st", {1}, {6})
                .intConstant("en", {1}, {12})
                .intConstant("ax", {1}, {2})
                .op("Slice", {"cat", "st", "en", "ax"}, {"r"});
        else if (c == "reshape-after-pool")
            b.op("GlobalAveragePool", {"x"}, {"g"})
                .intConstant("s", {3}, {0, 4, 1})
                .op("Reshape", {"g", "s"}, {"r"});
        b.output(last);
        const PassOutcome o =
            runAndCompare(b.build(), {"redundant-node-elimination", "dead-code-elimination"});
        QCOMPARE(int(o.after.graph.nodeCount()), nodesAfter);
        // The output keeps its name whatever was removed in front of it.
        QVERIFY(o.after.graph.isGraphOutput(o.after.graph.findValue(last)));
    }

    void algebraicSimplification_data()
    {
        QTest::addColumn<QString>("build");
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("count");
        QTest::newRow("x*1") << "x*1"
                             << "Mul" << 0;
        QTest::newRow("1*x") << "1*x"
                             << "Mul" << 0;
        QTest::newRow("x+0") << "x+0"
                             << "Add" << 0;
        QTest::newRow("x-0") << "x-0"
                             << "Sub" << 0;
        QTest::newRow("x/1") << "x/1"
                             << "Div" << 0;
        QTest::newRow("x*x") << "x*x"
                             << "Pow" << 1;
        QTest::newRow("x*x*x") << "x*x*x"
                               << "Mul" << 0;
        QTest::newRow("neg-neg") << "neg-neg"
                                 << "Neg" << 0;
        QTest::newRow("reciprocal-reciprocal") << "recip-recip"
                                               << "Reciprocal" << 0;
        QTest::newRow("a*s+b*s") << "factor"
                                 << "Mul" << 1;
        QTest::newRow("x+neg(y)") << "add-neg"
                                  << "Sub" << 1;
        QTest::newRow("(x*c1)*c2") << "mul-chain"
                                   << "Mul" << 1;
        QTest::newRow("pow(x,1)") << "pow1"
                                  << "Pow" << 0;
        // Must not fire: the 1s broadcast x from [N,4] to [N,3,4].
        QTest::newRow("x*ones-broadcasting") << "x*ones-broadcast"
                                             << "Mul" << 1;
    }

    void algebraicSimplification()
    {
        QFETCH(QString, build);
        QFETCH(QString, op);
        QFETCH(int, count);
        const std::string c = build.toStdString();
        // x and z are computed, so removing what follows them leaves a node to carry the output name.
        ModelBuilder b;
        b.input("xin", {-1, 4}).input("zin", {-1, 4}).op("Relu", {"xin"}, {"x"}).op("Exp", {"zin"}, {"z"});
        b.constant("one", {}, {1.0f}).constant("zero", {1}, {0.0f}).randomConstant("s", {4});
        if (c == "x*1")
            b.op("Mul", {"x", "one"}, {"y"});
        else if (c == "1*x")
            b.op("Mul", {"one", "x"}, {"y"});
        else if (c == "x+0")
            b.op("Add", {"x", "zero"}, {"y"});
        else if (c == "x-0")
            b.op("Sub", {"x", "zero"}, {"y"});
        else if (c == "x/1")
            b.op("Div", {"x", "one"}, {"y"});
        else if (c == "x*x")
            b.op("Mul", {"x", "x"}, {"y"});
        else if (c == "x*x*x")
            b.op("Mul", {"x", "x"}, {"sq"}).op("Mul", {"sq", "x"}, {"y"});
        else if (c == "neg-neg")
            b.op("Neg", {"x"}, {"n"}).op("Neg", {"n"}, {"y"});
        else if (c == "recip-recip")
            b.op("Reciprocal", {"z"}, {"n"}).op("Reciprocal", {"n"}, {"y"});
        else if (c == "factor")
            b.op("Mul", {"x", "s"}, {"a"}).op("Mul", {"z", "s"}, {"bb"}).op("Add", {"a", "bb"}, {"y"});
        else if (c == "add-neg")
            b.op("Neg", {"z"}, {"n"}).op("Add", {"x", "n"}, {"y"});
        else if (c == "mul-chain")
            b.constant("c1", {}, {3.0f})
                .constant("c2", {}, {0.5f})
                .op("Mul", {"x", "c1"}, {"a"})
                .op("Mul", {"a", "c2"}, {"y"});
        else if (c == "pow1")
            b.op("Pow", {"x", "one"}, {"y"});
        else if (c == "x*ones-broadcast")
            b.constant("ones", {3, 1, 1}, {1, 1, 1}).op("Mul", {"x", "ones"}, {"y"});
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"algebraic-simplification", "dead-code-elimination"},
                                            {1, 3}, {1, 2, 7}, 1e-4, 1e-4);
        QCOMPARE(opCount(o.opsAfter, op.toStdString()), count);
    }
};

QTEST_GUILESS_MAIN(TestPasses)
#include "tst_passes.moc"
