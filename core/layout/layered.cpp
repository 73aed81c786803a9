#include "layout/layered.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <unordered_map>

namespace opscope::layout {

namespace {

using Index = std::uint32_t;
constexpr Index kNone = ~Index(0);

constexpr double kNodeSep = 18.0;  // points between items in a layer (dot's nodesep 0.25 in)
constexpr double kDummySep = 8.0;  // between two edges passing through a layer
constexpr double kDummyWidth = 4.0;
constexpr double kRankSep = 30.0;
// Dummy points are one per edge per layer crossed; past this an edge is drawn straight instead
// (a 10,000-item graph with long skips stays well below it).
constexpr std::size_t kMaxDummies = 400000;

// One edge between two items in layout orientation (from above to below); request edges between
// the same pair share it.
struct Link
{
    Index from = 0, to = 0;
    bool reversed = false; // drawn from `to` to `from` in the request
    Index firstDummy = kNone;
    Index dummies = 0;
};

struct Virtual
{
    std::vector<Index> layer;
    std::vector<double> width, height;
    std::vector<bool> dummy;
    std::vector<std::vector<Index>> up, down; // neighbours one layer above / below
};

// Reverses the edges that close a cycle (DFS back edges), so layering sees a DAG.
void breakCycles(std::size_t n, std::vector<Link> &links)
{
    std::vector<std::vector<Index>> out(n);
    for (Index i = 0; i < links.size(); ++i)
        out[links[i].from].push_back(i);
    std::vector<std::uint8_t> state(n, 0); // 0 new, 1 on the stack, 2 done
    std::vector<std::pair<Index, std::size_t>> stack;
    for (Index root = 0; root < n; ++root) {
        if (state[root])
            continue;
        stack.emplace_back(root, 0);
        state[root] = 1;
        while (!stack.empty()) {
            auto &[v, next] = stack.back();
            if (next == out[v].size()) {
                state[v] = 2;
                stack.pop_back();
                continue;
            }
            Link &l = links[out[v][next++]];
            if (state[l.to] == 1)
                l.reversed = true;
            else if (state[l.to] == 0) {
                state[l.to] = 1;
                stack.emplace_back(l.to, 0);
            }
        }
    }
    for (Link &l : links)
        if (l.reversed)
            std::swap(l.from, l.to);
}

// Longest path from the sources; then each source moves down to just above its first reader, so
// a weight or an input sits next to the op that uses it instead of at the top of the graph.
std::vector<Index> assignLayers(std::size_t n, const std::vector<Link> &links)
{
    std::vector<std::vector<Index>> out(n);
    std::vector<Index> indegree(n, 0);
    for (const Link &l : links) {
        out[l.from].push_back(l.to);
        ++indegree[l.to];
    }
    std::vector<Index> layer(n, 0), queue;
    queue.reserve(n);
    for (Index v = 0; v < n; ++v)
        if (indegree[v] == 0)
            queue.push_back(v);
    for (std::size_t head = 0; head < queue.size(); ++head) {
        const Index v = queue[head];
        for (Index w : out[v]) {
            layer[w] = std::max(layer[w], layer[v] + 1);
            if (--indegree[w] == 0)
                queue.push_back(w);
        }
    }
    std::vector<bool> hasPred(n, false);
    for (const Link &l : links)
        hasPred[l.to] = true;
    for (Index v = 0; v < n; ++v) {
        if (hasPred[v] || out[v].empty())
            continue;
        Index first = kNone;
        for (Index w : out[v])
            first = std::min(first, layer[w]);
        layer[v] = first - 1;
    }
    return layer;
}

Virtual buildVirtual(const LayoutRequest &request, std::vector<Link> &links, const std::vector<Index> &layer)
{
    Virtual g;
    const std::size_t n = request.nodes.size();
    g.layer = layer;
    for (const auto &node : request.nodes) {
        g.width.push_back(std::max(0.0, node.width));
        g.height.push_back(std::max(0.0, node.height));
    }
    g.dummy.assign(n, false);
    g.up.resize(n);
    g.down.resize(n);
    std::size_t dummies = 0;
    for (Link &l : links) {
        const Index span = layer[l.to] - layer[l.from];
        Index prev = l.from;
        if (span > 1 && dummies + span - 1 <= kMaxDummies) {
            l.firstDummy = Index(g.layer.size());
            l.dummies = span - 1;
            dummies += span - 1;
            for (Index k = 1; k < span; ++k) {
                const Index d = Index(g.layer.size());
                g.layer.push_back(layer[l.from] + k);
                g.width.push_back(kDummyWidth);
                g.height.push_back(0.0);
                g.dummy.push_back(true);
                g.up.push_back({prev});
                g.down.emplace_back();
                g.down[prev].push_back(d);
                prev = d;
            }
        }
        if (span == 1 || l.dummies) {
            g.down[prev].push_back(l.to);
            g.up[l.to].push_back(prev);
        }
    }
    return g;
}

// Initial order: depth first from the sources, so chains and branches start out contiguous.
std::vector<std::vector<Index>> initialOrder(const Virtual &g, Index layers)
{
    std::vector<std::vector<Index>> order(layers);
    std::vector<bool> seen(g.layer.size(), false);
    std::vector<Index> stack;
    auto visit = [&](Index root) {
        stack.push_back(root);
        while (!stack.empty()) {
            const Index v = stack.back();
            stack.pop_back();
            if (seen[v])
                continue;
            seen[v] = true;
            order[g.layer[v]].push_back(v);
            for (auto it = g.down[v].rbegin(); it != g.down[v].rend(); ++it)
                if (!seen[*it])
                    stack.push_back(*it);
        }
    };
    for (Index v = 0; v < g.layer.size(); ++v)
        if (g.up[v].empty())
            visit(v);
    for (Index v = 0; v < g.layer.size(); ++v)
        visit(v);
    return order;
}

// Crossings between consecutive layers: inversions among the edges sorted by their upper end.
std::uint64_t crossings(const Virtual &g, const std::vector<std::vector<Index>> &order, const std::vector<Index> &pos)
{
    std::uint64_t total = 0;
    std::vector<std::pair<Index, Index>> edges;
    std::vector<std::uint32_t> tree;
    for (std::size_t l = 0; l + 1 < order.size(); ++l) {
        edges.clear();
        for (Index v : order[l])
            for (Index w : g.down[v])
                edges.emplace_back(pos[v], pos[w]);
        std::sort(edges.begin(), edges.end());
        const std::size_t m = order[l + 1].size();
        tree.assign(m + 1, 0);
        std::uint64_t seen = 0;
        for (const auto &[a, b] : edges) {
            // Edges already counted whose lower end lies right of b cross this one.
            std::uint64_t notRight = 0;
            for (std::size_t i = b + 1; i > 0; i -= i & (~i + 1))
                notRight += tree[i];
            total += seen - notRight;
            for (std::size_t i = b + 1; i <= m; i += i & (~i + 1))
                ++tree[i];
            ++seen;
        }
    }
    return total;
}

void reorder(const Virtual &g, std::vector<std::vector<Index>> &order, std::vector<Index> &pos, int sweeps)
{
    auto refreshPositions = [&] {
        for (const auto &layer : order)
            for (Index i = 0; i < layer.size(); ++i)
                pos[layer[i]] = i;
    };
    refreshPositions();
    std::vector<std::vector<Index>> best = order;
    std::uint64_t bestCrossings = crossings(g, order, pos);
    std::vector<std::pair<double, Index>> keyed;
    auto sortLayer = [&](std::vector<Index> &layer, const std::vector<std::vector<Index>> &neighbours) {
        keyed.clear();
        for (Index v : layer) {
            const auto &nb = neighbours[v];
            double key = pos[v];
            if (!nb.empty()) {
                double sum = 0.0;
                for (Index u : nb)
                    sum += pos[u];
                key = sum / double(nb.size());
            }
            keyed.emplace_back(key, v);
        }
        std::stable_sort(keyed.begin(), keyed.end(),
                         [](const auto &a, const auto &b) { return a.first < b.first; });
        for (Index i = 0; i < layer.size(); ++i) {
            layer[i] = keyed[i].second;
            pos[layer[i]] = i;
        }
    };
    for (int s = 0; s < sweeps && bestCrossings > 0; ++s) {
        if (s % 2 == 0)
            for (std::size_t l = 1; l < order.size(); ++l)
                sortLayer(order[l], g.up);
        else
            for (std::size_t l = order.size() - 1; l-- > 0;)
                sortLayer(order[l], g.down);
        const std::uint64_t c = crossings(g, order, pos);
        if (c < bestCrossings) {
            bestCrossings = c;
            best = order;
        }
    }
    order = std::move(best);
    refreshPositions();
}

double separation(const Virtual &g, Index a, Index b)
{
    return (g.width[a] + g.width[b]) / 2.0 + (g.dummy[a] && g.dummy[b] ? kDummySep : kNodeSep);
}

// Places one layer as close to `target` as the spacing allows, minimising the weighted squared
// distance: with offsets o_i (the packed spacing), y_i = x_i - o_i must be non-decreasing, which
// is isotonic regression, solved exactly by pooling adjacent violators.
void placeLayer(const Virtual &g, const std::vector<Index> &layer, const std::vector<double> &target,
                const std::vector<double> &weight, std::vector<double> &x)
{
    struct Block
    {
        double w, wz;
        Index count;
    };
    std::vector<Block> blocks;
    blocks.reserve(layer.size());
    std::vector<double> offset(layer.size(), 0.0);
    for (std::size_t i = 0; i < layer.size(); ++i) {
        if (i)
            offset[i] = offset[i - 1] + separation(g, layer[i - 1], layer[i]);
        blocks.push_back({weight[i], weight[i] * (target[i] - offset[i]), 1});
        while (blocks.size() > 1) {
            const Block &top = blocks.back(), &prev = blocks[blocks.size() - 2];
            if (prev.wz / prev.w < top.wz / top.w)
                break;
            const Block merged{prev.w + top.w, prev.wz + top.wz, prev.count + top.count};
            blocks.pop_back();
            blocks.back() = merged;
        }
    }
    std::size_t i = 0;
    for (const Block &b : blocks)
        for (Index k = 0; k < b.count; ++k, ++i)
            x[layer[i]] = b.wz / b.w + offset[i];
}

std::vector<double> assignX(const Virtual &g, const std::vector<std::vector<Index>> &order, int sweeps)
{
    std::vector<double> x(g.layer.size(), 0.0);
    for (const auto &layer : order)
        for (std::size_t i = 1; i < layer.size(); ++i)
            x[layer[i]] = x[layer[i - 1]] + separation(g, layer[i - 1], layer[i]);
    std::vector<double> target, weight;
    auto pass = [&](const std::vector<Index> &layer, bool useUp, bool useDown) {
        target.assign(layer.size(), 0.0);
        weight.assign(layer.size(), 0.0);
        for (std::size_t i = 0; i < layer.size(); ++i) {
            const Index v = layer[i];
            double sum = 0.0;
            std::size_t count = 0;
            if (useUp)
                for (Index u : g.up[v])
                    sum += x[u], ++count;
            if (useDown)
                for (Index w : g.down[v])
                    sum += x[w], ++count;
            target[i] = count ? sum / double(count) : x[v];
            // Dummy chains weigh most (straight long edges), items without neighbours least.
            weight[i] = count == 0 ? 0.05 : g.dummy[v] ? 8.0 : 1.0;
        }
        placeLayer(g, layer, target, weight, x);
    };
    for (int s = 0; s < sweeps; ++s) {
        const bool last = s + 2 >= sweeps;
        if (s % 2 == 0)
            for (std::size_t l = 1; l < order.size(); ++l)
                pass(order[l], true, last);
        else
            for (std::size_t l = order.size() - 1; l-- > 0;)
                pass(order[l], last, true);
    }
    return x;
}

} // namespace

LayoutResult layoutLayered(const LayoutRequest &request)
{
    const std::size_t n = request.nodes.size();
    LayoutResult r;
    r.centers.resize(n);
    r.edges.resize(request.edges.size());
    if (n == 0)
        return r;

    std::vector<Link> links;
    std::vector<Index> linkOf(request.edges.size(), kNone);
    std::unordered_map<std::uint64_t, Index> byPair;
    for (std::size_t i = 0; i < request.edges.size(); ++i) {
        const auto &e = request.edges[i];
        if (e.from >= n || e.to >= n || e.from == e.to)
            continue;
        const auto [it, inserted] = byPair.emplace(std::uint64_t(e.from) * n + e.to, Index(links.size()));
        if (inserted)
            links.push_back({Index(e.from), Index(e.to)});
        linkOf[i] = it->second;
    }
    breakCycles(n, links);
    const std::vector<Index> layer = assignLayers(n, links);
    Virtual g = buildVirtual(request, links, layer);
    const Index layers = *std::max_element(layer.begin(), layer.end()) + 1;

    std::vector<std::vector<Index>> order = initialOrder(g, layers);
    std::vector<Index> pos(g.layer.size(), 0);
    // Fewer sweeps on huge graphs keeps the fallback fast; small ones get the tidiest order.
    const std::size_t work = g.layer.size() + links.size();
    const int sweeps = work > 200000 ? 4 : work > 50000 ? 8 : 16;
    reorder(g, order, pos, sweeps);
    std::vector<double> x = assignX(g, order, sweeps);

    std::vector<double> top(layers, 0.0), rankHeight(layers, 0.0);
    for (Index v = 0; v < n; ++v)
        rankHeight[g.layer[v]] = std::max(rankHeight[g.layer[v]], g.height[v]);
    for (Index l = 1; l < layers; ++l)
        top[l] = top[l - 1] + rankHeight[l - 1] + kRankSep;
    double minX = x[0] - g.width[0] / 2, maxX = x[0] + g.width[0] / 2;
    for (Index v = 1; v < g.layer.size(); ++v) {
        minX = std::min(minX, x[v] - g.width[v] / 2);
        maxX = std::max(maxX, x[v] + g.width[v] / 2);
    }
    auto at = [&](Index v) { return Point{x[v] - minX, top[g.layer[v]] + rankHeight[g.layer[v]] / 2}; };
    for (Index v = 0; v < n; ++v)
        r.centers[v] = at(v);
    r.width = maxX - minX;
    r.height = top[layers - 1] + rankHeight[layers - 1];

    std::vector<std::vector<Point>> paths(links.size());
    for (Index i = 0; i < links.size(); ++i) {
        const Link &l = links[i];
        std::vector<Point> through;
        Point start = at(l.from), end = at(l.to);
        start.y += g.height[l.from] / 2;
        end.y -= g.height[l.to] / 2;
        through.push_back(start);
        for (Index k = 0; k < l.dummies; ++k)
            through.push_back(at(l.firstDummy + k));
        through.push_back(end);
        std::vector<Point> &path = paths[i];
        path.push_back(through.front());
        for (std::size_t k = 0; k + 1 < through.size(); ++k) {
            const Point a = through[k], b = through[k + 1];
            const double dy = (b.y - a.y) / 2;
            path.push_back({a.x, a.y + dy});
            path.push_back({b.x, b.y - dy});
            path.push_back(b);
        }
        if (l.reversed)
            std::reverse(path.begin(), path.end());
    }
    for (std::size_t i = 0; i < request.edges.size(); ++i)
        if (linkOf[i] != kNone)
            r.edges[i] = paths[linkOf[i]];
    return r;
}

} // namespace opscope::layout
