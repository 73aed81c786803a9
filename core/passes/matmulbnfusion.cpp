#include "passes/matmulbnfusion.h"

#include "passes/fusionutil.h"
#include "passes/passutil.h"

namespace opscope::passes {

void MatMulBnFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &bn = graph.node(id);
        const auto affine = batchNormAffine(graph, bn);
        if (!affine)
            continue;
        const NodeId mm = graph.producer(bn.inputs[0]);
        if (!mm.valid() || !isOp(graph.node(mm), "MatMul") || singleConsumer(graph, bn.inputs[0]) != id)
            continue;
        const Node &m = graph.node(mm);
        const Tensor *w = constantTensor(graph, m.inputs[1]);
        if (!w || w->dtype != DataType::Float || w->dims.size() != 2 || knownRank(graph, m.inputs[0]) != 2u ||
            w->dims[1] != static_cast<std::int64_t>(affine->scale.size()))
            continue;
        matches.push_back({"matmul-bn", {mm, id}, {}, {}});
    }
}

Expected<bool> MatMulBnFusion::apply(Model &, Graph &graph, const Match &match) const
{
    const NodeId mm = match.nodes[0], bn = match.nodes[1];
    const ChannelAffine affine = *batchNormAffine(graph, graph.node(bn));
    const Node &m = graph.node(mm);
    const Tensor &w = *constantTensor(graph, m.inputs[1]);
    const std::int64_t k = w.dims[0], n = w.dims[1];
    std::vector<float> weights(w.as<float>().begin(), w.as<float>().end());
    for (std::int64_t r = 0; r < k; ++r)
        for (std::int64_t c = 0; c < n; ++c)
            weights[static_cast<std::size_t>(r * n + c)] *= affine.scale[static_cast<std::size_t>(c)];
    const std::string base = m.name;
    const ValueId x = m.inputs[0];
    const ValueId newW = addConstant(graph, base + "_W", floatTensor({k, n}, weights));
    const ValueId bias = addConstant(graph, base + "_B", floatTensor({n}, affine.shift));
    Expected<NodeId> gemm = addNodeWithOutputs(graph, "Gemm", {x, newW, bias}, 1, base + "_gemm");
    if (!gemm)
        return gemm.status();
    const ValueId out = graph.node(*gemm).outputs[0];
    graph.value(out).type = graph.value(graph.node(bn).outputs[0]).type;
    OPSCOPE_TRY(bypassNode(graph, bn, out));
    eraseNode(graph, mm);
    return true;
}

} // namespace opscope::passes
