// What the graph view draws, computed in core: scope grouping and topological blocks, the initial
// expansion budget, union presentations of two graphs, Graphviz layouts, name-based diffs, and the
// inspector's sections.

#include "ir/graphdiff.h"
#include "inspect/inspection.h"
#include "inspect/tensorvalues.h"
#include "layout/graphlayout.h"
#include "layout/layered.h"
#include "layout/sidelayout.h"
#include "layout/presentation.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <limits>

using namespace opscope;
using namespace opscope::layout;

Q_DECLARE_METATYPE(std::vector<float>)
Q_DECLARE_METATYPE(std::vector<std::int64_t>)

namespace {

ValueId add(Graph &g, const std::string &name, const std::string &op, std::vector<ValueId> inputs)
{
    const ValueId out = *g.createValue(name + ":0");
    (void)g.addNode(op, std::move(inputs), {out}, {}, name);
    return out;
}

// Two scoped layers of 5 nodes each, plus an unscoped head.
Graph scoped()
{
    Graph g("scoped");
    ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 4})));
    for (int l = 0; l < 2; ++l) {
        const std::string p = "/enc/layer." + std::to_string(l);
        const ValueId a = add(g, p + "/attn/MatMul", "MatMul", {x});
        const ValueId b = add(g, p + "/attn/Softmax", "Softmax", {a});
        const ValueId c = add(g, p + "/attn/MatMul_1", "MatMul", {b});
        const ValueId d = add(g, p + "/mlp/Gelu", "Gelu", {c});
        x = add(g, p + "/Add", "Add", {d, x});
    }
    g.setOutputs({add(g, "head", "Relu", {x})});
    return g;
}

Point box(const VisualItem &)
{
    return {80, 30};
}

} // namespace

class TestPresentation : public QObject
{
    Q_OBJECT

private slots:
    void groupsFollowNameScopes()
    {
        const Graph g = scoped();
        const Grouping grouping = Grouping::build({&g});
        QCOMPARE(grouping.groupOf("/enc/layer.0/attn/Softmax"), std::string("/enc/layer.0/attn"));
        QCOMPARE(grouping.groupOf("/enc/layer.1/mlp/Gelu"),
                 std::string("/enc/layer.1")); // /mlp has 1 node: no group
        QCOMPARE(grouping.groupOf("head"), std::string());
        QCOMPARE(grouping.parentOf("/enc/layer.0/attn"), std::string("/enc/layer.0"));
        QCOMPARE(grouping.size("/enc"), std::size_t(10));
        QCOMPARE(grouping.childGroups("/enc"), (std::vector<std::string>{"/enc/layer.0", "/enc/layer.1"}));

        // Everything closed: input, /enc, head, output.
        Presentation closed = present({&g}, grouping, {""});
        QCOMPARE(closed.items.size(), std::size_t(4));
        const VisualItem &enc = closed.items[closed.index.at("group:/enc")];
        QCOMPARE(enc.kind, VisualItem::Kind::Group);
        QCOMPARE(enc.members, std::size_t(10));
        // Edges between visible items only, once per tensor: x→/enc, /enc→head (the residual
        // from x into layer 0 is the same tensor into the same group), head→output.
        QCOMPARE(closed.edges.size(), std::size_t(3));

        // Open everything: every node is an item.
        Presentation open =
            present({&g}, grouping,
                    {"", "/enc", "/enc/layer.0", "/enc/layer.1", "/enc/layer.0/attn", "/enc/layer.1/attn"});
        QCOMPARE(open.items.size(), std::size_t(11 + 2));
        // A closed inner group names its layer: "attn" of layer.0 and of layer.1 differ.
        Presentation layers = present({&g}, grouping, {"", "/enc", "/enc/layer.0", "/enc/layer.1"});
        const VisualItem &attn0 = layers.items[layers.index.at("group:/enc/layer.0/attn")];
        QCOMPARE(attn0.title, std::string("attn"));
        QVERIFY2(attn0.subtitle.rfind("layer.0 · ", 0) == 0, attn0.subtitle.c_str());
        QVERIFY(closed.items[closed.index.at("group:/enc")].subtitle.rfind("10 nodes", 0) == 0); // no parent scope
        QCOMPARE(open.items[open.index.at("/enc/layer.0/attn/MatMul")].category, OpCategory::Compute);
    }

