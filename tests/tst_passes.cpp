// The basic passes, each proven on graphs built in code: op counts after the pass, numeric
// equality of the outputs before/after (several seeds and batch sizes), and the cases where a
// rule must not fire.

#include "ir/dependencies.h"
#include "passes/passutil.h"
#include "passes/passdocs.h"
#include "passes/registry.h"
#include "passtest.h"
#include "testsupport.h"

#include <QTest>
#include <set>

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


// A branch graph from nodes; its outputs are float with the shape left to inference.
onnx::GraphProto body(const std::string &name, const std::vector<onnx::NodeProto> &nodes,
                      const std::vector<std::string> &outputs)
{
    onnx::GraphProto g;
    g.set_name(name);
    for (const onnx::NodeProto &n : nodes)
        *g.add_node() = n;
    for (const std::string &out : outputs) {
        *g.add_output() = tensorInfo(out, F, {});
        g.mutable_output(g.output_size() - 1)->mutable_type()->mutable_tensor_type()->clear_shape();
    }
    return g;
}

onnx::NodeProto ifNode(const std::string &cond, const std::string &out, const onnx::GraphProto &thenG,
                       const onnx::GraphProto &elseG)
{
    onnx::NodeProto n = node("If", {cond}, {out});
    *n.add_attribute() = graphAttr("then_branch", thenG);
    *n.add_attribute() = graphAttr("else_branch", elseG);
    return n;
}

onnx::AttributeProto tensorValue(const onnx::TensorProto &t)
{
    onnx::AttributeProto a;
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    *a.mutable_t() = t;
    return a;
}

// Three levels of If below the main graph whose branches read, from one, two and three levels up:
// an initializer (W) and its duplicate (Wdup, read only down there), a Constant node's output, a
// value computed in an intermediate branch (m1), a graph input, a top-level node nothing up there
// reads (dead), a dead node whose input only a branch reads otherwise (Neg(Wdup)), and a MatMul
// output a fusion would like to swallow (mm). The same x·x and x+W
// appear at the top and down in the branches (their rewrites pick the same names per graph), and
// an If on a constant condition in the first branch reads values of two levels.
Model nestedCaptures()
{
    onnx::NodeProto constant = node("Constant", {}, {"/Constant_output_0"});
    *constant.add_attribute() = tensorValue(floatTensor("", {2, 3}, {0.5f, -1.0f, 2.0f, 0.25f, -0.5f, 1.5f}));
    onnx::NodeProto yes = node("Constant", {}, {"yes"});
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::BOOL);
    t.add_int32_data(1);
    *yes.add_attribute() = tensorValue(t);

    const onnx::GraphProto l3 = body("l3",
                                     {node("Add", {"W", "/Constant_output_0"}, {"a3"}),
                                      node("Add", {"a3", "m1"}, {"b3"}), node("Add", {"b3", "dead"}, {"c3"}),
                                      node("Mul", {"c3", "c3"}, {"e3"}), node("Mul", {"e3", "Wdup"}, {"f3"}),
                                      node("Add", {"f3", "x"}, {"l3_out"})},
                                     {"l3_out"});
    const onnx::GraphProto l3e = body("l3e", {node("Neg", {"m1"}, {"l3e_out"})}, {"l3e_out"});
    const onnx::GraphProto l2 = body("l2",
                                     {node("Mul", {"m1", "mm"}, {"m2"}), node("Not", {"flag"}, {"nf"}),
                                      ifNode("nf", "r2", l3, l3e), node("Add", {"r2", "m2"}, {"l2_out"})},
                                     {"l2_out"});
    const onnx::GraphProto l2e = body("l2e", {node("Add", {"mm", "m1"}, {"l2e_out"})}, {"l2e_out"});
    const onnx::GraphProto k = body("k", {node("Add", {"m1", "/Constant_output_0"}, {"k_out"})}, {"k_out"});
    const onnx::GraphProto ke = body("ke", {node("Neg", {"m1"}, {"ke_out"})}, {"ke_out"});
    const onnx::GraphProto l1 = body("l1",
                                     {node("Add", {"x", "W"}, {"m1"}), yes, ifNode("yes", "kk", k, ke),
                                      ifNode("flag", "r1", l2, l2e), node("Add", {"r1", "kk"}, {"l1_out"})},
                                     {"l1_out"});
    const onnx::GraphProto l1e = body("l1e", {node("Sub", {"x", "/Constant_output_0"}, {"l1e_out"})}, {"l1e_out"});

    ModelBuilder b;
    b.input("x", {2, 3}).input("flag", {}, 9);
    b.randomConstant("W", {2, 3}).randomConstant("Wdup", {2, 3}).randomConstant("W33", {3, 3}).randomConstant("bias", {3});
    // Wdup: the same bytes as W under another name.
    *b.proto().mutable_graph()->mutable_initializer(1) = b.proto().graph().initializer(0);
    b.proto().mutable_graph()->mutable_initializer(1)->set_name("Wdup");
    *b.proto().mutable_graph()->add_node() = constant;
    b.op("Mul", {"x", "x"}, {"sq"})
        .op("Mul", {"x", "W"}, {"dead"})
        .op("Neg", {"Wdup"}, {"unused"}) // truly dead; Wdup is read only three levels down
        .op("MatMul", {"x", "W33"}, {"mm"})
        .op("Add", {"mm", "bias"}, {"mmb"})
        .op("Add", {"x", "W"}, {"same_top"});
    *b.proto().mutable_graph()->add_node() = ifNode("flag", "r", l1, l1e);
    b.op("Add", {"r", "sq"}, {"t"}).op("Add", {"t", "mmb"}, {"t2"}).op("Add", {"t2", "same_top"}, {"y"}).output("y");
    return b.build();
}
} // namespace

