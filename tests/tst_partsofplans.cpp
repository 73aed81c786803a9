// Plans run in parts: partitioning gives bodies' outer reads a Send/Recv like any input (so a body
// on one device or rank reads a received copy), and runPipelined runs each device of a plan as a
// pipeline stage of its own, overlapping micro-batches, ending cleanly when one stage fails.

#include "ir/dependencies.h"
#include "ir/verifier.h"
#include "passes/passutil.h"
#include "runtime/backend.h"
#include "runtime/conformance.h"
#include "runtime/microbatches.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "runtime/stagerunner.h"
#include "schedule/partition.h"
#include "schedule/pipeline.h"
#include "schedule/placement.h"
#include "schedule/scheduler.h"
#include "scheduletest.h"
#include "testsupport.h"

#include <QTest>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <set>

using namespace opscope;
using namespace opscope::schedule;

namespace {

using test::devices;
using test::runWith;

// x [N, 64] through `layers` MatMul + Tanh pairs: a chain with a batch to split into micro-batches.
Model batchedChain(int layers)
{
    Model m;
    m.opsets = {{"", 17}};
    Graph &g = m.graph;
    Shape shape;
    shape.dims = {Dim::symbolic("N"), Dim{64, {}, {}}};
    ValueId at = g.addInput("x", TypeInfo::tensor(DataType::Float, shape));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-0.2f, 0.2f);
    for (int i = 0; i < layers; ++i) {
        std::vector<float> w(64 * 64);
        for (float &v : w)
            v = u(rng);
        const ValueId weight = g.addInitializer("w" + std::to_string(i), passes::floatTensor({64, 64}, w));
        const ValueId mm = *g.createValue("mm" + std::to_string(i));
        (void)g.addNode("MatMul", {at, weight}, {mm}, {}, "matmul" + std::to_string(i));
        at = *g.createValue("t" + std::to_string(i));
        (void)g.addNode("Tanh", {mm}, {at}, {}, "tanh" + std::to_string(i));
    }
    g.addOutput(at);
    return m;
}

// Options for runPipelined on `n` CPU devices of one thread, the backends kept in `owned`.
PipelineOptions pipelineOn(int n, std::vector<std::unique_ptr<CpuBackend>> &owned)
{
    PipelineOptions po;
    for (int d = 0; d < n; ++d) {
        owned.push_back(std::make_unique<CpuBackend>(d, 1));
        po.backends.push_back(owned.back().get());
    }
    return po;
}

} // namespace

