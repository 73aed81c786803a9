#include "ir/dependencies.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <string>

namespace opscope {
namespace {

// Names a subgraph reads from outside itself (its own outer-scope values, plus those of nested
// subgraphs that it does not define).
void outerNames(const Graph &g, std::set<std::string> &names)
{
    for (ValueId v : g.valueIds())
        if (g.value(v).outerScope)
            names.insert(g.value(v).name);
    for (NodeId id : g.nodeIds())
        for (const Attribute &a : g.node(id).attributes) {
            std::set<std::string> inner;
            if (a.g)
                outerNames(*a.g, inner);
            for (const ClonePtr<Graph> &sub : a.graphs)
                if (sub)
                    outerNames(*sub, inner);
            for (const std::string &n : inner) {
                const ValueId local = g.findValue(n);
                if (!local.valid() || g.value(local).outerScope)
                    names.insert(n);
            }
        }
}

// f on the subgraphs of every live node of `g` (one level down) until it returns true.
template <typename F> bool anySubgraph(const Graph &g, F &&f)
{
    for (std::uint32_t i = 0; i < g.nodeSlots(); ++i) {
        const Node &n = g.node(NodeId(i));
        if (!n.alive)
            continue;
        for (const Attribute &a : n.attributes) {
            if (a.g && f(*a.g))
                return true;
            for (const ClonePtr<Graph> &sub : a.graphs)
                if (sub && f(*sub))
                    return true;
        }
    }
    return false;
}

// Whether `sub`, or a graph nested in it that `sub` does not shadow, reads `name` from outside `sub`.
bool readsFromOutside(const Graph &sub, const std::string &name)
{
    const ValueId local = sub.findValue(name);
    if (local.valid())
        return sub.value(local).outerScope; // defined here: what is nested below reads this one
    return anySubgraph(sub, [&](const Graph &inner) { return readsFromOutside(inner, name); });
}

} // namespace

bool readBySubgraph(const Graph &graph, ValueId v)
{
    if (!v.valid() || !graph.value(v).alive)
        return false;
    const std::string &name = graph.value(v).name;
    return anySubgraph(graph, [&](const Graph &sub) { return readsFromOutside(sub, name); });
}

std::vector<bool> subgraphReads(const Graph &graph)
{
    std::vector<bool> read(graph.valueSlots(), false);
    for (NodeId id : graph.nodeIds())
        if (graph.node(id).hasSubgraphs())
            for (ValueId v : implicitInputs(graph, id))
                read[v.index] = true;
    return read;
}

bool nameUsedInTree(const Graph &graph, const std::string &name)
{
    if (graph.findValue(name).valid())
        return true;
    return anySubgraph(graph, [&](const Graph &sub) { return nameUsedInTree(sub, name); });
}

namespace {

std::size_t renameInBodiesOf(Node &node, const std::string &from, const std::string &to);

std::size_t renameReadsIn(Graph &sub, const std::string &from, const std::string &to)
{
    std::size_t renamed = 0;
    const ValueId local = sub.findValue(from);
    if (local.valid()) {
        if (!sub.value(local).outerScope)
            return 0; // defined here: neither this graph nor what it nests reads the outer one
        if (sub.renameValue(local, to))
            ++renamed;
    }
    // Nested graphs look the name up through this one (or past it, when this graph does not
    // read it itself): they are renamed alike.
    for (NodeId n : sub.nodeIds())
        renamed += renameInBodiesOf(sub.node(n), from, to);
    return renamed;
}

std::size_t renameInBodiesOf(Node &node, const std::string &from, const std::string &to)
{
    std::size_t renamed = 0;
    for (Attribute &a : node.attributes) {
        if (a.g)
            renamed += renameReadsIn(*a.g, from, to);
        for (ClonePtr<Graph> &g : a.graphs)
            if (g)
                renamed += renameReadsIn(*g, from, to);
    }
    return renamed;
}

} // namespace

std::size_t renameSubgraphReads(Graph &graph, NodeId id, const std::string &from, const std::string &to)
{
    return renameInBodiesOf(graph.node(id), from, to);
}

std::vector<ValueId> implicitInputs(const Graph &graph, NodeId id)
{
    std::set<std::string> names;
    for (const Attribute &a : graph.node(id).attributes) {
        if (a.g)
            outerNames(*a.g, names);
        for (const ClonePtr<Graph> &sub : a.graphs)
            if (sub)
                outerNames(*sub, names);
    }
    std::vector<ValueId> out;
    for (const std::string &n : names) {
        const ValueId v = graph.findValue(n);
        if (v.valid())
            out.push_back(v);
    }
    return out;
}

namespace {

std::size_t typeCapturedIn(Graph &graph, std::vector<const Graph *> &scopes)
{
    std::size_t typed = 0;
    for (ValueId v : graph.valueIds()) {
        Value &value = graph.value(v);
        if (!value.outerScope || value.type.isKnown())
            continue;
        // The innermost enclosing graph that defines the name is the one read.
        for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
            const ValueId outer = (*it)->findValue(value.name);
            if (!outer.valid())
                continue;
            if ((*it)->value(outer).outerScope && !(*it)->value(outer).type.isKnown())
                continue; // a reference itself, untyped: look further up
            if ((*it)->value(outer).type.isKnown()) {
                value.type = (*it)->value(outer).type;
                ++typed;
            }
            break;
        }
    }
    scopes.push_back(&graph);
    for (NodeId id : graph.nodeIds())
        for (Attribute &a : graph.node(id).attributes) {
            if (a.g)
                typed += typeCapturedIn(*a.g, scopes);
            for (ClonePtr<Graph> &sub : a.graphs)
                if (sub)
                    typed += typeCapturedIn(*sub, scopes);
        }
    scopes.pop_back();
    return typed;
}

} // namespace

