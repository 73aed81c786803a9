#include "runtime/executionplan.h"

#include "ir/dependencies.h"

#include <algorithm>

namespace opscope {

Expected<ExecutionPlan> serialPlan(const Graph &graph, const std::string &device)
{
    Expected<std::vector<NodeId>> order = dependencyOrder(graph);
    if (!order)
        return order.status();
    ExecutionPlan plan;
    plan.name = "serial";
    plan.devices = {device};
    plan.queues.resize(1);
    for (NodeId id : *order)
        plan.queues[0].steps.push_back({id, {}});
    return plan;
}

Status validatePlan(const Graph &graph, const ExecutionPlan &plan)
{
    std::vector<StepRef> where(graph.nodeSlots(), StepRef{~0u, ~0u});
    std::size_t count = 0;
    for (std::uint32_t q = 0; q < plan.queues.size(); ++q) {
        if (plan.queues[q].device < 0 || std::size_t(plan.queues[q].device) >= plan.devices.size())
            return Status::invalid("plan queue " + std::to_string(q) + " names no device");
        if (plan.queues[q].workers < 1 || plan.queues[q].workers > 1024)
            return Status::invalid("plan queue " + std::to_string(q) + " has " +
                                   std::to_string(plan.queues[q].workers) + " workers (1 to 1024)");
        for (std::uint32_t s = 0; s < plan.queues[q].steps.size(); ++s) {
            const NodeId id = plan.queues[q].steps[s].node;
            if (!id.valid() || id.index >= graph.nodeSlots() || !graph.node(id).alive)
                return Status::invalid("plan step " + std::to_string(q) + "/" + std::to_string(s) +
                                       " names no live node");
            if (where[id.index].queue != ~0u)
                return Status::invalid("node '" + graph.node(id).name + "' is scheduled twice");
            where[id.index] = {q, s};
            ++count;
        }
    }
    if (count != graph.nodeCount())
        return Status::invalid("the plan schedules " + std::to_string(count) + " of " +
                               std::to_string(graph.nodeCount()) + " nodes");

    // A dependency is met if it runs earlier in the same queue, or a waited-for step is at or
    // after it in the producer's queue (queues run in order).
    const auto preds = nodePredecessors(graph);
    for (const PlanQueue &queue : plan.queues)
        for (std::uint32_t s = 0; s < queue.steps.size(); ++s) {
            const PlanStep &step = queue.steps[s];
            const StepRef self = where[step.node.index];
            for (NodeId p : preds[step.node.index]) {
                const StepRef dep = where[p.index];
                bool met = dep.queue == self.queue && dep.step < self.step;
                for (const StepRef &w : step.waitFor)
                    met |= w.queue == dep.queue && w.step >= dep.step;
                // Transitively: an earlier step of this queue that waited for it also suffices —
                // unless workers share the queue and steps may overtake each other.
                for (std::uint32_t e = 0; !met && queue.workers == 1 && e < s; ++e)
                    for (const StepRef &w : queue.steps[e].waitFor)
                        met |= w.queue == dep.queue && w.step >= dep.step;
                if (!met)
                    return Status::invalid("node '" + graph.node(step.node).name +
                                           "' may run before its input from '" + graph.node(p).name + "'");
            }
        }
    return Status::ok();
}

Expected<ExecutionPlan> subPlan(const ExecutionPlan &plan, const std::vector<bool> &keep, const Graph &graph,
                                std::vector<std::uint32_t> *queueOf)
{
    ExecutionPlan part;
    part.name = plan.name;
    std::vector<int> device(plan.devices.size(), -1), queue(plan.queues.size(), -1);
    for (std::size_t d = 0; d < plan.devices.size(); ++d)
        if (d < keep.size() && keep[d]) {
            device[d] = int(part.devices.size());
            part.devices.push_back(plan.devices[d]);
        }
    if (queueOf)
        queueOf->clear();
    for (std::size_t q = 0; q < plan.queues.size(); ++q)
        if (device[std::size_t(plan.queues[q].device)] >= 0) {
            queue[q] = int(part.queues.size());
            part.queues.push_back(plan.queues[q]);
            part.queues.back().device = device[std::size_t(plan.queues[q].device)];
            if (queueOf)
                queueOf->push_back(std::uint32_t(q));
        }
    for (PlanQueue &q : part.queues)
        for (PlanStep &step : q.steps) {
            std::vector<StepRef> kept;
            for (const StepRef &r : step.waitFor) {
                if (queue[r.queue] >= 0) {
                    kept.push_back({std::uint32_t(queue[r.queue]), r.step});
                    continue;
                }
                // Partitioning puts a Send/Recv on every edge between devices (bodies' outer
                // reads included): any other wait across the cut is a bug.
                if (graph.node(step.node).opType != "Recv") {
                    const PlanQueue &other = plan.queues[r.queue];
                    return Status::internal("'" + graph.node(step.node).name + "' waits for '" +
                                            graph.node(other.steps[r.step].node).name + "' on " +
                                            plan.devices[std::size_t(other.device)] +
                                            " with no Send/Recv between them: the " + plan.name +
                                            " plan cannot be run in parts");
                }
            }
            step.waitFor = std::move(kept);
        }
    return part;
}

} // namespace opscope
