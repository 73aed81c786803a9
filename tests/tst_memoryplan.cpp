// Memory planning (runtime/memoryplan.h): placements on a hand-built chain (in place, views, a
// pending reader, graph outputs), and on random DAGs under serial, parallel (shared and fixed
// queues) and greedy two-device plans: every plan passes verifyMemoryPlan (no two possibly live
// tensors share a byte, in place never over a pending reader, lower bound ≤ arena ≤ naive) and a
// run from it computes a run without planning's outputs bit for bit. The safety net: an alias the
// plan did not know is copied out, a size the sizing run did not see gets its own allocation.

#include "onnx/shaperefresh.h"
#include "runtime/conformance.h"
#include "runtime/memoryplan.h"
#include "runtime/planorder.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "schedule/partition.h"
#include "testsupport.h"
#include "util/systemmemory.h"

#include <QTest>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>

using namespace opscope;
using namespace opscope::schedule;

namespace {

TypeInfo floats(std::vector<std::int64_t> dims)
{
    return TypeInfo::tensor(DataType::Float, Shape::fromSizes(dims));
}

RuntimeTensor randomTensor(const std::vector<std::int64_t> &shape, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    std::int64_t n = 1;
    for (std::int64_t d : shape)
        n *= d;
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float &x : v)
        x = u(rng);
    return RuntimeTensor::fromValues(DataType::Float, shape, v);
}

ValueId node(Graph &g, const std::string &op, std::vector<ValueId> in, const std::string &name,
             std::vector<Attribute> attrs = {})
{
    const ValueId out = *g.createValue(name);
    const NodeId n = *g.addNode(op, std::move(in), {out}, {}, name + "_node");
    g.node(n).attributes = std::move(attrs);
    return out;
}

// x → Mul(x,x)=a → Relu=b → Reshape=c → Tanh=d → Exp=e → Add(e,d)=f → Sigmoid=y (output)
Model chainModel()
{
    Model m;
    m.opsets = {{"", 17}};
    Graph &g = m.graph;
    const ValueId x = g.addInput("x", floats({16, 16}));
    const ValueId shape = g.addInitializer("shape", Tensor::fromValues<std::int64_t>(DataType::Int64, {1}, {256}));
    const ValueId a = node(g, "Mul", {x, x}, "a");
    const ValueId b = node(g, "Relu", {a}, "b");
    const ValueId c = node(g, "Reshape", {b, shape}, "c");
    const ValueId d = node(g, "Tanh", {c}, "d");
    const ValueId e = node(g, "Exp", {d}, "e");
    const ValueId f = node(g, "Add", {e, d}, "f");
    g.addOutput(node(g, "Sigmoid", {f}, "y"));
    return m;
}

// A random DAG over [4, 64] floats: unary ops (in place), binary ops with a broadcast operand,
// Reshape/Identity views, Transpose and Softmax (neither in place), extra graph outputs that
// alias intermediates.
Model randomModel(std::uint32_t seed, int nodes)
{
    Model m;
    m.opsets = {{"", 17}};
    Graph &g = m.graph;
    std::mt19937 rng(seed);
    std::vector<ValueId> pool{g.addInput("x", floats({4, 64}))};
    const ValueId bias = g.addInitializer("bias", Tensor::fromValues<float>(DataType::Float, {64}, std::vector<float>(64, 0.5f)));
    const ValueId flat = g.addInitializer("flat", Tensor::fromValues<std::int64_t>(DataType::Int64, {1}, {256}));
    const ValueId back = g.addInitializer("back", Tensor::fromValues<std::int64_t>(DataType::Int64, {2}, {4, 64}));
    const auto pick = [&] { return pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)]; };
    for (int i = 0; i < nodes; ++i) {
        const std::string name = "v" + std::to_string(i);
        ValueId out;
        switch (rng() % 9) {
        case 0: out = node(g, "Relu", {pick()}, name); break;
        case 1: out = node(g, "Tanh", {pick()}, name); break;
        case 2: out = node(g, "Add", {pick(), pick()}, name); break;
        case 3: out = node(g, rng() % 2 ? "Mul" : "Sub", {pick(), bias}, name); break;
        case 4: out = node(g, "Div", {bias, pick()}, name); break;
        case 5: {
            const ValueId r = node(g, "Reshape", {pick(), flat}, name + "_flat");
            out = node(g, rng() % 2 ? "Sigmoid" : "Identity", {r}, name + "_mid");
            out = node(g, "Reshape", {out, back}, name);
            break;
        }
        case 6: out = node(g, "Identity", {pick()}, name); break;
        case 7: {
            const ValueId t = node(g, "Transpose", {pick()}, name + "_t", {Attribute::makeInts("perm", {1, 0})});
            out = node(g, "Transpose", {t}, name, {Attribute::makeInts("perm", {1, 0})});
            break;
        }
        default: out = node(g, "Softmax", {pick()}, name, {Attribute::makeInt("axis", 1)}); break;
        }
        pool.push_back(out);
    }
    for (std::size_t i = 1; i < pool.size(); ++i)
        if (g.uses(pool[i]).empty() || rng() % 8 == 0)
            g.addOutput(pool[i]);
    return m;
}

