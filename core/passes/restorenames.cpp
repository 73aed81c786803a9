#include "passes/restorenames.h"

#include <unordered_map>
#include <unordered_set>

namespace opscope::passes {

namespace {

bool sameOp(const Node &a, const Node &b)
{
    const auto plain = [](const std::string &d) { return d.empty() || d == "ai.onnx"; };
    return a.opType == b.opType && (a.domain == b.domain || (plain(a.domain) && plain(b.domain)));
}

} // namespace

std::size_t restoreOriginalNames(Graph &graph, const Graph &original, const PipelineResult &result)
{
    const std::map<std::string, std::vector<std::string>> origins = replacementOrigins(result);
    std::unordered_set<std::string> taken;
    for (NodeId id : graph.nodeIds())
        taken.insert(graph.node(id).name);
    std::unordered_map<std::uint32_t, NodeId> namedAfter; // node here → the original it was named after
    std::size_t restored = 0;
    const auto rename = [&](Node &n, NodeId source) {
        const std::string &name = original.node(source).name;
        if (taken.count(name))
            return false;
        taken.erase(n.name);
        n.name = name;
        taken.insert(name);
        namedAfter[n.id.index] = source;
        ++restored;
        return true;
    };

    // By name and by recorded origin.
    for (NodeId id : graph.nodeIds()) {
        Node &n = graph.node(id);
        if (const NodeId same = original.findNode(n.name); same.valid()) {
            namedAfter[id.index] = same;
            continue;
        }
        NodeId source;
        for (std::size_t cut = n.name.rfind('_'); cut != std::string::npos && cut > 0; cut = n.name.rfind('_', cut - 1))
            if (const NodeId s = original.findNode(std::string_view(n.name).substr(0, cut));
                s.valid() && sameOp(original.node(s), n)) {
                source = s;
                break;
            }
        if (!source.valid())
            if (const auto it = origins.find(n.name); it != origins.end()) {
                int candidates = 0;
                for (const std::string &o : it->second)
                    if (const NodeId s = original.findNode(o); s.valid() && sameOp(original.node(s), n)) {
                        source = s;
                        ++candidates;
                    }
                if (candidates != 1)
                    source = NodeId();
            }
        if (source.valid())
            rename(n, source);
    }

    // Downstream of a node named back: its original's next node of the same op, past nodes the
    // passes removed (those whose names this graph no longer has).
    const Expected<std::vector<NodeId>> order = graph.topologicalOrder(); // producers before readers
    for (NodeId id : order ? *order : graph.nodeIds()) {
        Node &n = graph.node(id);
        if (namedAfter.count(id.index) || n.inputs.empty() || !n.inputs[0].valid())
            continue;
        const NodeId p = graph.producer(n.inputs[0]);
        const auto before = p.valid() ? namedAfter.find(p.index) : namedAfter.end();
        if (before == namedAfter.end())
            continue;
        NodeId at = before->second, found;
        for (int hop = 0; hop < 4 && !found.valid(); ++hop) {
            const Node &o = original.node(at);
            if (o.outputs.empty() || !o.outputs[0].valid())
                break;
            const std::vector<Use> &readers = original.uses(o.outputs[0]);
            // One reader of its op not named yet (SiLU's Sigmoid and Mul both read the Conv) …
            int same = 0;
            for (const Use &u : readers)
                if (sameOp(original.node(u.node), n) && !taken.count(original.node(u.node).name)) {
                    found = u.node;
                    ++same;
                }
            if (same > 1)
                found = NodeId();
            if (same != 0 || readers.size() != 1)
                break;
            // … or a single reader the passes removed, to look past.
            const Node &next = original.node(readers.front().node);
            if (taken.count(next.name))
                break;
            at = next.id;
        }
        if (found.valid())
            rename(n, found);
    }
    return restored;
}

} // namespace opscope::passes
