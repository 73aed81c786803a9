#pragma once
// Dependencies between nodes, including the implicit ones: an If/Loop/Scan body may read values
// of the enclosing graph by name, so the node must run after their producers (and keep them alive).

#include "ir/graph.h"

#include <vector>

namespace opscope {

// Values of `graph` read (by name) inside the subgraphs of node `id`, at any depth.
std::vector<ValueId> implicitInputs(const Graph &graph, NodeId id);

// For every node slot: the nodes whose outputs it reads, explicitly or implicitly (deduplicated).
std::vector<std::vector<NodeId>> nodePredecessors(const Graph &graph);

// Topological order that honours implicit inputs too (stable, like Graph::topologicalOrder).
Expected<std::vector<NodeId>> dependencyOrder(const Graph &graph);

} // namespace opscope