std::vector<RuntimeTensor> runOnce(const Model &model, const ExecutionPlan *plan, const Feeds &feeds, bool planMemory)
{
    SessionOptions so;
    so.planMemory = planMemory;
    Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model, so);
    if (!s)
        qFatal("%s", s.status().message().c_str());
    Expected<std::vector<RuntimeTensor>> out = (*s)->run(feeds, plan);
    if (!out)
        qFatal("%s", out.status().message().c_str());
    return *out;
}

CostModel cpus(int n)
{
    CostModel m;
    for (int i = 0; i < n; ++i)
        m.devices.push_back({"cpu:" + std::to_string(i), 1e10, 1e10, 2e-6, 0});
    m.link = {1e-6, 5e9};
    return m;
}

const PlannedTensor &tensorNamed(const Graph &g, const MemoryPlan &plan, const std::string &name)
{
    for (const DeviceMemory &d : plan.devices)
        for (const PlannedTensor &t : d.tensors)
            if (!t.isWorkspace() && g.value(t.value).name == name)
                return t;
    qFatal("no planned tensor %s", name.c_str());
}

} // namespace

class TestMemoryPlan : public QObject
{
    Q_OBJECT

private slots:
    void chainPlacements()
    {
        const Model model = chainModel();
        const Feeds feeds{{"x", randomTensor({16, 16}, 1)}};
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
        QVERIFY(s);
        QVERIFY((*s)->run(feeds));
        const std::shared_ptr<const MemoryPlan> plan = (*s)->memoryPlan(feeds);
        QVERIFY(plan);
        const Graph &g = (*s)->prepared().graph ? *(*s)->prepared().graph : model.graph;
        QCOMPARE(tensorNamed(g, *plan, "a").placement, TensorPlacement::Arena);
        QCOMPARE(tensorNamed(g, *plan, "b").placement, TensorPlacement::InPlace); // over a, read only by Relu
        QCOMPARE(tensorNamed(g, *plan, "c").placement, TensorPlacement::View);    // Reshape aliases b
        QCOMPARE(tensorNamed(g, *plan, "d").placement, TensorPlacement::InPlace); // over the view's bytes
        QCOMPARE(tensorNamed(g, *plan, "e").placement, TensorPlacement::Arena);   // d is still read by Add
        QCOMPARE(tensorNamed(g, *plan, "f").placement, TensorPlacement::InPlace); // over e
        QCOMPARE(tensorNamed(g, *plan, "y").placement, TensorPlacement::Output);  // leaves the run: own bytes
        QCOMPARE(tensorNamed(g, *plan, "f").sharesWith, g.findValue("e"));
        // b's bytes are needed while its view c is read (by d, in place over them).
        QCOMPARE(tensorNamed(g, *plan, "b").lastStep, tensorNamed(g, *plan, "c").lastStep);
        QVERIFY(tensorNamed(g, *plan, "b").lastStep > tensorNamed(g, *plan, "c").firstStep);
        const DeviceMemory &d = plan->devices.at(0);
        QCOMPARE(d.naiveBytes, std::uint64_t(5 * 1024)); // a b d e f
        QCOMPARE(d.inPlaceBytes, std::uint64_t(2 * 1024));
        QCOMPARE(d.plannedBytes, std::uint64_t(2 * 1024));
        QCOMPARE(d.lowerBoundBytes, std::uint64_t(2 * 1024));
        QVERIFY2(verifyMemoryPlan((*s)->prepared(), (*s)->prepared().plan, *plan), "verify");

        MemoryRunStats stats;
        ExecOptions exec;
        exec.memoryStats = &stats;
        Expected<std::vector<RuntimeTensor>> planned = (*s)->run(feeds, nullptr, &exec);
        QVERIFY(planned);
        QCOMPARE(stats.arenaBytes, std::uint64_t(2 * 1024));
        QCOMPARE(stats.inArena, std::size_t(6)); // a..f
        QCOMPARE(stats.copiedOut, std::size_t(0));
        QVERIFY(sameBits(planned->at(0), runOnce(model, nullptr, feeds, false).at(0)));
    }

