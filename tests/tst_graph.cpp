// The IR: use-def chains, topological order, verifier messages, cheap snapshots, fingerprints,
// generated names.

#include "ir/compare.h"
#include "ir/dependencies.h"
#include "ir/fingerprint.h"
#include "ir/graph.h"
#include "ir/verifier.h"
#include "testsupport.h"

#include <QTest>

using namespace opscope;

namespace {

ValueId val(Graph &g, const char *name)
{
    return g.valueNamed(name);
}

// x -> Relu(a) -> Neg(b) -> Add(c, with x) -> y
Graph chain()
{
    Graph g("chain");
    const ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape{2, 3}));
    (void)g.addNode("Relu", {x}, {val(g, "a")}, "", "relu");
    (void)g.addNode("Neg", {val(g, "a")}, {val(g, "b")}, "", "neg");
    (void)g.addNode("Add", {val(g, "b"), x}, {val(g, "y")}, "", "add");
    g.setOutputs({g.findValue("y")});
    return g;
}

} // namespace

class TestGraph : public QObject
{
    Q_OBJECT
private slots:
    void useDefChains()
    {
        Graph g = chain();
        const ValueId x = g.findValue("x");
        QCOMPARE(g.uses(x).size(), 2u);
        QCOMPARE(g.node(g.producer(g.findValue("b"))).opType, std::string("Neg"));
        QVERIFY(!g.producer(x).valid());
        QVERIFY(verifyGraph(g).isOk());

        // Rewire: Add reads `a` instead of `b`, then Neg is dead and removed.
        g.replaceAllUsesWith(g.findValue("b"), g.findValue("a"));
        QVERIFY(g.uses(g.findValue("b")).empty());
        QCOMPARE(g.uses(g.findValue("a")).size(), 2u);
        g.removeNode(g.findNode("neg"));
        QCOMPARE(g.nodeCount(), 2u);
        QVERIFY(!g.producer(g.findValue("b")).valid());
        QVERIFY2(verifyGraph(g).isOk(), verifyGraph(g).message().c_str());
    }

    void twoProducersRefused()
    {
        Graph g = chain();
        const auto second = g.addNode("Identity", {g.findValue("x")}, {g.findValue("a")}, "", "dup");
        QVERIFY(!second);
        QVERIFY(second.status().message().find("'a' is produced by two nodes: 'relu' and 'dup'") !=
                std::string::npos);
    }

    void topologicalOrderIsStable()
    {
        // Nodes added in reverse dependency order come out producer-first; independent nodes
        // keep insertion order.
        Graph g("g");
        const ValueId x = g.addInput("x", {});
        (void)g.addNode("Neg", {val(g, "a")}, {val(g, "b")}, "", "second");
        (void)g.addNode("Relu", {x}, {val(g, "a")}, "", "first");
        (void)g.addNode("Abs", {x}, {val(g, "c")}, "", "independent");
        const auto order = g.topologicalOrder();
        QVERIFY(order);
        QStringList names;
        for (NodeId id : *order)
            names << QString::fromStdString(g.node(id).name);
        QCOMPARE(names, QStringList({"first", "second", "independent"}));
    }

    void cycleIsReportedWithNodeNames()
    {
        Graph g("loop");
        (void)g.addNode("Relu", {val(g, "b")}, {val(g, "a")}, "", "r1");
        (void)g.addNode("Neg", {val(g, "a")}, {val(g, "b")}, "", "n1");
        g.setOutputs({g.findValue("b")});
        const Status st = verifyGraph(g);
        QVERIFY(!st.isOk());
        QVERIFY2(st.message().find("cycle through 'r1' (Relu), 'n1' (Neg)") != std::string::npos,
                 st.message().c_str());
    }

