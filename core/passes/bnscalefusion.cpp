#include "passes/bnscalefusion.h"

#include "passes/fusionutil.h"
#include "passes/passutil.h"

namespace opscope::passes {

namespace {

std::optional<std::vector<float>> channelOperand(const Graph &graph, const Node &node, NodeId &bn)
{
    if ((!isOp(node, "Mul") && !isOp(node, "Add")) || node.inputs.size() != 2)
        return std::nullopt;
    for (int side = 0; side < 2; ++side) {
        const NodeId p = graph.producer(node.inputs[side]);
        if (!p.valid() || singleConsumer(graph, node.inputs[side]) != node.id)
            continue;
        const Node &b = graph.node(p);
        const auto affine = batchNormAffine(graph, b);
        if (!affine) // any producer, a Constant node without inputs too
            continue;
        const auto rank = knownRank(graph, b.inputs[0]);
        if (!rank || *rank < 2)
            continue;
        const auto values = perChannelValues(graph, node.inputs[1 - side],
                                             static_cast<std::int64_t>(affine->scale.size()), *rank, 1);
        if (values) {
            bn = p;
            return values;
        }
    }
    return std::nullopt;
}

} // namespace

void BnScaleFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        NodeId bn;
        if (channelOperand(graph, graph.node(id), bn))
            matches.push_back({"bn-" + graph.node(id).opType, {bn, id}, {}, {}});
    }
}

Expected<bool> BnScaleFusion::apply(Model &, Graph &graph, const Match &match) const
{
    NodeId bn;
    const auto c = channelOperand(graph, graph.node(match.nodes[1]), bn);
    if (!c || bn != match.nodes[0])
        return false;
    const bool mul = isOp(graph.node(match.nodes[1]), "Mul");
    const Node &b = graph.node(bn);
    std::vector<float> gamma = *constantFloats(graph, b.inputs[1]),
                       beta = *constantFloats(graph, b.inputs[2]);
    for (std::size_t i = 0; i < gamma.size(); ++i) {
        if (mul) {
            gamma[i] *= (*c)[i];
            beta[i] *= (*c)[i];
        } else {
            beta[i] += (*c)[i];
        }
    }
    const auto n = static_cast<std::int64_t>(gamma.size());
    const ValueId oldGamma = b.inputs[1], oldBeta = b.inputs[2];
    const std::string base = b.name;
    graph.setNodeInput(bn, 1, addConstant(graph, base + "_scale", floatTensor({n}, gamma)));
    graph.setNodeInput(bn, 2, addConstant(graph, base + "_B", floatTensor({n}, beta)));
    eraseConstantIfUnused(graph, oldGamma);
    eraseConstantIfUnused(graph, oldBeta);
    OPSCOPE_TRY(bypassNode(graph, match.nodes[1], graph.node(bn).outputs[0]));
    return true;
}

} // namespace opscope::passes
