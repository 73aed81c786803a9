// Schedules and traces in core: plans of every strategy are valid on random DAGs and real models,
// multi-device runs (partitioned with Send/Recv) compute exactly the serial outputs, the simulator
// stays near the lower bound, Chrome traces round-trip, and the level-of-detail query merges what
// a pixel cannot show.

#include "ir/dependencies.h"
#include "ir/opcategory.h"
#include "ir/verifier.h"
#include "passes/partitionpass.h"
#include "passtest.h"
#include "runtime/conformance.h"
#include "runtime/memoryreport.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "schedule/partition.h"
#include "schedule/pipeline.h"
#include "schedule/profiler.h"
#include "schedule/scheduler.h"
#include "scheduletest.h"
#include "util/systemload.h"
#include "testsupport.h"
#include "trace/chrometrace.h"

#include <QTest>
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>

using namespace opscope;
using namespace opscope::schedule;

namespace {

// A random DAG of elementwise ops over [1, 64] floats: each node reads one or two earlier values.
Model randomDag(int nodes, std::uint32_t seed)
{
    Model m;
    m.opsets = {{"", 17}};
    Graph &g = m.graph;
    std::mt19937 rng(seed);
    std::vector<ValueId> values{
        g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 64})))};
    for (int i = 0; i < nodes; ++i) {
        std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
        const ValueId out = *g.createValue("v" + std::to_string(i));
        g.value(out).type = TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 64}));
        if (rng() % 2)
            (void)g.addNode("Add", {values[pick(rng)], values[pick(rng)]}, {out}, {},
                            "add" + std::to_string(i));
        else
            (void)g.addNode("Tanh", {values[pick(rng)]}, {out}, {}, "tanh" + std::to_string(i));
        values.push_back(out);
    }
    // Every sink is an output, so nothing is dead.
    for (ValueId v : values)
        if (g.uses(v).empty() && !g.value(v).isGraphInput)
            g.addOutput(v);
    return m;
}

using test::devices;
using test::runWith;

} // namespace

class TestSchedule : public QObject
{
    Q_OBJECT

private slots:
    void plansAreValid_data()
    {
        QTest::addColumn<int>("nodes");
        QTest::addColumn<int>("seed");
        QTest::addColumn<int>("workers");
        for (int seed : {1, 2, 3})
            for (int workers : {1, 2, 4})
                QTest::addRow("dag 60 seed %d on %d", seed, workers) << 60 << seed << workers;
        QTest::newRow("dag 400 on 8") << 400 << 9 << 8;
    }
    void plansAreValid()
    {
        QFETCH(int, nodes);
        QFETCH(int, seed);
        QFETCH(int, workers);
        const Model m = randomDag(nodes, std::uint32_t(seed));
        const CostModel cost = devices(workers);
        ScheduleOptions o;
        o.workers = workers;
        for (Strategy s : {Strategy::Serial, Strategy::Parallel, Strategy::Greedy, Strategy::RoundRobin,
                           Strategy::Pipeline}) {
            Expected<DevicePlan> planned = planForDevices(m, s, cost, o);
            QVERIFY2(planned, planned ? "" : planned.status().message().c_str());
            const Model &model = planned->partition.model;
            const double placed = planned->placement.makespan;
            if (s == Strategy::Greedy || s == Strategy::RoundRobin || s == Strategy::Pipeline) {
                // Every edge between devices goes through a Send/Recv pair.
                const Graph &g = model.graph;
                const std::vector<int> &deviceOf = planned->partition.deviceOf;
                for (NodeId n : g.nodeIds())
                    for (ValueId in : g.node(n).inputs) {
                        const NodeId p = g.producer(in);
                        if (p.valid() && deviceOf[p.index] != deviceOf[n.index])
                            QVERIFY2(g.node(n).opType == "Recv" && g.node(p).opType == "Send",
                                     (g.node(p).name + " -> " + g.node(n).name).c_str());
                    }
            }
            const Schedule *plan = &planned->schedule;
            const Status valid = validatePlan(model.graph, plan->plan);
            QVERIFY2(valid, valid.message().c_str());
            QVERIFY(plan->predictedMakespan >= makespanLowerBound(model.graph, cost) * 0.999);
            // The plan replays the placement: each device in the placement's order, never later.
            if (s == Strategy::Greedy)
                QVERIFY2(
                    plan->predictedMakespan <= placed * (1 + 1e-9),
                    qPrintable(
                        QStringLiteral("plan %1 vs placement %2").arg(plan->predictedMakespan).arg(placed)));
            // A Send costs nothing and releases a transfer: it directly follows its producer.
            for (const PlanQueue &q : plan->plan.queues)
                for (std::size_t i = 0; i < q.steps.size(); ++i) {
                    const Node &n = model.graph.node(q.steps[i].node);
                    if (n.opType != "Send")
                        continue;
                    QVERIFY(i > 0);
                    QCOMPARE(q.steps[i - 1].node, model.graph.producer(n.inputs[0]));
                }
        }
    }

    void everyScheduleComputesTheSerialOutputs()
    {
        const Model m = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(m);
        QVERIFY(s);
        Expected<Feeds> feeds = randomFeeds(**s, {}, RandomInputOptions{});
        QVERIFY(feeds);
        const std::vector<RuntimeTensor> reference = runWith(m, nullptr, *feeds);
        const CostModel cost = devices(3);
        ScheduleOptions o;
        o.workers = 3;
        // Parallel twice: workers sharing one queue, then a fixed queue per worker.
        for (Strategy st : {Strategy::Parallel, Strategy::Parallel, Strategy::Greedy, Strategy::RoundRobin,
                            Strategy::Pipeline}) {
            o.sharedQueue = !o.sharedQueue;
            Model model = m;
            std::vector<int> placement;
            if (st != Strategy::Parallel) {
                Expected<Partition> part = partitionForDevices(m, *placeNodes(m.graph, st, cost));
                QVERIFY(part);
                if (st == Strategy::RoundRobin || st == Strategy::Pipeline)
                    QVERIFY(part->transfers > 0);
                model = part->model;
                placement = part->deviceOf;
            }
            Expected<Schedule> plan =
                makeSchedule(model.graph, st, cost, o, placement.empty() ? nullptr : &placement);
            QVERIFY(plan);
            const bool shared = st == Strategy::Parallel && o.sharedQueue;
            QCOMPARE(plan->plan.queues.size(), std::size_t(shared ? 1 : 3));
            QCOMPARE(plan->plan.queues.front().workers, shared ? 3 : 1);
            QVERIFY(validatePlan(model.graph, plan->plan));
            for (int run = 0; run < 3; ++run) {
                const std::vector<RuntimeTensor> out = runWith(model, &plan->plan, *feeds);
                QCOMPARE(out.size(), reference.size());
                // Same kernels, same order of arithmetic per op; each session times its own convolution
                // layouts, so results may differ in the last bit, never more.
                for (std::size_t i = 0; i < out.size(); ++i) {
                    double diff = 0.0;
                    const Status same = compareTensors(out[i], reference[i], 1e-5, 1e-6, diff);
                    QVERIFY2(same, same.message().c_str());
                }
            }
        }
    }