class TestPartsOfPlans : public QObject
{
    Q_OBJECT

private slots:
    // A body reading an outer value by name is a consumer on its node's device: partitioning gives
    // it a Send/Recv like an input, and the body (at any depth) reads the received copy. Before,
    // bodies read the producer's buffer on another device — wrong on a GPU, impossible across
    // ranks (profile --ranks skipped such plans).
    void bodiesReadOtherDevicesThroughRecv_data()
    {
        QTest::addColumn<QVector<int>>("deviceOf"); // relu, tanh, sigmoid, cond, If
        QTest::addColumn<int>("transfers");
        QTest::newRow("a and cond local, b and d remote") << QVector<int>{0, 1, 1, 0, 0} << 2;
        // The condition is a Constant node: made again on its reader's device, never sent.
        QTest::newRow("everything but b remote") << QVector<int>{1, 0, 1, 1, 0} << 2;
        QTest::newRow("every outer read remote") << QVector<int>{0, 0, 0, 0, 1} << 3;
        QTest::newRow("three devices") << QVector<int>{0, 1, 2, 2, 0} << 2;
        QTest::newRow("all on one device") << QVector<int>{1, 1, 1, 1, 1} << 0;
    }
    void bodiesReadOtherDevicesThroughRecv()
    {
        QFETCH(QVector<int>, deviceOf);
        QFETCH(int, transfers);
        const onnx::ModelProto proto = test::nestedCaptureModel();
        const Model m = test::modelOrFail(proto);
        QCOMPARE(m.graph.nodeCount(), std::size_t(5));

        std::vector<int> placement(m.graph.nodeSlots(), -1);
        int used = 0;
        for (NodeId n : m.graph.nodeIds()) {
            placement[n.index] = deviceOf[int(n.index)];
            used = std::max(used, placement[n.index] + 1);
        }
        Expected<Partition> part = partitionForDevices(m, placement);
        QVERIFY2(part, part ? "" : part.status().message().c_str());
        QCOMPARE(int(part->transfers), transfers);
        const Graph &pg = part->model.graph;
        QVERIFY(verifyGraph(pg));
        // Every value a node reads, explicitly or from its bodies, is computed on its device.
        for (NodeId n : pg.nodeIds()) {
            std::vector<ValueId> reads = pg.node(n).inputs;
            for (ValueId v : implicitInputs(pg, n))
                reads.push_back(v);
            for (ValueId v : reads) {
                const NodeId p = pg.producer(v);
                if (p.valid() && pg.node(n).opType != "Recv")
                    QVERIFY2(part->deviceOf[p.index] == part->deviceOf[n.index],
                             qPrintable(QString::fromStdString(pg.node(n).name + " reads " + pg.value(v).name +
                                                               " from another device")));
            }
        }
        // The same outputs as the model in one piece, under the plan that runs it on the devices.
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(m);
        QVERIFY(s);
        Expected<Feeds> feeds = randomFeeds(**s, {}, RandomInputOptions{});
        QVERIFY(feeds);
        const std::vector<RuntimeTensor> reference = runWith(m, nullptr, *feeds);
        ScheduleOptions o;
        o.workers = std::max(used, 2);
        Expected<Schedule> plan = makeSchedule(pg, Strategy::Greedy, devices(o.workers), o, &part->deviceOf);
        QVERIFY2(plan, plan ? "" : plan.status().message().c_str());
        QVERIFY(validatePlan(pg, plan->plan));
        const std::vector<RuntimeTensor> out = runWith(part->model, &plan->plan, *feeds);
        QCOMPARE(out.size(), reference.size());
        double diff = 0.0;
        QVERIFY(compareTensors(out[0], reference[0], 0.0, 0.0, diff));
    }

    // greedy under per-device memory caps (DeviceModel::memoryBytes, what profile --ranks gives
    // each rank's devices): a device holds the weights its nodes read, once each, and the cap
    // counts them. Before, it counted outputs alone, so a weight-heavy chain went to one device
    // whatever its cap. A cap nothing fits still places every node, where it overflows least.
    void greedyPlacesWithinEachDevicesMemory_data()
    {
        QTest::addColumn<int>("deviceCount");
        QTest::addColumn<double>("capOfWeights"); // each device's cap, a fraction of all weights; 0: none
        QTest::addColumn<int>("used");
        QTest::addColumn<bool>("fits");
        // Weights every device holds anyway (each MPI rank loads the whole model): not counted.
        QTest::addColumn<bool>("everywhere");
        QTest::newRow("no caps: the chain on one device") << 2 << 0.0 << 1 << true << false;
        QTest::newRow("2 devices at 60%") << 2 << 0.6 << 2 << true << false;
        QTest::newRow("3 devices at 45%") << 3 << 0.45 << 3 << true << false;
        QTest::newRow("2 devices at 10%: nothing fits") << 2 << 0.1 << 2 << false << false;
        QTest::newRow("2 devices at 10%, weights everywhere: one device") << 2 << 0.1 << 1 << true << true;
    }
    void greedyPlacesWithinEachDevicesMemory()
    {
        QFETCH(int, deviceCount);
        QFETCH(double, capOfWeights);
        QFETCH(int, used);
        QFETCH(bool, fits);
        QFETCH(bool, everywhere);
        const Model m = batchedChain(10);
        const Graph &g = m.graph;
        double weights = 0.0;
        for (ValueId v : g.initializers())
            weights += double(g.value(v).initializer->byteSize());
        CostModel cost = devices(deviceCount);
        for (auto &d : cost.devices)
            d.memoryBytes = std::uint64_t(capOfWeights * weights);
        cost.embeddedWeightsEverywhere = everywhere;
        Expected<Placement> place = placeGreedy(g, cost);
        QVERIFY2(place, place ? "" : place.status().message().c_str());
        QCOMPARE(place->memory.size(), std::size_t(deviceCount));
        std::vector<std::set<std::uint32_t>> held(static_cast<std::size_t>(deviceCount));
        std::set<int> usedDevices;
        for (NodeId n : g.nodeIds()) {
            const int d = place->device[n.index];
            QVERIFY(d >= 0 && d < deviceCount);
            usedDevices.insert(d);
            for (ValueId v : g.node(n).inputs)
                if (g.value(v).initializer)
                    held[std::size_t(d)].insert(v.index);
        }
        QCOMPARE(int(usedDevices.size()), used);
        for (std::size_t d = 0; d < held.size(); ++d) {
            double bytes = 0.0;
            for (std::uint32_t v : held[d])
                bytes += double(g.value(ValueId{v}).initializer->byteSize());
            if (everywhere)
                QVERIFY(place->memory[d] < weights / 2); // the weights are not counted
            else
                QVERIFY(bytes <= place->memory[d]); // the count covers the weights it holds
            if (fits && capOfWeights > 0)
                QVERIFY2(place->memory[d] <= capOfWeights * weights,
                         qPrintable(QStringLiteral("device %1 counts %2 B over its cap %3 B")
                                        .arg(d).arg(place->memory[d]).arg(capOfWeights * weights)));
        }
    }