    void unscopedCrowdsBecomeTopologicalBlocks()
    {
        Graph g("chain");
        ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({4})));
        for (int i = 0; i < 1000; ++i)
            x = add(g, "n" + std::to_string(i), i % 2 ? "Relu" : "Add", {x});
        g.setOutputs({x});
        const Grouping grouping = Grouping::build({&g}, 100);
        QCOMPARE(grouping.childGroups("").size(), std::size_t(10));
        QCOMPARE(grouping.childGroups("").front(),
                 std::string("/[1–100]")); // topological order, not text order
        QCOMPARE(grouping.groupOf("n0"), std::string("/[1–100]"));
        QCOMPARE(grouping.groupOf("n999"), std::string("/[901–1000]"));
        const auto open = grouping.initialExpansion(250);
        const Presentation p = present({&g}, grouping, open);
        QVERIFY(p.items.size() <= 252);
        QVERIFY(open.count("/[1–100]")); // the top of the graph opens first
    }

    void unionOfTwoGraphsMarksPresence()
    {
        const Graph before = scoped();
        Graph after = scoped();
        after.removeNode(after.findNode("head"));
        const ValueId last = after.findValue("/enc/layer.1/Add:0");
        after.setOutputs({add(after, "head_sigmoid", "Sigmoid", {last})});
        const Grouping grouping = Grouping::build({&before, &after});
        const Presentation p = present({&before, &after}, grouping, grouping.initialExpansion(100));
        QCOMPARE(p.items[p.index.at("head")].presentIn, 1u);
        QCOMPARE(p.items[p.index.at("head_sigmoid")].presentIn, 2u);
        QCOMPARE(p.items[p.index.at("in:x")].presentIn, 3u);
        const GraphDiff d = diffGraphsByName(before, after);
        QCOMPARE(d.removed, (std::unordered_set<std::string>{"head"}));
        QCOMPARE(d.added, (std::unordered_set<std::string>{"head_sigmoid"}));
        QVERIFY(d.modified.empty());
    }

    void constantWeightsAreDrawnInsideTheirReaders()
    {
        // Paddle2ONNX writes weights as Constant nodes: each one would be a box of its own and
        // the first view rows of them. Drawn inside their readers, like initializers; a Constant
        // that is a graph output (or unread) stays an item.
        Graph g("paddle");
        const ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 3, 8, 8})));
        const ValueId w = *g.createValue("conv2d_0.w_0");
        g.value(w).type = TypeInfo::tensor(DataType::Float, Shape::fromSizes({4, 3, 3, 3}));
        (void)g.addNode("Constant", {}, {w}, {}, "conv2d_0.w_0_const");
        const ValueId y = add(g, "conv2d_0", "Conv", {x, w});
        const ValueId k = *g.createValue("kept");
        (void)g.addNode("Constant", {}, {k}, {}, "kept_const");
        g.setOutputs({y, k});
        const Grouping grouping = Grouping::build({&g});
        const Presentation p = present({&g}, grouping, grouping.initialExpansion(100));
        QVERIFY(!p.index.count("conv2d_0.w_0_const"));
        QVERIFY(p.index.count("kept_const"));
        const VisualItem &conv = p.items[p.index.at("conv2d_0")];
        QCOMPARE(conv.constants.size(), std::size_t(1));
        QCOMPARE(conv.constants[0], std::string("conv2d_0.w_0  float32[4,3,3,3]"));
        QCOMPARE(p.inlined.at("conv2d_0.w_0_const"), std::string("conv2d_0"));
        for (const VisualEdge &e : p.edges)
            QVERIFY(e.tensor != "conv2d_0.w_0"); // no edge from a box that is not drawn
    }

    void whatABodyCapturesIsReadByItsNode()
    {
        // x ─► Relu ─► r        If(c) { then: r · w   else: r }   (r and w read only inside)
        // The If reads r and the Constant w through its bodies: r gets an edge into the If, w is
        // drawn inside it, and neither floats as an unconnected box.
        onnx::ModelProto m = test::smallModel();
        auto *g = m.mutable_graph();
        g->clear_node();
        g->clear_initializer();
        g->clear_output();
        *g->add_input() = test::tensorInfo("c", onnx::TensorProto::BOOL, {});
        *g->add_node() = test::node("Relu", {"x"}, {"r"}, "relu");
        onnx::NodeProto *constant = g->add_node();
        *constant = test::node("Constant", {}, {"w"}, "w_const");
        auto *value = constant->add_attribute();
        value->set_name("value");
        value->set_type(onnx::AttributeProto::TENSOR);
        *value->mutable_t() = test::floatTensor("w", {2, 3}, std::vector<float>(6, 0.5f));
        onnx::NodeProto *ifNode = g->add_node();
        *ifNode = test::node("If", {"c"}, {"y"}, "if");
        test::addBody(*ifNode, "then_branch", {test::node("Mul", {"r", "w"}, {"then_y"}, "mul")}, "then_y");
        test::addBody(*ifNode, "else_branch", {test::node("Identity", {"r"}, {"else_y"}, "identity")}, "else_y");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("captures.onnx")).toStdString();
        test::writeProto(path, m);
        const Model model = test::loadOrFail(path).model;
        const Grouping grouping = Grouping::build({&model.graph});
        const Presentation p = present({&model.graph}, grouping, grouping.initialExpansion(100));
        QVERIFY(!p.index.count("w_const"));
        QCOMPARE(p.inlined.at("w_const"), std::string("if"));
        const VisualItem &ifItem = p.items[p.index.at("if")];
        QCOMPARE(ifItem.constants.size(), std::size_t(1));
        QVERIFY(ifItem.constants[0].starts_with("w  float32[2,3]"));
        bool relu = false;
        for (const VisualEdge &e : p.edges) {
            relu = relu || (e.from == p.index.at("relu") && e.to == p.index.at("if") && e.tensor == "r");
            QVERIFY(e.tensor != "w");
        }
        QVERIFY2(relu, "no edge from the producer of what the body captures");
        // Opened, the body draws what it captures as an input with the type it has outside
        // (the branch declares none for it).
        const Graph &then = *model.graph.node(model.graph.findNode("if")).attribute("then_branch")->g;
        const Grouping bodyGroups = Grouping::build({&then});
        const Presentation body = present({&then}, bodyGroups, bodyGroups.initialExpansion(100));
        const VisualItem &r = body.items[body.index.at("in:r")];
        QVERIFY(r.outerScope);
        QVERIFY2(r.subtitle == "float32[2,3] · from the enclosing graph", r.subtitle.c_str());
    }

    void aPassesNewNodesJoinTheBlockOfWhatTheyReplace()
    {
        // Unscoped names are grouped in topological blocks of the union of BEFORE and AFTER; a
        // node only AFTER has comes right after its predecessor, not at the end of the union.
        Graph before("chain"), after("chain");
        for (Graph *g : {&before, &after}) {
            ValueId x = g->addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({4})));
            for (int i = 0; i < 300; ++i)
                x = add(*g, (g == &after && i == 40) ? "n40_Fused" : "n" + std::to_string(i), "Relu", {x});
            g->setOutputs({x});
        }
        const Grouping grouping = Grouping::build({&before, &after});
        QCOMPARE(grouping.groupOf("n40_Fused"), grouping.groupOf("n39"));
        QVERIFY(grouping.groupOf("n39") != grouping.groupOf("n299"));
    }

    void renamedNodesAreMatchedByTensorIdentity()
    {
        // Original vs final after an export lowering: FusedConv(Relu) became Conv ──► Relu under
        // new names. The Relu writes the original's tensor, the Conv reads its activation (with
        // new, folded weights) and feeds the matched Relu; the Sigmoid really is new.
        Graph before("g"), after("g");
        for (Graph *g : {&before, &after}) {
            const ValueId x = g->addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 4})));
            const bool lowered = g == &after;
            const ValueId w = g->addInitializer(
                lowered ? "conv_W_folded" : "conv.weight",
                Tensor::fromValues(DataType::Float, {4, 4, 1, 1}, std::vector<float>(16, lowered ? 0.5f : 0.25f)));
            const ValueId c = add(*g, lowered ? "conv_FusedConv_Conv" : "conv", "Conv", {x, w});
            const ValueId r = *g->createValue("r");
            (void)g->addNode("Relu", {c}, {r}, {}, lowered ? "conv_FusedConv_Relu" : "relu");
            const ValueId y = add(*g, lowered ? "head_new" : "head", lowered ? "Sigmoid" : "Tanh", {r});
            g->setOutputs({y});
        }
        const auto same = matchRenamedNodes(before, after);
        QCOMPARE(same.size(), std::size_t(2));
        QCOMPARE(same.at("conv_FusedConv_Relu"), std::string("relu"));
        QCOMPARE(same.at("conv_FusedConv_Conv"), std::string("conv"));
        const GraphDiff d = diffGraphsByName(before, after, same);
        QCOMPARE(d.removed, (std::unordered_set<std::string>{"head"}));
        QCOMPARE(d.added, (std::unordered_set<std::string>{"head_new"}));
        // The Conv reads new (folded) weights: modified, listed under both names. The Relu only
        // reads its new tensor: the same node (being wired to a rewritten neighbour, or an
        // intermediate tensor's new name, is no change of its own).
        QVERIFY(d.modified.count("conv") && d.modified.count("conv_FusedConv_Conv"));
        QVERIFY(!d.modified.count("relu") && !d.modified.count("conv_FusedConv_Relu"));
    }

    // Constant folding turns Paddle2ONNX's Constant nodes into initializers sharing their buffers:
    // the Constants are removed, their readers are not "modified" (every reader of 340 Constants
    // showed amber in the step's diff). New weights still modify their reader.
    void constantNodesBecomingInitializersLeaveTheirReadersAlone()
    {
        const Tensor w = Tensor::fromValues(DataType::Float, {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
        Graph before("paddle");
        const ValueId x = before.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 3, 8, 8})));
        const ValueId wc = *before.createValue("conv2d_0.w_0");
        const NodeId c = *before.addNode("Constant", {}, {wc}, {}, "conv2d_0.w_0_const");
        before.node(c).attributes.push_back(Attribute::makeTensor("value", w));
        before.setOutputs({add(before, "conv2d_0", "Conv", {x, wc})});
        for (const bool sameWeights : {true, false}) {
            Graph after("paddle");
            const ValueId xa = after.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 3, 8, 8})));
            const ValueId wi = after.addInitializer(
                "conv2d_0.w_0",
                sameWeights ? w : Tensor::fromValues(DataType::Float, {4, 3, 3, 3}, std::vector<float>(108, 0.25f)));
            after.setOutputs({add(after, "conv2d_0", "Conv", {xa, wi})});
            const GraphDiff d = diffGraphsByName(before, after);
            QCOMPARE(d.removed, (std::unordered_set<std::string>{"conv2d_0.w_0_const"}));
            QCOMPARE(d.modified.count("conv2d_0"), std::size_t(sameWeights ? 0 : 1));
        }
    }

    // A model against its copy (two loads, or the same weights written again by another tool):
    // equal weights in other buffers. By buffer identity every node that read a weight — every
    // Conv, Gemm and BatchNormalization — showed "modified" against a byte-for-byte copy. Weights
    // are compared by content; a weight that does differ still modifies its reader, and so does a
    // weight of another shape holding the same bytes.
    void weightsAreComparedByContent_data()
    {
        QTest::addColumn<std::vector<float>>("afterValues");
        QTest::addColumn<std::vector<std::int64_t>>("afterDims");
        QTest::addColumn<bool>("modified");
        const std::vector<float> same(108, 0.5f);
        std::vector<float> oneDiffers = same;
        oneDiffers[107] = 0.25f;
        QTest::newRow("equal, another buffer") << same << std::vector<std::int64_t>{4, 3, 3, 3} << false;
        QTest::newRow("last value differs") << oneDiffers << std::vector<std::int64_t>{4, 3, 3, 3} << true;
        QTest::newRow("same bytes, other shape") << same << std::vector<std::int64_t>{3, 4, 3, 3} << true;
    }
    void weightsAreComparedByContent()
    {
        QFETCH(std::vector<float>, afterValues);
        QFETCH(std::vector<std::int64_t>, afterDims);
        QFETCH(bool, modified);
        const auto build = [](const Tensor &w, const Tensor &gamma) {
            Graph g("g");
            const ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 3, 8, 8})));
            const ValueId wv = g.addInitializer("conv.weight", w);
            const ValueId c = add(g, "conv", "Conv", {x, wv});
            const ValueId s = g.addInitializer("scale", gamma); // a Constant node's value in the other
            const ValueId y = *g.createValue("y");
            const NodeId m = *g.addNode("Mul", {c, s}, {y}, {}, "mul");
            g.node(m).attributes.push_back(Attribute::makeTensor("unused", gamma));
            g.setOutputs({y});
            return g;
        };
        const Graph before = build(Tensor::fromValues(DataType::Float, {4, 3, 3, 3}, std::vector<float>(108, 0.5f)),
                                   Tensor::fromValues(DataType::Float, {4}, std::vector<float>{1, 2, 3, 4}));
        const Graph after = build(Tensor::fromValues(DataType::Float, afterDims, afterValues),
                                  Tensor::fromValues(DataType::Float, {4}, std::vector<float>{1, 2, 3, 4}));
        const GraphDiff d = diffGraphsByName(before, after);
        QVERIFY(d.removed.empty() && d.added.empty());
        QCOMPARE(d.modified.count("conv"), std::size_t(modified ? 1 : 0));
        QVERIFY(!d.modified.count("mul")); // its weight and tensor attribute are equal copies
    }

    // An intermediate tensor named anew (an optimized file's "…_out0") is no change to the node
    // that writes it; a graph output named anew is: it is the model's interface.
    void aNewTensorNameModifiesOnlyAtTheInterface()
    {
        for (const bool output : {false, true}) {
            Graph before("g"), after("g");
            for (Graph *g : {&before, &after}) {
                const ValueId x = g->addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 4})));
                const ValueId h = *g->createValue(g == &after && !output ? "relu_out0" : "h");
                (void)g->addNode("Relu", {x}, {h}, {}, "relu");
                const ValueId y = *g->createValue(g == &after && output ? "y_out0" : "y");
                (void)g->addNode("Tanh", {h}, {y}, {}, "tanh");
                g->setOutputs({y});
            }
            const GraphDiff d = diffGraphsByName(before, after);
            QCOMPARE(d.modified.count("relu"), std::size_t(0));
            QCOMPARE(d.modified.count("tanh"), std::size_t(output ? 1 : 0));
        }
    }

    void valuesArePrintedAndSliced()
    {
        // Small tensors in full, nested by shape; int64 exact; half floats read as numbers.
        const Tensor shape = Tensor::fromValues(DataType::Int64, {3}, std::vector<std::int64_t>{1, -1, 9007199254740993});
        QCOMPARE(*allValuesText(shape), std::string("[1, -1, 9007199254740993]"));
        const Tensor m = Tensor::fromValues(DataType::Float, {2, 3}, std::vector<float>{1, 2.5f, 3, 4, 5, 6});
        QCOMPARE(*allValuesText(m), std::string("[[1, 2.5, 3], [4, 5, 6]]"));
        QCOMPARE(*allValuesText(Tensor::fromValues(DataType::Float, {}, std::vector<float>{0.125f})), std::string("0.125"));
        QCOMPARE(*allValuesText(Tensor::fromValues(DataType::Bool, {2}, std::vector<std::uint8_t>{1, 0})),
                 std::string("[true, false]"));
        const Tensor half = Tensor::fromValues(DataType::Float16, {2}, std::vector<std::uint16_t>{0x3c00, 0xc000});
        QCOMPARE(*allValuesText(half), std::string("[1, -2]"));
        QCOMPARE(tensorStats(half).min, -2.0); // statistics of float16 weights read as zeros once
        // Big ones: a slice through two axes, the others fixed.
        std::vector<float> values(2 * 3 * 4);
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = float(i);
        const Tensor w = Tensor::fromValues(DataType::Float, {2, 3, 4}, values);
        QVERIFY(!allValuesText(w, 10));
        Expected<TensorSlice> s = TensorSlice::make(w, 1, 2, {1, 0, 0});
        QVERIFY(s);
        QCOMPARE(s->rows(), 3);
        QCOMPARE(s->cols(), 4);
        QCOMPARE(s->text(2, 3), std::string("23")); // w[1][2][3]
        s = TensorSlice::make(w, 2, 0, {0, 1, 0}); // rows along axis 2, columns along axis 0
        QCOMPARE(s->text(3, 1), std::string("19")); // w[1][1][3]
        QVERIFY(!TensorSlice::make(w, 1, 1, {}));
        QVERIFY(!TensorSlice::make(w, 1, 2, {5, 0, 0}));
        // A NaN and an Inf are counted apart.
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        const TensorStats st = tensorStats(Tensor::fromValues(DataType::Float, {4}, std::vector<float>{1, nan, inf, -inf}));
        QCOMPARE(st.nan, std::int64_t(1));
        QCOMPARE(st.inf, std::int64_t(2));
    }

    void graphvizPlacesEveryItem()
    {
        const Graph g = scoped();
        const Grouping grouping = Grouping::build({&g});
        const Presentation p = present({&g}, grouping, grouping.initialExpansion(100));
        Expected<LayoutResult> r = layoutWithGraphviz(layoutRequest(p, box));
        QVERIFY(r);
        QCOMPARE(r->centers.size(), p.items.size());
        QCOMPARE(r->edges.size(), p.edges.size());
        // Top to bottom: the input above its consumers, the output below its producer.
        for (const VisualEdge &e : p.edges) {
            QVERIFY(r->centers[e.from].y < r->centers[e.to].y);
            QVERIFY(r->edges[&e - &p.edges[0]].size() >= 4);
        }
        for (const Point &c : r->centers) {
            QVERIFY(c.x >= 0 && c.x <= r->width);
            QVERIFY(c.y >= 0 && c.y <= r->height);
        }
    }

    // A model against a version whose nodes all have new names (opscope's own optimized output
    // at level all, another tool's export): the union layout interleaved the two, and AFTER
    // showed its input and one long edge with its nodes a screen further down. Each side is laid
    // out as its own component instead, by dot and by the layered fallback alike.
    void graphsThatShareLittleAreLaidOutPerSide_data()
    {
        QTest::addColumn<bool>("graphviz");
        QTest::newRow("graphviz") << true;
        QTest::newRow("layered") << false;
    }
    void graphsThatShareLittleAreLaidOutPerSide()
    {
        QFETCH(bool, graphviz);
        auto chain = [](const std::string &prefix, int n) {
            Graph g("g");
            ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 4})));
            const ValueId skip = x;
            for (int i = 0; i < n; ++i)
                x = add(g, prefix + std::to_string(i), i % 3 == 2 ? "Add" : "Relu",
                        i % 3 == 2 ? std::vector<ValueId>{x, skip} : std::vector<ValueId>{x});
            const ValueId y = *g.createValue("y");
            (void)g.addNode("Sigmoid", {x}, {y}, {}, prefix + "head");
            g.setOutputs({y});
            return g;
        };
        const Graph before = chain("before_", 12), after = chain("after_", 7);
        const Grouping grouping = Grouping::build({&before, &after});
        const Presentation p = present({&before, &after}, grouping, {""});
        QVERIFY(sharesLittle(p));
        const Presentation self = present({&before, &before}, Grouping::build({&before, &before}), {""});
        QVERIFY(!sharesLittle(self)); // a pass step: the union keeps unchanged nodes in place

        const LayoutRequest request = layoutRequestBySide(p, box);
        QCOMPARE(request.nodes.size(), std::size_t(2 + 13 + 2 + 8)); // each side: x, nodes, y
        LayoutResult combined;
        if (graphviz) {
            Expected<LayoutResult> r = layoutWithGraphviz(request);
            QVERIFY(r);
            combined = *r;
        } else {
            combined = layoutLayered(request);
        }
        // Side by side, not interleaved: side 0's request nodes come first.
        const std::size_t n0 = before.nodeCount() + 2;
        double right0 = -1e9, left1 = 1e9, left0 = 1e9, right1 = -1e9;
        for (std::size_t k = 0; k < request.nodes.size(); ++k) {
            const double l = combined.centers[k].x - request.nodes[k].width / 2,
                         r = combined.centers[k].x + request.nodes[k].width / 2;
            if (k < n0) {
                left0 = std::min(left0, l);
                right0 = std::max(right0, r);
            } else {
                left1 = std::min(left1, l);
                right1 = std::max(right1, r);
            }
        }
        QVERIFY2(right0 <= left1 || right1 <= left0,
                 qPrintable(QStringLiteral("side 0 [%1, %2], side 1 [%3, %4]").arg(left0).arg(right0).arg(left1).arg(right1)));
        const auto sides = splitBySide(p, request, combined);
        for (int side = 0; side < 2; ++side) {
            const LayoutResult &r = sides[std::size_t(side)];
            const Graph &g = side == 0 ? before : after;
            std::size_t shown = 0;
            for (std::size_t i = 0; i < p.items.size(); ++i) {
                if (!(p.items[i].presentIn & (1u << side)))
                    continue;
                ++shown;
                QVERIFY(r.centers[i].x >= 0 && r.centers[i].x <= r.width);
                QVERIFY(r.centers[i].y >= 0 && r.centers[i].y <= r.height);
            }
            QCOMPARE(shown, g.nodeCount() + 2);
            for (std::size_t e = 0; e < p.edges.size(); ++e)
                if (p.edges[e].presentIn & (1u << side)) {
                    QVERIFY(r.centers[p.edges[e].from].y < r.centers[p.edges[e].to].y);
                    QVERIFY(!r.edges[e].empty());
                }
            // As tall as the side's own graph: no rows of the other side's hidden nodes in it.
            const LayoutResult alone = layoutLayered(layoutRequest(present({&g}, Grouping::build({&g}), {""}), box));
            QVERIFY2(r.height <= alone.height * 1.2 + 1,
                     qPrintable(QStringLiteral("side %1: %2 tall, alone %3").arg(side).arg(r.height).arg(alone.height)));
        }
        // The input opens each side; its first reader is right below it, not a screen away.
        const std::size_t x = p.index.at("in:x"), first = p.index.at("after_0");
        QVERIFY(sides[1].centers[first].y - sides[1].centers[x].y < 3 * 30 + 60);
    }

    void inspectorSectionsDescribeNodesAndWeights()
    {
        const Model m = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        const Graph &g = m.graph;
        NodeId conv;
        for (NodeId id : g.nodeIds())
            if (g.node(id).opType == "Conv") {
                conv = id;
                break;
            }
        QVERIFY(conv.valid());
        const auto sections = inspectNode(m, g, conv);
        QCOMPARE(sections.front().title, std::string("Node"));
        QCOMPARE(sections.front().rows.front().value, std::string("Conv"));
        QVERIFY(!sections.front().rows.front().tooltip.empty()); // the schema's documentation
        bool sawDefault = false;
        for (const PropertyRow &r : sections[1].rows)
            sawDefault = sawDefault || r.value.find("(default)") != std::string::npos;
        QVERIFY(sawDefault); // e.g. group = 1 from the schema
        const ValueId w = g.node(conv).inputs[1];
        const auto init = inspectInitializer(g, w);
        QCOMPARE(init.size(), std::size_t(2));
        const TensorStats s = tensorStats(*g.value(w).initializer);
        QCOMPARE(s.count, g.value(w).initializer->elementCount());
        QCOMPARE(s.histogram.size(), std::size_t(16));
        std::int64_t total = 0;
        for (std::int64_t b : s.histogram)
            total += b;
        QCOMPARE(total, s.count);
        QVERIFY(s.min <= s.mean && s.mean <= s.max);
    }
};

QTEST_GUILESS_MAIN(TestPresentation)
#include "tst_presentation.moc"
