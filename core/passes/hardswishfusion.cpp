#include "passes/hardswishfusion.h"

#include "passes/fusionutil.h"
#include "passes/nodechain.h"
#include "passes/passutil.h"

#include <cmath>

namespace opscope::passes {

namespace {

bool isScalar(const Graph &graph, ValueId v, double value)
{
    const auto f = scalarFloat(graph, v);
    return f && std::fabs(*f - value) <= 1e-5 * std::max(1.0, std::fabs(value));
}

// n = v/6 or v·(1/6) (either operand order for Mul): the other operand, else invalid.
ValueId divisionBySix(const Graph &graph, const Node &n)
{
    if (isOp(n, "Div") && isScalar(graph, n.inputs[1], 6.0))
        return n.inputs[0];
    if (isOp(n, "Mul") && n.inputs.size() == 2)
        for (int side = 0; side < 2; ++side)
            if (isScalar(graph, n.inputs[side], 1.0 / 6.0))
                return n.inputs[1 - side];
    return {};
}

} // namespace

void HardSwishFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        if (isOp(n, "HardSigmoid")) {
            const ValueId x = n.inputs[0];
            if (std::fabs(attrFloat(n, "alpha", 0.2f) - 1.0f / 6.0f) > 1e-6f ||
                std::fabs(attrFloat(n, "beta", 0.5f) - 0.5f) > 1e-6f || !hasSingleUse(graph, n.outputs[0]) ||
                elementType(graph, x) != DataType::Float)
                continue;
            const NodeId mul = singleConsumer(graph, n.outputs[0]);
            if (isOp(graph.node(mul), "Mul") && otherOperand(graph.node(mul), n.outputs[0]) == x)
                matches.push_back({"x*hardsigmoid(x)", {mul, id}, {x, graph.node(mul).outputs[0]}, {}});
            continue;
        }
        // Clip(x + 3, 0, 6), then ·x and /6 in either order.
        const auto clip = fusableActivation(graph, n);
        if (!clip || clip->op != "Clip" || clip->params.size() != 2 || clip->params[0] != 0.0f ||
            clip->params[1] != 6.0f || !hasSingleUse(graph, n.outputs[0]))
            continue;
        const NodeId addId = graph.producer(n.inputs[0]);
        if (!addId.valid() || !isOp(graph.node(addId), "Add") || !hasSingleUse(graph, n.inputs[0]))
            continue;
        const Node &add = graph.node(addId);
        ValueId x;
        for (int side = 0; side < 2; ++side)
            if (isScalar(graph, add.inputs[side], 3.0))
                x = add.inputs[1 - side];
        if (!x.valid() || elementType(graph, x) != DataType::Float)
            continue;
        const NodeId firstId = singleConsumer(graph, n.outputs[0]);
        const Node &first = graph.node(firstId);
        if (!hasSingleUse(graph, first.outputs[0]))
            continue;
        const NodeId secondId = singleConsumer(graph, first.outputs[0]);
        const Node &second = graph.node(secondId);
        const bool mulFirst = isOp(first, "Mul") && otherOperand(first, n.outputs[0]) == x &&
                              divisionBySix(graph, second) == first.outputs[0];
        const bool divFirst = divisionBySix(graph, first) == n.outputs[0] && isOp(second, "Mul") &&
                              otherOperand(second, first.outputs[0]) == x;
        if (mulFirst || divFirst)
            matches.push_back({"x*relu6(x+3)/6", {secondId, firstId, id, addId}, {x, second.outputs[0]}, {}});
    }
}

Expected<bool> HardSwishFusion::apply(Model &model, Graph &graph, const Match &m) const
{
    const bool standard = model.opsetVersion("") >= 14;
    NodeChain chain(graph, graph.node(m.nodes[0]).name);
    const ValueId y = chain.op("HardSwish", {m.values[0]}, {}, standard ? "" : kOpscopeDomain);
    OPSCOPE_TRY(chain.finish(m.values[1], y, m.nodes));
    if (!standard)
        ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