    // Stages cut by time alone put cheap layers with heavy weights together: here 9 of 10 layers'
    // weights on the first device. Under a cap the cut comes where the device's memory runs out,
    // and every edge still goes forward (a stage never waits for a later one).
    void pipelineCutsWithinEachDevicesMemory()
    {
        const Model m = batchedChain(10);
        const Graph &g = m.graph;
        double weights = 0.0;
        for (ValueId v : g.initializers())
            weights += double(g.value(v).initializer->byteSize());
        CostModel cost = devices(2);
        for (int i = 0; i < 10; ++i) {
            cost.measuredSeconds["matmul" + std::to_string(i)] = i < 9 ? 1e-6 : 1e-3;
            cost.measuredSeconds["tanh" + std::to_string(i)] = 1e-7;
        }
        const auto heldOn = [&](const Placement &p, int device) {
            double bytes = 0.0;
            for (NodeId n : g.nodeIds())
                if (p.device[n.index] == device)
                    for (ValueId v : g.node(n).inputs)
                        if (g.value(v).initializer)
                            bytes += double(g.value(v).initializer->byteSize());
            return bytes;
        };
        Expected<Placement> byTime = placePipeline(g, cost);
        QVERIFY(byTime);
        QVERIFY(heldOn(*byTime, 0) > 0.8 * weights);
        for (auto &d : cost.devices)
            d.memoryBytes = std::uint64_t(0.6 * weights);
        Expected<Placement> capped = placePipeline(g, cost);
        QVERIFY(capped);
        QVERIFY(!capped->overflows);
        for (int d = 0; d < 2; ++d) {
            QVERIFY(heldOn(*capped, d) > 0.0);
            QVERIFY(heldOn(*capped, d) <= capped->memory[std::size_t(d)]);
            QVERIFY(capped->memory[std::size_t(d)] <= 0.6 * weights);
        }
        for (NodeId n : g.nodeIds())
            for (ValueId v : g.node(n).inputs)
                if (const NodeId p = g.producer(v); p.valid())
                    QVERIFY(capped->device[p.index] <= capped->device[n.index]);
        // A cap nothing fits: the last stage takes the rest and says it overflows.
        for (auto &d : cost.devices)
            d.memoryBytes = std::uint64_t(0.2 * weights);
        Expected<Placement> over = placePipeline(g, cost);
        QVERIFY(over && over->overflows);
    }

