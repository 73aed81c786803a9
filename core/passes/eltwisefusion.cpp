#include "passes/eltwisefusion.h"

#include "passes/nodechain.h"
#include "passes/passutil.h"

#include <algorithm>
#include <cstring>

namespace opscope::passes {

namespace {

bool isSum(const Node &n)
{
    return (isOp(n, "Add") || isOp(n, "Sub")) && n.inputs.size() == 2;
}

struct Terms
{
    std::vector<ValueId> values;
    std::vector<double> coefficients;
    std::vector<NodeId> nodes;
    int scaled = 0; // Mul/Div/Neg absorbed
};

// The value of a one-element float constant `c` scaling `x`, when it does not raise x's rank (a
// [1,1] factor of a [3] operand makes the product [1,3]; absorbed, the sum would stay [3]).
std::optional<float> scaleOf(const Graph &graph, ValueId c, ValueId x)
{
    const std::optional<float> f = scalarFloat(graph, c);
    const auto rank = knownRank(graph, x);
    if (!f || !rank || constantTensor(graph, c)->dims.size() > *rank)
        return std::nullopt;
    return f;
}

// Expands v = Σ cᵢ·xᵢ through Add/Sub/Mul/Div/Neg nodes it alone reads (the root always).
void collect(const Graph &graph, ValueId v, double coef, bool root, Terms &t)
{
    const NodeId p = graph.producer(v);
    if (p.valid() && (root || hasSingleUse(graph, v)) && elementType(graph, v) == DataType::Float) {
        const Node &n = graph.node(p);
        if (isSum(n)) {
            t.nodes.push_back(p);
            collect(graph, n.inputs[0], coef, false, t);
            collect(graph, n.inputs[1], isOp(n, "Sub") ? -coef : coef, false, t);
            return;
        }
        if (isOp(n, "Mul") && n.inputs.size() == 2)
            for (int side = 0; side < 2; ++side)
                if (const auto c = scaleOf(graph, n.inputs[side], n.inputs[1 - side]);
                    c && !scalarFloat(graph, n.inputs[1 - side])) {
                    t.nodes.push_back(p);
                    ++t.scaled;
                    collect(graph, n.inputs[1 - side], coef * *c, false, t);
                    return;
                }
        if (const auto c = isOp(n, "Div") ? scaleOf(graph, n.inputs[1], n.inputs[0]) : std::nullopt;
            c && *c != 0.0) {
            t.nodes.push_back(p);
            ++t.scaled;
            collect(graph, n.inputs[0], coef / *c, false, t);
            return;
        }
        if (isOp(n, "Neg")) {
            t.nodes.push_back(p);
            ++t.scaled;
            collect(graph, n.inputs[0], -coef, false, t);
            return;
        }
    }
    // A leaf; the same value twice is one term.
    const auto at = std::find(t.values.begin(), t.values.end(), v);
    if (at != t.values.end()) {
        t.coefficients[std::size_t(at - t.values.begin())] += coef;
        return;
    }
    t.values.push_back(v);
    t.coefficients.push_back(coef);
}

} // namespace

void EltwiseFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        if (!isSum(n) || elementType(graph, n.outputs[0]) != DataType::Float)
            continue;
        // Only the root of a sum tree: an Add whose single reader is another Add belongs to that one.
        if (hasSingleUse(graph, n.outputs[0]) && isSum(graph.node(singleConsumer(graph, n.outputs[0]))) &&
            elementType(graph, graph.node(singleConsumer(graph, n.outputs[0])).outputs[0]) == DataType::Float)
            continue;
        Terms t;
        collect(graph, n.outputs[0], 1.0, true, t);
        const bool floats = std::all_of(t.values.begin(), t.values.end(),
                                        [&](ValueId v) { return elementType(graph, v) == DataType::Float; });
        if (t.scaled == 0 || t.nodes.size() < 2 || !floats)
            continue;
        std::vector<std::int64_t> bits; // coefficients travel as float bits in ints
        for (double c : t.coefficients) {
            const float f = static_cast<float>(c);
            std::int32_t i;
            std::memcpy(&i, &f, sizeof f);
            bits.push_back(i);
        }
        matches.push_back({"sum-of-scaled-terms", t.nodes, t.values, bits});
    }
}

Expected<bool> EltwiseFusion::apply(Model &model, Graph &graph, const Match &m) const
{
    std::vector<float> coefficients;
    for (std::int64_t bits : m.ints) {
        const auto i = static_cast<std::int32_t>(bits);
        float f;
        std::memcpy(&f, &i, sizeof f);
        coefficients.push_back(f);
    }
    const ValueId out = graph.node(m.nodes[0]).outputs[0];
    NodeChain chain(graph, graph.node(m.nodes[0]).name);
    const ValueId y =
        chain.op("Eltwise", m.values, {Attribute::makeFloats("coefficients", coefficients)}, kOpscopeDomain);
    OPSCOPE_TRY(chain.finish(out, y, m.nodes));
    ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