    void verifierNamesDanglingInput()
    {
        Graph g = chain();
        (void)g.addNode("Mul", {g.findValue("y"), val(g, "ghost")}, {val(g, "z")}, "", "mul");
        const Status st = verifyGraph(g);
        QVERIFY(!st.isOk());
        QVERIFY2(st.message().find("node 'mul' (Mul) reads tensor 'ghost'") != std::string::npos,
                 st.message().c_str());
    }

    void capturedValuesTakeTheirTypeFromTheGraphThatDefinesThem()
    {
        // A body two levels down reads `x` (the main graph's input) and `a` (an untyped value
        // of the main graph) and `inner_t` of the level between; only `x` and `inner_t` are typed
        // where they are defined. The middle body does not read `x` itself.
        Graph g = chain();
        g.value(g.findValue("a")).type = {};
        Graph inner("then_branch");
        const ValueId ix = inner.addOuterScopeValue("x"), ia = inner.addOuterScopeValue("a"),
                      it = inner.addOuterScopeValue("mid_t");
        (void)inner.addNode("Sum", {ix, ia, it}, {val(inner, "deep")}, "", "sum");
        inner.setOutputs({inner.findValue("deep")});
        Graph mid("then_branch");
        const ValueId midT = mid.addInput("mid_t", TypeInfo::tensor(DataType::Float, Shape{2, 3}));
        const ValueId cond = mid.addOuterScopeValue("cond");
        const auto innerIf = mid.addNode("If", {cond}, {val(mid, "m")}, "", "inner_if");
        QVERIFY(innerIf);
        mid.node(*innerIf).attributes.push_back(Attribute::makeGraph("then_branch", inner));
        mid.node(*innerIf).attributes.push_back(Attribute::makeGraph("else_branch", inner));
        mid.setOutputs({mid.findValue("m")});
        (void)midT;
        const ValueId c = g.addInput("cond", TypeInfo::tensor(DataType::Bool, Shape{}));
        const auto outerIf = g.addNode("If", {c}, {val(g, "r")}, "", "outer_if");
        QVERIFY(outerIf);
        g.node(*outerIf).attributes.push_back(Attribute::makeGraph("then_branch", mid));
        g.node(*outerIf).attributes.push_back(Attribute::makeGraph("else_branch", mid));
        // cond (mid, both branches) + x and mid_t (inner, two bodies in each of two mids).
        QCOMPARE(typeCapturedValues(g), std::size_t(2 + 2 * 2 * 2));
        const Graph &m = *g.node(*outerIf).attribute("then_branch")->g;
        QCOMPARE(m.value(m.findValue("cond")).type.elemType, DataType::Bool);
        const Graph &deep = *m.node(m.findNode("inner_if")).attribute("else_branch")->g;
        QCOMPARE(deep.value(deep.findValue("x")).type, g.value(g.findValue("x")).type);
        QCOMPARE(deep.value(deep.findValue("mid_t")).type, m.value(m.findValue("mid_t")).type);
        QVERIFY(!deep.value(deep.findValue("a")).type.isKnown()); // untyped where defined: stays so
        QCOMPARE(typeCapturedValues(g), std::size_t(0));           // nothing left to fill
    }

