#include "passes/bntoscale.h"

#include "passes/fusionutil.h"
#include "passes/passutil.h"

namespace opscope::passes {

namespace {

bool allEqualTo(const std::vector<float> &v, float x)
{
    return std::all_of(v.begin(), v.end(), [x](float e) { return e == x; });
}

} // namespace

void BnToScale::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &bn = graph.node(id);
        const auto affine = batchNormAffine(graph, bn);
        const auto rank = knownRank(graph, bn.inputs.empty() ? ValueId() : bn.inputs[0]);
        if (!affine || !rank || *rank < 2)
            continue;
        const bool unitScale = allEqualTo(affine->scale, 1.0f), zeroShift = allEqualTo(affine->shift, 0.0f);
        if (unitScale && zeroShift)
            matches.push_back({"bn-identity", {id}, {}, {}});
        else if (unitScale)
            matches.push_back({"bn→add", {id}, {}, {}});
        else if (zeroShift)
            matches.push_back({"bn→mul", {id}, {}, {}});
    }
}

Expected<bool> BnToScale::apply(Model &, Graph &graph, const Match &match) const
{
    const NodeId id = match.nodes[0];
    const Node &bn = graph.node(id);
    const ValueId x = bn.inputs[0];
    if (match.rule == "bn-identity") {
        if (!canBypass(graph, id, x))
            return false;
        OPSCOPE_TRY(bypassNode(graph, id, x));
        return true;
    }
    const ChannelAffine affine = *batchNormAffine(graph, bn);
    const std::size_t rank = *knownRank(graph, x);
    std::vector<std::int64_t> dims(rank - 1, 1); // [C,1,…,1] broadcasts along axis 1
    dims[0] = static_cast<std::int64_t>(affine.scale.size());
    const bool add = match.rule == "bn→add";
    const ValueId c = addConstant(graph, bn.name + (add ? "_shift" : "_scale"),
                                  floatTensor(dims, add ? affine.shift : affine.scale));
    Expected<NodeId> op =
        addNodeWithOutputs(graph, add ? "Add" : "Mul", {x, c}, 1, bn.name + (add ? "_add" : "_mul"));
    if (!op)
        return op.status();
    const ValueId out = graph.node(*op).outputs[0];
    graph.value(out).type = graph.value(graph.node(id).outputs[0]).type;
    OPSCOPE_TRY(bypassNode(graph, id, out));
    return true;
}

} // namespace opscope::passes
