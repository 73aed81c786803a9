#include "passes/pass.h"

#include "passes/passutil.h"

namespace opscope::passes {

Expected<bool> RewritePass::run(Model &model, PassContext &context)
{
    const ModelNameScope names(model.graph); // new names in bodies must not shadow enclosing ones
    return runOnGraph(model, model.graph, {}, context);
}

Expected<bool> RewritePass::runOnGraph(Model &model, Graph &graph, const std::string &path,
                                       PassContext &context)
{
    bool changed = false;
    if (visitsSubgraphs()) {
        for (NodeId id : graph.nodeIds()) {
            for (Attribute &a : graph.node(id).attributes) {
                const std::string where =
                    (path.empty() ? "" : path + "/") + graph.node(id).name + "/" + a.name;
                if (a.type == AttributeType::Graph && a.g) {
                    Expected<bool> sub = runOnGraph(model, *a.g, where, context);
                    if (!sub)
                        return sub.status();
                    changed = changed || *sub;
                }
                for (std::size_t i = 0; i < a.graphs.size(); ++i) {
                    Expected<bool> sub =
                        runOnGraph(model, *a.graphs[i], where + "[" + std::to_string(i) + "]", context);
                    if (!sub)
                        return sub.status();
                    changed = changed || *sub;
                }
            }
        }
    }

    std::vector<Match> matches;
    select(model, graph, matches);
    for (const Match &m : matches) {
        if (context.cancelled())
            break;
        bool stale = false;
        for (NodeId n : m.nodes)
            stale = stale || !graph.node(n).alive;
        for (ValueId v : m.values)
            stale = stale || (v.valid() && !graph.value(v).alive);
        if (stale)
            continue;
        PatternMatch record;
        record.rule = m.rule;
        record.graphPath = path;
        record.matched = m.nodes;
        for (NodeId n : m.nodes)
            record.matchedNames.push_back(graph.node(n).name);
        const std::size_t slotsBefore = graph.nodeSlots();
        Expected<bool> applied = apply(model, graph, m);
        if (!applied)
            return applied.status().withContext("rule '" + m.rule + "' at node '" +
                                                record.matchedNames.front() + "'");
        if (!*applied)
            continue;
        changed = true;
        for (std::size_t i = slotsBefore; i < graph.nodeSlots(); ++i) {
            const NodeId id(static_cast<std::uint32_t>(i));
            if (graph.node(id).alive) {
                record.replacement.push_back(id);
                record.replacementNames.push_back(graph.node(id).name);
            }
        }
        // A rewrite that edits its anchor in place (conv-bn folds into the Conv) is replaced by it.
        for (NodeId n : m.nodes)
            if (graph.node(n).alive && record.replacement.empty()) {
                record.replacement.push_back(n);
                record.replacementNames.push_back(graph.node(n).name);
            }
        context.recordMatch(std::move(record));
    }
    return changed;
}

} // namespace opscope::passes
