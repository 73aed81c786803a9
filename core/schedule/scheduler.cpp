#include "schedule/scheduler.h"

#include "schedule/pipeline.h"

#include "ir/opcategory.h"
#include "schedule/graphcosts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

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
    if (name == "pipeline")
        return Strategy::Pipeline;
    return Status::invalid("unknown schedule '" + name + "' (serial, parallel, greedy, round-robin, pipeline)");
}

Expected<std::vector<Strategy>> strategiesFromNames(const std::vector<std::string> &names)
{
    if (names.empty())
        return Status::invalid("no schedule given (serial, parallel, greedy, round-robin, pipeline)");
    std::vector<Strategy> out;
    for (const std::string &name : names) {
        if (name.empty())
            return Status::invalid("an empty schedule name in the list: separate names by one comma");
        Expected<Strategy> s = strategyFromName(name);
        if (!s)
            return s.status();
        if (std::find(out.begin(), out.end(), *s) != out.end())
            return Status::invalid("schedule '" + name + "' is given twice");
        out.push_back(*s);
    }
    return out;
}

std::string strategyName(Strategy s)
{
    switch (s) {
    case Strategy::Serial: return "serial";
    case Strategy::Parallel: return "parallel";
    case Strategy::Greedy: return "greedy";
    case Strategy::RoundRobin: return "round-robin";
    case Strategy::Pipeline: return "pipeline";
    }
    return "?";
}

