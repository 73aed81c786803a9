#include "layout/presentation.h"

#include "ir/dependencies.h"

#include <algorithm>
#include <deque>
#include <list>

namespace opscope::layout {

namespace {

// "/encoder/layer.0/attention/MatMul" → "/encoder/layer.0/attention"; "Conv_3" → "".
std::string scopeOf(const std::string &name)
{
    const auto slash = name.rfind('/');
    if (slash == std::string::npos || slash == 0)
        return {};
    return name.substr(0, slash);
}

std::vector<std::string> prefixes(const std::string &scope)
{
    std::vector<std::string> out;
    for (std::size_t pos = scope.find('/', 1); pos != std::string::npos; pos = scope.find('/', pos + 1))
        out.push_back(scope.substr(0, pos));
    if (!scope.empty())
        out.push_back(scope);
    return out;
}

// The union's order: graph 0's topological order, with each node only graph 1 has inserted right
// after the node it follows in graph 1. Appending them instead put a pass's new nodes (a fused
// HardSwish) into the last topological block, far from the nodes they replaced, and closed.
std::vector<std::string> nodeOrder(const std::vector<const Graph *> &graphs)
{
    std::list<std::string> order;
    std::unordered_map<std::string, std::list<std::string>::iterator> at;
    for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
        const Graph *g = graphs[gi];
        Expected<std::vector<NodeId>> topo = g->topologicalOrder();
        const std::vector<NodeId> ids = topo ? *topo : g->nodeIds();
        auto cursor = order.begin(); // insert before this: the start until a known node is seen
        for (NodeId id : ids) {
            const Node &n = g->node(id);
            if (isInlinedConstant(*g, n))
                continue;
            if (const auto it = at.find(n.name); it != at.end()) {
                cursor = std::next(it->second);
                continue;
            }
            at.emplace(n.name, order.insert(gi == 0 ? order.end() : cursor, n.name));
        }
    }
    return {order.begin(), order.end()};
}

std::string shortType(const TypeInfo &t)
{
    return t.isKnown() ? t.toString() : std::string();
}

// A Constant read by ops as a weight, written as a node by Paddle2ONNX and tracers (hundreds of
// them): its value's line, as an initializer's.
std::string constantNodeLine(const Value &v)
{
    return v.name + "  " + (v.type.isKnown() ? v.type.toString() : std::string("constant"));
}

std::string constantLine(const Value &v)
{
    std::string dims;
    for (std::int64_t d : v.initializer->dims)
        dims += (dims.empty() ? "" : ",") + std::to_string(d); // as a Constant node's value reads
    return v.name + "  " + std::string(dataTypeName(v.initializer->dtype)) + "[" + dims + "]";
}

} // namespace

bool isInlinedConstant(const Graph &g, const Node &n)
{
    if (n.opType != "Constant" || !(n.domain.empty() || n.domain == "ai.onnx") || !n.inputs.empty() ||
        n.outputs.size() != 1 || !n.outputs[0].valid() || n.hasSubgraphs())
        return false;
    const ValueId out = n.outputs[0];
    // Read by ops, or only by the bodies of an If/Loop (spox and PyTorch exports capture weights
    // from two levels up): drawn inside the reader, or inside the node whose body captures it.
    return !g.isGraphOutput(out) && (!g.value(out).uses.empty() || readBySubgraph(g, out));
}

