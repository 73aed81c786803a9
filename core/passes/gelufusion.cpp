#include "passes/gelufusion.h"

#include "passes/passutil.h"

#include <cmath>

namespace opscope::passes {

namespace {

bool near(const Graph &graph, ValueId v, double value)
{
    const auto f = constantFloats(graph, v);
    return f && f->size() == 1 && std::fabs((*f)[0] - value) <= 1e-4 * std::fabs(value);
}

} // namespace

void GeluFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &erf = graph.node(id);
        if (!isOp(erf, "Erf") || !hasSingleUse(graph, erf.inputs[0]) || !hasSingleUse(graph, erf.outputs[0]))
            continue;
        const NodeId scaleId = graph.producer(erf.inputs[0]);
        if (!scaleId.valid())
            continue;
        const Node &scale = graph.node(scaleId);
        ValueId x;
        if (isOp(scale, "Div") && near(graph, scale.inputs[1], std::sqrt(2.0)))
            x = scale.inputs[0];
        else if (isOp(scale, "Mul") && near(graph, scale.inputs[1], 1.0 / std::sqrt(2.0)))
            x = scale.inputs[0];
        else if (isOp(scale, "Mul") && near(graph, scale.inputs[0], 1.0 / std::sqrt(2.0)))
            x = scale.inputs[1];
        if (!x.valid() || elementType(graph, x) != DataType::Float)
            continue;
        const NodeId addId = singleConsumer(graph, erf.outputs[0]);
        if (!addId.valid() || !isOp(graph.node(addId), "Add") ||
            !near(graph, otherOperand(graph.node(addId), erf.outputs[0]), 1.0) ||
            !hasSingleUse(graph, graph.node(addId).outputs[0]))
            continue;
        const ValueId a = graph.node(addId).outputs[0];
        const NodeId m1Id = singleConsumer(graph, a);
        if (!m1Id.valid() || !isOp(graph.node(m1Id), "Mul"))
            continue;
        const Node &m1 = graph.node(m1Id);
        const ValueId o1 = otherOperand(m1, a);
        std::vector<NodeId> nodes{m1Id, scaleId, id, addId};
        ValueId out;
        if (o1 == x) {
            // (x·(erf+1))·0.5
            const NodeId m2 = singleConsumer(graph, m1.outputs[0]);
            if (!m2.valid() || !isOp(graph.node(m2), "Mul") ||
                !near(graph, otherOperand(graph.node(m2), m1.outputs[0]), 0.5))
                continue;
            nodes.push_back(m2);
            out = graph.node(m2).outputs[0];
        } else if (near(graph, o1, 0.5)) {
            // x·((erf+1)·0.5)
            const NodeId m2 = singleConsumer(graph, m1.outputs[0]);
            if (!m2.valid() || !isOp(graph.node(m2), "Mul") || otherOperand(graph.node(m2), m1.outputs[0]) != x)
                continue;
            nodes.push_back(m2);
            out = graph.node(m2).outputs[0];
        } else {
            // (x·0.5)·(erf+1)
            const NodeId half = o1.valid() ? graph.producer(o1) : NodeId();
            if (!half.valid() || !isOp(graph.node(half), "Mul") || !hasSingleUse(graph, o1) ||
                otherOperand(graph.node(half), x) == ValueId() || !near(graph, otherOperand(graph.node(half), x), 0.5))
                continue;
            nodes.push_back(half);
            out = m1.outputs[0];
        }
        matches.push_back({"gelu-erf", nodes, {x, out}, {}});
    }
}

Expected<bool> GeluFusion::apply(Model &model, Graph &graph, const Match &m) const
{
    const ValueId x = m.values[0], out = m.values[1];
    Expected<NodeId> gelu =
        addNodeWithOutputs(graph, "Gelu", {x}, 1, graph.node(m.nodes[0]).name + "_gelu", {}, kOpscopeDomain);
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