namespace {

// Builds the plan from an assignment (node → queue) and predicted start times.
// Queue q belongs to device q % devices (queues past the devices are their copy queues).
Schedule buildPlan(const Graph &graph, const GraphCosts &c, Strategy strategy,
                   std::vector<PredictedOp> predicted, std::size_t queues, std::size_t devices,
                   const ScheduleOptions &options, const CostModel &model)
{
    Schedule s;
    s.strategy = strategy;
    s.plan.name = strategyName(strategy);
    // Plan devices are the cost model's ("rank1:cpu:0", "host1:gpu:3"); past them, numbered.
    for (std::size_t d = 0; d < devices; ++d)
        s.plan.devices.push_back(d < model.devices.size() && !model.devices[d].name.empty()
                                     ? model.devices[d].name
                                     : options.devicePrefix + ":" + std::to_string(d));
    // Parallel on a worker pool: the predicted lanes become workers sharing one queue, so an op
    // starts when its inputs are ready and any worker is free, not when its predicted lane is.
    const std::size_t workers = strategy == Strategy::Parallel && options.sharedQueue ? queues : 1;
    s.plan.queues.resize(queues / workers);
    for (std::size_t q = 0; q < s.plan.queues.size(); ++q)
        s.plan.queues[q].device = int(q % devices);
    s.plan.queues.front().workers = int(workers);
    // `predicted` comes in the order the list scheduler chose; ties in start time keep it (a
    // zero-cost Send must stay before the op its device starts at the same instant).
    std::stable_sort(predicted.begin(), predicted.end(),
                     [](const PredictedOp &a, const PredictedOp &b) { return a.start < b.start; });
    std::vector<StepRef> where(graph.nodeSlots());
    s.deviceOf.assign(graph.nodeSlots(), -1);
    for (const PredictedOp &p : predicted) {
        const std::uint32_t queue = workers > 1 ? 0 : p.queue;
        PlanQueue &q = s.plan.queues[queue];
        where[p.node.index] = {queue, std::uint32_t(q.steps.size())};
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
    Expected<Placement> p = placeFor(graph, strategy, model);
    if (!p)
        return p.status();
    return std::move(p->device);
}

Expected<Placement> placeFor(const Graph &graph, Strategy strategy, const CostModel &model)
{
    if (strategy == Strategy::Greedy)
        return placeGreedy(graph, model);
    if (strategy == Strategy::Pipeline)
        return placePipeline(graph, model);
    return placeRoundRobin(graph, model, strategy == Strategy::RoundRobin ? 0 : 1);
}

Expected<Schedule> makeSchedule(const Graph &graph, Strategy strategy, const CostModel &model,
                                const ScheduleOptions &options, const std::vector<int> *placement,
                                const std::vector<double> *order)
{
    Expected<GraphCosts> costs = graphCosts(graph, model);
    if (!costs)
        return costs.status();
    const GraphCosts &c = *costs;
    const std::size_t workers = std::size_t(std::max(1, options.workers));
    std::vector<PredictedOp> predicted;
    std::vector<double> finish(graph.nodeSlots(), 0.0);

    if (strategy == Strategy::Serial) {
        double t = 0.0;
        for (NodeId n : c.order) {
            predicted.push_back({n, 0, 0, t, t + c.seconds[n.index][0]});
            t = predicted.back().finish;
        }
        return buildPlan(graph, c, strategy, std::move(predicted), 1, 1, options, model);
    }
    // List scheduling: among the ops whose inputs are done, the one with the highest priority
    // goes first and takes the queue where it can start first (parallel) or its placed device.
    // Parallel ranks by the longest path to the end (upward rank); placed strategies run each
    // device's ops in the order the placement predicted, which replays that placement exactly.
    const bool multiDevice = strategy != Strategy::Parallel;
    std::vector<int> device(graph.nodeSlots(), 0);
    std::vector<double> priority;
    if (multiDevice) {
        std::vector<double> keys;
        if (placement) {
            if (placement->size() < graph.nodeSlots())
                return Status::invalid("the placement does not cover every node");
            device = *placement;
            if (order)
                keys = *order;
        } else {
            Expected<Placement> placed = placeFor(graph, strategy, model);
            if (!placed)
                return placed.status();
            device = std::move(placed->device);
            keys = std::move(placed->start);
        }
        if (keys.empty()) {
            priority = upwardRanks(c, model);
        } else {
            // Nodes the placement did not see (Send/Recv added by partitioning) are due when their
            // inputs are: the latest predecessor's predicted finish.
            keys.resize(graph.nodeSlots(), std::numeric_limits<double>::quiet_NaN());
            for (NodeId n : c.order)
                if (std::isnan(keys[n.index])) {
                    double due = 0.0;
                    for (NodeId p : c.preds[n.index])
                        due =
                            std::max(due, keys[p.index] +
                                              c.seconds[p.index][std::size_t(std::max(0, device[p.index]))]);
                    keys[n.index] = due;
                }
            priority.resize(keys.size());
            for (std::size_t i = 0; i < keys.size(); ++i)
                priority[i] = -keys[i]; // earliest predicted start first
        }
    } else {
        priority = upwardRanks(c, model);
    }
    // Devices whose copies overlap compute get a copy queue each, after the compute queues.
    const std::size_t devices = multiDevice ? model.devices.size() : 1;
    bool copyQueues = false;
    for (const DeviceModel &d : model.devices)
        copyQueues = copyQueues || (multiDevice && d.copiesOverlap);
    const std::size_t lanes = multiDevice ? devices * (copyQueues ? 2 : 1) : workers;
    std::vector<double> laneFree(lanes, 0.0);
    double deviceWorkFree = 0.0; // parallel on a device whose queues share it (GPU streams)
    // After partitioning, a cross-device edge is Send → Recv and the Recv's own cost is the copy;
    // without partitioning the edge itself costs a transfer.
    const bool partitioned = placement != nullptr;
    visitByPriority(c, priority, [&](NodeId n) {
        std::size_t lane = 0;
        double start = 0.0;
        if (multiDevice) {
            lane = std::size_t(device[n.index]);
            const Node &node = graph.node(n);
            if (model.devices[lane].copiesOverlap && node.opType == "Recv" && node.domain == "ai.opscope")
                lane += devices;
            start = laneFree[lane];
            for (NodeId p : c.preds[n.index])
                start = std::max(start, finish[p.index] +
                                            (partitioned ? 0.0
                                                         : model.transferSeconds(c.outputBytes[p.index],
                                                                                 std::size_t(device[p.index]),
                                                                                 lane % devices)));
        } else {
            double inputs = 0.0;
            for (NodeId p : c.preds[n.index])
                inputs = std::max(inputs, finish[p.index]);
            for (std::size_t q = 0; q < lanes; ++q)
                if (std::max(laneFree[q], inputs) < std::max(laneFree[lane], inputs))
                    lane = q;
            start = std::max(laneFree[lane], inputs);
        }
        const std::size_t costDevice = multiDevice ? lane % devices : 0;
        finish[n.index] = start + c.seconds[n.index][costDevice];
        if (!multiDevice && model.devices[0].queuesShareDevice) {
            // Streams of one GPU: launches overlap, the work itself takes the device in turn.
            const double overhead = std::min(model.devices[0].overheadSeconds, c.seconds[n.index][0]);
            const double work = c.seconds[n.index][0] - overhead;
            finish[n.index] = std::max(start + overhead, deviceWorkFree) + work;
            deviceWorkFree = finish[n.index];
        }
        laneFree[lane] = finish[n.index];
        predicted.push_back({n, std::uint32_t(costDevice), std::uint32_t(lane), start, finish[n.index]});
    });
    if (predicted.size() != c.order.size())
        return Status::internal("list scheduling left nodes unscheduled");
    return buildPlan(graph, c, strategy, std::move(predicted), lanes, devices, options, model);
}

trace::Trace predictedTrace(const Graph &graph, const Schedule &schedule, const std::string &name)
{
    trace::Trace t;
    t.name = name;
    for (const PredictedOp &p : schedule.predicted) {
        const Node &n = graph.node(p.node);
        const std::size_t lane = t.laneFor(schedule.plan.devices[p.device], p.queue);
        t.lanes[lane].spans.push_back({p.start, p.finish, t.intern(n.name), t.intern(n.opType),
                                       std::uint8_t(opCategory(n.opType, n.domain))});
    }
    t.sortLanes();
    // Each Recv is a transfer, from its Send's end on the source lane to the copy's end, as the
    // recorder writes them for measured runs.
    std::vector<const PredictedOp *> of(graph.nodeSlots(), nullptr);
    for (const PredictedOp &p : schedule.predicted)
        of[p.node.index] = &p;
    const auto laneOf = [&](const PredictedOp &p) {
        return std::uint32_t(t.laneFor(schedule.plan.devices[p.device], p.queue));
    };
    for (const PredictedOp &p : schedule.predicted) {
        const Node &n = graph.node(p.node);
        if (n.opType != "Recv" || n.domain != "ai.opscope" || n.inputs.empty())
            continue;
        const NodeId send = graph.producer(n.inputs[0]);
        const PredictedOp *from = send.valid() ? of[send.index] : nullptr;
        t.transfers.push_back({from ? from->finish : p.start, p.finish,
                               std::uint64_t(estimateCost(graph, p.node).outputBytes),
                               from ? laneOf(*from) : laneOf(p), laneOf(p)});
    }
    return t;
}

double makespanLowerBound(const Graph &graph, const CostModel &model)
{
    Expected<GraphCosts> costs = graphCosts(graph, model);
    if (!costs || model.devices.empty())
        return 0.0;
    const GraphCosts &c = *costs;
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
