#pragma once
// What differs between two graphs, node by node, matched by node name (passes keep the names of
// the nodes they keep; new nodes get new names). Used by the pass stepper and File ▸ Compare.

#include "ir/graph.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace opscope {

struct GraphDiff
{
    std::unordered_set<std::string> removed;  // in `before` only
    std::unordered_set<std::string> added;    // in `after` only
    std::unordered_set<std::string> modified; // in both, with another op, inputs, outputs or attributes
    bool empty() const { return removed.empty() && added.empty() && modified.empty(); }
};

// `same`: after-node name → before-node name of nodes that are one node under two names (see
// matchRenamedNodes); they are compared with each other, never listed as removed and added.
// A modified pair lists both names.
GraphDiff diffGraphsByName(const Graph &before, const Graph &after,
                           const std::unordered_map<std::string, std::string> &same = {});

// Nodes an export lowering or a chain of passes renamed: after-node name → before-node name, for
// nodes whose names do not match. Matched by tensor identity, in order of confidence: the same op
// writing the same tensors; the same op reading the same activations (weights may be new); the
// same op feeding a node already matched. Each before node is matched at most once, and only when
// the match is unambiguous. "Original vs final" uses it so a lowered FusedConv → Conv, Relu does not
// show every node as removed and added.
std::unordered_map<std::string, std::string> matchRenamedNodes(const Graph &before, const Graph &after);

} // namespace opscope
