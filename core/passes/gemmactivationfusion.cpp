#include "passes/gemmactivationfusion.h"

#include "passes/fusionutil.h"
#include "passes/passutil.h"

namespace opscope::passes {

void GemmActivationFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &act = graph.node(id);
        if (!fusableActivation(graph, act))
            continue;
        const NodeId gemm = graph.producer(act.inputs[0]);
        if (!gemm.valid() || !isOp(graph.node(gemm), "Gemm") || singleConsumer(graph, act.inputs[0]) != id ||
            elementType(graph, act.inputs[0]) != DataType::Float)
            continue;
        matches.push_back({"gemm-" + act.opType, {gemm, id}, {}, {}});
    }
}

Expected<bool> GemmActivationFusion::apply(Model &model, Graph &graph, const Match &match) const
{
    return fuseActivation(model, graph, match.nodes[0], match.nodes[1], "FusedGemm");
}

} // namespace opscope::passes
