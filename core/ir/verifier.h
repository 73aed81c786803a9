#pragma once
// Structural checks of a graph. Run after import and, in tests and debug builds, after every
// pass. Messages name the graph, node and tensor involved.
//
//  - every node input is defined: by a node, a graph input, an initializer, or (in a subgraph) a
//    value visible from an enclosing graph;
//  - one producer per value, and use-def chains agree both ways;
//  - no cycles;
//  - subgraphs: outer-scope references resolve, and no name shadows an outer one (SSA across scopes).

#include "ir/graph.h"
#include "util/status.h"

#include <string>
#include <unordered_set>
#include <vector>

namespace opscope {

struct VerifyOptions
{
    std::size_t maxErrors = 8; // more are summarized as "and N more"
};

Status verifyGraph(const Graph &graph, const VerifyOptions &options = {});

} // namespace opscope
