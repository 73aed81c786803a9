#include "passes/gelufusion.h"

#include "passes/passutil.h"

#include <algorithm>
#include <cmath>

namespace opscope::passes {

namespace {

bool near(const Graph &graph, ValueId v, double value)
{
    const auto f = scalarFloat(graph, v);
    return f && std::fabs(*f - value) <= 1e-4 * std::fabs(value);
}

} // namespace

namespace {

// After Erf/Tanh: Add(1) then the products with x and ½ in the orders exporters write. Appends the
// tail's nodes; returns the GELU's output, or invalid.
ValueId matchTail(const Graph &graph, ValueId t, ValueId x, std::vector<NodeId> &nodes)
{
    const NodeId addId = singleConsumer(graph, t);
    if (!addId.valid() || !isOp(graph.node(addId), "Add") ||
        !near(graph, otherOperand(graph.node(addId), t), 1.0) ||
        !hasSingleUse(graph, graph.node(addId).outputs[0]))
        return {};
    nodes.push_back(addId);
    const ValueId a = graph.node(addId).outputs[0];
    const NodeId m1Id = singleConsumer(graph, a);
    if (!m1Id.valid() || !isOp(graph.node(m1Id), "Mul"))
        return {};
    const Node &m1 = graph.node(m1Id);
    nodes.push_back(m1Id);
    const ValueId o1 = otherOperand(m1, a);
    if (o1 == x || near(graph, o1, 0.5)) {
        // (x·(t+1))·½   or   x·((t+1)·½)
        if (!hasSingleUse(graph, m1.outputs[0]))
            return {};
        const NodeId m2 = singleConsumer(graph, m1.outputs[0]);
        const ValueId want = otherOperand(graph.node(m2), m1.outputs[0]);
        if (!isOp(graph.node(m2), "Mul") || !(o1 == x ? near(graph, want, 0.5) : want == x))
            return {};
        nodes.push_back(m2);
        return graph.node(m2).outputs[0];
    }
    // (x·½)·(t+1)
    const NodeId half = o1.valid() ? graph.producer(o1) : NodeId();
    if (!half.valid() || !isOp(graph.node(half), "Mul") || !hasSingleUse(graph, o1) ||
        otherOperand(graph.node(half), x) == ValueId() ||
        !near(graph, otherOperand(graph.node(half), x), 0.5))
        return {};
    nodes.push_back(half);
    return m1.outputs[0];
}

// v = x³ as Pow(x, 3), x·(x·x) or (x·x)·x: x, else invalid. Appends the nodes.
ValueId cubeOf(const Graph &graph, ValueId v, std::vector<NodeId> &nodes)
{
    const NodeId p = v.valid() ? graph.producer(v) : NodeId();
    if (!p.valid() || !hasSingleUse(graph, v))
        return {};
    const Node &n = graph.node(p);
    if (isOp(n, "Pow") && near(graph, n.inputs[1], 3.0)) {
        nodes.push_back(p);
        return n.inputs[0];
    }
    if (!isOp(n, "Mul") || n.inputs.size() != 2)
        return {};
    for (int side = 0; side < 2; ++side) {
        const NodeId sq = graph.producer(n.inputs[side]);
        if (!sq.valid() || !isOp(graph.node(sq), "Mul") || !hasSingleUse(graph, n.inputs[side]))
            continue;
        const Node &s = graph.node(sq);
        const ValueId x = n.inputs[1 - side];
        if (s.inputs.size() == 2 && s.inputs[0] == x && s.inputs[1] == x) {
            nodes.push_back(p);
            nodes.push_back(sq);
            return x;
        }
    }
    return {};
}

// Tanh input = √(2/π)·(x + 0.044715·x³): x, else invalid.
ValueId tanhArgument(const Graph &graph, ValueId z, std::vector<NodeId> &nodes)
{
    const NodeId scaleId = z.valid() ? graph.producer(z) : NodeId();
    if (!scaleId.valid() || !isOp(graph.node(scaleId), "Mul") || !hasSingleUse(graph, z))
        return {};
    const Node &scale = graph.node(scaleId);
    for (int side = 0; side < 2; ++side) {
        if (!near(graph, scale.inputs[side], 0.7978845608028654))
            continue;
        const ValueId inner = scale.inputs[1 - side];
        const NodeId addId = graph.producer(inner);
        if (!addId.valid() || !isOp(graph.node(addId), "Add") || !hasSingleUse(graph, inner))
            return {};
        const Node &add = graph.node(addId);
        for (int s = 0; s < 2; ++s) {
            const ValueId x = add.inputs[s], k = add.inputs[1 - s];
            const NodeId kId = graph.producer(k);
            if (!kId.valid() || !isOp(graph.node(kId), "Mul") || !hasSingleUse(graph, k))
                continue;
            const Node &kn = graph.node(kId);
            for (int c = 0; c < 2; ++c) {
                std::vector<NodeId> more{scaleId, addId, kId};
                if (near(graph, kn.inputs[c], 0.044715) && cubeOf(graph, kn.inputs[1 - c], more) == x) {
                    nodes.insert(nodes.end(), more.begin(), more.end());
                    return x;
                }
            }
        }
    }
    return {};
}

} // namespace

void GeluFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        const bool erf = isOp(n, "Erf");
        if ((!erf && !isOp(n, "Tanh")) || !hasSingleUse(graph, n.outputs[0]))
            continue;
        std::vector<NodeId> nodes{id};
        ValueId x;
        if (erf) {
            const NodeId scaleId = graph.producer(n.inputs[0]);
            if (!scaleId.valid() || !hasSingleUse(graph, n.inputs[0]))
                continue;
            const Node &scale = graph.node(scaleId);
            if (isOp(scale, "Div") && near(graph, scale.inputs[1], std::sqrt(2.0)))
                x = scale.inputs[0];
            else if (isOp(scale, "Mul") && near(graph, scale.inputs[1], 1.0 / std::sqrt(2.0)))
                x = scale.inputs[0];
            else if (isOp(scale, "Mul") && near(graph, scale.inputs[0], 1.0 / std::sqrt(2.0)))
                x = scale.inputs[1];
            nodes.push_back(scaleId);
        } else {
            x = tanhArgument(graph, n.inputs[0], nodes);
        }
        if (!x.valid() || elementType(graph, x) != DataType::Float)
            continue;
        const ValueId out = matchTail(graph, n.outputs[0], x, nodes);
        if (!out.valid())
            continue;
        // The anchor first: the node that produces the output.
        const auto anchor = std::find(nodes.begin(), nodes.end(), graph.producer(out));
        std::rotate(nodes.begin(), anchor, anchor + 1);
        matches.push_back({erf ? "gelu-erf" : "gelu-tanh", nodes, {x, out}, {}});
    }
}

Expected<bool> GeluFusion::apply(Model &model, Graph &graph, const Match &m) const
{
    const ValueId x = m.values[0], out = m.values[1];
    std::vector<Attribute> attrs;
    if (m.rule == "gelu-tanh")
        attrs.push_back(Attribute::makeString("approximate", "tanh"));
    Expected<NodeId> gelu = addNodeWithOutputs(graph, "Gelu", {x}, 1, graph.node(m.nodes[0]).name + "_gelu",
                                               std::move(attrs), kOpscopeDomain);
    if (!gelu)
        return gelu.status();
    const ValueId g = graph.node(*gelu).outputs[0];
    graph.value(g).type = graph.value(out).type;
    OPSCOPE_TRY(replaceValue(graph, out, g));
    eraseUnread(graph, m.nodes);
    ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
