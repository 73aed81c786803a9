// Simulated multi-device schedules: greedy (HEFT) makespan against the lower bound
// max(critical path, total work / devices) and against round-robin placement, on Inception-style
// graphs and random DAGs, at 4 and 8 devices (CPU-class and GPU-class with NVLink). Makespans are
// those of what runs: the placement partitioned with Send/Recv and planned.
//
//   schedule_bench [inception.onnx ...]   (models to add; make them with bench/make_inception.py)

#include "onnx/modelio.h"
#include "schedule/partition.h"
#include "schedule/scheduler.h"

#include <cstdio>
#include <random>

using namespace opscope;
using namespace opscope::schedule;

namespace {

Model randomDag(int nodes, std::uint32_t seed, int width)
{
    Model m;
    m.opsets = {{"", 17}};
    Graph &g = m.graph;
    std::mt19937 rng(seed);
    std::vector<ValueId> values{
        g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({64, 256})))};
    for (int i = 0; i < nodes; ++i) {
        // Read from the last `width` values: wider windows, more parallelism.
        const std::size_t lo = values.size() > std::size_t(width) ? values.size() - std::size_t(width) : 0;
        std::uniform_int_distribution<std::size_t> pick(lo, values.size() - 1);
        const ValueId out = *g.createValue("v" + std::to_string(i));
        g.value(out).type = TypeInfo::tensor(DataType::Float, Shape::fromSizes({64, 256}));
        const ValueId w = g.addInitializer(
            "w" + std::to_string(i),
            Tensor::fromValues(DataType::Float, {256, 256}, std::vector<float>(256 * 256, 0.01f)));
        if (rng() % 3)
            (void)g.addNode("MatMul", {values[pick(rng)], w}, {out}, {}, "mm" + std::to_string(i));
        else
            (void)g.addNode("Add", {values[pick(rng)], values[pick(rng)]}, {out}, {},
                            "add" + std::to_string(i));
        values.push_back(out);
    }
    for (ValueId v : values)
        if (g.uses(v).empty() && !g.value(v).isGraphInput)
            g.addOutput(v);
    return m;
}

// What a run executes (planForDevices): the placement partitioned with Send/Recv, each Recv a
// copy on its destination device (or that device's copy queue).
Expected<DevicePlan> partitioned(const Graph &g, Strategy strategy, const CostModel &model)
{
    Model whole;
    whole.graph = g;
    whole.opsets = {{"", 17}};
    ScheduleOptions o;
    o.workers = int(model.devices.size());
    return planForDevices(whole, strategy, model, o);
}

void row(const char *name, const Graph &g, const CostModel &model)
{
    ScheduleOptions o;
    o.workers = int(model.devices.size());
    const double bound = makespanLowerBound(g, model);
    Expected<DevicePlan> greedyPlan = partitioned(g, Strategy::Greedy, model);
    Expected<DevicePlan> rrPlan = partitioned(g, Strategy::RoundRobin, model);
    Expected<Schedule> serial = makeSchedule(g, Strategy::Serial, model, o);
    if (!greedyPlan || !rrPlan || !serial) {
        std::printf("%-28s failed\n", name);
        return;
    }
    const Schedule *greedy = &greedyPlan->schedule, *rr = &rrPlan->schedule;
    const std::size_t transfers = greedyPlan->partition.transfers;
    std::printf("%-28s %5zu %8zu %12.3f %12.3f %12.3f %8.2f %8.2f %8.2f %9zu\n", name, g.nodeCount(),
                model.devices.size(), serial->predictedMakespan * 1e3, greedy->predictedMakespan * 1e3,
                bound * 1e3, greedy->predictedMakespan / bound, rr->predictedMakespan / bound,
                serial->predictedMakespan / greedy->predictedMakespan, transfers);
}

} // namespace

int main(int argc, char **argv)
{
    CostModel cpu;
    cpu.devices.push_back({"cpu:0", 5e10, 2e10, 3e-6, 0});
    std::printf("%-28s %5s %8s %12s %12s %12s %8s %8s %8s %9s\n", "graph", "nodes", "devices", "serial ms",
                "greedy ms", "bound ms", "greedy/LB", "rr/LB", "speedup", "transfers");
    std::vector<std::pair<std::string, Model>> graphs;
    for (int w : {4, 16})
        for (std::uint32_t seed : {1u, 2u})
            graphs.emplace_back("random DAG w" + std::to_string(w) + " #" + std::to_string(seed),
                                randomDag(400, seed, w));
    for (int i = 1; i < argc; ++i) {
        Expected<ImportResult> m = loadModel(argv[i]);
        if (m)
            graphs.emplace_back(argv[i], std::move(m->model));
        else
            std::printf("%s: %s\n", argv[i], m.status().message().c_str());
    }
    for (const char *spec : {"cpu:4", "cpu:8", "gpu:4", "gpu:8"})
        for (auto &[name, model] : graphs) {
            Expected<CostModel> cm = simulatedModel(spec, cpu);
            if (!cm)
                return 1;
            row((name + " " + spec).c_str(), model.graph, *cm);
        }
    return 0;
}