Grouping Grouping::build(const std::vector<const Graph *> &graphs, std::size_t blockSize,
                         std::size_t minGroup)
{
    Grouping g;
    const std::vector<std::string> order = nodeOrder(graphs);
    // Count nodes under every scope prefix.
    std::map<std::string, std::size_t> count;
    for (const std::string &name : order)
        for (const std::string &p : prefixes(scopeOf(name)))
            ++count[p];
    // A node's group: its longest scope prefix that is big enough.
    for (const std::string &name : order) {
        std::string group;
        for (const std::string &p : prefixes(scopeOf(name)))
            if (count[p] >= minGroup)
                group = p;
        g.m_nodeGroup[name] = group;
    }
    // Parents: the nearest enclosing real group.
    auto realParent = [&](const std::string &group) {
        const std::vector<std::string> ps = prefixes(group);
        for (auto it = ps.rbegin() + 1; it < ps.rend(); ++it)
            if (count[*it] >= minGroup)
                return *it;
        return std::string();
    };
    for (const auto &[p, n] : count)
        if (n >= minGroup)
            g.m_parent[p] = realParent(p);
    // Unscoped crowds: topological blocks.
    std::map<std::string, std::vector<std::string>> direct;
    for (const std::string &name : order)
        direct[g.m_nodeGroup[name]].push_back(name);
    for (auto &[group, names] : direct) {
        if (names.size() <= blockSize)
            continue;
        const std::size_t blocks = (names.size() + blockSize - 1) / blockSize;
        for (std::size_t b = 0; b < blocks; ++b) {
            const std::size_t first = b * blockSize, last = std::min(names.size(), first + blockSize);
            const std::string path =
                group + "/[" + std::to_string(first + 1) + "–" + std::to_string(last) + "]";
            g.m_parent[path] = group;
            for (std::size_t i = first; i < last; ++i)
                g.m_nodeGroup[names[i]] = path;
        }
    }
    // Sizes, and where each group first appears in topological order (children are listed, and
    // opened, top of the graph first).
    std::map<std::string, std::size_t> first;
    for (std::size_t i = 0; i < order.size(); ++i) {
        const std::string &group = g.m_nodeGroup[order[i]];
        ++g.m_direct[group];
        for (std::string p = group; !p.empty(); p = g.m_parent[p]) {
            ++g.m_size[p];
            first.emplace(p, i);
        }
    }
    g.m_size[""] = order.size();
    for (const auto &[child, parent] : g.m_parent)
        if (g.m_size.count(child))
            g.m_children[parent].push_back(child);
    for (auto &[parent, children] : g.m_children)
        std::sort(children.begin(), children.end(),
                  [&](const std::string &a, const std::string &b) { return first[a] < first[b]; });
    return g;
}

const std::string &Grouping::groupOf(const std::string &nodeName) const
{
    static const std::string root;
    const auto it = m_nodeGroup.find(nodeName);
    return it == m_nodeGroup.end() ? root : it->second;
}

std::string Grouping::parentOf(const std::string &group) const
{
    const auto it = m_parent.find(group);
    return it == m_parent.end() ? std::string() : it->second;
}

std::size_t Grouping::size(const std::string &group) const
{
    const auto it = m_size.find(group);
    return it == m_size.end() ? 0 : it->second;
}

const std::vector<std::string> &Grouping::childGroups(const std::string &group) const
{
    static const std::vector<std::string> none;
    const auto it = m_children.find(group);
    return it == m_children.end() ? none : it->second;
}

std::size_t Grouping::directNodes(const std::string &group) const
{
    const auto it = m_direct.find(group);
    return it == m_direct.end() ? 0 : it->second;
}

std::string Grouping::visibleKey(const std::string &nodeName, const std::set<std::string> &expanded) const
{
    std::vector<std::string> chain;
    for (std::string g = groupOf(nodeName); !g.empty(); g = parentOf(g))
        chain.push_back(g);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        if (!expanded.count(*it))
            return "group:" + *it;
    return nodeName;
}

std::set<std::string> Grouping::initialExpansion(std::size_t budget) const
{
    std::set<std::string> open{""};
    std::size_t visible = directNodes("") + childGroups("").size();
    std::deque<std::string> queue(childGroups("").begin(), childGroups("").end());
    // A view of a handful of boxes says nothing: below this, groups open even past the budget
    // (up to three times it), so a 10,000-node encoder shows its layers, not one "encoder" box.
    constexpr std::size_t kMinUseful = 12;
    while (!queue.empty()) {
        const std::string g = queue.front();
        queue.pop_front();
        const std::size_t grows = directNodes(g) + childGroups(g).size();
        const bool tooFew = visible < kMinUseful && visible + grows - 1 <= 3 * budget;
        if (visible + grows - 1 > budget && !tooFew)
            continue;
        visible += grows - 1;
        open.insert(g);
        for (const std::string &c : childGroups(g))
            queue.push_back(c);
    }
    return open;
}

VisualItem VisualItem::forSide(int side) const
{
    VisualItem v = *this;
    if (side < 0 || side > 1 || !(presentIn & (1u << side)) || kind != Kind::Node)
        return v;
    const VisualContent &c = content[std::size_t(side)];
    v.name = c.name;
    v.title = c.title;
    v.subtitle = c.subtitle;
    v.category = c.category;
    v.constants = c.constants;
    v.hasSubgraphs = c.hasSubgraphs;
    return v;
}

