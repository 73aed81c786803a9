#include "passes/channelshuffle.h"

#include "passes/passutil.h"

namespace opscope::passes {

namespace {

// The group count when final = Reshape(Transpose(Reshape(x))) is a channel shuffle of x.
std::optional<std::int64_t> shuffleGroups(const Graph &graph, const Node &last, NodeId &transpose,
                                          NodeId &first)
{
    if (!isOp(last, "Reshape") || last.inputs.size() < 2)
        return std::nullopt;
    transpose = graph.producer(last.inputs[0]);
    if (!transpose.valid() || !isOp(graph.node(transpose), "Transpose") ||
        !hasSingleUse(graph, last.inputs[0]))
        return std::nullopt;
    const Node &t = graph.node(transpose);
    first = graph.producer(t.inputs[0]);
    if (!first.valid() || !isOp(graph.node(first), "Reshape") || !hasSingleUse(graph, t.inputs[0]))
        return std::nullopt;
    const Node &f = graph.node(first);
    const ValueId x = f.inputs[0];
    const Value &xv = graph.value(x);
    if (!xv.type.isTensor() || !xv.type.shape || xv.type.shape->dims.size() != 4)
        return std::nullopt;
    const auto &d = xv.type.shape->dims;
    if (!d[1].isKnown() || !d[2].isKnown() || !d[3].isKnown())
        return std::nullopt;
    const std::int64_t c = d[1].value, h = d[2].value, w = d[3].value;
    const auto split = constantInts(graph, f.inputs[1]);
    const auto perm = attrInts(t, "perm");
    if (!split || (split->size() != 5 && split->size() != 4) || perm.size() != split->size())
        return std::nullopt;
    const std::int64_t g = (*split)[1], cg = (*split)[2];
    if (g <= 1 || cg <= 0 || g * cg != c ||
        ((*split)[0] != 0 && (!d[0].isKnown() || (*split)[0] != d[0].value)))
        return std::nullopt;
    if (split->size() == 5 ? ((*split)[3] != h || (*split)[4] != w)
                           : ((*split)[3] != h * w && (*split)[3] != -1))
        return std::nullopt;
    std::vector<std::int64_t> swap{0, 2, 1, 3, 4};
    swap.resize(split->size());
    if (perm != swap)
        return std::nullopt;
    if (!sameShape(graph, x, last.outputs[0])) {
        const auto restore = constantInts(graph, last.inputs[1]);
        if (!restore || restore->size() != 4 || (*restore)[1] != c || (*restore)[2] != h ||
            (*restore)[3] != w ||
            ((*restore)[0] != 0 && (*restore)[0] != -1 && (!d[0].isKnown() || (*restore)[0] != d[0].value)))
            return std::nullopt;
    }
    return g;
}

} // namespace

void ChannelShuffleCanonicalization::select(const Model &, const Graph &graph,
                                            std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        NodeId transpose, first;
        if (const auto g = shuffleGroups(graph, graph.node(id), transpose, first))
            matches.push_back({"reshape-transpose-reshape", {id, transpose, first}, {}, {*g}});
    }
}

Expected<bool> ChannelShuffleCanonicalization::apply(Model &model, Graph &graph, const Match &match) const
{
    const NodeId last = match.nodes[0], transpose = match.nodes[1], first = match.nodes[2];
    const ValueId x = graph.node(first).inputs[0];
    Expected<NodeId> shuffle =
        addNodeWithOutputs(graph, "ChannelShuffle", {x}, 1, graph.node(first).name + "_shuffle",
                           {Attribute::makeInt("group", match.ints[0])}, kOpscopeDomain);
    if (!shuffle)
        return shuffle.status();
    const ValueId out = graph.node(*shuffle).outputs[0];
    graph.value(out).type = graph.value(x).type;
    OPSCOPE_TRY(bypassNode(graph, last, out));
    eraseNode(graph, transpose);
    eraseNode(graph, first);
    ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