    // Pipeline stages are contiguous in a dependency order: every edge goes forward (a stage never
    // waits for a later one, so micro-batches can flow), every stage gets work, and the slowest
    // stage is within one op of an even split.
    void pipelineStagesGoForwardAndBalance_data()
    {
        QTest::addColumn<int>("nodes");
        QTest::addColumn<int>("seed");
        QTest::addColumn<int>("stages");
        for (int seed : {1, 2, 3})
            for (int stages : {2, 3, 5})
                QTest::addRow("dag 120 seed %d, %d stages", seed, stages) << 120 << seed << stages;
        QTest::newRow("fewer nodes than stages") << 3 << 4 << 5;
    }
    void pipelineStagesGoForwardAndBalance()
    {
        QFETCH(int, nodes);
        QFETCH(int, seed);
        QFETCH(int, stages);
        Model m = randomDag(nodes, std::uint32_t(seed));
        CostModel cost = devices(stages);
        // Uneven op times, as measured ones are.
        std::mt19937 rng(static_cast<std::uint32_t>(seed));
        for (NodeId n : m.graph.nodeIds())
            cost.measuredSeconds[m.graph.node(n).name] = 1e-6 * double(1 + rng() % 50);
        Expected<Placement> p = placeFor(m.graph, Strategy::Pipeline, cost);
        QVERIFY2(p, p ? "" : p.status().message().c_str());
        std::vector<double> load(std::size_t(stages), 0.0);
        double total = 0.0, biggest = 0.0;
        for (NodeId n : m.graph.nodeIds()) {
            const int d = p->device[n.index];
            QVERIFY(d >= 0 && d < stages);
            const double sec = cost.measuredSeconds[m.graph.node(n).name];
            load[std::size_t(d)] += sec;
            total += sec;
            biggest = std::max(biggest, sec);
            for (ValueId in : m.graph.node(n).inputs)
                if (const NodeId q = m.graph.producer(in); q.valid())
                    QVERIFY2(p->device[q.index] <= d, "an edge goes back to an earlier stage");
        }
        const int used = int(std::count_if(load.begin(), load.end(), [](double x) { return x > 0; }));
        QCOMPARE(used, std::min(stages, nodes));
        QVERIFY(*std::max_element(load.begin(), load.end()) <= total / stages + biggest + 1e-12);
        QCOMPARE(idealBubble(4, 3), 2.0 / 6.0);
        QCOMPARE(idealBubble(1, 1), 0.0);
    }

    // --simulate 4xgpu:8: hosts of devices, slower links between hosts than inside one; a
    // pipeline of micro-batches predicted GPipe-style.
    void simulatedHostsAndPipelines()
    {
        Expected<CostModel> m = simulatedModel("4xgpu:8", devices(1));
        QVERIFY(m);
        QCOMPARE(m->devices.size(), std::size_t(32));
        QCOMPARE(m->devices[9].name, std::string("host1:gpu:1"));
        QCOMPARE(m->processOf[9], 1);
        QVERIFY(m->transferSeconds(1e6, 8, 9) < m->transferSeconds(1e6, 7, 8)); // NVLink inside, IB across
        Expected<CostModel> eth = simulatedModel("2xgpu:4@eth", devices(1));
        QVERIFY(eth && eth->transferSeconds(1e6, 0, 4) > m->transferSeconds(1e6, 0, 8));
        for (const char *bad : {"0xgpu:8", "4xgpu:8@carrier-pigeon", "4xnpu:8", "2000xgpu:8"})
            QVERIFY2(!simulatedModel(bad, devices(1)), bad);

        const Model dag = randomDag(120, 5);
        ScheduleOptions o;
        o.workers = 4;
        Expected<DevicePlan> planned = planForDevices(dag, Strategy::Pipeline, devices(4), o);
        QVERIFY(planned);
        const PipelinePrediction one = predictPipeline(planned->schedule, 4, 1);
        const PipelinePrediction eight = predictPipeline(planned->schedule, 4, 8);
        QCOMPARE(one.stages, 4);
        QCOMPARE(eight.bubble, 3.0 / 11.0);
        // More micro-batches: the slowest stage's share sets the pace, the fill and drain shrink.
        QVERIFY(eight.makespanSeconds < one.makespanSeconds);
        QVERIFY(eight.makespanSeconds > one.makespanSeconds / 4.0);
    }

    void workersSharingAQueue_data()
    {
        QTest::addColumn<int>("workers");
        QTest::addColumn<int>("seed");
        for (int w : {2, 4})
            for (int seed : {1, 2, 3})
                QTest::addRow("%d workers, dag %d", w, seed) << w << seed;
    }
    void workersSharingAQueue()
    {
        // Each step runs once, after its producers, on one of the workers (a lane each in the
        // trace); the outputs are the serial ones, run after run.
        QFETCH(int, workers);
        QFETCH(int, seed);
        const Model m = randomDag(250, std::uint32_t(seed));
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(m);
        QVERIFY(s);
        Expected<Feeds> feeds = randomFeeds(**s, {}, RandomInputOptions{});
        QVERIFY(feeds);
        const std::vector<RuntimeTensor> reference = runWith(m, nullptr, *feeds);
        ScheduleOptions o;
        o.workers = workers;
        Expected<Schedule> plan = makeSchedule(m.graph, Strategy::Parallel, devices(1), o);
        QVERIFY(plan);
        QCOMPARE(plan->plan.queues.front().workers, workers);
        for (int run = 0; run < 5; ++run) {
            std::mutex mutex;
            std::map<std::uint32_t, std::pair<double, double>> spans; // node → start, end (s)
            std::set<std::uint32_t> lanes;
            int twice = 0;
            const auto t0 = std::chrono::steady_clock::now();
            ExecOptions exec;
            exec.onStep = [&](const StepEvent &e) {
                if (e.graph != &(*s)->model().graph)
                    return;
                std::lock_guard lock(mutex);
                const auto sec = [&](auto t) { return std::chrono::duration<double>(t - t0).count(); };
                if (!spans.emplace(e.node.index, std::make_pair(sec(e.start), sec(e.end))).second)
                    ++twice;
                lanes.insert(e.queue);
            };
            Expected<std::vector<RuntimeTensor>> out = (*s)->run(*feeds, &plan->plan, &exec);
            QVERIFY2(out, out ? "" : out.status().message().c_str());
            QCOMPARE(twice, 0);
            QCOMPARE(spans.size(), m.graph.nodeCount());
            QVERIFY(*lanes.rbegin() < std::uint32_t(workers));
            const auto preds = nodePredecessors(m.graph);
            for (const auto &[node, span] : spans)
                for (NodeId p : preds[node])
                    QVERIFY(spans.at(p.index).second <= span.first);
            for (std::size_t i = 0; i < out->size(); ++i) {
                double diff = 0.0;
                const Status same = compareTensors((*out)[i], reference[i], 0.0, 0.0, diff);
                QVERIFY2(same, same.message().c_str());
            }
        }
    }

