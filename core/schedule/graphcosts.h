#pragma once
// Per-node cost tables the scheduler and the placement share: predicted seconds per device,
// output bytes (what a transfer moves), predecessors/successors and a dependency order.

#include "schedule/costmodel.h"

#include <vector>

namespace opscope::schedule {

struct GraphCosts
{
    std::vector<std::vector<double>> seconds; // [node slot][device]
    std::vector<double> outputBytes;          // [node slot]
    std::vector<std::vector<NodeId>> preds, succs;
    std::vector<NodeId> order; // dependency order of the live nodes
    std::vector<int> position; // [node slot] → index in `order` (-1: not live)
};

Expected<GraphCosts> graphCosts(const Graph &graph, const CostModel &model);

// Upward rank: the longest path (mean cost over devices) from a node to the end, transfers
// included at the mean link speed. Descending rank is the critical-path-first priority.
std::vector<double> upwardRanks(const GraphCosts &costs, const CostModel &model);

} // namespace opscope::schedule
