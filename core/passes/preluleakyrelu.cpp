#include "passes/preluleakyrelu.h"

#include "passes/passutil.h"

namespace opscope::passes {

void PReluToLeakyRelu::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        if (!isOp(n, "PRelu") || n.inputs.size() != 2)
            continue;
        const std::optional<float> slope = scalarFloat(graph, n.inputs[1]);
        const auto rank = knownRank(graph, n.inputs[0]);
        if (slope && rank && constantTensor(graph, n.inputs[1])->dims.size() <= *rank)
            matches.push_back({"prelu-scalar", {id}, {}, {}});
    }
}

Expected<bool> PReluToLeakyRelu::apply(Model &, Graph &graph, const Match &match) const
{
    Node &n = graph.node(match.nodes[0]);
    const float alpha = constantFloats(graph, n.inputs[1])->at(0);
    const ValueId slope = n.inputs[1];
    Expected<NodeId> leaky = addNodeWithOutputs(graph, "LeakyRelu", {n.inputs[0]}, 1, n.name + "_leaky",
                                                {Attribute::makeFloat("alpha", alpha)});
    if (!leaky)
        return leaky.status();
    const ValueId out = graph.node(*leaky).outputs[0];
    graph.value(out).type = graph.value(graph.node(match.nodes[0]).outputs[0]).type;
    OPSCOPE_TRY(bypassNode(graph, match.nodes[0], out));
    eraseConstantIfUnused(graph, slope);
    return true;
}

} // namespace opscope::passes