    void sharedQueueStopsOnAnError()
    {
        // A kernel error on one worker stops the others and comes back naming the node; no hang.
        Model m = randomDag(120, 4);
        Graph &g = m.graph;
        const ValueId shape = g.addInitializer(
            "bad_shape", Tensor::fromValues(DataType::Int64, {1}, std::vector<std::int64_t>{7}));
        const ValueId out = *g.createValue("reshaped");
        (void)g.addNode("Reshape", {g.findValue("v60"), shape}, {out}, {}, "impossible_reshape");
        g.addOutput(out);
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(m);
        QVERIFY(s);
        Expected<Feeds> feeds = randomFeeds(**s, {}, RandomInputOptions{});
        QVERIFY(feeds);
        ScheduleOptions o;
        o.workers = 4;
        Expected<Schedule> plan = makeSchedule(g, Strategy::Parallel, devices(1), o);
        QVERIFY(plan);
        for (int run = 0; run < 5; ++run) {
            Expected<std::vector<RuntimeTensor>> result = (*s)->run(*feeds, &plan->plan);
            QVERIFY(!result);
            QVERIFY2(result.status().message().find("impossible_reshape") != std::string::npos,
                     result.status().message().c_str());
        }
    }

    void greedyReplaysItsPlacement()
    {
        // What runs (partitioned, each Recv a copy on its device) is what the placement predicted.
        const Model m = randomDag(300, 11);
        for (int n : {2, 4, 8}) {
            const CostModel cost = devices(n);
            ScheduleOptions o;
            o.workers = n;
            Expected<DevicePlan> planned = planForDevices(m, Strategy::Greedy, cost, o);
            Expected<Schedule> serial = makeSchedule(m.graph, Strategy::Serial, cost, o);
            QVERIFY(planned && serial);
            const Placement *place = &planned->placement;
            const Schedule *plan = &planned->schedule;
            QVERIFY(plan->predictedMakespan <= place->makespan * (1 + 1e-9));
            QVERIFY(plan->predictedMakespan > 0.5 * place->makespan);
            // Never worse than one device: that placement is always a candidate.
            QVERIFY(place->makespan <= serial->predictedMakespan * (1 + 1e-9));
        }
    }

    void copiesOverlapOnDevicesWithCopyEngines()
    {
        // Simulated GPUs copy on a queue of their own: the plan has a copy queue per device and
        // every Recv (and nothing else) runs on one.
        const Model m = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        Expected<CostModel> gpus = simulatedModel("gpu:4", devices(1));
        QVERIFY(gpus);
        ScheduleOptions o;
        o.workers = 4;
        o.devicePrefix = "gpu";
        Expected<DevicePlan> planned = planForDevices(m, Strategy::RoundRobin, *gpus, o);
        QVERIFY(planned && planned->partition.transfers > 0);
        const Partition *part = &planned->partition;
        const Schedule *plan = &planned->schedule;
        QCOMPARE(plan->plan.devices.size(), std::size_t(4));
        QCOMPARE(plan->plan.queues.size(), std::size_t(8));
        QVERIFY(validatePlan(part->model.graph, plan->plan));
        for (std::size_t q = 0; q < plan->plan.queues.size(); ++q) {
            QCOMPARE(plan->plan.queues[q].device, int(q % 4));
            for (const PlanStep &step : plan->plan.queues[q].steps)
                QCOMPARE(part->model.graph.node(step.node).opType == "Recv", q >= 4);
        }
        // The predicted trace carries each copy as a transfer (source lane → copy lane), and a
        // device's utilization counts its compute lane only.
        ProfileRun r;
        r.trace = predictedTrace(part->model.graph, *plan, "round-robin");
        QCOMPARE(r.trace.transfers.size(), part->transfers);
        for (const trace::Transfer &x : r.trace.transfers) {
            QVERIFY(x.fromLane != x.toLane && x.start <= x.end && x.bytes > 0);
            QCOMPARE(r.trace.lanes[x.toLane].queue >= 4, true);
        }
        summarizeRun(r);
        QCOMPARE(r.utilization.size(), std::size_t(4));
        for (const auto &[device, u] : r.utilization)
            QVERIFY(u > 0.0 && u <= 1.0);
    }

    void overlapIsTheUnionOfComputeDuringTransfers()
    {
        // A copy into cpu:1 from 1.0 to 2.0 s; cpu:0 computes 0.5–1.5 and 1.8–3.0 (waiting between),
        // cpu:2 computes 1.0–1.3 (inside cpu:0's span: not counted twice). Overlap 0.7.
        ProfileRun r;
        trace::Trace &t = r.trace;
        const auto span = [&](const char *device, double a, double b, std::uint8_t category = 0) {
            t.lanes[t.laneFor(device, 0)].spans.push_back({a, b, t.intern("n"), t.intern("Conv"), category});
        };
        span("cpu:0", 0.5, 1.5);
        span("cpu:0", 1.5, 1.8, trace::kIdleCategory);
        span("cpu:0", 1.8, 3.0);
        span("cpu:1", 1.0, 2.0); // the Recv itself
        span("cpu:2", 1.0, 1.3);
        t.sortLanes();
        t.transfers.push_back(
            {1.0, 2.0, 1024, std::uint32_t(t.laneFor("cpu:0", 0)), std::uint32_t(t.laneFor("cpu:1", 0))});
        summarizeRun(r);
        QCOMPARE(r.transfers, std::size_t(1));
        QVERIFY2(std::abs(r.overlap - 0.7) < 1e-9, qPrintable(QString::number(r.overlap)));
    }

