#include "schedule/pipeline.h"

#include "schedule/graphcosts.h"

#include <algorithm>
#include <numeric>

namespace opscope::schedule {

namespace {

// How many stages a greedy fill up to `budget` seconds each needs.
std::size_t stagesFor(const std::vector<double> &seconds, double budget)
{
    std::size_t stages = 1;
    double load = 0.0;
    for (double s : seconds) {
        if (load + s > budget && load > 0.0) {
            ++stages;
            load = 0.0;
        }
        load += s;
    }
    return stages;
}

} // namespace

Expected<Placement> placePipeline(const Graph &graph, const CostModel &model, std::size_t stages)
{
    Expected<GraphCosts> costs = graphCosts(graph, model);
    if (!costs)
        return costs.status();
    const GraphCosts &c = *costs;
    if (stages == 0 || stages > model.devices.size())
        stages = model.devices.size();
    std::vector<double> seconds;
    seconds.reserve(c.order.size());
    for (NodeId n : c.order)
        seconds.push_back(c.seconds[n.index][0]);
    const double total = std::accumulate(seconds.begin(), seconds.end(), 0.0);
    double lo = seconds.empty() ? 0.0 : *std::max_element(seconds.begin(), seconds.end()), hi = std::max(lo, total);
    for (int i = 0; i < 60 && hi - lo > 1e-12 * std::max(1.0, hi); ++i) {
        const double mid = 0.5 * (lo + hi);
        (stagesFor(seconds, mid) <= stages ? hi : lo) = mid;
    }
    Placement p;
    p.device.assign(c.seconds.size(), -1);
    p.start.assign(c.seconds.size(), 0.0);
    std::size_t stage = 0;
    double load = 0.0, t = 0.0, slowest = 0.0;
    for (std::size_t i = 0; i < c.order.size(); ++i) {
        // A new stage when the budget is spent — or when the nodes left would otherwise not reach
        // every stage (each stage gets at least one node while there are enough).
        const std::size_t left = c.order.size() - i;
        const bool mustCut = stage + 1 < stages && left <= stages - stage - 1;
        if (stage + 1 < stages && load > 0.0 && (load + seconds[i] > hi || mustCut)) {
            slowest = std::max(slowest, load);
            ++stage;
            load = 0.0;
        }
        p.device[c.order[i].index] = int(stage);
        p.start[c.order[i].index] = t;
        load += seconds[i];
        t += seconds[i];
    }
    slowest = std::max(slowest, load);
    p.makespan = t; // one batch: the stages in turn (transfers aside)
    (void)slowest;
    return p;
}

PipelinePrediction predictPipeline(const Schedule &schedule, std::size_t devices, int microbatches)
{
    std::vector<double> load(std::max<std::size_t>(1, devices), 0.0);
    for (const PredictedOp &op : schedule.predicted)
        load[op.device % load.size()] += op.finish - op.start;
    PipelinePrediction p;
    p.stages = int(std::count_if(load.begin(), load.end(), [](double x) { return x > 0; }));
    const int m = std::max(1, microbatches);
    p.makespanSeconds = *std::max_element(load.begin(), load.end()) * double(m + p.stages - 1) / double(m);
    p.bubble = idealBubble(m, p.stages);
    return p;
}

double idealBubble(int microbatches, int stages)
{
    const int m = std::max(1, microbatches), s = std::max(1, stages);
    return double(s - 1) / double(m + s - 1);
}

} // namespace opscope::schedule
