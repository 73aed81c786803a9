#pragma once
// Evaluates one node on constant inputs with the CPU runtime: what constant folding uses, so a
// folded value is computed by exactly the kernels that would have computed it at run time.

#include "ir/graph.h"
#include "util/status.h"

#include <map>
#include <string>
#include <vector>

namespace opscope::passes {

// Every input of `node` must be a constant of `graph` (or omitted). Returns one tensor per
// output slot (an empty Tensor for omitted outputs). Unsupported ops and kernel errors come back
// as errors; the caller decides whether that matters.
Expected<std::vector<Tensor>> evaluateNode(const Graph &graph, NodeId node,
                                           const std::map<std::string, int> &opsets);

} // namespace opscope::passes
