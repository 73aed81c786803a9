#pragma once
// What differs between two graphs, node by node, matched by node name (passes keep the names of
// the nodes they keep; new nodes get new names). Used by the pass stepper and File ▸ Compare.

#include "ir/graph.h"

#include <string>
#include <unordered_set>

namespace opscope {

struct GraphDiff
{
    std::unordered_set<std::string> removed;  // in `before` only
    std::unordered_set<std::string> added;    // in `after` only
    std::unordered_set<std::string> modified; // in both, with another op, inputs, outputs or attributes
    bool empty() const { return removed.empty() && added.empty() && modified.empty(); }
};

GraphDiff diffGraphsByName(const Graph &before, const Graph &after);

} // namespace opscope
