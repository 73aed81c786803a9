#pragma once
// A graph made ready to run: kernels looked up, attributes resolved, subgraphs prepared, consumer
// counts for freeing intermediate tensors early, and the plan to run it by.

#include "runtime/backend.h"
#include "runtime/executionplan.h"
#include "runtime/kernel.h"

#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace opscope {

struct PreparedGraph
{
    const Graph *graph = nullptr;
    std::vector<PreparedNode> nodes; // by NodeId index; kernel == nullptr for removed nodes
    ExecutionPlan plan;
    std::vector<int> consumers; // by ValueId index: reads by nodes (explicit + implicit)
    std::vector<bool> keep;     // graph outputs and constants: never freed
    std::vector<std::unique_ptr<PreparedGraph>> subgraphs;
    // Sparse initializers in dense form, made once here rather than at every run.
    std::vector<std::pair<ValueId, Tensor>> sparseConstants;
};

struct UnsupportedOp
{
    std::string opType;
    std::string domain;
    int opset = 0;
    std::string firstNode;
    bool operator<(const UnsupportedOp &o) const
    {
        return std::tie(domain, opType, opset) < std::tie(o.domain, o.opType, o.opset);
    }
};

// Prepares `graph` and its subgraphs, with the kernels of `backend` (the device it runs on).
// `outerConstants`: initializers of enclosing graphs, which a subgraph reads as constants too. Ops without a
// kernel are collected in `unsupported` (all of them, not just the first) and the result is then unusable.
std::unique_ptr<PreparedGraph> prepareGraph(const Graph &graph, const std::map<std::string, int> &opsets,
                                            const Backend &backend, std::set<UnsupportedOp> &unsupported,
                                            const std::set<std::string> &outerConstants = {});

// The node's inputs against its schema's type constraints (PreparedNode::typeRules): each input's
// element type allowed in its slot, inputs sharing a type variable of one type. Kernels rely on
// both; the executor calls this before every kernel. The error names the node and the inputs.
Status checkInputTypes(const Graph &graph, const PreparedNode &node, std::span<const RuntimeTensor *const> inputs);

std::string describeUnsupported(const std::set<UnsupportedOp> &ops);

} // namespace opscope
