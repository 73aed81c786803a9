#include "passes/algebraicsimplification.h"

#include "passes/passutil.h"

namespace opscope::passes {

namespace {

bool floatType(DataType t)
{
    return t == DataType::Float || t == DataType::Double || t == DataType::Float16 || t == DataType::BFloat16;
}

// Broadcasting constant c against x leaves x's shape.
bool broadcastKeepsShape(const Graph &graph, ValueId x, ValueId c, ValueId out)
{
    if (sameShape(graph, x, out))
        return true;
    const Tensor *t = constantTensor(graph, c);
    const auto rank = knownRank(graph, x);
    if (!t || !rank || t->dims.size() > *rank)
        return false;
    return std::all_of(t->dims.begin(), t->dims.end(), [](std::int64_t d) { return d == 1; });
}

bool scalarFloatConstant(const Graph &graph, ValueId v)
{
    const Tensor *t = constantTensor(graph, v);
    return t && t->dtype == DataType::Float && t->elementCount() == 1;
}

void selectNode(const Graph &graph, const Node &node, std::vector<Match> &matches)
{
    const bool binary = node.inputs.size() == 2 && node.inputs[0].valid() && node.inputs[1].valid();
    const ValueId out = node.outputs.empty() ? ValueId() : node.outputs[0];
    if (binary) {
        const ValueId a = node.inputs[0], b = node.inputs[1];
        // Identities.
        struct Identity
        {
            const char *op;
            double value;
            bool commutes;
            const char *rule;
        };
        static const Identity identities[] = {{"Mul", 1.0, true, "x*1"},
                                              {"Div", 1.0, false, "x/1"},
                                              {"Add", 0.0, true, "x+0"},
                                              {"Sub", 0.0, false, "x-0"}};
        for (const Identity &id : identities) {
            if (!isOp(node, id.op))
                continue;
            if (isConstantFilledWith(graph, b, id.value) && elementType(graph, b) == elementType(graph, a) &&
                broadcastKeepsShape(graph, a, b, out))
                return matches.push_back({id.rule, {node.id}, {a}, {}});
            if (id.commutes && isConstantFilledWith(graph, a, id.value) &&
                elementType(graph, a) == elementType(graph, b) && broadcastKeepsShape(graph, b, a, out))
                return matches.push_back({id.rule, {node.id}, {b}, {}});
        }
        const bool floats = floatType(elementType(graph, a));
        if (isOp(node, "Mul") && floats) {
            // Pow(x,k)·x and x·Pow(x,k) → Pow(x,k+1); (x·x)·x → Pow(x,3).
            for (int side = 0; side < 2; ++side) {
                const ValueId inner = node.inputs[side], x = node.inputs[1 - side];
                const Node *p = producerNode(graph, inner);
                if (!p || !hasSingleUse(graph, inner))
                    continue;
                if (isOp(*p, "Pow") && p->inputs.size() == 2 && p->inputs[0] == x &&
                    scalarFloatConstant(graph, p->inputs[1]))
                    return matches.push_back({"pow*x", {node.id, p->id}, {x, p->inputs[1]}, {}});
                if (isOp(*p, "Mul") && p->inputs.size() == 2 && p->inputs[0] == x && p->inputs[1] == x)
                    return matches.push_back({"x*x*x", {node.id, p->id}, {x}, {3}});
            }
            if (a == b) {
                // Leave x·x to the outer rule when it is the inner half of x·x·x.
                const NodeId consumer = singleConsumer(graph, out);
                if (consumer.valid() && isOp(graph.node(consumer), "Mul")) {
                    const Node &c = graph.node(consumer);
                    if ((c.inputs[0] == out && c.inputs[1] == a) || (c.inputs[1] == out && c.inputs[0] == a))
                        return;
                }
                return matches.push_back({"x*x", {node.id}, {a}, {2}});
            }
        }
        if ((isOp(node, "Add") || isOp(node, "Sub")) && floats) {
            const Node *pa = producerNode(graph, a), *pb = producerNode(graph, b);
            if (pa && pb && pa != pb && isOp(*pa, "Mul") && isOp(*pb, "Mul") && hasSingleUse(graph, a) &&
                hasSingleUse(graph, b)) {
                for (int i = 0; i < 2; ++i)
                    for (int j = 0; j < 2; ++j)
                        if (pa->inputs[i] == pb->inputs[j])
                            return matches.push_back({isOp(node, "Add") ? "a*s+b*s" : "a*s-b*s",
                                                      {node.id, pa->id, pb->id},
                                                      {pa->inputs[1 - i], pb->inputs[1 - j], pa->inputs[i]},
                                                      {}});
            }
            if (isOp(node, "Add")) {
                for (int side = 0; side < 2; ++side) {
                    const Node *p = producerNode(graph, node.inputs[side]);
                    if (p && isOp(*p, "Neg") && hasSingleUse(graph, node.inputs[side]))
                        return matches.push_back(
                            {"x+neg(y)", {node.id, p->id}, {node.inputs[1 - side], p->inputs[0]}, {}});
                }
            }
        }
        if ((isOp(node, "Mul") || isOp(node, "Add")) && floats && scalarFloatConstant(graph, b)) {
            const Node *p = producerNode(graph, a);
            if (p && p->opType == node.opType && isOp(*p, node.opType) && hasSingleUse(graph, a) &&
                p->inputs.size() == 2 && scalarFloatConstant(graph, p->inputs[1]) &&
                knownRank(graph, p->inputs[1]) == knownRank(graph, b))
                return matches.push_back({isOp(node, "Mul") ? "(x*c1)*c2" : "(x+c1)+c2",
                                          {node.id, p->id},
                                          {p->inputs[0], p->inputs[1], b},
                                          {}});
        }
        if (isOp(node, "Pow") && isConstantFilledWith(graph, b, 1.0) && broadcastKeepsShape(graph, a, b, out))
            return matches.push_back({"pow(x,1)", {node.id}, {a}, {}});
        return;
    }
    if (node.inputs.size() == 1 && node.inputs[0].valid()) {
        for (const char *op : {"Neg", "Reciprocal", "Not"}) {
            if (!isOp(node, op))
                continue;
            const Node *p = producerNode(graph, node.inputs[0]);
            if (p && isOp(*p, op))
                matches.push_back(
                    {std::string(op) + "(" + op + "(x))", {node.id, p->id}, {p->inputs[0]}, {}});
        }
    }
}

Expected<bool> replaceWithNew(Graph &graph, NodeId old, const std::string &op, std::vector<ValueId> inputs,
                              std::vector<Attribute> attrs = {})
{
    Expected<NodeId> added = addNodeWithOutputs(graph, op, std::move(inputs), 1,
                                                graph.node(old).name + "_" + op, std::move(attrs));
    if (!added)
        return added.status();
    graph.value(graph.node(*added).outputs[0]).type = graph.value(graph.node(old).outputs[0]).type;
    OPSCOPE_TRY(bypassNode(graph, old, graph.node(*added).outputs[0]));
    return true;
}

void eraseIfUnused(Graph &graph, NodeId n)
{
    const Node &node = graph.node(n);
    if (node.alive && isUnread(graph, node.outputs[0]))
        eraseNode(graph, n);
}

} // namespace

void AlgebraicSimplification::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds())
        selectNode(graph, graph.node(id), matches);
}

