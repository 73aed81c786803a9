#include "passes/globalpoolfusion.h"

#include "passes/nodechain.h"
#include "passes/passutil.h"

#include <algorithm>

namespace opscope::passes {

void GlobalPoolFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        const bool mean = isOp(n, "ReduceMean");
        if ((!mean && !isOp(n, "ReduceMax")) || n.inputs.empty())
            continue;
        const auto rank = knownRank(graph, n.inputs[0]);
        if (!rank || *rank < 3 || elementType(graph, n.inputs[0]) != DataType::Float)
            continue;
        std::vector<std::int64_t> axes = attrInts(n, "axes");
        if (n.inputs.size() > 1 && n.inputs[1].valid()) {
            const auto a = constantInts(graph, n.inputs[1]);
            if (!a)
                continue;
            axes = *a;
        }
        for (std::int64_t &a : axes)
            a = a < 0 ? a + static_cast<std::int64_t>(*rank) : a;
        std::sort(axes.begin(), axes.end());
        std::vector<std::int64_t> spatial;
        for (std::int64_t a = 2; a < static_cast<std::int64_t>(*rank); ++a)
            spatial.push_back(a);
        if (axes != spatial)
            continue;
        matches.push_back({mean ? "reducemean-to-global-average-pool" : "reducemax-to-global-max-pool",
                           {id},
                           {},
                           {attrInt(n, "keepdims", 1)}});
    }
}

Expected<bool> GlobalPoolFusion::apply(Model &, Graph &graph, const Match &m) const
{
    const Node n = graph.node(m.nodes[0]);
    NodeChain chain(graph, n.name);
    ValueId y = chain.op(isOp(n, "ReduceMean") ? "GlobalAveragePool" : "GlobalMaxPool", {n.inputs[0]});
    if (m.ints[0] == 0) // the spatial axes are all 1 now: Flatten drops them, batch dim kept
        y = chain.op("Flatten", {y}, {Attribute::makeInt("axis", 1)});
    OPSCOPE_TRY(chain.finish(n.outputs[0], y, m.nodes));
    return true;
}

} // namespace opscope::passes