    // A GPU trace holds the executor's steps (launches queued) and CUPTI's stream lanes (the
    // work): utilization and op times come from the stream lanes alone, never from both.
    void gpuWorkComesFromItsStreamLanes()
    {
        ProfileRun r;
        trace::Trace &t = r.trace;
        const std::uint32_t conv = t.intern("conv1"), op = t.intern("Conv");
        t.lanes.push_back({"cuda:0", 0, {{0.0, 0.1, conv, op, 0}}, {}});              // queued
        t.lanes.push_back({"cuda:0", 1013, {{0.2, 0.6, conv, op, 0}}, "stream 13"}); // ran
        t.lanes.push_back({"host", 1007, {{0.0, 0.05, t.intern("cudaLaunchKernel"), t.intern("CUDA API"),
                                           trace::kIdleCategory}}, "CUDA API (thread 7)"});
        t.lanes.push_back({"cpu:0", 0, {{0.0, 1.0, t.intern("nms"), t.intern("NonMaxSuppression"), 0}}, {}});
        const std::vector<bool> queuedOnly = trace::queuedOnlyLanes(t);
        QCOMPARE(queuedOnly, (std::vector<bool>{true, false, false, false}));
        summarizeRun(r);
        QCOMPARE(r.utilization.size(), std::size_t(2));
        for (const auto &[device, u] : r.utilization)
            QVERIFY2(std::abs(u - (device == "cuda:0" ? 0.4 : 1.0)) < 1e-9, device.c_str());
        QVERIFY2(std::abs(opSeconds(t)["conv1"] - 0.4) < 1e-9, qPrintable(QString::number(opSeconds(t)["conv1"])));

        // Copies on another stream of the same GPU: overlapped by kernels 0.2–0.6 for half of
        // 0.5–0.7, not at all 0.8–0.9; a kernel on another GPU does not count.
        t.lanes.push_back({"cuda:0", 1014, {{0.5, 0.7, t.intern("x"), t.intern("Memcpy HtoD"), 9},
                                            {0.8, 0.9, t.intern("y"), t.intern("Memcpy DtoH"), 9}}, "stream 14"});
        t.lanes.push_back({"cuda:1", 1013, {{0.8, 0.9, conv, op, 0}}, "stream 13"});
        summarizeRun(r);
        QCOMPARE(r.transfers, std::size_t(2));
        QVERIFY2(std::abs(r.overlap - 0.1 / 0.3) < 1e-9, qPrintable(QString::number(r.overlap)));
    }

    void streamsShareTheirGpu()
    {
        // Parallel streams on one simulated GPU overlap their launches, not their work: the
        // makespan lies between the device's total work and serial's.
        const Model m = randomDag(200, 3);
        Expected<CostModel> gpu = simulatedModel("gpu:4", devices(1));
        QVERIFY(gpu);
        ScheduleOptions o;
        o.workers = 4;
        o.devicePrefix = "gpu";
        Expected<Schedule> parallel = makeSchedule(m.graph, Strategy::Parallel, *gpu, o);
        Expected<Schedule> serial = makeSchedule(m.graph, Strategy::Serial, *gpu, o);
        QVERIFY(parallel && serial);
        double work = 0.0;
        for (NodeId n : m.graph.nodeIds())
            work += gpu->seconds(estimateCost(m.graph, n), 0) - gpu->devices[0].overheadSeconds;
        QVERIFY2(parallel->predictedMakespan >= work * (1 - 1e-9),
                 qPrintable(QStringLiteral("%1 < work %2").arg(parallel->predictedMakespan).arg(work)));
        QVERIFY(parallel->predictedMakespan < serial->predictedMakespan);
        // CPU devices: each worker is a core of its own; four of them more than halve serial here.
        const CostModel cpus = devices(4);
        Expected<Schedule> cpuParallel = makeSchedule(m.graph, Strategy::Parallel, cpus, o);
        Expected<Schedule> cpuSerial = makeSchedule(m.graph, Strategy::Serial, cpus, o);
        QVERIFY(cpuParallel && cpuSerial);
        QVERIFY(cpuParallel->predictedMakespan < 0.5 * cpuSerial->predictedMakespan);
    }

    void measuredTimesReplaceEstimates()
    {
        // A serial run's per-op times (opSeconds of its trace) drive the plan where given.
        const Model m = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        CostModel cost = devices(2);
        ScheduleOptions o;
        Expected<Schedule> estimated = makeSchedule(m.graph, Strategy::Serial, cost, o);
        QVERIFY(estimated);
        trace::Trace t;
        const std::size_t lane = t.laneFor("cpu:0", 0);
        const std::string slow = m.graph.node(m.graph.nodeIds().front()).name;
        t.lanes[lane].spans.push_back({0.0, 0.5, t.intern(slow), t.intern("Conv"), 0});
        t.lanes[lane].spans.push_back({0.5, 0.7, t.intern(slow), t.intern("(wait)"), trace::kIdleCategory});
        t.sortLanes();
        cost.measuredSeconds = opSeconds(t);
        QCOMPARE(cost.measuredSeconds.size(), std::size_t(1));
        QCOMPARE(cost.measuredSeconds.at(slow), 0.5);
        Expected<Schedule> measured = makeSchedule(m.graph, Strategy::Serial, cost, o);
        QVERIFY(measured);
        QVERIFY(std::abs(measured->predictedMakespan - estimated->predictedMakespan - 0.5) < 0.01);
    }

    void greedyStaysNearTheLowerBound()
    {
        // Wide layers of independent work: greedy should use the devices, round-robin pays transfers.
        const Model m = randomDag(300, 5);
        for (int n : {4, 8}) {
            const CostModel cost = devices(n);
            ScheduleOptions o;
            o.workers = n;
            Expected<Schedule> greedy = makeSchedule(m.graph, Strategy::Greedy, cost, o);
            Expected<Schedule> rr = makeSchedule(m.graph, Strategy::RoundRobin, cost, o);
            Expected<Schedule> serial = makeSchedule(m.graph, Strategy::Serial, cost, o);
            QVERIFY(greedy && rr && serial);
            const double bound = makespanLowerBound(m.graph, cost);
            QVERIFY(greedy->predictedMakespan <= serial->predictedMakespan);
            QVERIFY(greedy->predictedMakespan <= rr->predictedMakespan);
            QVERIFY2(greedy->predictedMakespan <= 3.0 * bound,
                     qPrintable(QStringLiteral("%1 vs bound %2").arg(greedy->predictedMakespan).arg(bound)));
        }
    }