Expected<bool> AlgebraicSimplification::apply(Model &, Graph &graph, const Match &m) const
{
    const NodeId node = m.nodes[0];
    const std::string &r = m.rule;
    if (r == "x*x" || r == "x*x*x" || r == "pow*x") {
        float exponent = static_cast<float>(m.ints.empty() ? 0 : m.ints[0]);
        if (r == "pow*x")
            exponent = constantFloats(graph, m.values[1])->at(0) + 1.0f;
        const ValueId e =
            addConstant(graph, graph.node(node).name + "_exponent", floatTensor({}, {exponent}));
        OPSCOPE_TRY(replaceWithNew(graph, node, "Pow", {m.values[0], e}).status());
    } else if (r == "a*s+b*s" || r == "a*s-b*s") {
        Expected<NodeId> sum =
            addNodeWithOutputs(graph, r == "a*s+b*s" ? "Add" : "Sub", {m.values[0], m.values[1]}, 1,
                               graph.node(node).name + "_factored");
        if (!sum)
            return sum.status();
        OPSCOPE_TRY(replaceWithNew(graph, node, "Mul", {graph.node(*sum).outputs[0], m.values[2]}).status());
    } else if (r == "x+neg(y)") {
        OPSCOPE_TRY(replaceWithNew(graph, node, "Sub", {m.values[0], m.values[1]}).status());
    } else if (r == "(x*c1)*c2" || r == "(x+c1)+c2") {
        const float c1 = constantFloats(graph, m.values[1])->at(0),
                    c2 = constantFloats(graph, m.values[2])->at(0);
        const Tensor *shapeOf = constantTensor(graph, m.values[2]);
        const ValueId c = addConstant(graph, graph.node(node).name + "_merged",
                                      floatTensor(shapeOf->dims, {r == "(x*c1)*c2" ? c1 * c2 : c1 + c2}));
        OPSCOPE_TRY(replaceWithNew(graph, node, graph.node(node).opType, {m.values[0], c}).status());
    } else {
        if (!canBypass(graph, node, m.values[0]))
            return false;
        OPSCOPE_TRY(bypassNode(graph, node, m.values[0]));
    }
    for (std::size_t i = 1; i < m.nodes.size(); ++i)
        eraseIfUnused(graph, m.nodes[i]);
    return true;
}

} // namespace opscope::passes
