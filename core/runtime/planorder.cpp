#include "runtime/planorder.h"

#include "ir/dependencies.h"

#include <bit>
#include <queue>
#include <tuple>

namespace opscope {

Expected<PlanOrder> PlanOrder::of(const PreparedGraph &pg, const ExecutionPlan &plan)
{
    const Graph &g = *pg.graph;
    PlanOrder o;
    o.m_position.assign(g.nodeSlots(), -1);
    o.m_serial = plan.queues.size() == 1 && plan.queues[0].workers <= 1;

    std::vector<StepRef> where(g.nodeSlots(), StepRef{~0u, ~0u});
    std::size_t steps = 0;
    for (std::uint32_t q = 0; q < plan.queues.size(); ++q)
        for (std::uint32_t s = 0; s < plan.queues[q].steps.size(); ++s) {
            const NodeId n = plan.queues[q].steps[s].node;
            if (!n.valid() || n.index >= g.nodeSlots() || where[n.index].queue != ~0u)
                return Status::internal("memory planning: the plan names a node twice or one the graph lacks");
            where[n.index] = {q, s};
            ++steps;
        }

    if (o.m_serial) {
        for (const PlanStep &step : plan.queues[0].steps) {
            o.m_position[step.node.index] = int(o.m_order.size());
            o.m_order.push_back(step.node);
            o.m_device.push_back(plan.queues[0].device);
        }
        return o;
    }

    // Edges between steps (as node slots): data (explicit and implicit reads), queue order where a
    // queue has one worker, waitFor.
    std::vector<std::vector<NodeId>> succ(g.nodeSlots());
    std::vector<int> pending(g.nodeSlots(), 0);
    const auto edge = [&](NodeId from, NodeId to) {
        succ[from.index].push_back(to);
        ++pending[to.index];
    };
    const std::vector<std::vector<NodeId>> preds = nodePredecessors(g);
    for (const PlanQueue &queue : plan.queues)
        for (std::uint32_t s = 0; s < queue.steps.size(); ++s) {
            const NodeId n = queue.steps[s].node;
            for (NodeId p : preds[n.index])
                if (where[p.index].queue != ~0u)
                    edge(p, n);
            if (queue.workers <= 1 && s > 0)
                edge(queue.steps[s - 1].node, n);
            for (const StepRef &w : queue.steps[s].waitFor) {
                if (w.queue >= plan.queues.size() || w.step >= plan.queues[w.queue].steps.size())
                    return Status::internal("memory planning: a step waits for a step the plan lacks");
                edge(plan.queues[w.queue].steps[w.step].node, n);
            }
        }
    // Kahn's algorithm; among ready steps the one earliest in its queue, then the lower queue, so
    // the linearization interleaves queues the way they start.
    using Ready = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>; // step, queue, node slot
    std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
    for (const PlanQueue &queue : plan.queues)
        for (const PlanStep &step : queue.steps)
            if (pending[step.node.index] == 0)
                ready.emplace(where[step.node.index].step, where[step.node.index].queue, step.node.index);
    while (!ready.empty()) {
        const auto [s, q, slot] = ready.top();
        ready.pop();
        const NodeId n(slot);
        o.m_position[slot] = int(o.m_order.size());
        o.m_order.push_back(n);
        o.m_device.push_back(plan.queues[q].device);
        for (NodeId t : succ[slot])
            if (--pending[t.index] == 0)
                ready.emplace(where[t.index].step, where[t.index].queue, t.index);
    }
    if (o.m_order.size() != steps)
        return Status::internal("memory planning: the plan's dependencies form a cycle");

    if (steps > maxMatrixSteps)
        return o;
    // Reachability: row p holds every position after p along the edges. Every edge goes forward in
    // the linearization, so rows can be filled from the last position to the first.
    o.m_words = (steps + 63) / 64;
    o.m_rowStart.resize(steps);
    std::size_t total = 0;
    for (std::size_t p = 0; p < steps; ++p) {
        o.m_rowStart[p] = total;
        total += o.m_words - (p >> 6);
    }
    o.m_reach.assign(total, 0);
    for (std::size_t p = steps; p-- > 0;) {
        std::uint64_t *row = &o.m_reach[o.m_rowStart[p]] - (p >> 6); // indexed by global word
        for (NodeId t : succ[o.m_order[p].index]) {
            const std::size_t q = std::size_t(o.m_position[t.index]);
            const std::uint64_t *other = &o.m_reach[o.m_rowStart[q]] - (q >> 6);
            for (std::size_t w = q >> 6; w < o.m_words; ++w) // all of it lies after q
                row[w] |= other[w];
            row[q >> 6] |= std::uint64_t(1) << (q & 63);
        }
    }
    // precedesAllFrom: one past the last position above p that p does not precede.
    o.m_from.assign(steps, int(steps));
    for (std::size_t p = 0; p < steps; ++p) {
        const std::uint64_t *row = &o.m_reach[o.m_rowStart[p]] - (p >> 6);
        int from = int(p) + 1;
        for (std::size_t w = o.m_words; w-- > (p >> 6);) {
            std::uint64_t valid = ~std::uint64_t(0);
            if (w + 1 == o.m_words && steps % 64)
                valid = (std::uint64_t(1) << (steps % 64)) - 1;
            if (w == (p >> 6))
                valid &= ~((std::uint64_t(2) << (p & 63)) - 1); // positions above p
            if (const std::uint64_t missing = ~row[w] & valid) {
                from = int(w * 64 + 63 - std::size_t(std::countl_zero(missing))) + 1;
                break;
            }
        }
        o.m_from[p] = from;
    }
    return o;
}

} // namespace opscope