std::size_t typeCapturedValues(Graph &graph)
{
    std::vector<const Graph *> scopes;
    return typeCapturedIn(graph, scopes);
}

std::vector<std::vector<NodeId>> nodePredecessors(const Graph &graph)
{
    std::vector<std::vector<NodeId>> preds(graph.nodeSlots());
    for (NodeId id : graph.nodeIds()) {
        std::vector<NodeId> &p = preds[id.index];
        const auto add = [&](ValueId v) {
            if (v.valid() && graph.producer(v).valid())
                p.push_back(graph.producer(v));
        };
        for (ValueId v : graph.node(id).inputs)
            add(v);
        if (graph.node(id).hasSubgraphs())
            for (ValueId v : implicitInputs(graph, id))
                add(v);
        std::sort(p.begin(), p.end());
        p.erase(std::unique(p.begin(), p.end()), p.end());
    }
    return preds;
}

Expected<std::vector<NodeId>> dependencyOrder(const Graph &graph)
{
    const auto preds = nodePredecessors(graph);
    std::vector<std::vector<NodeId>> succs(graph.nodeSlots());
    std::vector<std::size_t> pending(graph.nodeSlots(), 0);
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
    for (NodeId id : graph.nodeIds()) {
        pending[id.index] = preds[id.index].size();
        for (NodeId p : preds[id.index])
            succs[p.index].push_back(id);
        if (pending[id.index] == 0)
            ready.push(id.index);
    }
    std::vector<NodeId> order;
    while (!ready.empty()) {
        const NodeId id(ready.top());
        ready.pop();
        order.push_back(id);
        for (NodeId s : succs[id.index])
            if (--pending[s.index] == 0)
                ready.push(s.index);
    }
    if (order.size() != graph.nodeCount())
        return graph.topologicalOrder().hasValue()
                   ? Status::invalid("graph '" + graph.name() +
                                     "' has a cycle through a subgraph's outer-scope reads")
                   : graph.topologicalOrder().status();
    return order;
}

} // namespace opscope