    void subgraphScoping()
    {
        // An If whose branch reads the outer `a`: fine. A branch reading `nowhere`: an error naming it.
        Graph g = chain();
        Graph then("then_branch");
        const ValueId outer = then.addOuterScopeValue("a");
        (void)then.addNode("Identity", {outer}, {val(then, "t")}, "", "t_id");
        then.setOutputs({then.findValue("t")});
        const ValueId cond = g.addInput("cond", TypeInfo::tensor(DataType::Bool, Shape{}));
        const auto ifNode = g.addNode("If", {cond}, {val(g, "r")}, "", "if");
        QVERIFY(ifNode);
        g.node(*ifNode).attributes.push_back(Attribute::makeGraph("then_branch", then));
        g.node(*ifNode).attributes.push_back(Attribute::makeGraph("else_branch", then));
        QVERIFY2(verifyGraph(g).isOk(), verifyGraph(g).message().c_str());
        QCOMPARE(g.nodeCountWithSubgraphs(), 6u);

        Graph bad("else_branch");
        (void)bad.addNode("Identity", {bad.addOuterScopeValue("nowhere")}, {val(bad, "e")}, "", "e_id");
        bad.setOutputs({bad.findValue("e")});
        g.node(*ifNode).attributes[1] = Attribute::makeGraph("else_branch", bad);
        const Status st = verifyGraph(g);
        QVERIFY(!st.isOk());
        QVERIFY2(st.message().find("'nowhere' refers to an enclosing graph, which does not define it") !=
                     std::string::npos,
                 st.message().c_str());

        // A subgraph may not redefine an outer name.
        Graph shadow("shadow");
        (void)shadow.addNode("Identity", {shadow.addOuterScopeValue("x")}, {val(shadow, "a")}, "", "s_id");
        shadow.setOutputs({shadow.findValue("a")});
        g.node(*ifNode).attributes[1] = Attribute::makeGraph("else_branch", shadow);
        QVERIFY(verifyGraph(g).message().find("'a' shadows a tensor of an enclosing graph") !=
                std::string::npos);
    }

    // Branches three levels down read the main graph's x and a, the first branch's m1 and the
    // second's m2; the graphs in between have no value for what they do not read themselves.
    void multiLevelCaptures()
    {
        Graph g = chain();
        Graph l3("l3");
        (void)l3.addNode("Add", {l3.addOuterScopeValue("x"), l3.addOuterScopeValue("m1")}, {val(l3, "s3")}, "", "s3");
        (void)l3.addNode("Mul", {l3.findValue("s3"), l3.addOuterScopeValue("a")}, {val(l3, "t3")}, "", "t3");
        (void)l3.addNode("Sub", {l3.findValue("t3"), l3.addOuterScopeValue("m2")}, {val(l3, "o3")}, "", "o3");
        l3.setOutputs({l3.findValue("o3")});
        const auto nest = [](Graph &outer, const std::string &name, const Graph &body) {
            const ValueId c = outer.addInput(name + "_c", TypeInfo::tensor(DataType::Bool, Shape{}));
            const NodeId n = *outer.addNode("If", {c}, {val(outer, (name + "_r").c_str())}, "", name);
            outer.node(n).attributes.push_back(Attribute::makeGraph("then_branch", body));
            outer.node(n).attributes.push_back(Attribute::makeGraph("else_branch", body));
            return n;
        };
        Graph l2("l2");
        (void)l2.addNode("Neg", {l2.addOuterScopeValue("m1")}, {val(l2, "m2")}, "", "m2");
        nest(l2, "if3", l3);
        l2.setOutputs({l2.findValue("if3_r")});
        Graph l1("l1");
        (void)l1.addNode("Relu", {l1.addOuterScopeValue("b")}, {val(l1, "m1")}, "", "m1");
        nest(l1, "if2", l2);
        l1.setOutputs({l1.findValue("if2_r")});
        const NodeId if1 = nest(g, "if1", l1);
        QVERIFY2(verifyGraph(g).isOk(), verifyGraph(g).message().c_str());

        // What the If of the main graph reads, at any depth: x and a (from l3) and b (from l1).
        std::vector<std::string> names;
        for (ValueId v : implicitInputs(g, if1))
            names.push_back(g.value(v).name);
        std::sort(names.begin(), names.end());
        QCOMPARE(names, (std::vector<std::string>{"a", "b", "x"}));
        QVERIFY(readBySubgraph(g, g.findValue("a")) && readBySubgraph(g, g.findValue("x")));
        QVERIFY(!readBySubgraph(g, g.findValue("y")));
        const std::vector<bool> mask = subgraphReads(g);
        QVERIFY(mask[g.findValue("a").index] && !mask[g.findValue("y").index]);
        const Graph &first = *g.node(if1).attributes[0].g;
        QVERIFY(readBySubgraph(first, first.findValue("m1"))); // read two levels further down
        QVERIFY(nameUsedInTree(g, "s3") && !nameUsedInTree(g, "nowhere"));

        // Truly dangling, three levels down: the main graph no longer defines a.
        Graph broken = g;
        broken.removeNode(broken.findNode("relu"));
        broken.replaceAllUsesWith(broken.findValue("a"), broken.findValue("x"));
        broken.removeValue(broken.findValue("a"));
        Status st = verifyGraph(broken);
        QVERIFY2(st.message().find("graph 'l3': tensor 'a' refers to an enclosing graph, which does not define it") !=
                     std::string::npos,
                 st.message().c_str());

        // A sibling's value is not an enclosing one: l3 reading the else branch's value of l1.
        Graph sibling = g;
        Graph other("l1_else");
        (void)other.addNode("Relu", {other.addOuterScopeValue("x")}, {val(other, "only_here")}, "", "r");
        other.setOutputs({other.findValue("only_here")});
        Graph &deep = *sibling.node(if1).attributes[0].g->node(NodeId(1)).attributes[0].g->node(NodeId(1)).attributes[0].g;
        (void)deep.addNode("Identity", {deep.addOuterScopeValue("only_here")}, {val(deep, "o4")}, "", "o4");
        sibling.node(if1).attributes[1] = Attribute::makeGraph("else_branch", other);
        st = verifyGraph(sibling);
        QVERIFY2(st.message().find("'only_here' refers to an enclosing graph, which does not define it") !=
                     std::string::npos,
                 st.message().c_str());
    }