class TestPasses : public QObject
{
    Q_OBJECT

private slots:
    void everyPassDocumentsItself()
    {
        // The app's tooltip and "What does this pass do" panel read the pass header's opening
        // comment (generated at build time): a pass without one would show an empty panel.
        for (const passes::PassInfo &info : passes::builtinPasses()) {
            const std::string_view doc = passes::passDocumentation(info.name);
            QVERIFY2(doc.find(info.name) != std::string_view::npos, info.name.c_str());
            const std::string summary = passes::passSummary(info.name);
            QVERIFY2(summary.size() > info.name.size() + 10 && summary.find('\n') == std::string::npos,
                     info.name.c_str());
        }
        QVERIFY(passes::passDocumentation("no-such-pass").empty());
        QVERIFY(passes::passDocumentation("hardswish-fusion").find("──► HardSwish") != std::string_view::npos);
    }

    void constantFoldingRecordsWhatItFolded()
    {
        // The passes panel's Matches column and Next match count folded nodes (it said 0 once).
        Model m = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        const ValueId c = *m.graph.createValue("shape_of_input");
        (void)m.graph.addNode("Shape", {m.graph.inputs()[0]}, {c}, {}, "shape_node");
        const passes::PipelineResult r = passes::runPipeline(m, {"constant-folding"}, {});
        QVERIFY(r.status);
        QCOMPARE(r.passes.size(), std::size_t(1));
        QVERIFY(r.passes[0].changed);
        QCOMPARE(r.passes[0].changes.matches.size(), std::size_t(1));
        QCOMPARE(r.passes[0].changes.matches[0].matchedNames, std::vector<std::string>{"shape_node"});
    }

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
        // What it did is counted (the passes panel said 0 matches on a changed step once).
        const auto &matches = o.result.passes[0].changes.matches;
        QCOMPARE(matches.size(), std::size_t(1));
        QCOMPARE(matches[0].rule, std::string("If with a constant condition → its branch"));
        QCOMPARE(matches[0].graphPath, std::string());
    }

    void constantPropagationRecordsWhatItCarriedIntoBodies()
    {
        // An outer weight a branch reads becomes the branch's constant, and folds there.
        onnx::GraphProto thenG = branch("then", "Neg", "W", "t");
        const onnx::GraphProto elseG = branch("else", "Relu", "x", "e");
        ModelBuilder b = unary({2, 4});
        b.input("cond", {}, 9)
            .randomConstant("W", {2, 4})
            .op("If", {"cond"}, {"y"}, {graphAttr("then_branch", thenG), graphAttr("else_branch", elseG)})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"constant-propagation"});
        QVERIFY(o.result.passes[0].changed);
        std::set<std::pair<std::string, std::string>> seen; // (graph path, rule)
        for (const passes::PatternMatch &m : o.result.passes[0].changes.matches)
            seen.emplace(m.graphPath, m.rule);
        QVERIFY(seen.count({"", "outer constants carried into the body"}));
        bool foldedInBody = false;
        for (const auto &[path, rule] : seen)
            foldedInBody = foldedInBody || path.ends_with("/then_branch");
        QVERIFY2(foldedInBody, "the Neg folded inside the branch is not recorded with its graph path");
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

    // Every pass over branches that read values of one, two and three enclosing levels: the verifier
    // stays clean, the outputs equal, and the saved model passes onnx::checker (no name shadows an
    // enclosing one). Before: constant-folding and -propagation dropped Constant outputs only
    // branches read, CSE merged Wdup away, DCE dropped W with its dead reader, matmul-add-fusion
    // swallowed mm, algebraic-simplification reused the top graph's names in a branch.
    void multiLevelCaptures_data()
    {
        QTest::addColumn<QStringList>("passes");
        for (const char *p : {"constant-folding", "constant-propagation", "common-subexpression-elimination",
                              "dead-code-elimination", "redundant-node-elimination", "algebraic-simplification",
                              "matmul-add-fusion", "elementwise-forward", "eltwise-fusion"})
            QTest::newRow(p) << QStringList{p};
        for (const char *level : {"basic", "extended", "all"}) {
            passes::PipelineSpec spec;
            spec.level = level;
            QStringList list;
            const std::vector<std::string> names = passes::resolvePipeline(spec).value();
            for (const std::string &p : names)
                list << QString::fromStdString(p);
            QTest::newRow(level) << list;
        }
    }
    void multiLevelCaptures()
    {
        QFETCH(QStringList, passes);
        std::vector<std::string> list;
        for (const QString &p : passes)
            list.push_back(p.toStdString());
        const Model m = nestedCaptures();
        const PassOutcome o = runAndCompare(m, list, {1}, {1, 2, 3, 4, 5, 7});
        QVERIFY(o.compared);
        const std::vector<std::string> findings = checkerFindings(o.after);
        QVERIFY2(findings.empty(), findings.empty() ? "" : findings.front().c_str());
    }

    void readBySubgraphLooksAtEveryDepth()
    {
        const Model m = nestedCaptures();
        const Graph &g = m.graph;
        for (const char *name : {"W", "Wdup", "/Constant_output_0", "dead", "mm", "x"})
            QVERIFY2(readBySubgraph(g, g.findValue(name)), name);
        for (const char *name : {"sq", "mmb", "same_top", "W33"})
            QVERIFY2(!readBySubgraph(g, g.findValue(name)), name);
        QVERIFY(passes::keepsName(g, g.findValue("dead")));
        QVERIFY(!passes::isUnread(g, g.findValue("Wdup")));
        QVERIFY(!passes::hasSingleUse(g, g.findValue("mm"))); // the Add reads it, and a branch
    }
};

QTEST_GUILESS_MAIN(TestPasses)
#include "tst_passes.moc"
