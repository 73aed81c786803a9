#include "passes/matmulscalefusion.h"

#include "passes/passutil.h"

namespace opscope::passes {

namespace {

// node = v·s or v/s (either order for Mul) with s a one-element float constant that cannot
// broadcast v bigger. Returns the scale and sets `v`.
std::optional<float> scaleOf(const Graph &graph, const Node &node, ValueId &v)
{
    const bool mul = isOp(node, "Mul"), div = isOp(node, "Div");
    if ((!mul && !div) || node.inputs.size() != 2)
        return std::nullopt;
    for (int side = 1; side >= (mul ? 0 : 1); --side) {
        const std::optional<float> c = scalarFloat(graph, node.inputs[side]);
        const auto rank = knownRank(graph, node.inputs[1 - side]);
        if (!c || !rank || constantTensor(graph, node.inputs[side])->dims.size() > *rank)
            continue;
        if (div && *c == 0.0f)
            return std::nullopt;
        v = node.inputs[1 - side];
        return div ? 1.0f / *c : *c;
    }
    return std::nullopt;
}

bool floatMatMul(const Graph &graph, const Node &n)
{
    return (isOp(n, "MatMul") || isOpscopeOp(n, "FusedMatMul")) && n.inputs.size() >= 2 &&
           elementType(graph, n.outputs[0]) == DataType::Float;
}

} // namespace

void MatMulScaleFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &node = graph.node(id);
        ValueId v;
        if (scaleOf(graph, node, v)) {
            // Scale after: MatMul ──► Mul(s).
            const NodeId mm = graph.producer(v);
            if (mm.valid() && floatMatMul(graph, graph.node(mm)) && singleConsumer(graph, v) == id)
                matches.push_back({"matmul-output-scale", {id, mm}, {v}, {}});
            continue;
        }
        if (!floatMatMul(graph, node))
            continue;
        // Scale before: Mul(s) ──► MatMul.
        for (std::size_t side = 0; side < 2; ++side) {
            const NodeId p = graph.producer(node.inputs[side]);
            ValueId x;
            if (p.valid() && scaleOf(graph, graph.node(p), x) &&
                singleConsumer(graph, node.inputs[side]) == id) {
                matches.push_back({"matmul-input-scale", {p, id}, {x}, {static_cast<std::int64_t>(side)}});
                break;
            }
        }
    }
}

Expected<bool> MatMulScaleFusion::apply(Model &model, Graph &graph, const Match &match) const
{
    const bool after = match.rule == "matmul-output-scale";
    const NodeId scaleNode = match.nodes[0], mm = match.nodes[1];
    ValueId v;
    const float s = *scaleOf(graph, graph.node(scaleNode), v);
    // Rewire first: the MatMul reads the unscaled value.
    if (!after)
        graph.setNodeInput(mm, static_cast<std::uint32_t>(match.ints[0]), match.values[0]);
    auto scaleConstant = [&](std::uint32_t slot) {
        const ValueId old = graph.node(mm).inputs[slot];
        std::vector<float> scaled = *constantFloats(graph, old);
        for (float &x : scaled)
            x *= s;
        const ValueId c = addConstant(graph, graph.value(old).name + "_scaled",
                                      floatTensor(constantTensor(graph, old)->dims, scaled));
        graph.setNodeInput(mm, slot, c);
        eraseConstantIfUnused(graph, old);
    };
    // s·(A·B + bias) scales the bias too; a scaled input does not.
    const Node &m = graph.node(mm);
    if (after && m.inputs.size() > 2 && m.inputs[2].valid())
        scaleConstant(2);
    // A constant operand takes the scale; else alpha does.
    std::uint32_t constantSide = 2;
    for (std::uint32_t side = 0; side < 2 && constantSide == 2; ++side)
        if (isFloatConstant(graph, graph.node(mm).inputs[side]))
            constantSide = side;
    if (constantSide < 2) {
        scaleConstant(constantSide);
    } else {
        Node &n = graph.node(mm);
        if (isOp(n, "MatMul")) {
            n.opType = "FusedMatMul";
            n.domain = kOpscopeDomain;
            ensureOpset(model, kOpscopeDomain, 1);
        }
        setAttribute(n, Attribute::makeFloat("alpha", attrFloat(n, "alpha", 1.0f) * s));
    }
    if (after)
        OPSCOPE_TRY(bypassNode(graph, scaleNode, graph.node(mm).outputs[0]));
    else
        eraseNode(graph, scaleNode);
    return true;
}

} // namespace opscope::passes
