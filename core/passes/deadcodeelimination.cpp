#include "passes/deadcodeelimination.h"

#include "ir/dependencies.h"
#include "passes/passutil.h"

namespace opscope::passes {

bool eliminateDeadCode(Graph &graph)
{
    bool changed = false;
    // Bodies first: what they stop reading may free values here.
    for (NodeId id : graph.nodeIds())
        for (Attribute &a : graph.node(id).attributes) {
            if (a.type == AttributeType::Graph && a.g)
                changed = eliminateDeadCode(*a.g) || changed;
            for (auto &g : a.graphs)
                changed = eliminateDeadCode(*g) || changed;
        }

    std::vector<bool> liveNode(graph.nodeSlots(), false);
    std::vector<NodeId> work;
    auto markValue = [&](ValueId v) {
        if (!v.valid())
            return;
        const NodeId p = graph.producer(v);
        if (p.valid() && !liveNode[p.index]) {
            liveNode[p.index] = true;
            work.push_back(p);
        }
    };
    for (ValueId v : graph.outputs())
        markValue(v);
    while (!work.empty()) {
        const NodeId n = work.back();
        work.pop_back();
        for (ValueId v : graph.node(n).inputs)
            markValue(v);
        if (graph.node(n).hasSubgraphs())
            for (ValueId v : implicitInputs(graph, n))
                markValue(v);
    }
    for (NodeId id : graph.nodeIds())
        if (!liveNode[id.index]) {
            eraseNode(graph, id);
            changed = true;
        }

    // Values subgraphs read by name (at any depth) count as used.
    const std::vector<bool> implicitlyRead = subgraphReads(graph);
    for (ValueId v : graph.valueIds()) {
        const Value &value = graph.value(v);
        if (!value.uses.empty() || graph.isGraphOutput(v) || value.isGraphInput || implicitlyRead[v.index] ||
            value.producer.valid())
            continue;
        if (value.initializer || value.sparseInitializer || value.outerScope) {
            graph.removeValue(v);
            changed = true;
        }
    }
    return changed;
}

Expected<bool> DeadCodeElimination::run(Model &model, PassContext &)
{
    return eliminateDeadCode(model.graph);
}

} // namespace opscope::passes
