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
    return fuseActivation(model, graph, match.nodes[0], match.nodes[1], "FusedConv");
}

} // namespace opscope::passes
