#include "passes/convactivationfusion.h"

#include "passes/fusionutil.h"
#include "passes/passutil.h"

namespace opscope::passes {

void ConvActivationFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &act = graph.node(id);
        if (!fusableActivation(graph, act))
            continue;
        const NodeId conv = graph.producer(act.inputs[0]);
        if (!conv.valid() || !isOp(graph.node(conv), "Conv") || graph.node(conv).outputs.size() != 1 ||
            singleConsumer(graph, act.inputs[0]) != id ||
            elementType(graph, act.inputs[0]) != DataType::Float)
            continue;
        matches.push_back({"conv-" + act.opType, {conv, id}, {}, {}});
    }
}

Expected<bool> ConvActivationFusion::apply(Model &model, Graph &graph, const Match &match) const
{
    const NodeId conv = match.nodes[0], act = match.nodes[1];
    const auto spec = fusableActivation(graph, graph.node(act));
    std::vector<Attribute> attrs = graph.node(conv).attributes;
    for (Attribute &a : activationAttributes(*spec))
        attrs.push_back(std::move(a));
    Expected<NodeId> fused =
        addNodeWithOutputs(graph, "FusedConv", graph.node(conv).inputs, 1,
                           graph.node(conv).name + "_" + spec->op, std::move(attrs), kOpscopeDomain);
    if (!fused)
        return fused.status();
    const ValueId out = graph.node(*fused).outputs[0];
    graph.value(out).type = graph.value(graph.node(act).outputs[0]).type;
    OPSCOPE_TRY(bypassNode(graph, act, out));
    eraseNode(graph, conv);
    ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
