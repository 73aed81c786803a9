#include "passes/convaddfusion.h"

#include "passes/fusionutil.h"
#include "passes/passutil.h"

namespace opscope::passes {

namespace {

// The per-channel values of the constant operand, when node = Conv output Add constant.
std::optional<std::vector<float>> channelOperand(const Graph &graph, const Node &node, NodeId &conv)
{
    if (!isOp(node, "Add") || node.inputs.size() != 2)
        return std::nullopt;
    for (int side = 0; side < 2; ++side) {
        const NodeId p = graph.producer(node.inputs[side]);
        if (!p.valid() || !convFeedsOnly(graph, graph.node(p), node.id))
            continue;
        const std::size_t rank = constantTensor(graph, graph.node(p).inputs[1])->dims.size();
        const auto values =
            perChannelValues(graph, node.inputs[1 - side], convOutputChannels(graph, graph.node(p)), rank, 1);
        if (values) {
            conv = p;
            return values;
        }
    }
    return std::nullopt;
}

} // namespace

void ConvAddFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        NodeId conv;
        if (channelOperand(graph, graph.node(id), conv))
            matches.push_back({"conv-add", {conv, id}, {}, {}});
    }
}

Expected<bool> ConvAddFusion::apply(Model &, Graph &graph, const Match &match) const
{
    NodeId conv;
    const auto values = channelOperand(graph, graph.node(match.nodes[1]), conv);
    if (!values || conv != match.nodes[0])
        return false;
    foldIntoConv(graph, conv, nullptr, &*values);
    OPSCOPE_TRY(bypassNode(graph, match.nodes[1], graph.node(conv).outputs[0]));
    return true;
}

} // namespace opscope::passes
