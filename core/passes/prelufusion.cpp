#include "passes/prelufusion.h"

#include "passes/nodechain.h"
#include "passes/passutil.h"

namespace opscope::passes {

namespace {

bool isZero(const Graph &graph, ValueId v)
{
    return v.valid() && isConstantFilledWith(graph, v, 0.0);
}

// v = Relu(x) or Max(x, 0): x, else invalid.
ValueId positivePart(const Graph &graph, ValueId v, std::vector<NodeId> &nodes)
{
    if (const Node *r = singleUseProducer(graph, v, "Relu")) {
        nodes.push_back(r->id);
        return r->inputs[0];
    }
    if (const Node *m = singleUseProducer(graph, v, "Max"); m && m->inputs.size() == 2)
        for (int side = 0; side < 2; ++side)
            if (isZero(graph, m->inputs[side])) {
                nodes.push_back(m->id);
                return m->inputs[1 - side];
            }
    return {};
}

// v = min(x, 0) written some way: Min(x, 0) → +1; Neg(Relu(Neg(x))) → +1; Relu(Neg(x)) → −1
// (the sign relating v to min(x, 0)). 0 when v is none of these or reads another x.
int negativePart(const Graph &graph, ValueId v, ValueId x, std::vector<NodeId> &nodes)
{
    if (const Node *m = singleUseProducer(graph, v, "Min"); m && m->inputs.size() == 2)
        for (int side = 0; side < 2; ++side)
            if (m->inputs[1 - side] == x && isZero(graph, m->inputs[side])) {
                nodes.push_back(m->id);
                return 1;
            }
    int sign = 1;
    ValueId r = v;
    if (const Node *neg = singleUseProducer(graph, v, "Neg")) {
        nodes.push_back(neg->id);
        r = neg->inputs[0];
        sign = -1;
    }
    const Node *relu = singleUseProducer(graph, r, "Relu");
    const Node *negX = relu ? singleUseProducer(graph, relu->inputs[0], "Neg") : nullptr;
    if (!negX || negX->inputs[0] != x)
        return 0;
    nodes.push_back(relu->id);
    nodes.push_back(negX->id);
    return -sign; // Relu(−x) = −min(x, 0)
}

// v = α·w (Mul, either order) with a constant α: (w, α), else invalid values.
std::pair<ValueId, ValueId> scaled(const Graph &graph, ValueId v)
{
    const Node *m = singleUseProducer(graph, v, "Mul");
    if (!m || m->inputs.size() != 2)
        return {};
    for (int side = 0; side < 2; ++side)
        if (isFloatConstant(graph, m->inputs[side]))
            return {m->inputs[1 - side], m->inputs[side]};
    return {};
}

// PRelu's slope broadcasts unidirectionally: it must not make the result bigger than x.
bool slopeFits(const Graph &graph, ValueId slope, ValueId x)
{
    const Tensor *t = constantTensor(graph, slope);
    const auto rank = knownRank(graph, x);
    if (!t || !rank || t->dims.size() > *rank)
        return false;
    for (std::size_t i = 0; i < t->dims.size(); ++i) {
        const std::int64_t d = t->dims[t->dims.size() - 1 - i];
        if (d != 1 && knownDim(graph, x, *rank - 1 - i) != d)
            return false;
    }
    return true;
}

} // namespace

void PReluFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        if ((isOp(n, "Add") || isOp(n, "Sub")) && n.inputs.size() == 2) {
            // pos(x) ± α·neg(x)
            for (int side = 0; side < (isOp(n, "Add") ? 2 : 1); ++side) {
                std::vector<NodeId> nodes{id};
                const ValueId x = positivePart(graph, n.inputs[side], nodes);
                const auto [w, alpha] = scaled(graph, n.inputs[1 - side]);
                if (!x.valid() || !w.valid() || elementType(graph, x) != DataType::Float)
                    continue;
                nodes.push_back(graph.producer(n.inputs[1 - side]));
                int sign = negativePart(graph, w, x, nodes);
                if (sign == 0 || !slopeFits(graph, alpha, x))
                    continue;
                if (isOp(n, "Sub"))
                    sign = -sign;
                matches.push_back({"relu(x)+alpha*min(x,0)", nodes, {x, alpha, n.outputs[0]}, {sign}});
                break;
            }
            continue;
        }
        if (!isOp(n, "Where") || n.inputs.size() != 3)
            continue;
        // Where(x < 0, α·x, x) and its mirror images.
        const Node *cmp = singleUseProducer(graph, n.inputs[0], "Less");
        bool negativeFirst = true;
        for (const char *op : {"Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
            if (!cmp && (cmp = singleUseProducer(graph, n.inputs[0], op)))
                negativeFirst = op[0] == 'L';
        if (!cmp || !isZero(graph, cmp->inputs[1]))
            continue;
        const ValueId x = cmp->inputs[0];
        const ValueId neg = n.inputs[negativeFirst ? 1 : 2], pos = n.inputs[negativeFirst ? 2 : 1];
        const auto [w, alpha] = scaled(graph, neg);
        if (pos != x || w != x || elementType(graph, x) != DataType::Float || !slopeFits(graph, alpha, x) ||
            !sameShape(graph, x, n.outputs[0]))
            continue;
        matches.push_back(
            {"where(x<0,alpha*x,x)", {id, cmp->id, graph.producer(neg)}, {x, alpha, n.outputs[0]}, {1}});
    }
}

Expected<bool> PReluFusion::apply(Model &, Graph &graph, const Match &m) const
{
    const ValueId x = m.values[0], out = m.values[2];
    ValueId slope = m.values[1];
    if (m.ints[0] < 0) {
        // The term was −α·min(x, 0): PRelu's slope is −α.
        Tensor negated = *constantTensor(graph, slope);
        std::vector<float> values = *constantFloats(graph, slope);
        for (float &v : values)
            v = -v;
        slope = addConstant(graph, graph.value(slope).name + "_neg", floatTensor(negated.dims, values));
    }
    NodeChain chain(graph, graph.node(m.nodes[0]).name);
    const ValueId y = chain.op("PRelu", {x, slope});
    OPSCOPE_TRY(chain.finish(out, y, m.nodes));
    return true;
}

} // namespace opscope::passes
