#include "passes/swishfusion.h"

#include "passes/nodechain.h"
#include "passes/passutil.h"

namespace opscope::passes {

void SwishFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &sig = graph.node(id);
        if (!isOp(sig, "Sigmoid") || !hasSingleUse(graph, sig.outputs[0]))
            continue;
        const NodeId mulId = singleConsumer(graph, sig.outputs[0]);
        const Node &mul = graph.node(mulId);
        if (!isOp(mul, "Mul"))
            continue;
        const ValueId x = otherOperand(mul, sig.outputs[0]);
        if (!x.valid() || elementType(graph, x) != DataType::Float)
            continue;
        const ValueId z = sig.inputs[0];
        if (z == x) {
            matches.push_back({"x*sigmoid(x)", {mulId, id}, {x, mul.outputs[0]}, {}});
            continue;
        }
        // x·Sigmoid(β·x)
        const NodeId scaleId = graph.producer(z);
        if (!scaleId.valid() || !isOp(graph.node(scaleId), "Mul") || !hasSingleUse(graph, z))
            continue;
        const ValueId beta = otherOperand(graph.node(scaleId), x);
        if (scalarFloat(graph, beta) && sameShape(graph, x, mul.outputs[0]))
            matches.push_back({"x*sigmoid(beta*x)", {mulId, id, scaleId}, {x, mul.outputs[0], beta}, {}});
    }
}

Expected<bool> SwishFusion::apply(Model &model, Graph &graph, const Match &m) const
{
    const float alpha = m.values.size() > 2 ? constantFloats(graph, m.values[2])->at(0) : 1.0f;
    NodeChain chain(graph, graph.node(m.nodes[0]).name);
    const ValueId y =
        chain.op("Swish", {m.values[0]}, {Attribute::makeFloat("alpha", alpha)}, kOpscopeDomain);
    OPSCOPE_TRY(chain.finish(m.values[1], y, m.nodes));
    ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
