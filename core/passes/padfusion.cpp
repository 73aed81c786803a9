#include "passes/padfusion.h"

#include "passes/passutil.h"

#include <optional>

namespace opscope::passes {

namespace {

// The Pad's pads (begin…, end…) when it is a zero constant pad of known rank; else nullopt.
std::optional<std::vector<std::int64_t>> zeroPads(const Graph &graph, const Node &pad)
{
    if (!isOp(pad, "Pad") || pad.inputs.empty() || pad.outputs.size() != 1 ||
        attrString(pad, "mode", "constant") != "constant")
        return std::nullopt;
    std::vector<std::int64_t> pads;
    if (pad.inputs.size() > 1) { // opset 11+: pads and constant_value as inputs
        const auto p = constantInts(graph, pad.inputs[1]);
        if (!p)
            return std::nullopt;
        pads = *p;
        if (pad.inputs.size() > 2 && pad.inputs[2].valid() && !isConstantFilledWith(graph, pad.inputs[2], 0.0))
            return std::nullopt;
        if (pad.inputs.size() > 3 && pad.inputs[3].valid())
            return std::nullopt; // axes (opset 18): not taken
    } else {
        pads = attrInts(pad, "pads");
        if (attrFloat(pad, "value", 0.0f) != 0.0f)
            return std::nullopt;
    }
    const auto rank = knownRank(graph, pad.inputs[0]);
    if (!rank || *rank < 3 || pads.size() != 2 * *rank)
        return std::nullopt;
    for (std::int64_t v : pads)
        if (v < 0)
            return std::nullopt; // a crop
    const std::size_t r = *rank;
    if (pads[0] || pads[1] || pads[r] || pads[r + 1])
        return std::nullopt; // batch or channel padding: not a window's
    return pads;
}

bool takesPadding(const Node &n)
{
    if (!(isOp(n, "Conv") || (isOp(n, "AveragePool") && attrInt(n, "count_include_pad", 0) == 1)))
        return false;
    const std::string autoPad = attrString(n, "auto_pad", "NOTSET");
    return autoPad == "NOTSET" || autoPad.empty();
}

} // namespace

void PadFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        if (!takesPadding(n) || n.inputs.empty() || !n.inputs[0].valid())
            continue;
        const NodeId padId = graph.producer(n.inputs[0]);
        if (!padId.valid() || !hasSingleUse(graph, n.inputs[0]))
            continue;
        const Node &pad = graph.node(padId);
        if (zeroPads(graph, pad) && pad.inputs[0].valid())
            matches.push_back({std::string("pad-into-") + (isOp(n, "Conv") ? "conv" : "averagepool"), {padId, id}, {}, {}});
    }
}

Expected<bool> PadFusion::apply(Model &, Graph &graph, const Match &match) const
{
    const Node &pad = graph.node(match.nodes[0]);
    const std::optional<std::vector<std::int64_t>> extra = zeroPads(graph, pad);
    if (!extra || graph.node(match.nodes[1]).inputs.empty() || graph.node(match.nodes[1]).inputs[0] != pad.outputs[0])
        return false;
    const std::size_t rank = extra->size() / 2, spatial = rank - 2;
    const ValueId source = pad.inputs[0];
    Node &op = graph.node(match.nodes[1]);
    std::vector<std::int64_t> pads = attrInts(op, "pads", std::vector<std::int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial)
        return false;
    for (std::size_t i = 0; i < spatial; ++i) {
        pads[i] += (*extra)[2 + i];                   // begin of spatial axis i
        pads[spatial + i] += (*extra)[rank + 2 + i];  // its end
    }
    setAttribute(op, Attribute::makeInts("pads", pads));
    removeAttribute(op, "auto_pad");
    graph.setNodeInput(match.nodes[1], 0, source);
    eraseUnread(graph, {match.nodes[0]});
    return true;
}

} // namespace opscope::passes