    void snapshotSharesWeightsButNotStructure()
    {
        Graph g = chain();
        std::vector<float> weights(1 << 20, 1.0f);
        const ValueId w = g.addInitializer("w", Tensor::fromValues(DataType::Float, {1 << 20}, weights));
        Graph then("then");
        (void)then.addNode("Identity", {then.addOuterScopeValue("x")}, {val(then, "t")}, "", "t");
        then.setOutputs({then.findValue("t")});
        const auto ifNode = g.addNode("If", {g.addInput("c", {})}, {val(g, "r")}, "", "if");
        g.node(*ifNode).attributes.push_back(Attribute::makeGraph("then_branch", then));

        const Graph snapshot = g; // what the pass stepper keeps after every pass
        QCOMPARE(snapshot.value(w).initializer->data.get(), g.value(w).initializer->data.get());
        QCOMPARE(fingerprint(snapshot), fingerprint(g));

        // Mutating the live graph (top level and inside the subgraph) leaves the snapshot alone.
        g.node(*ifNode).attributes[0].g->node(NodeId(0)).opType = "Neg";
        g.removeNode(g.findNode("neg"));
        QCOMPARE(snapshot.node(*ifNode).attributes[0].g->node(NodeId(0)).opType, std::string("Identity"));
        QCOMPARE(snapshot.nodeCount(), 4u);
        QVERIFY(fingerprint(snapshot) != fingerprint(g));
        QVERIFY(!compareGraphs(snapshot, g).isOk());
    }

    void removedNodesHoldNoData()
    {
        // A folded Constant's tensor must die with its node: kept in the tombstone it held every
        // weight a pass later replaced (PaddleOCR's recognizer ran with both copies in memory).
        Graph g("g");
        const ValueId out = val(g, "w");
        const auto constant = g.addNode("Constant", {}, {out}, "", "w_const");
        Tensor t = Tensor::fromValues(DataType::Float, {1024}, std::vector<float>(1024, 2.0f));
        const std::weak_ptr<const Buffer> bytes = t.data;
        g.node(*constant).attributes.push_back(Attribute::makeTensor("value", std::move(t)));
        QVERIFY(!bytes.expired());
        g.removeNode(*constant);
        QVERIFY2(bytes.expired(), "a removed node still holds its tensor");
        QCOMPARE(g.node(*constant).name, std::string("w_const")); // the name stays, for messages
    }