    // A Constant node read on other devices is made again there, not sent (PP-OCRv4 det: 118 of
    // 161 transfers carried Constants' values, scalars among them); the outputs stay the same.
    void constantNodesAreMadeOnEachDevice()
    {
        onnx::ModelProto mp = test::emptyModel();
        onnx::GraphProto *g = mp.mutable_graph();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3});
        auto c = test::node("Constant", {}, {"c"}, "c_const");
        onnx::AttributeProto value;
        value.set_name("value");
        value.set_type(onnx::AttributeProto::TENSOR);
        *value.mutable_t() = test::floatTensor("", {3}, {1.f, 2.f, 3.f});
        *c.add_attribute() = value;
        *g->add_node() = c;
        *g->add_node() = test::node("Add", {"x", "c"}, {"a"}, "add");
        *g->add_node() = test::node("Relu", {"a"}, {"r"}, "relu");
        *g->add_node() = test::node("Mul", {"r", "c"}, {"y"}, "mul");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
        const Model m = test::modelOrFail(mp);
        std::vector<int> deviceOf(m.graph.nodeSlots(), 0);
        deviceOf[m.graph.findNode("mul").index] = 1; // reads c (device 0) and r (device 0)
        Expected<Partition> part = partitionForDevices(m, deviceOf);
        QVERIFY2(part, part ? "" : part.status().message().c_str());
        QCOMPARE(part->transfers, std::size_t(1)); // r alone
        const Graph &pg = part->model.graph;
        const NodeId copy = pg.findNode("c_const_dev1");
        QVERIFY(copy.valid());
        QCOMPARE(part->deviceOf[copy.index], 1);
        const NodeId mul = pg.findNode("mul");
        QCOMPARE(pg.value(pg.node(mul).inputs[1]).producer, copy);
        const Feeds feeds{{"x", RuntimeTensor::fromValues(DataType::Float, {2, 3}, std::vector<float>{-1, 0, 1, 2, -3, 4})}};
        Expected<Schedule> plan = makeSchedule(pg, Strategy::Greedy, devices(2), {}, &part->deviceOf);
        QVERIFY(plan);
        const std::vector<RuntimeTensor> out = runWith(part->model, &plan->plan, feeds), want = runWith(m, nullptr, feeds);
        QCOMPARE(out[0].elementCount(), want[0].elementCount());
        for (std::int64_t i = 0; i < want[0].elementCount(); ++i)
            QCOMPARE(out[0].data<float>()[i], want[0].data<float>()[i]);
        // Read on device 1 alone: the original goes (it was drawn as an unread box of its own).
        for (const char *n : {"add", "relu", "mul"})
            deviceOf[m.graph.findNode(n).index] = 1;
        Expected<Partition> moved = partitionForDevices(m, deviceOf);
        QVERIFY(moved);
        QCOMPARE(moved->transfers, std::size_t(0));
        QVERIFY(!moved->model.graph.findNode("c_const").valid());
        QVERIFY(moved->model.graph.findNode("c_const_dev1").valid());
        QVERIFY(verifyGraph(moved->model.graph));
        Expected<Schedule> plan1 = makeSchedule(moved->model.graph, Strategy::Greedy, devices(2), {}, &moved->deviceOf);
        QVERIFY(plan1);
        const std::vector<RuntimeTensor> out1 = runWith(moved->model, &plan1->plan, feeds);
        for (std::int64_t i = 0; i < want[0].elementCount(); ++i)
            QCOMPARE(out1[0].data<float>()[i], want[0].data<float>()[i]);
    }

    void partitionPassPlacesEveryNode()
    {
        const Model m = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        const test::PassOutcome o = test::runAndCompare(m, {"partition-for-devices"}, {1}, {1, 2});
        const int sends = test::opCount(o.opsAfter, "ai.opscope::Send"),
                  recvs = test::opCount(o.opsAfter, "ai.opscope::Recv");
        QVERIFY(sends > 0 && recvs >= sends);
        const auto placement = passes::placementOf(o.after);
        QCOMPARE(placement.size(), o.after.graph.nodeCount());
        std::set<int> used;
        for (const auto &[name, device] : placement)
            used.insert(device);
        QCOMPARE(used.size(), std::size_t(2));
        // Exported for ONNX the transfers are Identity, and the model still computes the same.
        const test::PassOutcome lowered = test::runAndCompare(o.after, {"lower-to-onnx"}, {1}, {3});
        QCOMPARE(test::opCount(lowered.opsAfter, "ai.opscope::Send"), 0);
        QCOMPARE(test::opCount(lowered.opsAfter, "Identity"), sends + recvs);
    }

    // Spans no clock can hold are left out: a negative duration showed a device −23 % busy and
    // 10^308 µs a makespan of 300 digits (robustness sweep, 2026-12-05).
    void chromeTraceReaderLeavesOutImpossibleSpans()
    {
        const auto x = [](const std::string &ts, const std::string &dur) {
            return "{\"name\":\"op\",\"ph\":\"X\",\"ts\":" + ts + ",\"dur\":" + dur + ",\"pid\":1,\"tid\":1}";
        };
        const std::string json = "[" + x("0", "5") + "," + x("10", "-3") + "," + x("1e308", "1") + "," +
                                 x("20", "1e308") + "," + x("-1e300", "2") +
                                 ",{\"name\":\"b\",\"ph\":\"B\",\"ts\":40,\"pid\":1,\"tid\":1}"
                                 ",{\"name\":\"b\",\"ph\":\"E\",\"ts\":30,\"pid\":1,\"tid\":1}]";
        Expected<trace::Trace> t = trace::fromChromeJson(json);
        QVERIFY2(t, t ? "" : t.status().message().c_str());
        QCOMPARE(t->lanes.size(), std::size_t(1));
        QCOMPARE(t->lanes[0].spans.size(), std::size_t(1));
        QVERIFY(std::fabs(t->duration() - 5e-6) < 1e-12);
    }

    void chromeTraceReaderStreamsAndIsStrictAboutStructure()
    {
        // (No raw string literals here: moc 6.4 cannot read them.)
        // Events are parsed in chunks between the array's commas: names holding brackets, commas
        // and escaped quotes must not look like structure, and chunks must meet exactly.
        const std::string tricky = "{\"otherData\":{\"name\":\"tricky\"},\"traceEvents\":["
                                   "{\"name\":\"a,[b]{c}\\\"d\\\\\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"args\":{\"op\":\"Conv\",\"nested\":{\"x\":[1,2]}}},"
                                   "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"cpu:0\"}},"
                                   "{\"name\":\"e\",\"ph\":\"X\",\"ts\":5,\"dur\":1,\"pid\":\"1\",\"tid\":1}],\"displayTimeUnit\":\"ms\"}";
        Expected<trace::Trace> t = trace::fromChromeJson(tricky);
        QVERIFY2(t, t ? "" : t.status().message().c_str());
        QCOMPARE(t->name, std::string("tricky"));
        QCOMPARE(t->lanes.size(), std::size_t(1));
        QCOMPARE(t->lanes[0].device, std::string("cpu:0"));
        QCOMPARE(t->lanes[0].spans.size(), std::size_t(2));
        QCOMPARE(t->strings[t->lanes[0].spans[0].name], std::string("a,[b]{c}\"d\\"));
        // Every truncation is an error, never a crash or a silently shorter trace.
        for (std::size_t n = 0; n + 1 < tricky.size(); ++n)
            QVERIFY2(!trace::fromChromeJson(tricky.substr(0, n)), std::to_string(n).c_str());
        QVERIFY(!trace::fromChromeJson("{\"traceEvents\":[{\"ph\":\"X\",}]}")); // a broken event
        QVERIFY(!trace::fromChromeJson("{\"traceEvents\":[]]}"));
        QVERIFY(trace::fromChromeJson("[]"));
        // Over several chunks (4 MB each): 120,000 events, none lost at a boundary.
        std::string big = "[";
        for (int i = 0; i < 120000; ++i)
            big += (i ? "," : "") + std::string("{\"name\":\"op") + std::to_string(i % 97) +
                   "\",\"ph\":\"X\",\"ts\":" + std::to_string(i * 3) + ",\"dur\":2,\"pid\":1,\"tid\":1,\"args\":{\"op\":\"Relu\"}}";
        big += "]";
        QVERIFY(big.size() > 2 * (std::size_t(4) << 20));
        Expected<trace::Trace> many = trace::fromChromeJson(big);
        QVERIFY(many);
        QCOMPARE(many->lanes.size(), std::size_t(1));
        QCOMPARE(many->lanes[0].spans.size(), std::size_t(120000));
        QVERIFY(std::abs(many->lanes[0].spans.back().start - 119999 * 3e-6) < 1e-9);
    }

    void nestedSpansAreBusyOnce()
    {
        // A Loop's body ops run inside the Loop's span on the same lane: a device is busy once in
        // that time, not twice (a Loop model reported cpu:0 174 % busy).
        trace::Lane lane{"cpu:0", 0, {}};
        lane.spans = {{0.0, 1.0, 0, 0, 0}, {0.1, 0.4, 0, 0, 0}, {0.5, 0.9, 0, 0, 0}, {1.5, 2.0, 0, 0, 0}};
        const trace::LaneStats st = trace::laneStats(lane, 2.0);
        QVERIFY(std::abs(st.busy - 1.5) < 1e-12);
        QVERIFY(st.utilization <= 1.0);
    }

    void chromeTraceRoundTrips()
    {
        trace::Trace t;
        t.name = "greedy";
        const std::size_t a = t.laneFor("cpu:0", 0), b = t.laneFor("cpu:1", 0);
        t.lanes[a].spans = {{0.0, 0.001, t.intern("conv"), t.intern("Conv"), 0,
                             t.intern("float32[1,3,8,8], float32[4,3,3,3] → float32[1,4,6,6]")},
                            {0.002, 0.004, t.intern("send"), t.intern("Send"), 5},
                            {0.004, 0.0042, t.intern("fused conv"), t.intern("NhwcConv"),
                             std::uint8_t(OpCategory::Fused)}};
        t.lanes[b].spans = {{0.0, 0.0045, t.intern("waiting for recv"), t.intern("(wait)"), trace::kIdleCategory},
                            {0.0045, 0.005, t.intern("recv"), t.intern("Recv"), 5}};
        t.transfers.push_back({0.004, 0.005, 4096, std::uint32_t(a), std::uint32_t(b)});
        Expected<trace::Trace> back = trace::fromChromeJson(trace::toChromeJson(t));
        QVERIFY(back);
        QCOMPARE(back->name, std::string("greedy"));
        QCOMPARE(back->lanes.size(), std::size_t(2));
        back->sortLanes();
        QCOMPARE(back->lanes[0].device, std::string("cpu:0"));
        QCOMPARE(back->lanes[0].spans.size(), std::size_t(3));
        QCOMPARE(back->strings[back->lanes[0].spans[1].name], std::string("send"));
        // The category the file names: ai.opscope's NhwcConv (the file carries no domain) came back
        // "other" and was drawn grey, most of a profiled CNN's spans (a new-user trial).
        QCOMPARE(OpCategory(back->lanes[0].spans[2].category), OpCategory::Fused);
        // Op type and shapes come back from args; the category follows the op, not the node name.
        const trace::Span &conv = back->lanes[0].spans[0];
        QCOMPARE(back->strings[conv.op], std::string("Conv"));
        QCOMPARE(OpCategory(conv.category), OpCategory::Compute);
        QVERIFY(conv.shapes != trace::kNoString);
        QCOMPARE(back->strings[conv.shapes],
                 std::string("float32[1,3,8,8], float32[4,3,3,3] → float32[1,4,6,6]"));
        QCOMPARE(back->lanes[0].spans[1].shapes, trace::kNoString);
        // A wait stays a wait: an opened trace counted it busy (a device 98 % used while waiting).
        QCOMPARE(back->lanes[1].spans[0].category, trace::kIdleCategory);
        QVERIFY(trace::laneStats(back->lanes[1], back->duration()).busy < 0.001);
        QVERIFY(std::abs(back->lanes[1].spans[1].start - 0.0045) < 1e-9);
        QCOMPARE(back->transfers.size(), std::size_t(1));
        QCOMPARE(back->transfers[0].bytes, std::uint64_t(4096));
        QVERIFY(std::abs(back->duration() - t.duration()) < 1e-9);
    }

    void memoryLaneFollowsThePlan()
    {
        // Every profiled run carries a "live bytes" counter per device from its memory plan: it
        // starts and ends at 0, never goes above the arena (buffers live at one instant sit in
        // disjoint ranges), and survives the Chrome JSON round trip of a whole session.
        const Model m = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        ProfileOptions o;
        o.iterations = 2;
        o.devices = 2;
        o.allCoresSerial = false;
        Expected<std::vector<ProfileRun>> runs = profileModel(m, o);
        QVERIFY2(runs, runs ? "" : runs.status().message().c_str());
        QCOMPARE(runs->size(), std::size_t(3));
        for (const ProfileRun &r : *runs) {
            QVERIFY2(!r.trace.counters.empty(), r.name.c_str());
            Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(m);
            QVERIFY(s);
            for (const trace::Counter &c : r.trace.counters) {
                QCOMPARE(c.name, std::string("live bytes"));
                QVERIFY(c.samples.size() >= 3);
                QCOMPARE(c.samples.front().second, 0.0);
                QCOMPARE(c.samples.back().second, 0.0);
                double peak = 0.0;
                for (std::size_t i = 0; i < c.samples.size(); ++i) {
                    if (i > 0)
                        QVERIFY(c.samples[i - 1].first <= c.samples[i].first);
                    peak = std::max(peak, c.samples[i].second);
                }
                QVERIFY2(peak > 0.0, c.device.c_str());
                QVERIFY2(c.samples.back().first <= r.trace.duration() + 1e-9, c.device.c_str());
                // The lane's device is one of the run's lanes.
                QVERIFY(std::any_of(r.trace.lanes.begin(), r.trace.lanes.end(),
                                    [&](const trace::Lane &l) { return l.device == c.device; }));
            }
        }
        // Each run's lane stays within the arena its own plan gave that device (a plan made again
        // in another session may differ: workspaces follow the variants trial runs picked).
        for (const ProfileRun &r : *runs) {
            QCOMPARE(r.arenaBytes.size(), r.trace.counters.size());
            for (const trace::Counter &c : r.trace.counters) {
                const auto arena = std::find_if(r.arenaBytes.begin(), r.arenaBytes.end(),
                                                [&](const auto &a) { return a.first == c.device; });
                QVERIFY2(arena != r.arenaBytes.end(), c.device.c_str());
                double peak = 0.0;
                for (const auto &sample : c.samples)
                    peak = std::max(peak, sample.second);
                QVERIFY2(peak <= double(arena->second), (r.name + " " + c.device).c_str());
            }
        }
        const trace::Trace session = combinedTrace(*runs, "session");
        Expected<trace::Trace> back = trace::fromChromeJson(trace::toChromeJson(session));
        QVERIFY(back);
        QCOMPARE(back->counters.size(), session.counters.size());
        const std::vector<ProfileRun> split = splitSession(*back);
        QCOMPARE(split.size(), runs->size());
        for (std::size_t i = 0; i < split.size(); ++i) {
            QCOMPARE(split[i].trace.counters.size(), (*runs)[i].trace.counters.size());
            for (std::size_t k = 0; k < split[i].trace.counters.size(); ++k) {
                const trace::Counter &a = split[i].trace.counters[k], &b = (*runs)[i].trace.counters[k];
                QCOMPARE(a.device, b.device);
                QCOMPARE(a.samples.size(), b.samples.size());
                for (std::size_t j = 0; j < a.samples.size(); ++j) {
                    QVERIFY(std::abs(a.samples[j].first - b.samples[j].first) < 1e-8);
                    QCOMPARE(a.samples[j].second, b.samples[j].second);
                }
            }
        }
    }

    void serialAloneIsPredictedFromItsOwnOpTimes()
    {
        // Serial asked for alone (and the all-cores row, which is serial too) was predicted from
        // FLOP estimates, 10x off; it is now predicted from the op times it measured, like serial
        // beside other schedules: the sum of its ops' median times.
        const Model m = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        ProfileOptions o;
        o.iterations = 3;
        o.devices = 2;
        o.strategies = {Strategy::Serial};
        Expected<std::vector<ProfileRun>> runs = profileModel(m, o);
        QVERIFY2(runs, runs ? "" : runs.status().message().c_str());
        QCOMPARE(runs->size(), std::size_t(1));
        const ProfileRun &r = runs->front();
        double sum = 0.0;
        for (const auto &[name, seconds] : r.opSeconds)
            sum += seconds * 1e3;
        QVERIFY(sum > 0.0);
        QVERIFY2(std::abs(r.predictedMs - sum) <= 0.02 * sum,
                 qPrintable(QStringLiteral("predicted %1 ms, ops %2 ms").arg(r.predictedMs).arg(sum)));
        QVERIFY(r.minMs > 0.0 && r.minMs <= r.makespanMs && r.makespanMs <= r.maxMs);
        // Both devices are listed: the one serial left idle at 0 %.
        QCOMPARE(r.utilization.size(), std::size_t(2));
        QCOMPARE(r.utilization[1].first, std::string("cpu:1"));
        QCOMPARE(r.utilization[1].second, 0.0);
    }

    void timingNotesSayWhatMakesTimesDoubtful()
    {
        ProfileRun steady, slowed;
        steady.name = "serial";
        steady.measured = slowed.measured = true;
        steady.minMs = 1.0, steady.makespanMs = 1.1, steady.maxMs = 1.4;
        slowed.name = "serial, 2 threads";
        slowed.minMs = 0.3, slowed.makespanMs = 111.9, slowed.maxMs = 116.0;
        QVERIFY(timingNotes({steady}, 10, 0.5, 2).empty());
        const std::vector<std::string> few = timingNotes({steady}, 2, std::nullopt, 2);
        QCOMPARE(few.size(), std::size_t(1));
        QVERIFY2(few[0].find("median of 2 runs;") != std::string::npos, few[0].c_str());
        QCOMPARE(timingNotes({steady}, 4, std::nullopt, 2).size(), std::size_t(1)); // one slow run moves a median of 4
        QVERIFY(timingNotes({steady}, 5, std::nullopt, 2).empty());
        const std::vector<std::string> busy = timingNotes({steady, slowed}, 10, 3.5, 2);
        QCOMPARE(busy.size(), std::size_t(2));
        QVERIFY2(busy[0].find("serial, 2 threads: its median 112 ms is 373x its fastest run (0.3 ms)") !=
                     std::string::npos,
                 busy[0].c_str());
        QVERIFY2(busy[1].find("load average 3.5 on 2 cores") != std::string::npos, busy[1].c_str());
        ProfileRun simulated;
        simulated.name = "greedy";
        QVERIFY(timingNotes({simulated}, 1, 9.0, 2).empty()); // nothing was timed
        // 2.9x on 2 devices: the reference was slowed, and the note says so.
        ProfileRun fast;
        fast.name = "greedy";
        fast.measured = true;
        fast.minMs = fast.makespanMs = 0.38;
        fast.utilization = {{"cpu:0", 0.88}, {"cpu:1", 0.01}};
        const std::vector<std::string> impossible = timingNotes({steady, fast}, 10, std::nullopt, 2);
        QCOMPARE(impossible.size(), std::size_t(1));
        QVERIFY2(impossible[0].find("greedy: 2.9x the speed of serial on 2 devices is more than its devices can give") == 0,
                 impossible[0].c_str());
    }

    void contentionIsMeasuredAroundTheRuns_data()
    {
        // Cores other processes kept busy, cores, our threads → a note or not. The load average
        // lags a minute; what other processes took during the runs is what slowed them.
        QTest::addColumn<double>("others");
        QTest::addColumn<int>("cores");
        QTest::addColumn<int>("threads");
        QTest::addColumn<bool>("noted");
        QTest::newRow("idle, 2 threads on 2") << 0.1 << 2 << 2 << false;
        QTest::newRow("a build beside 2 threads on 2") << 0.7 << 2 << 2 << true;
        QTest::newRow("one busy core, 1 thread on 2") << 0.9 << 2 << 1 << false;
        QTest::newRow("two busy cores, 1 thread on 2") << 1.8 << 2 << 1 << true;
        QTest::newRow("a big host, little else") << 3.0 << 64 << 8 << false;
    }

    void contentionIsMeasuredAroundTheRuns()
    {
        QFETCH(double, others);
        QFETCH(int, cores);
        QFETCH(int, threads);
        QFETCH(bool, noted);
        const std::string note = contentionNote(others, unsigned(cores), threads, "timing");
        QCOMPARE(!note.empty(), noted);
        if (noted) {
            QVERIFY2(note.find("other processes kept") == 0, note.c_str());
            QCOMPARE(note.find("each parallel step waits") != std::string::npos, threads > 1);
        }
        ProfileRun steady;
        steady.name = "serial";
        steady.measured = true;
        steady.minMs = 1.0, steady.makespanMs = 1.1;
        // Measured contention wins over a load average that says otherwise.
        QCOMPARE(timingNotes({steady}, 10, 0.1, unsigned(cores), others, threads).size(), std::size_t(noted ? 1 : 0));
    }

    void cpuSamplesMeasureWhatOthersTook()
    {
        // This process spinning on one core for 0.2 s is its own time, not others'.
        const CpuSample before = sampleCpu();
        QVERIFY(before.valid);
        QVERIFY(before.machineCores >= 1);
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        volatile std::uint64_t spin = 0;
        while (std::chrono::steady_clock::now() < until)
            spin = spin + 1;
        const CpuSample after = sampleCpu();
        const std::optional<double> others = othersBusyCores(before, after);
        QVERIFY(others);
        QVERIFY2(*others < double(after.machineCores), std::to_string(*others).c_str());
        QVERIFY(after.selfSeconds - before.selfSeconds > 0.1);
        QVERIFY(!othersBusyCores(before, before)); // no time passed: nothing to say
    }

    void importsProfilerStyleTraces()
    {
        // PyTorch's profiler: string pids, nested complete events, B/E pairs, metadata.
        const std::string json = R"({"traceEvents":[
          {"ph":"M","name":"process_name","pid":"host","args":{"name":"CPU"}},
          {"ph":"X","name":"aten::conv2d","cat":"cpu_op","pid":"host","tid":7,"ts":100,"dur":50},
          {"ph":"X","name":"aten::convolution","cat":"cpu_op","pid":"host","tid":7,"ts":105,"dur":40},
          {"ph":"B","name":"aten::relu","pid":"host","tid":7,"ts":160},
          {"ph":"E","pid":"host","tid":7,"ts":170}]})";
        Expected<trace::Trace> t = trace::fromChromeJson(json, "torch");
        QVERIFY(t);
        QCOMPARE(t->lanes.size(), std::size_t(2)); // depth 0 and the nested call
        QCOMPARE(t->lanes[0].device, std::string("CPU"));
        QCOMPARE(t->lanes[0].spans.size(), std::size_t(2));    // conv2d and relu
        QVERIFY(std::abs(t->lanes[0].spans[0].start) < 1e-12); // rebased to the first event
        QVERIFY(std::abs(t->duration() - 70e-6) < 1e-9);
        QVERIFY(!trace::fromChromeJson("{not json"));
        QVERIFY(!trace::fromChromeJson("{\"foo\": 1}"));
    }

    void levelOfDetail_data()
    {
        QTest::addColumn<double>("pixelsPerSecond");
        QTest::addColumn<int>("items");
        // 1000 spans of 1 µs with 1 µs gaps over 2 ms.
        QTest::newRow("zoomed in: every span") << 1e7 << 1000;
        QTest::newRow("1 px = 0.5 µs: every span") << 2e6 << 1000;
        QTest::newRow("1 px = 10 µs: merged") << 1e5 << 1;
    }
    void levelOfDetail()
    {
        QFETCH(double, pixelsPerSecond);
        QFETCH(int, items);
        trace::Lane lane{"cpu:0", 0, {}};
        for (int i = 0; i < 1000; ++i)
            lane.spans.push_back({i * 2e-6, i * 2e-6 + 1e-6, 0, 0, std::uint8_t(i % 3)});
        const auto drawn = trace::levelOfDetail(lane, 0.0, 1.0, pixelsPerSecond);
        QCOMPARE(int(drawn.size()), items);
        std::uint32_t total = 0;
        for (const trace::DrawItem &d : drawn)
            total += d.count;
        QCOMPARE(total, 1000u);
        // A window sees only its spans (plus the one straddling its start).
        const auto window = trace::levelOfDetail(lane, 1e-3, 1.1e-3, 1e8);
        QVERIFY(window.size() >= 50 && window.size() <= 52);
        QVERIFY(window.front().end >= 1e-3);
    }
};

QTEST_GUILESS_MAIN(TestSchedule)
#include "tst_schedule.moc"
