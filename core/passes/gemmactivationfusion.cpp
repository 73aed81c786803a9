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
    const NodeId gemm = match.nodes[0], act = match.nodes[1];
    const auto spec = fusableActivation(graph, graph.node(act));
    std::vector<Attribute> attrs = graph.node(gemm).attributes;
    for (Attribute &a : activationAttributes(*spec))
        attrs.push_back(std::move(a));
    Expected<NodeId> fused =
        addNodeWithOutputs(graph, "FusedGemm", graph.node(gemm).inputs, 1,
                           graph.node(gemm).name + "_" + spec->op, std::move(attrs), kOpscopeDomain);
    if (!fused)
        return fused.status();
    const ValueId out = graph.node(*fused).outputs[0];
    graph.value(out).type = graph.value(graph.node(act).outputs[0]).type;
    OPSCOPE_TRY(bypassNode(graph, act, out));
    eraseNode(graph, gemm);
    ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
