#include "schedule/scheduler.h"

#include "ir/dependencies.h"
#include "ir/opcategory.h"

#include <algorithm>
#include <limits>
#include <map>
#include <queue>

namespace opscope::schedule {

Expected<Strategy> strategyFromName(const std::string &name)
{
    if (name == "serial")
        return Strategy::Serial;
    if (name == "parallel")
        return Strategy::Parallel;
    if (name == "greedy")
        return Strategy::Greedy;
    if (name == "round-robin")
        return Strategy::RoundRobin;
    return Status::invalid("unknown schedule '" + name + "' (serial, parallel, greedy, round-robin)");
}

std::string strategyName(Strategy s)
{
    switch (s) {
    case Strategy::Serial: return "serial";
    case Strategy::Parallel: return "parallel";
    case Strategy::Greedy: return "greedy";
    case Strategy::RoundRobin: return "round-robin";
    }
    return "?";
}

namespace {

struct Costs
{
    std::vector<std::vector<double>> seconds; // [node slot][device]
    std::vector<double> outputBytes;          // [node slot]
    std::vector<std::vector<NodeId>> preds, succs;
    std::vector<NodeId> order;
};

Expected<Costs> costsOf(const Graph &graph, const CostModel &model)
{
    Costs c;
    Expected<std::vector<NodeId>> order = dependencyOrder(graph);
    if (!order)
        return order.status();
    c.order = std::move(*order);
    c.preds = nodePredecessors(graph);
    c.succs.resize(graph.nodeSlots());
    for (NodeId n : c.order)
        for (NodeId p : c.preds[n.index])
            c.succs[p.index].push_back(n);
    c.seconds.assign(graph.nodeSlots(), std::vector<double>(model.devices.size(), 0.0));
    c.outputBytes.assign(graph.nodeSlots(), 0.0);
    for (NodeId n : c.order) {
        const OpCost cost = estimateCost(graph, n);
        c.outputBytes[n.index] = cost.outputBytes;
        for (std::size_t d = 0; d < model.devices.size(); ++d)
            c.seconds[n.index][d] = model.seconds(cost, d);
    }
    return c;
}

// Upward rank: the longest path (mean cost) from a node to the end, transfers included.
std::vector<double> upwardRanks(const Costs &c, const CostModel &model)
{
    std::vector<double> rank(c.seconds.size(), 0.0);
    const double meanLink =
        model.devices.size() > 1 ? model.transferSeconds(1.0, 0, 1) - model.link.latencySeconds : 0.0;
    for (auto it = c.order.rbegin(); it != c.order.rend(); ++it) {
        const auto &s = c.seconds[it->index];
        double mean = 0.0;
        for (double x : s)
            mean += x;
        mean /= double(std::max<std::size_t>(1, s.size()));
        double best = 0.0;
        for (NodeId succ : c.succs[it->index])
            best = std::max(best, rank[succ.index] + c.outputBytes[it->index] * meanLink);
        rank[it->index] = mean + best;
    }
    return rank;
}

// Builds the plan from an assignment (node → queue) and predicted start times.
Schedule buildPlan(const Graph &graph, const Costs &c, Strategy strategy, std::vector<PredictedOp> predicted,
                   std::size_t queues, bool queuePerDevice, const ScheduleOptions &options)
{
    Schedule s;
    s.strategy = strategy;
    s.plan.name = strategyName(strategy);
    const std::size_t devices = queuePerDevice ? queues : 1;
    for (std::size_t d = 0; d < devices; ++d)
        s.plan.devices.push_back(options.devicePrefix + ":" + std::to_string(d));
    s.plan.queues.resize(queues);
    for (std::size_t q = 0; q < queues; ++q)
        s.plan.queues[q].device = int(queuePerDevice ? q : 0);
    std::sort(predicted.begin(), predicted.end(), [](const PredictedOp &a, const PredictedOp &b) {
        return a.start != b.start ? a.start < b.start : a.node < b.node;
    });
    std::vector<StepRef> where(graph.nodeSlots());
    s.deviceOf.assign(graph.nodeSlots(), -1);
    for (const PredictedOp &p : predicted) {
        PlanQueue &q = s.plan.queues[p.queue];
        where[p.node.index] = {p.queue, std::uint32_t(q.steps.size())};
        s.deviceOf[p.node.index] = int(p.device);
        q.steps.push_back({p.node, {}});
    }
    for (PlanQueue &q : s.plan.queues)
        for (PlanStep &step : q.steps)
            for (NodeId pred : c.preds[step.node.index]) {
                const StepRef r = where[pred.index];
                if (r.queue != where[step.node.index].queue)
                    step.waitFor.push_back(r);
            }
    for (const PredictedOp &p : predicted)
        s.predictedMakespan = std::max(s.predictedMakespan, p.finish);
    s.predicted = std::move(predicted);
    return s;
}

} // namespace

Expected<std::vector<int>> placeNodes(const Graph &graph, Strategy strategy, const CostModel &model)
{
    Expected<Costs> costs = costsOf(graph, model);
    if (!costs)
        return costs.status();
    const Costs &c = *costs;
    const std::size_t devices = model.devices.size();
    std::vector<int> device(graph.nodeSlots(), -1);
    if (strategy == Strategy::RoundRobin) {
        std::size_t next = 0;
        for (NodeId n : c.order)
            device[n.index] = int(next++ % devices);
        return device;
    }
    if (strategy != Strategy::Greedy) {
        for (NodeId n : c.order)
            device[n.index] = 0;
        return device;
    }
    // HEFT: highest upward rank first (a topological order), earliest finish time wins.
    const std::vector<double> rank = upwardRanks(c, model);
    std::vector<NodeId> byRank = c.order;
    std::stable_sort(byRank.begin(), byRank.end(),
                     [&](NodeId a, NodeId b) { return rank[a.index] > rank[b.index]; });
    std::vector<double> finish(graph.nodeSlots(), 0.0), available(devices, 0.0);
    std::vector<double> memory(devices, 0.0);
    std::vector<bool> placed(graph.nodeSlots(), false);
    // Rank order can put a node before a predecessor with equal rank: place in waves.
    std::vector<NodeId> pending = byRank;
    while (!pending.empty()) {
        std::vector<NodeId> later;
        for (NodeId n : pending) {
            bool ready = true;
            for (NodeId p : c.preds[n.index])
                ready = ready && placed[p.index];
            if (!ready) {
                later.push_back(n);
                continue;
            }
            double bestFinish = std::numeric_limits<double>::infinity();
            std::size_t best = 0;
            for (std::size_t d = 0; d < devices; ++d) {
                const std::uint64_t cap = model.devices[d].memoryBytes;
                if (cap && memory[d] + c.outputBytes[n.index] > double(cap) && d + 1 < devices)
                    continue;
                double ready_at = available[d];
                for (NodeId p : c.preds[n.index])
                    ready_at = std::max(ready_at, finish[p.index] +
                                                      model.transferSeconds(c.outputBytes[p.index],
                                                                            std::size_t(device[p.index]), d));
                const double f = ready_at + c.seconds[n.index][d];
                if (f < bestFinish) {
                    bestFinish = f;
                    best = d;
                }
            }
            device[n.index] = int(best);
            finish[n.index] = bestFinish;
            available[best] = bestFinish;
            memory[best] += c.outputBytes[n.index];
            placed[n.index] = true;
        }
        if (later.size() == pending.size())
            return Status::internal("greedy placement made no progress (dependency cycle?)");
        pending = std::move(later);
    }
    return device;
}

Expected<Schedule> makeSchedule(const Graph &graph, Strategy strategy, const CostModel &model,
                                const ScheduleOptions &options, const std::vector<int> *placement)
{
    if (model.devices.empty())
        return Status::invalid("the cost model has no devices");
    Expected<Costs> costs = costsOf(graph, model);
    if (!costs)
        return costs.status();
    const Costs &c = *costs;
    const std::size_t workers = std::size_t(std::max(1, options.workers));
    std::vector<PredictedOp> predicted;
    std::vector<double> finish(graph.nodeSlots(), 0.0);

    if (strategy == Strategy::Serial) {
        double t = 0.0;
        for (NodeId n : c.order) {
            predicted.push_back({n, 0, 0, t, t + c.seconds[n.index][0]});
            t = predicted.back().finish;
        }
        return buildPlan(graph, c, strategy, std::move(predicted), 1, false, options);
    }
    // List scheduling: among the ops whose inputs are done, the one with the longest path to the
    // end (upward rank) goes first; each op then takes the queue (parallel) or its placed device.
    const std::vector<double> rank = upwardRanks(c, model);
    const bool multiDevice = strategy != Strategy::Parallel;
    std::vector<int> device(graph.nodeSlots(), 0);
    if (multiDevice) {
        Expected<std::vector<int>> placed =
            placement ? Expected<std::vector<int>>(*placement) : placeNodes(graph, strategy, model);
        if (!placed)
            return placed.status();
        if (placed->size() < graph.nodeSlots())
            return Status::invalid("the placement does not cover every node");
        device = std::move(*placed);
    }
    const std::size_t lanes = multiDevice ? model.devices.size() : workers;
    std::vector<double> laneFree(lanes, 0.0);
    std::vector<int> waiting(graph.nodeSlots(), 0);
    auto cmp = [&](NodeId a, NodeId b) {
        return rank[a.index] != rank[b.index] ? rank[a.index] < rank[b.index] : b < a;
    };
    std::priority_queue<NodeId, std::vector<NodeId>, decltype(cmp)> ready(cmp);
    for (NodeId n : c.order) {
        waiting[n.index] = int(c.preds[n.index].size());
        if (waiting[n.index] == 0)
            ready.push(n);
    }
    // After partitioning, a cross-device edge is Send → Recv and the Recv's own cost is the copy;
    // without partitioning the edge itself costs a transfer.
    const bool partitioned = placement != nullptr;
    while (!ready.empty()) {
        const NodeId n = ready.top();
        ready.pop();
        std::size_t lane = 0;
        double start = 0.0;
        if (multiDevice) {
            lane = std::size_t(device[n.index]);
            start = laneFree[lane];
            for (NodeId p : c.preds[n.index])
                start = std::max(
                    start, finish[p.index] +
                               (partitioned ? 0.0
                                            : model.transferSeconds(c.outputBytes[p.index],
                                                                    std::size_t(device[p.index]), lane)));
        } else {
            double inputs = 0.0;
            for (NodeId p : c.preds[n.index])
                inputs = std::max(inputs, finish[p.index]);
            for (std::size_t q = 0; q < lanes; ++q)
                if (std::max(laneFree[q], inputs) < std::max(laneFree[lane], inputs))
                    lane = q;
            start = std::max(laneFree[lane], inputs);
        }
        const std::size_t costDevice = multiDevice ? lane : 0;
        finish[n.index] = start + c.seconds[n.index][costDevice];
        laneFree[lane] = finish[n.index];
        predicted.push_back({n, std::uint32_t(costDevice), std::uint32_t(lane), start, finish[n.index]});
        for (NodeId succ : c.succs[n.index])
            if (--waiting[succ.index] == 0)
                ready.push(succ);
    }
    if (predicted.size() != c.order.size())
        return Status::internal("list scheduling left nodes unscheduled");
    return buildPlan(graph, c, strategy, std::move(predicted), lanes, multiDevice, options);
}

trace::Trace predictedTrace(const Graph &graph, const Schedule &schedule, const std::string &name)
{
    trace::Trace t;
    t.name = name;
    for (const PredictedOp &p : schedule.predicted) {
        const Node &n = graph.node(p.node);
        const std::size_t lane =
            t.laneFor(schedule.plan.devices[schedule.plan.queues[p.queue].device], p.queue);
        t.lanes[lane].spans.push_back({p.start, p.finish, t.intern(n.name), t.intern(n.opType),
                                       std::uint8_t(opCategory(n.opType, n.domain))});
    }
    t.sortLanes();
    return t;
}

double makespanLowerBound(const Graph &graph, const CostModel &model)
{
    Expected<Costs> costs = costsOf(graph, model);
    if (!costs || model.devices.empty())
        return 0.0;
    const Costs &c = *costs;
    std::vector<double> longest(graph.nodeSlots(), 0.0);
    double critical = 0.0, total = 0.0;
    for (NodeId n : c.order) {
        const double fastest = *std::min_element(c.seconds[n.index].begin(), c.seconds[n.index].end());
        double start = 0.0;
        for (NodeId p : c.preds[n.index])
            start = std::max(start, longest[p.index]);
        longest[n.index] = start + fastest;
        critical = std::max(critical, longest[n.index]);
        total += fastest;
    }
    return std::max(critical, total / double(model.devices.size()));
}

} // namespace opscope::schedule