Presentation present(const std::vector<const Graph *> &graphs, const Grouping &grouping,
                     const std::set<std::string> &expanded,
                     const std::unordered_map<std::string, std::string> &alias)
{
    Presentation p;
    p.alias = alias;
    // The visible item a node stands under: its outermost closed group, else itself.
    auto representative = [&](const std::string &nodeName) {
        return grouping.visibleKey(nodeName, expanded);
    };
    // The item key of a node of graph gi: its representative, or the slot it was aliased to.
    auto keyFor = [&](std::size_t gi, const std::string &nodeName) -> std::string {
        std::string rep = representative(nodeName);
        if (gi == 1 && rep == nodeName)
            if (const auto it = alias.find(nodeName);
                it != alias.end() && representative(it->second) == it->second)
                return it->second;
        return rep;
    };
    auto item = [&](const std::string &key, unsigned bit) -> VisualItem & {
        auto [it, inserted] = p.index.emplace(key, p.items.size());
        if (inserted) {
            p.items.emplace_back();
            p.items.back().key = key;
            p.items.back().presentIn = 0;
        }
        VisualItem &v = p.items[it->second];
        v.presentIn |= bit;
        return v;
    };
    std::map<std::string, std::map<OpCategory, std::size_t>> groupCategories;
    // What each If/Loop/Scan's bodies capture from its graph (by graph, then node index): found
    // once, read by the items (weights inside the node) and the edges (producers into it).
    std::vector<std::vector<std::vector<ValueId>>> captured(graphs.size());
    for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
        captured[gi].resize(graphs[gi]->nodeSlots());
        for (NodeId id : graphs[gi]->nodeIds())
            if (graphs[gi]->node(id).hasSubgraphs())
                captured[gi][id.index] = implicitInputs(*graphs[gi], id);
    }

    for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
        const Graph &g = *graphs[gi];
        const unsigned bit = 1u << gi;
        for (ValueId v : g.inputs()) {
            if (g.value(v).initializer)
                continue;
            VisualItem &it = item("in:" + g.value(v).name, bit);
            it.kind = VisualItem::Kind::Input;
            it.title = g.value(v).name;
            it.subtitle = shortType(g.value(v).type);
        }
        // A body's captures: values it reads from an enclosing graph are inputs of the body as
        // drawn (an edge from nowhere otherwise), marked so a double-click can go to the producer.
        for (NodeId id : g.nodeIds())
            for (ValueId v : g.node(id).inputs)
                if (v.valid() && g.value(v).outerScope) {
                    VisualItem &it = item("in:" + g.value(v).name, bit);
                    it.kind = VisualItem::Kind::Input;
                    it.outerScope = true;
                    it.title = g.value(v).name;
                    const std::string type = shortType(g.value(v).type);
                    it.subtitle = (type.empty() ? "" : type + " · ") + "from the enclosing graph";
                }
        for (NodeId id : g.nodeIds()) {
            const Node &n = g.node(id);
            if (isInlinedConstant(g, n))
                continue; // drawn inside its readers
            const std::string rep = keyFor(gi, n.name);
            const bool first = !p.index.count(rep) || !(p.items[p.index.at(rep)].presentIn & ~bit);
            VisualItem &it = item(rep, bit);
            // What the node reads: its inputs and, for an If/Loop/Scan, what its bodies capture
            // from this graph (drawn as edges into the node, weights inside it).
            std::vector<ValueId> reads(n.inputs.begin(), n.inputs.end());
            for (ValueId v : captured[gi][id.index])
                if (std::find(reads.begin(), reads.end(), v) == reads.end())
                    reads.push_back(v);
            for (ValueId in : reads)
                if (in.valid() && g.value(in).producer.valid() && isInlinedConstant(g, g.node(g.value(in).producer)))
                    p.inlined.emplace(g.node(g.value(in).producer).name, rep);
            const OpCategory cat = opCategory(n.opType, n.domain);
            if (!rep.starts_with("group:")) {
                VisualContent &c = it.content[gi];
                c.name = n.name;
                c.title = n.opType;
                c.subtitle = n.name;
                c.category = cat;
                c.hasSubgraphs = n.hasSubgraphs();
                for (ValueId in : reads) {
                    if (!in.valid())
                        continue;
                    const Value &value = g.value(in);
                    if (value.initializer && !value.isGraphInput) {
                        c.constants.push_back(constantLine(value));
                    } else if (value.producer.valid() && isInlinedConstant(g, g.node(value.producer))) {
                        c.constants.push_back(constantNodeLine(value));
                    }
                }
                it.kind = VisualItem::Kind::Node;
                it.node[gi] = id;
                if (first) { // the item's own face: graph 0's when it has the node
                    it.name = c.name;
                    it.title = c.title;
                    it.subtitle = c.subtitle;
                    it.category = c.category;
                    it.constants = c.constants;
                    it.hasSubgraphs = c.hasSubgraphs;
                    it.groupPath = grouping.groupOf(rep);
                }
            } else {
                const std::string path = rep.substr(6);
                it.kind = VisualItem::Kind::Group;
                it.groupPath = path;
                const auto slash = path.rfind('/');
                it.title = slash == std::string::npos ? path : path.substr(slash + 1);
                it.members = grouping.size(path);
                // The enclosing scope in the subtitle: twelve "attention" boxes of a transformer
                // read as layer.0 … layer.11, not as twelve copies of one name.
                std::string context;
                if (slash != std::string::npos && slash > 0) {
                    const std::string parent = path.substr(0, slash);
                    const auto up = parent.rfind('/');
                    context = (up == std::string::npos ? parent : parent.substr(up + 1)) + " · ";
                }
                it.subtitle = context + std::to_string(it.members) + " nodes";
                if (gi == 0 || !(it.presentIn & 1))
                    ++groupCategories[rep][cat];
            }
        }
        for (ValueId v : g.outputs()) {
            VisualItem &it = item("out:" + g.value(v).name, bit);
            it.kind = VisualItem::Kind::Output;
            it.title = g.value(v).name;
            it.subtitle = shortType(g.value(v).type);
        }
    }
    for (auto &[key, cats] : groupCategories) {
        OpCategory best = OpCategory::Other;
        std::size_t most = 0;
        for (const auto &[c, n] : cats)
            if (n > most && c != OpCategory::ShapeLayout && c != OpCategory::Elementwise)
                best = c, most = n;
        p.items[p.index[key]].category = most ? best : cats.begin()->first;
    }

    // Edges: producer (or graph input) → consumer (or graph output), between representatives.
    std::map<std::tuple<std::size_t, std::size_t, std::string>, std::size_t> edgeIndex;
    auto edge = [&](const std::string &fromKey, const std::string &toKey, const Value &v, unsigned bit) {
        const auto f = p.index.find(fromKey), t = p.index.find(toKey);
        if (f == p.index.end() || t == p.index.end() || f->second == t->second)
            return;
        auto [it, inserted] = edgeIndex.emplace(std::tuple(f->second, t->second, v.name), p.edges.size());
        if (inserted)
            p.edges.push_back({f->second, t->second, v.name, shortType(v.type), 0});
        p.edges[it->second].presentIn |= bit;
    };
    for (std::size_t gi = 0; gi < graphs.size(); ++gi) {
        const Graph &g = *graphs[gi];
        const unsigned bit = 1u << gi;
        auto sourceKey = [&](ValueId v) -> std::string {
            const NodeId prod = g.producer(v);
            if (prod.valid())
                return keyFor(gi, g.node(prod).name);
            if ((g.value(v).isGraphInput && !g.value(v).initializer) || g.value(v).outerScope)
                return "in:" + g.value(v).name;
            return {};
        };
        for (NodeId id : g.nodeIds()) {
            const Node &n = g.node(id);
            const std::string to = keyFor(gi, n.name);
            for (ValueId v : n.inputs)
                if (v.valid())
                    if (const std::string from = sourceKey(v); !from.empty())
                        edge(from, to, g.value(v), bit);
            // A body's captures are inputs of its node as much as the listed ones: without these
            // edges the producers of what an If reads inside its branches float unconnected.
            for (ValueId v : captured[gi][id.index])
                if (const std::string from = sourceKey(v); !from.empty())
                    edge(from, to, g.value(v), bit);
        }
        for (ValueId v : g.outputs())
            if (const std::string from = sourceKey(v); !from.empty())
                edge(from, "out:" + g.value(v).name, g.value(v), bit);
    }
    return p;
}

LayoutRequest layoutRequest(const Presentation &p, const std::function<Point(const VisualItem &)> &size)
{
    LayoutRequest r;
    r.nodes.reserve(p.items.size());
    for (const VisualItem &it : p.items) {
        const Point s = size(it);
        r.nodes.push_back({s.x, s.y});
    }
    for (const VisualEdge &e : p.edges)
        r.edges.push_back({e.from, e.to});
    r.fast = p.items.size() > 400;
    return r;
}

} // namespace opscope::layout
