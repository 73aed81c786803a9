#pragma once
// Per-node cost tables the scheduler and the placement share: predicted seconds per device,
// output bytes (what a transfer moves), the weights each node reads, predecessors/successors and a dependency order.

#include "schedule/costmodel.h"

#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

namespace opscope::schedule {

struct GraphCosts
{
    std::vector<std::vector<double>> seconds; // [node slot][device]
    std::vector<double> outputBytes;          // [node slot]
    // The initializers a node reads, its bodies' reads included: (value slot, bytes). A device
    // holds a weight once, however many of its nodes read it. External ones only where the cost
    // model says embedded weights are everywhere anyway.
    std::vector<std::vector<std::pair<std::uint32_t, double>>> weights; // [node slot]
    std::vector<std::vector<NodeId>> preds, succs;
    std::vector<NodeId> order; // dependency order of the live nodes
    std::vector<int> position; // [node slot] → index in `order` (-1: not live)
};

// Fails for a model without devices or a graph that cannot be ordered (a cycle).
Expected<GraphCosts> graphCosts(const Graph &graph, const CostModel &model);

// Upward rank: the longest path (mean cost over devices) from a node to the end, transfers
// included at the mean link speed. Descending rank is the critical-path-first priority.
std::vector<double> upwardRanks(const GraphCosts &costs, const CostModel &model);

// Visits the live nodes in list-scheduling order: among the nodes whose predecessors have all been
// visited, the highest `priority` (by node slot) first; ties in dependency order.
template<class Visit>
void visitByPriority(const GraphCosts &c, const std::vector<double> &priority, Visit &&visit)
{
    std::vector<int> waiting(c.seconds.size(), 0);
    auto lower = [&](NodeId a, NodeId b) {
        return priority[a.index] != priority[b.index] ? priority[a.index] < priority[b.index]
                                                      : c.position[a.index] > c.position[b.index];
    };
    std::priority_queue<NodeId, std::vector<NodeId>, decltype(lower)> ready(lower);
    for (NodeId n : c.order) {
        waiting[n.index] = int(c.preds[n.index].size());
        if (waiting[n.index] == 0)
            ready.push(n);
    }
    while (!ready.empty()) {
        const NodeId n = ready.top();
        ready.pop();
        visit(n);
        for (NodeId succ : c.succs[n.index])
            if (--waiting[succ.index] == 0)
                ready.push(succ);
    }
}

} // namespace opscope::schedule