    void plansDoNotDependOnWhichTimedVariantWon()
    {
        // A convolution times its blocked and plain oneDNN variants and keeps the faster: which
        // wins varies between sessions (and processes), and a plan sized by the winner's
        // workspace did too (a U-Net's arena 16 or 24 MiB from one `opscope-cli memory` to the
        // next). Each session here times afresh; their plans must agree byte for byte.
        const Model model = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        const Feeds feeds{{"input", randomTensor({1, 3, 64, 64}, 5)}};
        std::vector<std::vector<std::uint64_t>> workspaces;
        std::vector<std::uint64_t> arenas;
        for (int session = 0; session < 4; ++session) {
            Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
            QVERIFY(s);
            QVERIFY((*s)->run(feeds)); // the sizing run, timing each Conv's variants
            const std::shared_ptr<const MemoryPlan> plan = (*s)->memoryPlan(feeds);
            QVERIFY(plan);
            std::vector<std::uint64_t> sizes;
            for (const PlannedTensor &t : plan->devices.at(0).tensors)
                if (t.isWorkspace())
                    sizes.push_back(t.bytes);
            QVERIFY(!sizes.empty());
            workspaces.push_back(sizes);
            arenas.push_back(plan->devices.at(0).plannedBytes);
        }
        for (std::size_t i = 1; i < arenas.size(); ++i) {
            QCOMPARE(workspaces[i], workspaces[0]);
            QCOMPARE(arenas[i], arenas[0]);
        }
    }

    void kernelWorkspacesArePlanned_data()
    {
        QTest::addColumn<bool>("parallel");
        QTest::newRow("serial") << false;
        QTest::newRow("parallel") << true;
    }

    void kernelWorkspacesArePlanned()
    {
        // oneDNN's reordered source/destination and scratchpad of each convolution are planned
        // tensors: live at the node's step alone, in the arena, apart from everything live then,
        // and the planned run's kernels use them (not their thread's scratch).
        QFETCH(bool, parallel);
        const Model source = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        ScheduleOptions so;
        so.workers = 2;
        Expected<DevicePlan> scheduled =
            planForDevices(source, parallel ? Strategy::Parallel : Strategy::Serial, cpus(1), so);
        QVERIFY2(scheduled, scheduled ? "" : scheduled.status().message().c_str());
        const Model &model = scheduled->partition.model;
        const ExecutionPlan &execPlan = scheduled->schedule.plan;
        const Feeds feeds{{"input", randomTensor({1, 3, 64, 64}, 5)}};
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
        QVERIFY2(s, s ? "" : s.status().message().c_str());
        const Expected<std::vector<RuntimeTensor>> reference = (*s)->run(feeds, &execPlan); // the sizing run
        QVERIFY(reference);
        const std::shared_ptr<const MemoryPlan> plan = (*s)->memoryPlan(feeds, &execPlan);
        QVERIFY(plan);
        QCOMPARE(plan->parallel, parallel);
        const Graph &g = *(*s)->prepared().graph;
        std::size_t workspaces = 0;
        for (const PlannedTensor &t : plan->devices.at(0).tensors) {
            if (!t.isWorkspace())
                continue;
            ++workspaces;
            QVERIFY(t.bytes > 0 && t.firstStep == t.lastStep);
            QCOMPARE(plan->workspaceByNode.at(t.producer.index).offset, t.offset);
            QVERIFY(plannedName(g, t).ends_with(" workspace"));
        }
        QVERIFY2(workspaces > 0, "no convolution's workspace was planned");
        QVERIFY2(verifyMemoryPlan((*s)->prepared(), execPlan, *plan), "verify");

        MemoryRunStats stats;
        ExecOptions exec;
        exec.memoryStats = &stats;
        Expected<std::vector<RuntimeTensor>> planned = (*s)->run(feeds, &execPlan, &exec);
        QVERIFY(planned);
        QCOMPARE(stats.workspaces, workspaces);
        QVERIFY(sameBits(planned->at(0), reference->at(0)));

        // verifyMemoryPlan catches a workspace laid over a value live at its step.
        MemoryPlan broken = *plan;
        for (PlannedTensor &t : broken.devices[0].tensors)
            if (t.isWorkspace())
                for (const PlannedTensor &other : broken.devices[0].tensors)
                    if (!other.isWorkspace() && other.producer == t.producer && inArena(broken, other)) {
                        t.offset = other.offset; // over its own node's output
                        const Status st = verifyMemoryPlan((*s)->prepared(), execPlan, broken);
                        QVERIFY(!st);
                        QVERIFY2(st.message().find("workspace") != std::string::npos, st.message().c_str());
                        return;
                    }
        QFAIL("no workspace with an output in the arena");
    }

