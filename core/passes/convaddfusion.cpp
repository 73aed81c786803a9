#include "passes/convaddfusion.h"

#include "passes/fusionutil.h"
#include "passes/passutil.h"

namespace opscope::passes {

void ConvAddFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        NodeId conv;
        if (convChannelOperand(graph, graph.node(id), "Add", conv))
            matches.push_back({"conv-add", {conv, id}, {}, {}});
    }
}

Expected<bool> ConvAddFusion::apply(Model &, Graph &graph, const Match &match) const
{
    NodeId conv;
    const auto values = convChannelOperand(graph, graph.node(match.nodes[1]), "Add", conv);
    if (!values || conv != match.nodes[0])
        return false;
    foldIntoConv(graph, conv, nullptr, &*values);
    OPSCOPE_TRY(bypassNode(graph, match.nodes[1], graph.node(conv).outputs[0]));
    return true;
}

} // namespace opscope::passes