    // Pipelined in one process (runtime/stagerunner.h): each device a stage in a thread of its
    // own. The last stage is held inside micro-batch 0 until the first stage has started
    // micro-batch 1 — which never happens if the stages run one micro-batch at a time, as
    // they did. The joined outputs equal one run of the whole batch.
    void stagesOverlapMicrobatches()
    {
        const Model m = batchedChain(6);
        const CostModel cost = devices(3);
        Expected<Placement> place = placePipeline(m.graph, cost);
        QVERIFY(place);
        Expected<Partition> part = partitionForDevices(m, *place);
        QVERIFY(part);
        ScheduleOptions o;
        o.workers = 3;
        Expected<Schedule> plan = makeSchedule(part->model.graph, Strategy::Pipeline, cost, o, &part->deviceOf);
        QVERIFY(plan);
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(part->model);
        QVERIFY(s);
        RandomInputOptions ro;
        ro.dims = {{"N", 8}};
        Expected<Feeds> feeds = randomFeeds(**s, {}, ro);
        QVERIFY(feeds);
        Expected<std::vector<Feeds>> micro = splitFeeds(*feeds, 4, **s);
        QVERIFY(micro);

        std::vector<std::unique_ptr<CpuBackend>> backends;
        PipelineOptions po = pipelineOn(3, backends);
        std::mutex mutex;
        std::condition_variable started;
        bool firstStageOnBatch1 = false, lastStageWaited = false, overlapped = false;
        po.onStep = [&](const StepEvent &e, int microbatch) {
            std::unique_lock lock(mutex);
            if (e.device == 0 && microbatch == 1) {
                firstStageOnBatch1 = true;
                started.notify_all();
            }
            if (e.device == 2 && microbatch == 0 && !lastStageWaited) {
                lastStageWaited = true;
                overlapped = started.wait_for(lock, std::chrono::seconds(20), [&] { return firstStageOnBatch1; });
            }
        };
        Expected<std::vector<std::vector<RuntimeTensor>>> out = runPipelined(**s, plan->plan, *micro, po);
        QVERIFY2(out, out ? "" : out.status().message().c_str());
        QVERIFY(lastStageWaited);
        QVERIFY2(overlapped, "the first stage did not start micro-batch 1 while the last one was in micro-batch 0");
        QCOMPARE(out->size(), std::size_t(4));
        std::vector<RuntimeTensor> parts;
        for (const auto &batch : *out)
            parts.push_back(batch.at(0));
        Expected<RuntimeTensor> joined = concatDim0(parts);
        QVERIFY(joined);
        const std::vector<RuntimeTensor> whole = runWith(m, nullptr, *feeds);
        double diff = 0.0;
        QVERIFY(compareTensors(*joined, whole.at(0), 1e-5, 1e-6, diff));
    }

    // A stage that fails ends the pipelined run with its error; the stages waiting for its
    // tensors are woken, not left waiting for ever.
    void aFailingStageEndsThePipeline()
    {
        Model m;
        m.opsets = {{"", 17}};
        Graph &g = m.graph;
        const ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({4, 6})));
        const ValueId shape = g.addInput("shape", TypeInfo::tensor(DataType::Int64, Shape::fromSizes({2})));
        const ValueId a = *g.createValue("a"), b = *g.createValue("b"), y = *g.createValue("y");
        (void)g.addNode("Relu", {x}, {a}, {}, "relu");
        (void)g.addNode("Reshape", {a, shape}, {b}, {}, "reshape");
        (void)g.addNode("Tanh", {b}, {y}, {}, "tanh");
        g.addOutput(y);
        std::vector<int> placement(g.nodeSlots(), -1);
        for (NodeId n : g.nodeIds())
            placement[n.index] = int(n.index);
        Expected<Partition> part = partitionForDevices(m, placement);
        QVERIFY(part);
        ScheduleOptions o;
        o.workers = 3;
        Expected<Schedule> plan = makeSchedule(part->model.graph, Strategy::Pipeline, devices(3), o, &part->deviceOf);
        QVERIFY(plan);
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(part->model);
        QVERIFY(s);
        const Feeds bad{{"x", RuntimeTensor::fromValues(DataType::Float, {4, 6}, std::vector<float>(24, 1.0f))},
                        {"shape", RuntimeTensor::fromValues(DataType::Int64, {2}, std::vector<std::int64_t>{5, 5})}};
        std::vector<std::unique_ptr<CpuBackend>> backends;
        PipelineOptions po = pipelineOn(3, backends);
        const auto start = std::chrono::steady_clock::now();
        Expected<std::vector<std::vector<RuntimeTensor>>> out = runPipelined(**s, plan->plan, {bad, bad}, po);
        QVERIFY(!out);
        QVERIFY2(QString::fromStdString(out.status().message()).contains("cpu:1, micro-batch 0"),
                 out.status().message().c_str());
        QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    }

};

QTEST_GUILESS_MAIN(TestPartsOfPlans)
#include "tst_partsofplans.moc"