    void noInPlaceNoShare()
    {
        const Model model = chainModel();
        const Feeds feeds{{"x", randomTensor({16, 16}, 2)}};
        SessionOptions so;
        so.memory.inPlace = false;
        so.memory.share = false;
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model, so);
        QVERIFY(s && (*s)->run(feeds));
        const std::shared_ptr<const MemoryPlan> plan = (*s)->memoryPlan(feeds);
        QVERIFY(plan);
        QCOMPARE(plan->devices[0].plannedBytes, std::uint64_t(5 * 1024)); // each its own range
        QVERIFY2(verifyMemoryPlan((*s)->prepared(), (*s)->prepared().plan, *plan), "verify");
        Expected<std::vector<RuntimeTensor>> again = (*s)->run(feeds);
        QVERIFY(again && sameBits(again->at(0), runOnce(model, nullptr, feeds, false).at(0)));
    }

    void randomModelsMatchUnplannedRuns_data()
    {
        QTest::addColumn<int>("strategy");
        QTest::addColumn<bool>("shared");
        QTest::addColumn<std::uint32_t>("seed");
        QTest::addColumn<int>("offsets");
        const int best = int(OffsetStrategy::Best), breadth = int(OffsetStrategy::ByBreadth);
        for (std::uint32_t seed = 1; seed <= 12; ++seed) {
            const std::string s = std::to_string(seed);
            QTest::newRow(("serial/" + s).c_str()) << int(Strategy::Serial) << true << seed << best;
            QTest::newRow(("parallel/" + s).c_str()) << int(Strategy::Parallel) << true << seed << best;
            QTest::newRow(("parallel-fixed/" + s).c_str()) << int(Strategy::Parallel) << false << seed << best;
            QTest::newRow(("greedy/" + s).c_str()) << int(Strategy::Greedy) << true << seed << best;
            // The breadth order on its own (Best skips it when by size meets the bound).
            QTest::newRow(("serial-breadth/" + s).c_str()) << int(Strategy::Serial) << true << seed << breadth;
            QTest::newRow(("parallel-breadth/" + s).c_str()) << int(Strategy::Parallel) << true << seed << breadth;
        }
    }
    void randomModelsMatchUnplannedRuns()
    {
        QFETCH(int, strategy);
        QFETCH(bool, shared);
        QFETCH(std::uint32_t, seed);
        QFETCH(int, offsets);
        const Model model = randomModel(seed, 10 + int(seed % 5) * 8);
        ScheduleOptions so;
        so.workers = 2;
        so.sharedQueue = shared;
        Expected<DevicePlan> planned = planForDevices(model, Strategy(strategy), cpus(2), so);
        QVERIFY2(planned, planned ? "" : planned.status().message().c_str());
        const Model &runModel = planned->partition.model;
        const ExecutionPlan &plan = planned->schedule.plan;
        const Feeds feeds{{"x", randomTensor({4, 64}, seed)}};
        const std::vector<RuntimeTensor> want = runOnce(runModel, &plan, feeds, false);

        SessionOptions sessionOptions;
        sessionOptions.memory.strategy = OffsetStrategy(offsets);
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(runModel, sessionOptions);
        QVERIFY(s);
        QVERIFY((*s)->run(feeds, &plan)); // sizes the plan
        const std::shared_ptr<const MemoryPlan> memory = (*s)->memoryPlan(feeds, &plan);
        QVERIFY(memory);
        QCOMPARE(memory->parallel, Strategy(strategy) != Strategy::Serial);
        const Status valid = verifyMemoryPlan((*s)->prepared(), plan, *memory);
        QVERIFY2(valid, valid.message().c_str());
        if (OffsetStrategy(offsets) == OffsetStrategy::ByBreadth)
            for (const DeviceMemory &d : memory->devices)
                QVERIFY(d.strategy == "greedy-by-breadth" || d.strategy == "none");
        for (int round = 0; round < 3; ++round) { // workers race differently each time
            MemoryRunStats stats;
            ExecOptions exec;
            exec.memoryStats = &stats;
            Expected<std::vector<RuntimeTensor>> got = (*s)->run(feeds, &plan, &exec);
            QVERIFY2(got, got ? "" : got.status().message().c_str());
            QCOMPARE(got->size(), want.size());
            for (std::size_t i = 0; i < want.size(); ++i)
                QVERIFY2(sameBits((*got)[i], want[i]), runModel.graph.value(runModel.graph.outputs()[i]).name.c_str());
            QCOMPARE(stats.copiedOut, std::size_t(0)); // the sizing run saw every alias
            QVERIFY(stats.inArena > 0);
        }
    }

    // A plan sized from the inferred shapes alone (no run: how rank 0 of an MPI job sizes a plan
    // whose whole model does not fit it) against one sized by a run: it passes the verifier, and
    // per device its arena is the run's — less the kernel workspaces a run alone sees (oneDNN's
    // reorders on the Inception sample).
    void plannedFromShapesMatchesTheSizingRun_data()
    {
        QTest::addColumn<QString>("sample");
        QTest::addColumn<int>("strategy");
        QTest::addColumn<std::uint32_t>("seed");
        for (std::uint32_t seed = 1; seed <= 6; ++seed) {
            const std::string s = std::to_string(seed);
            QTest::newRow(("random serial/" + s).c_str()) << QString() << int(Strategy::Serial) << seed;
            QTest::newRow(("random greedy/" + s).c_str()) << QString() << int(Strategy::Greedy) << seed;
        }
        for (const char *sample : {"inception_block.onnx", "transformer_block.onnx"})
            for (Strategy st : {Strategy::Serial, Strategy::Greedy})
                QTest::newRow((std::string(sample) + " " + (st == Strategy::Serial ? "serial" : "greedy")).c_str())
                    << QString(sample) << int(st) << std::uint32_t(1);
    }
    void plannedFromShapesMatchesTheSizingRun()
    {
        QFETCH(QString, sample);
        QFETCH(int, strategy);
        QFETCH(std::uint32_t, seed);
        Model source = sample.isEmpty() ? randomModel(seed, 10 + int(seed % 5) * 8)
                                        : test::loadOrFail(test::samplePath(sample.toStdString())).model;
        if (sample.isEmpty()) // built in memory: its shapes inferred as a loaded model's are
            QVERIFY(refreshShapes(source));
        ScheduleOptions so;
        so.workers = 2;
        Expected<DevicePlan> planned = planForDevices(source, Strategy(strategy), cpus(2), so);
        QVERIFY2(planned, planned ? "" : planned.status().message().c_str());
        const Model &model = planned->partition.model;
        const ExecutionPlan &plan = planned->schedule.plan;
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
        QVERIFY(s);
        RandomInputOptions ro;
        ro.seed = seed;
        Expected<Feeds> feeds = randomFeeds(**s, {}, ro);
        QVERIFY(feeds);
        std::size_t unsized = 99;
        Expected<MemoryPlan> fromShapes = (*s)->memoryPlanFromShapes(*feeds, &plan, &unsized);
        QVERIFY2(fromShapes, fromShapes ? "" : fromShapes.status().message().c_str());
        QCOMPARE(unsized, std::size_t(0)); // every shape here is known from the inputs'
        const Status valid = verifyMemoryPlan((*s)->prepared(), plan, *fromShapes);
        QVERIFY2(valid, valid.message().c_str());
        QVERIFY((*s)->run(*feeds, &plan)); // sizes the plan by running
        const std::shared_ptr<const MemoryPlan> byRun = (*s)->memoryPlan(*feeds, &plan);
        QVERIFY(byRun);
        QCOMPARE(fromShapes->devices.size(), byRun->devices.size());
        for (std::size_t d = 0; d < byRun->devices.size(); ++d) {
            const DeviceMemory &a = fromShapes->devices[d], &b = byRun->devices[d];
            std::uint64_t workspaces = 0;
            for (const PlannedTensor &t : b.tensors)
                if (t.isWorkspace())
                    workspaces += t.bytes;
            const QString what = QString("device %1: from shapes %2 B, by a run %3 B (workspaces %4 B)")
                                     .arg(d).arg(a.plannedBytes).arg(b.plannedBytes).arg(workspaces);
            if (workspaces == 0)
                QVERIFY2(a.plannedBytes == b.plannedBytes, qPrintable(what));
            else // the same tensors without the workspaces, which may also have filled gaps
                QVERIFY2(a.plannedBytes <= b.plannedBytes && a.plannedBytes + workspaces >= b.plannedBytes,
                         qPrintable(what));
            QCOMPARE(a.outsideBytes, b.outsideBytes);
        }
    }

    // PlanOrder, which the planner and the verifier both trust, against what runs do: a step it
    // says happens before another ended before that one started in every run (workers race
    // differently each time), producers precede their readers, and precedesAllFrom is what
    // precedes() says it is.
    void planOrderHoldsInRuns_data()
    {
        QTest::addColumn<int>("strategy");
        QTest::addColumn<bool>("shared");
        QTest::addColumn<std::uint32_t>("seed");
        for (std::uint32_t seed = 1; seed <= 6; ++seed) {
            const std::string s = std::to_string(seed);
            QTest::newRow(("serial/" + s).c_str()) << int(Strategy::Serial) << true << seed;
            QTest::newRow(("parallel/" + s).c_str()) << int(Strategy::Parallel) << true << seed;
            QTest::newRow(("parallel-fixed/" + s).c_str()) << int(Strategy::Parallel) << false << seed;
            QTest::newRow(("greedy/" + s).c_str()) << int(Strategy::Greedy) << true << seed;
        }
    }
    void planOrderHoldsInRuns()
    {
        QFETCH(int, strategy);
        QFETCH(bool, shared);
        QFETCH(std::uint32_t, seed);
        const Model model = randomModel(seed, 40 + int(seed) * 10);
        ScheduleOptions so;
        so.workers = 2;
        so.sharedQueue = shared;
        Expected<DevicePlan> planned = planForDevices(model, Strategy(strategy), cpus(2), so);
        QVERIFY2(planned, planned ? "" : planned.status().message().c_str());
        const Model &runModel = planned->partition.model;
        const ExecutionPlan &plan = planned->schedule.plan;
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(runModel);
        QVERIFY(s);
        Expected<PlanOrder> order = PlanOrder::of((*s)->prepared(), plan);
        QVERIFY2(order, order ? "" : order.status().message().c_str());
        QVERIFY(order->hasMatrix());
        const int steps = int(order->order().size());
        QVERIFY(steps > 20);
        const Graph &g = runModel.graph;
        for (int q = 0; q < steps; ++q) {
            const Node &n = g.node(order->order()[std::size_t(q)]);
            for (ValueId v : n.inputs)
                if (v.valid() && g.value(v).producer.valid()) {
                    const int p = order->position(g.value(v).producer);
                    QVERIFY(p >= 0 && p < q);
                    QVERIFY2(order->precedes(p, q), (g.value(v).name + " → " + n.name).c_str());
                }
        }
        for (int p = 0; p < steps; ++p) {
            QVERIFY(!order->precedes(p, p));
            int from = steps;
            while (from > p + 1 && order->precedes(p, from - 1))
                --from;
            QCOMPARE(order->precedesAllFrom(p), std::max(from, p + 1));
            if (Strategy(strategy) == Strategy::Serial)
                for (int q = 0; q < steps; ++q)
                    QCOMPARE(order->precedes(p, q), p < q);
        }
        const Feeds feeds{{"x", randomTensor({4, 64}, seed)}};
        using Clock = std::chrono::steady_clock;
        for (int round = 0; round < 5; ++round) {
            std::vector<std::pair<Clock::time_point, Clock::time_point>> span(static_cast<std::size_t>(steps));
            std::mutex lock;
            ExecOptions exec;
            exec.onStep = [&](const StepEvent &e) {
                const int at = order->position(e.node);
                if (e.graph == (*s)->prepared().graph && at >= 0) {
                    std::lock_guard guard(lock);
                    span[std::size_t(at)] = {e.start, e.end};
                }
            };
            QVERIFY((*s)->run(feeds, &plan, &exec));
            for (int p = 0; p < steps; ++p)
                for (int q = p + 1; q < steps; ++q)
                    if (order->precedes(p, q))
                        QVERIFY2(span[std::size_t(p)].second <= span[std::size_t(q)].first,
                                 (g.node(order->order()[std::size_t(p)]).name + " before " +
                                  g.node(order->order()[std::size_t(q)]).name)
                                     .c_str());
        }
    }

    // An alias the plan does not know (the record forgets that Reshape is a view): the run copies
    // it out of the arena instead of letting later tensors overwrite it.
    void unknownAliasIsCopiedOut()
    {
        const Model model = chainModel();
        const Feeds feeds{{"x", randomTensor({16, 16}, 3)}};
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
        QVERIFY(s);
        SizeRecord record(model.graph.valueSlots());
        ExecOptions sizing;
        sizing.record = &record;
        QVERIFY((*s)->run(feeds, nullptr, &sizing));
        const ValueId c = (*s)->prepared().graph->findValue("c");
        QVERIFY(record[c.index].viewOf.valid());
        record[c.index].viewOf = ValueId();
        Expected<MemoryPlan> plan = planMemory((*s)->prepared(), (*s)->prepared().plan, record);
        QVERIFY(plan);
        MemoryRunStats stats;
        ExecOptions exec;
        exec.memory = &*plan;
        exec.memoryStats = &stats;
        Expected<std::vector<RuntimeTensor>> got = (*s)->run(feeds, nullptr, &exec);
        QVERIFY(got);
        QCOMPARE(stats.copiedOut, std::size_t(1));
        QVERIFY(sameBits(got->at(0), runOnce(model, nullptr, feeds, false).at(0)));
    }

    // A kernel that makes its output itself (Shape's dims) gets no arena range it would leave
    // unused; Gather, Split and DepthToSpace write theirs where the plan put them. A planned run
    // then has no output the plan placed that its kernel allocated elsewhere (tst_conformance
    // checks the same over the backend suite).
    void kernelsWriteWhereThePlanPutThem()
    {
        Model m;
        m.opsets = {{"", 18}};
        Graph &g = m.graph;
        const ValueId x = g.addInput("x", floats({1, 8, 4, 4}));
        const ValueId idx = g.addInitializer("idx", Tensor::fromValues<std::int64_t>(DataType::Int64, {3}, {2, 0, 5}));
        const ValueId halves = g.addInitializer("halves", Tensor::fromValues<std::int64_t>(DataType::Int64, {2}, {3, 5}));
        const ValueId a = node(g, "Relu", {x}, "a");
        const ValueId shape = node(g, "Shape", {a}, "shape");
        const ValueId gathered = node(g, "Gather", {a, idx}, "gathered", {Attribute::makeInt("axis", 1)});
        const ValueId lo = *g.createValue("lo"), hi = *g.createValue("hi");
        const NodeId split = *g.addNode("Split", {a, halves}, {lo, hi}, {}, "split_node");
        g.node(split).attributes = {Attribute::makeInt("axis", 1)};
        const ValueId d2s = node(g, "DepthToSpace", {a}, "d2s", {Attribute::makeInt("blocksize", 2)});
        const ValueId sum = node(g, "Add", {node(g, "Neg", {gathered}, "g2"), node(g, "Abs", {lo}, "l2")}, "sum");
        g.addOutput(node(g, "Mul", {sum, sum}, "y"));
        g.addOutput(node(g, "Sigmoid", {hi}, "z"));
        g.addOutput(node(g, "Tanh", {d2s}, "w"));
        g.addOutput(node(g, "Cast", {shape}, "s", {Attribute::makeInt("to", int(DataType::Float))}));
        // Dynamically quantized: ConvInteger's and MatMulInteger's int32 results are their outputs
        // (a quantized U-Net's largest tensors), DynamicQuantizeLinear's scale and zero point
        // scalars the kernel's own.
        const ValueId q = *g.createValue("q"), qs = *g.createValue("qs"), qz = *g.createValue("qz");
        QVERIFY(g.addNode("DynamicQuantizeLinear", {a}, {q, qs, qz}, {}, "dql_node"));
        std::vector<std::uint8_t> w8(4 * 8), b8(4 * 4);
        for (std::size_t i = 0; i < w8.size(); ++i)
            w8[i] = std::uint8_t(i * 37 % 251);
        for (std::size_t i = 0; i < b8.size(); ++i)
            b8[i] = std::uint8_t(i * 53 % 241);
        const ValueId w = g.addInitializer("w8", Tensor::fromValues<std::uint8_t>(DataType::UInt8, {4, 8, 1, 1}, w8));
        const ValueId b = g.addInitializer("b8", Tensor::fromValues<std::uint8_t>(DataType::UInt8, {4, 4}, b8));
        const ValueId ci = node(g, "ConvInteger", {q, w, qz}, "ci");
        const ValueId mi = node(g, "MatMulInteger", {q, b, qz}, "mi");
        g.addOutput(node(g, "Cast", {ci}, "cif", {Attribute::makeInt("to", int(DataType::Float))}));
        g.addOutput(node(g, "Cast", {mi}, "mif", {Attribute::makeInt("to", int(DataType::Float))}));
        QVERIFY(refreshShapes(m));
        const Feeds feeds{{"x", randomTensor({1, 8, 4, 4}, 5)}};
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(m);
        QVERIFY2(s, s ? "" : s.status().message().c_str());
        const Expected<std::vector<RuntimeTensor>> sizing = (*s)->run(feeds);
        QVERIFY2(sizing, sizing ? "" : sizing.status().message().c_str());
        const std::shared_ptr<const MemoryPlan> plan = (*s)->memoryPlan(feeds);
        QVERIFY(plan);
        const Graph &pg = *(*s)->prepared().graph;
        QCOMPARE(tensorNamed(pg, *plan, "shape").placement, TensorPlacement::Own);
        QCOMPARE(tensorNamed(pg, *plan, "qs").placement, TensorPlacement::Own);
        for (const char *name : {"gathered", "lo", "d2s", "ci", "mi"})
            QVERIFY2(inArena(*plan, tensorNamed(pg, *plan, name)), name);
        MemoryRunStats stats;
        ExecOptions exec;
        exec.memoryStats = &stats;
        Expected<std::vector<RuntimeTensor>> got = (*s)->run(feeds, nullptr, &exec);
        QVERIFY(got);
        QCOMPARE(stats.elsewhere, std::size_t(0));
        QVERIFY(stats.inArena >= 5);
        const std::vector<RuntimeTensor> want = runOnce(m, nullptr, feeds, false);
        for (std::size_t i = 0; i < want.size(); ++i)
            QVERIFY(sameBits(got->at(i), want[i]));
        // Sized from shapes alone, Shape's output is the kernel's too.
        Expected<MemoryPlan> fromShapes = (*s)->memoryPlanFromShapes(feeds, nullptr, nullptr);
        QVERIFY(fromShapes);
        QCOMPARE(tensorNamed(pg, *fromShapes, "shape").placement, TensorPlacement::Own);
    }

    // NonZero's output size depends on the data: its own allocation; what follows it was sized by
    // the first run and gets its own allocation when a later run needs more.
    void dataDependentSizes()
    {
        Model m;
        m.opsets = {{"", 17}};
        Graph &g = m.graph;
        const ValueId x = g.addInput("x", floats({64}));
        const ValueId nz = node(g, "NonZero", {x}, "nz");
        const ValueId t = node(g, "Neg", {nz}, "t");
        g.addOutput(node(g, "Abs", {t}, "y"));
        std::vector<float> few(64, 0.0f), many(64, 1.0f);
        few[3] = few[10] = 1.0f;
        const Feeds small{{"x", RuntimeTensor::fromValues(DataType::Float, {64}, few)}};
        const Feeds big{{"x", RuntimeTensor::fromValues(DataType::Float, {64}, many)}};
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(m);
        QVERIFY(s && (*s)->run(small));
        const std::shared_ptr<const MemoryPlan> plan = (*s)->memoryPlan(small);
        QVERIFY(plan);
        QCOMPARE(tensorNamed(*(*s)->prepared().graph, *plan, "nz").placement, TensorPlacement::Dynamic);
        QCOMPARE(tensorNamed(*(*s)->prepared().graph, *plan, "t").placement, TensorPlacement::Arena);
        MemoryRunStats stats;
        ExecOptions exec;
        exec.memoryStats = &stats;
        Expected<std::vector<RuntimeTensor>> got = (*s)->run(big, nullptr, &exec);
        QVERIFY(got);
        QCOMPARE(stats.elsewhere, std::size_t(1)); // t needed 64 rows where the plan had 2
        QVERIFY(sameBits(got->at(0), runOnce(m, nullptr, big, false).at(0)));
    }

    // What a container or batch job leaves a process: the least headroom of its memory cgroup and
    // every cgroup above it, page cache counted as free (as MemAvailable does). Fake hierarchies
    // in a folder, as the kernel lays them out; MemAvailable alone would let a run start that the
    // kernel then kills at the job's limit.
    void cgroupHeadroom_data()
    {
        QTest::addColumn<QString>("selfCgroup"); // /proc/self/cgroup
        QTest::addColumn<QStringList>("files");  // path=content, under the fake /sys/fs/cgroup
        QTest::addColumn<qulonglong>("expected");
        const qulonglong gib = 1ull << 30, mib = 1ull << 20;
        QTest::newRow("v2 job limit") << "0::/job/step" << QStringList{"cgroup.controllers=memory",
                                  "job/step/memory.max=4294967296", "job/step/memory.current=1073741824",
                                  "job/step/memory.stat=anon 5\ninactive_file 536870912"} << 3 * gib + 512 * mib;
        QTest::newRow("v2 parent tighter") << "0::/job/step" << QStringList{"cgroup.controllers=memory",
                                  "job/memory.max=2147483648", "job/memory.current=1610612736",
                                  "job/step/memory.max=max", "job/step/memory.current=1"} << 512 * mib;
        QTest::newRow("v2 no limit") << "0::/user.slice" << QStringList{"cgroup.controllers=memory",
                                  "user.slice/memory.max=max", "user.slice/memory.current=100"} << 0ull;
        QTest::newRow("v2 container root") << "0::/" << QStringList{"cgroup.controllers=memory",
                                  "memory.max=1073741824", "memory.current=268435456"} << 768 * mib;
        QTest::newRow("v1 limit") << "5:cpu,cpuacct:/\n4:memory:/docker/abc" << QStringList{
                                  "memory/docker/abc/memory.limit_in_bytes=1073741824",
                                  "memory/docker/abc/memory.usage_in_bytes=805306368",
                                  "memory/docker/abc/memory.stat=cache 1\ntotal_inactive_file 268435456"} << 512 * mib;
        QTest::newRow("v1 unlimited, path not visible") << "4:memory:/process_api/x" << QStringList{
                                  "memory/memory.limit_in_bytes=9223372036854771712",
                                  "memory/memory.usage_in_bytes=447410176"} << 0ull;
        QTest::newRow("over the limit") << "0::/j" << QStringList{"cgroup.controllers=memory", "j/memory.max=1000",
                                  "j/memory.current=5000"} << 1ull;
        QTest::newRow("no cgroup file") << "" << QStringList{} << 0ull;
    }
    void cgroupHeadroom()
    {
        QFETCH(QString, selfCgroup);
        QFETCH(QStringList, files);
        QFETCH(qulonglong, expected);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path root = dir.path().toStdString();
        const auto write = [](const std::filesystem::path &p, const QString &text) {
            std::filesystem::create_directories(p.parent_path());
            std::ofstream(p) << text.toStdString() << "\n";
        };
        if (!selfCgroup.isEmpty())
            write(root / "self-cgroup", selfCgroup);
        for (const QString &f : files)
            write(root / "fs" / f.section('=', 0, 0).toStdString(), f.section('=', 1));
        QCOMPARE(qulonglong(cgroupAvailableBytes((root / "self-cgroup").string(), (root / "fs").string())), expected);
    }
};

QTEST_GUILESS_MAIN(TestMemoryPlan)
#include "tst_memoryplan.moc"
