#include "passes/matmuladdfusion.h"

#include "passes/passutil.h"

namespace opscope::passes {

namespace {

// c broadcasts one way to [m, n] (m may be symbolic: then c must not vary along it).
bool gemmBias(const Graph &graph, ValueId c, std::optional<std::int64_t> m, std::int64_t n)
{
    const auto s = staticShape(graph, c);
    if (!s || s->size() > 2)
        return false;
    const std::int64_t last = s->empty() ? 1 : s->back();
    if (last != 1 && last != n)
        return false;
    if (s->size() == 2 && (*s)[0] != 1 && (!m || (*s)[0] != *m))
        return false;
    return true;
}

// A constant [N] or [1,…,1,N] bias for a rank-`rank` output whose last dim is n.
bool rowBias(const Graph &graph, ValueId c, std::int64_t n, std::size_t rank)
{
    const Tensor *t = constantTensor(graph, c);
    if (!t || t->dtype != DataType::Float || t->dims.empty() || t->dims.size() > rank || t->dims.back() != n)
        return false;
    return std::all_of(t->dims.begin(), t->dims.end() - 1, [](std::int64_t d) { return d == 1; });
}

} // namespace

void MatMulAddFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &add = graph.node(id);
        if (!isOp(add, "Add") || add.inputs.size() != 2)
            continue;
        for (int side = 0; side < 2; ++side) {
            const NodeId mm = graph.producer(add.inputs[side]);
            if (!mm.valid() || !isOp(graph.node(mm), "MatMul") ||
                singleConsumer(graph, add.inputs[side]) != id)
                continue;
            const Node &m = graph.node(mm);
            const ValueId bias = add.inputs[1 - side];
            const auto ra = knownRank(graph, m.inputs[0]), rb = knownRank(graph, m.inputs[1]);
            const auto n = knownDim(graph, m.inputs[1], 1);
            const DataType dt = elementType(graph, m.outputs[0]);
            if (ra == 2u && rb == 2u && n && gemmBias(graph, bias, knownDim(graph, m.inputs[0], 0), *n) &&
                (dt == DataType::Float || dt == DataType::Double) && elementType(graph, bias) == dt) {
                matches.push_back({"matmul-add→gemm", {mm, id}, {bias}, {}});
                break;
            }
            const auto outRank = knownRank(graph, m.outputs[0]);
            const auto w = staticShape(graph, m.inputs[1]);
            if (dt == DataType::Float && outRank && *outRank >= 2 && w && w->size() >= 2 &&
                rowBias(graph, bias, w->back(), *outRank)) {
                matches.push_back({"matmul-add→fusedmatmul", {mm, id}, {bias}, {}});
                break;
            }
        }
    }
}

Expected<bool> MatMulAddFusion::apply(Model &model, Graph &graph, const Match &match) const
{
    const NodeId mm = match.nodes[0], add = match.nodes[1];
    const bool gemm = match.rule == "matmul-add→gemm";
    std::vector<ValueId> inputs = graph.node(mm).inputs;
    inputs.push_back(match.values[0]);
    Expected<NodeId> fused = addNodeWithOutputs(graph, gemm ? "Gemm" : "FusedMatMul", inputs, 1,
                                                graph.node(mm).name + (gemm ? "_gemm" : "_bias"), {},
                                                gemm ? std::string() : std::string(kOpscopeDomain));
    if (!fused)
        return fused.status();
    const ValueId out = graph.node(*fused).outputs[0];
    graph.value(out).type = graph.value(graph.node(add).outputs[0]).type;
    OPSCOPE_TRY(bypassNode(graph, add, out));
    eraseNode(graph, mm);
    if (!gemm)
        ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