    void fingerprintSeesEveryKindOfChange_data()
    {
        QTest::addColumn<int>("change");
        QTest::newRow("attribute value") << 0;
        QTest::newRow("op type") << 1;
        QTest::newRow("rewired input") << 2;
        QTest::newRow("new initializer data") << 3;
        QTest::newRow("output type") << 4;
    }

    void fingerprintSeesEveryKindOfChange()
    {
        QFETCH(int, change);
        Graph g = chain();
        g.addInitializer("k", Tensor::fromValues(DataType::Float, {1}, std::vector<float>{1.0f}));
        g.node(g.findNode("add")).attributes.push_back(Attribute::makeInt("axis", 1));
        const std::uint64_t before = fingerprint(g);
        switch (change) {
        case 0: g.node(g.findNode("add")).attribute("axis")->i = 2; break;
        case 1: g.node(g.findNode("relu")).opType = "Sigmoid"; break;
        case 2: g.setNodeInput(g.findNode("add"), 1, g.findValue("a")); break;
        case 3:
            g.addInitializer("k", Tensor::fromValues(DataType::Float, {1}, std::vector<float>{1.0f}));
            break;
        case 4: g.value(g.findValue("a")).type = TypeInfo::tensor(DataType::Float, Shape{2, 3}); break;
        }
        QVERIFY(fingerprint(g) != before);
    }

    void generatedNamesAreReadableUniqueAndStable()
    {
        Graph g("names");
        const ValueId x = g.addInput("x", {});
        (void)g.addNode("Conv", {x}, {val(g, "a")});
        (void)g.addNode("Conv", {val(g, "a")}, {val(g, "b")}, "", "Conv_1"); // a real name that collides
        (void)g.addNode("Relu", {val(g, "b")}, {val(g, "c")});
        (void)g.addNode("Conv", {val(g, "c")}, {val(g, "d")});
        g.assignNodeNames();
        QCOMPARE(g.node(NodeId(0)).name, std::string("Conv_0"));
        QCOMPARE(g.node(NodeId(1)).name, std::string("Conv_1"));
        QVERIFY(!g.node(NodeId(1)).nameGenerated);
        QCOMPARE(g.node(NodeId(2)).name, std::string("Relu_0"));
        QCOMPARE(g.node(NodeId(3)).name, std::string("Conv_2"));
        Graph again = g;
        again.assignNodeNames();
        QCOMPARE(again.node(NodeId(3)).name, std::string("Conv_2"));
    }

    void elementCountOverflowIsAnError()
    {
        QVERIFY(checkedElementCount({1 << 20, 1 << 20}, "t"));
        const auto big = checkedElementCount({1LL << 40, 1LL << 40}, "tensor 'w'");
        QVERIFY(!big);
        QVERIFY(big.status().message().find("overflows") != std::string::npos);
        QVERIFY(!checkedElementCount({3, -2}, "t"));
        // An empty tensor's other dims are what kernels multiply for outer and inner sizes: they
        // must not overflow either, wherever the zero stands (a Reduce multiplied 24 · (2^63 − 1)
        // of [0, 2, 2, 3, 4, 2^63 − 1], found by fuzzing).
        QCOMPARE(*checkedElementCount({0, 1LL << 30, 1LL << 30}, "t"), 0);
        QCOMPARE(*checkedElementCount({1LL << 30, 0, 1LL << 30}, "t"), 0);
        for (const std::vector<std::int64_t> &dims :
             {std::vector<std::int64_t>{0, 1LL << 62, 1LL << 62}, std::vector<std::int64_t>{1LL << 62, 0, 4},
              std::vector<std::int64_t>{0, 2, 2, 3, 4, INT64_MAX}})
            QVERIFY(!checkedElementCount(dims, "t"));
    }
};

QTEST_GUILESS_MAIN(TestGraph)
#include "tst_graph.moc"
