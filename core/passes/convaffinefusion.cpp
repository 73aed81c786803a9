#include "passes/convaffinefusion.h"

#include "passes/passutil.h"

#include <optional>

namespace opscope::passes {

namespace {

struct Affine
{
    float scale = 1.0f, shift = 0.0f;
};

// The FusedConv (with an activation) whose output `v` is and that nothing else reads.
NodeId fusedConvFeeding(const Graph &graph, ValueId v, NodeId reader)
{
    const NodeId p = graph.producer(v);
    if (!p.valid() || singleConsumer(graph, v) != reader)
        return {};
    const Node &conv = graph.node(p);
    if (!isOpscopeOp(conv, "FusedConv") || conv.outputs.size() != 1 || !conv.attribute("activation") ||
        elementType(graph, v) != DataType::Float)
        return {};
    return p;
}

// What `op` does to the convolution's output (input `side`) with constant c on the other side.
std::optional<Affine> affineOf(const Node &op, std::size_t side, float c)
{
    if (op.opType == "Mul")
        return Affine{c, 0.0f};
    if (op.opType == "Add")
        return Affine{1.0f, c};
    if (op.opType == "Sub")
        return side == 0 ? Affine{1.0f, -c} : Affine{-1.0f, c};
    if (op.opType == "Div" && side == 0 && c != 0.0f)
        return Affine{1.0f / c, 0.0f};
    return std::nullopt;
}

std::optional<Affine> matchAffine(const Graph &graph, NodeId id, NodeId &conv)
{
    const Node &op = graph.node(id);
    if (!op.domain.empty() || op.inputs.size() != 2 || op.outputs.size() != 1)
        return std::nullopt;
    for (std::size_t side = 0; side < 2; ++side) {
        const std::optional<float> c = scalarFloat(graph, op.inputs[1 - side]);
        if (!c)
            continue;
        conv = fusedConvFeeding(graph, op.inputs[side], id);
        if (!conv.valid())
            continue;
        // A one-element constant of no higher rank broadcasts away: the output keeps x's shape.
        const Tensor *t = constantTensor(graph, op.inputs[1 - side]);
        const auto rank = knownRank(graph, op.inputs[side]);
        if (!t || !rank || t->dims.size() > *rank)
            continue;
        if (auto a = affineOf(op, side, *c))
            return a;
    }
    return std::nullopt;
}

} // namespace

void ConvAffineFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        NodeId conv;
        if (matchAffine(graph, id, conv))
            matches.push_back({"fusedconv-" + graph.node(id).opType, {conv, id}, {}, {}});
    }
}

Expected<bool> ConvAffineFusion::apply(Model &, Graph &graph, const Match &match) const
{
    NodeId conv;
    const std::optional<Affine> a = matchAffine(graph, match.nodes[1], conv);
    if (!a || conv != match.nodes[0])
        return false;
    Node &fused = graph.node(conv);
    Affine post;
    if (const Attribute *p = fused.attribute("activation_post"); p && p->floats.size() == 2)
        post = {p->floats[0], p->floats[1]};
    // a ∘ post: scale·(s·act + b) + shift.
    const Affine composed{a->scale * post.scale, a->scale * post.shift + a->shift};
    setAttribute(fused, Attribute::makeFloats("activation_post", {composed.scale, composed.shift}));
    const ValueId out = fused.outputs[0];
    graph.value(out).type = graph.value(graph.node(match.nodes[1]).outputs[0]).type;
    OPSCOPE_TRY(bypassNode(graph, match.nodes[1], out));
    return true;
}

} // namespace opscope::passes
