#include "layout/sidelayout.h"

#include <algorithm>
#include <limits>

namespace opscope::layout {

namespace {

bool countsForMatching(const VisualItem &v)
{
    return v.kind == VisualItem::Kind::Node || v.kind == VisualItem::Kind::Group;
}

// Request node of each item on one side (npos when absent), in the order layoutRequestBySide
// writes them.
std::array<std::vector<std::size_t>, 2> requestIndex(const Presentation &p)
{
    constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    std::array<std::vector<std::size_t>, 2> index;
    std::size_t next = 0;
    for (int side = 0; side < 2; ++side) {
        index[side].assign(p.items.size(), none);
        for (std::size_t i = 0; i < p.items.size(); ++i)
            if (p.items[i].presentIn & (1u << side))
                index[side][i] = next++;
    }
    return index;
}

bool edgeOnSide(const Presentation &p, const VisualEdge &e, int side)
{
    const unsigned bit = 1u << side;
    return (e.presentIn & bit) && (p.items[e.from].presentIn & bit) && (p.items[e.to].presentIn & bit);
}

} // namespace

bool sharesLittle(const Presentation &p)
{
    std::size_t only[2] = {0, 0}, shared = 0;
    for (const VisualItem &v : p.items) {
        if (!countsForMatching(v))
            continue;
        if ((v.presentIn & 3u) == 3u)
            ++shared;
        else if (v.presentIn & 1u)
            ++only[0];
        else if (v.presentIn & 2u)
            ++only[1];
    }
    const std::size_t smaller = std::min(only[0], only[1]) + shared;
    return smaller > 0 && 2 * shared < smaller;
}

LayoutRequest layoutRequestBySide(const Presentation &p, const std::function<Point(const VisualItem &)> &size)
{
    const auto index = requestIndex(p);
    LayoutRequest r;
    for (int side = 0; side < 2; ++side)
        for (const VisualItem &v : p.items)
            if (v.presentIn & (1u << side)) {
                const Point s = size(v); // the box the scene draws (GraphScene sizes the union item)
                r.nodes.push_back({s.x, s.y});
            }
    for (int side = 0; side < 2; ++side)
        for (const VisualEdge &e : p.edges)
            if (edgeOnSide(p, e, side))
                r.edges.push_back({index[side][e.from], index[side][e.to]});
    r.fast = r.nodes.size() > 400;
    return r;
}

std::array<LayoutResult, 2> splitBySide(const Presentation &p, const LayoutRequest &request,
                                        const LayoutResult &combined)
{
    const auto index = requestIndex(p);
    std::array<LayoutResult, 2> out;
    std::size_t requestEdge = 0;
    for (int side = 0; side < 2; ++side) {
        LayoutResult &r = out[side];
        r.centers.assign(p.items.size(), Point{});
        r.edges.assign(p.edges.size(), {});
        double left = std::numeric_limits<double>::max(), top = left, right = -left, bottom = -left;
        auto grow = [&](Point c, double halfW, double halfH) {
            left = std::min(left, c.x - halfW);
            right = std::max(right, c.x + halfW);
            top = std::min(top, c.y - halfH);
            bottom = std::max(bottom, c.y + halfH);
        };
        for (std::size_t i = 0; i < p.items.size(); ++i) {
            const std::size_t k = index[side][i];
            if (k >= request.nodes.size() || k >= combined.centers.size())
                continue;
            r.centers[i] = combined.centers[k];
            grow(r.centers[i], request.nodes[k].width / 2, request.nodes[k].height / 2);
        }
        for (std::size_t e = 0; e < p.edges.size(); ++e) {
            if (!edgeOnSide(p, p.edges[e], side))
                continue;
            if (requestEdge < combined.edges.size()) {
                r.edges[e] = combined.edges[requestEdge];
                for (const Point &pt : r.edges[e])
                    grow(pt, 0, 0);
            }
            ++requestEdge;
        }
        if (left > right)
            continue; // nothing on this side
        // Each side from the origin, as a layout of its own would be (the same margin dot leaves).
        const double dx = 4.0 - left, dy = 4.0 - top;
        for (Point &c : r.centers)
            c = {c.x + dx, c.y + dy};
        for (auto &path : r.edges)
            for (Point &pt : path)
                pt = {pt.x + dx, pt.y + dy};
        r.width = right - left + 8.0;
        r.height = bottom - top + 8.0;
    }
    return out;
}

} // namespace opscope::layout
