#include "passes/elementwiseforward.h"

#include "passes/passutil.h"

#include <set>

namespace opscope::passes {

namespace {

bool unaryElementwise(const Node &n)
{
    static const std::set<std::string> ops{
        "Relu",        "Sigmoid",   "Tanh",     "Exp",       "Log",  "Neg",
        "Abs",         "Sqrt",      "Erf",      "LeakyRelu", "Elu",  "Selu",
        "HardSigmoid", "HardSwish", "Softplus", "Softsign",  "Sin",  "Cos",
        "Reciprocal",  "Floor",     "Ceil",     "Round",     "Sign", "Not",
        "Cast",        "IsNaN",     "Gelu",     "Mish",      "Celu", "ThresholdedRelu"};
    return n.alive && (n.domain.empty() || n.domain == "ai.onnx") && ops.count(n.opType) &&
           n.inputs.size() == 1 && n.outputs.size() == 1;
}

bool scalarBinary(const Graph &graph, const Node &n)
{
    static const std::set<std::string> ops{"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
    if (!n.alive || !(n.domain.empty() || n.domain == "ai.onnx") || !ops.count(n.opType) ||
        n.inputs.size() != 2)
        return false;
    const Tensor *c = constantTensor(graph, n.inputs[1]);
    const auto rank = knownRank(graph, n.inputs[0]);
    return c && c->elementCount() == 1 && rank && c->dims.size() <= *rank;
}

} // namespace

void ElementwiseForward::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &s = graph.node(id);
        if (!(isOp(s, "Slice") || isOp(s, "Gather")) || s.inputs.empty())
            continue;
        const NodeId e = graph.producer(s.inputs[0]);
        if (!e.valid() || singleConsumer(graph, s.inputs[0]) != id)
            continue;
        const Node &op = graph.node(e);
        // After the move the constant broadcasts against the Slice/Gather output, whose rank a Gather
        // lowers: a one-element [1,1] constant would raise it back.
        const auto outRank = knownRank(graph, s.outputs[0]);
        const bool binaryFits = scalarBinary(graph, op) && outRank &&
                                constantTensor(graph, op.inputs[1])->dims.size() <= *outRank;
        if (unaryElementwise(op) || binaryFits)
            matches.push_back({op.opType + "→" + s.opType, {id, e}, {}, {}});
    }
}

Expected<bool> ElementwiseForward::apply(Model &, Graph &graph, const Match &match) const
{
    const NodeId sliceId = match.nodes[0], opId = match.nodes[1];
    const Node slice = graph.node(sliceId), op = graph.node(opId);
    std::vector<ValueId> sliceInputs = slice.inputs;
    sliceInputs[0] = op.inputs[0];
    Expected<NodeId> moved =
        addNodeWithOutputs(graph, slice.opType, sliceInputs, 1, slice.name, slice.attributes);
    if (!moved)
        return moved.status();
    const ValueId slicedX = graph.node(*moved).outputs[0];
    std::vector<ValueId> opInputs = op.inputs;
    opInputs[0] = slicedX;
    Expected<NodeId> applied = addNodeWithOutputs(graph, op.opType, opInputs, 1, op.name, op.attributes);
    if (!applied)
        return applied.status();
    const ValueId out = graph.node(*applied).outputs[0];
    const TypeInfo &sliceOut = graph.value(slice.outputs[0]).type;
    graph.value(out).type = sliceOut;
    graph.value(slicedX).type = sliceOut;
    if (sliceOut.isTensor())
        graph.value(slicedX).type.elemType = elementType(graph, op.inputs[0]);
    OPSCOPE_TRY(bypassNode(graph, sliceId, out));
    eraseNode(graph, opId);
    return true;
}

} // namespace opscope::passes
