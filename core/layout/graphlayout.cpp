// The only file that includes Graphviz: its headers define MIN/MAX/TRUE/FALSE.
#include "layout/graphlayout.h"

#include <cstdio>
#include <gvc.h>
#include <map>
#include <mutex>
#include <string>

namespace opscope::layout {

namespace {

std::mutex &graphvizMutex()
{
    static std::mutex m;
    return m;
}

GVC_t *context()
{
    static GVC_t *gvc = [] {
        agseterr(AGERR); // per-node warnings are noise here
        return gvContext();
    }();
    return gvc;
}

void set(void *object, const char *name, const std::string &value)
{
    agsafeset(object, const_cast<char *>(name), const_cast<char *>(value.c_str()), const_cast<char *>(""));
}

std::string inches(double points)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", points / 72.0);
    return buf;
}

} // namespace

Expected<LayoutResult> layoutWithGraphviz(const LayoutRequest &request)
{
    const std::lock_guard lock(graphvizMutex());
    GVC_t *gvc = context();
    if (!gvc)
        return Status::internal("Graphviz could not create its context");
    Agraph_t *g = agopen(const_cast<char *>("g"), Agdirected, nullptr);
    set(g, "rankdir", "TB");
    set(g, "nodesep", "0.25");
    set(g, "ranksep", "0.35");
    set(g, "splines", "spline");
    if (request.fast) {
        set(g, "nslimit", "0.1");
        set(g, "nslimit1", "0.1");
        set(g, "mclimit", "0.1");
    }
    // Attribute defaults once, values per node.
    agattr(g, AGNODE, const_cast<char *>("shape"), const_cast<char *>("box"));
    agattr(g, AGNODE, const_cast<char *>("fixedsize"), const_cast<char *>("true"));
    agattr(g, AGNODE, const_cast<char *>("label"), const_cast<char *>(""));
    Agsym_t *widthSym = agattr(g, AGNODE, const_cast<char *>("width"), const_cast<char *>("1"));
    Agsym_t *heightSym = agattr(g, AGNODE, const_cast<char *>("height"), const_cast<char *>("0.5"));

    std::vector<Agnode_t *> nodes(request.nodes.size());
    for (std::size_t i = 0; i < request.nodes.size(); ++i) {
        nodes[i] = agnode(g, const_cast<char *>(("n" + std::to_string(i)).c_str()), 1);
        agxset(nodes[i], widthSym, const_cast<char *>(inches(request.nodes[i].width).c_str()));
        agxset(nodes[i], heightSym, const_cast<char *>(inches(request.nodes[i].height).c_str()));
    }
    // One Graphviz edge per node pair; request edges between the same pair share its spline.
    std::map<std::pair<std::size_t, std::size_t>, Agedge_t *> byPair;
    std::vector<Agedge_t *> edges(request.edges.size(), nullptr);
    for (std::size_t i = 0; i < request.edges.size(); ++i) {
        const auto &e = request.edges[i];
        if (e.from >= nodes.size() || e.to >= nodes.size() || e.from == e.to)
            continue;
        auto [it, inserted] = byPair.emplace(std::pair(e.from, e.to), nullptr);
        if (inserted)
            it->second = agedge(g, nodes[e.from], nodes[e.to], nullptr, 1);
        edges[i] = it->second;
    }

    if (gvLayout(gvc, g, "dot") != 0) {
        agclose(g);
        return Status::internal("Graphviz dot failed to lay out the graph");
    }
    LayoutResult r;
    const boxf bb = GD_bb(g);
    r.width = bb.UR.x - bb.LL.x;
    r.height = bb.UR.y - bb.LL.y;
    auto flip = [&](pointf p) { return Point{p.x - bb.LL.x, bb.UR.y - p.y}; };
    r.centers.reserve(nodes.size());
    for (Agnode_t *n : nodes)
        r.centers.push_back(flip(ND_coord(n)));
    r.edges.resize(edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i) {
        Agedge_t *e = edges[i];
        if (!e || !ED_spl(e) || ED_spl(e)->size == 0)
            continue;
        const bezier &bz = ED_spl(e)->list[0];
        std::vector<Point> &path = r.edges[i];
        for (int k = 0; k < bz.size; ++k)
            path.push_back(flip(bz.list[k]));
        if (bz.eflag && !path.empty()) {
            // End at the arrow tip rather than where dot stopped the spline for its arrowhead.
            const Point tip = flip(bz.ep);
            const Point last = path.back();
            path.push_back(last);
            path.push_back(tip);
            path.push_back(tip);
        }
    }
    gvFreeLayout(gvc, g);
    agclose(g);
    return r;
}

} // namespace opscope::layout
