#include "passes/convbnfusion.h"

#include "passes/fusionutil.h"
#include "passes/passutil.h"

namespace opscope::passes {

void ConvBnFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &bn = graph.node(id);
        if (!isOp(bn, "BatchNormalization") || bn.inputs.empty())
            continue;
        const NodeId conv = graph.producer(bn.inputs[0]);
        if (!conv.valid() || !convFeedsOnly(graph, graph.node(conv), id))
            continue;
        const auto affine = batchNormAffine(graph, bn);
        if (affine &&
            static_cast<std::int64_t>(affine->scale.size()) == convOutputChannels(graph, graph.node(conv)))
            matches.push_back({"conv-bn", {conv, id}, {}, {}});
    }
}

Expected<bool> ConvBnFusion::apply(Model &, Graph &graph, const Match &match) const
{
    const NodeId conv = match.nodes[0], bn = match.nodes[1];
    const ChannelAffine affine = *batchNormAffine(graph, graph.node(bn));
    foldIntoConv(graph, conv, &affine.scale, &affine.shift);
    OPSCOPE_TRY(bypassNode(graph, bn, graph.node(conv).outputs[0]));
    return true;
}

} // namespace opscope::passes
