#include "layout/edgelabels.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace opscope::layout {
namespace {

// Boxes in a uniform grid of buckets, so that a model with 10,000 edges tests each candidate
// against its neighbours only.
class BoxGrid
{
public:
    bool hits(const Box &b) const
    {
        bool hit = false;
        forCells(b, [&](std::int64_t key) {
            const auto it = m_cells.find(key);
            if (it == m_cells.end())
                return;
            for (std::size_t i : it->second)
                if (m_boxes[i].overlaps(b))
                    hit = true;
        });
        return hit;
    }
    // Points (other edges' samples) inside `b`, not counting those of edge `own`.
    int pointsIn(const Box &b, std::size_t own) const
    {
        int n = 0;
        forCells(b, [&](std::int64_t key) {
            const auto it = m_points.find(key);
            if (it == m_points.end())
                return;
            for (const auto &[p, edge] : it->second)
                n += edge != own && p.x >= b.x0 && p.x < b.x1 && p.y >= b.y0 && p.y < b.y1;
        });
        return n;
    }
    void addPoint(const Point &p, std::size_t edge)
    {
        m_points[key(cell(p.x), cell(p.y))].emplace_back(p, edge);
    }
    void add(const Box &b)
    {
        const std::size_t index = m_boxes.size();
        m_boxes.push_back(b);
        forCells(b, [&](std::int64_t key) { m_cells[key].push_back(index); });
    }

private:
    static constexpr double kCell = 96.0;
    static std::int64_t cell(double v) { return static_cast<std::int64_t>(std::floor(v / kCell)); }
    static std::int64_t key(std::int64_t cx, std::int64_t cy) { return (cx << 32) ^ (cy & 0xffffffff); }
    template <class F> static void forCells(const Box &b, F &&f)
    {
        for (std::int64_t cx = cell(b.x0); cx <= cell(b.x1); ++cx)
            for (std::int64_t cy = cell(b.y0); cy <= cell(b.y1); ++cy)
                f(key(cx, cy));
    }
    std::vector<Box> m_boxes;
    std::unordered_map<std::int64_t, std::vector<std::size_t>> m_cells;
    std::unordered_map<std::int64_t, std::vector<std::pair<Point, std::size_t>>> m_points;
};

Point bezier(const Point &a, const Point &b, const Point &c, const Point &d, double t)
{
    const double u = 1.0 - t;
    const double wa = u * u * u, wb = 3 * u * u * t, wc = 3 * u * t * t, wd = t * t * t;
    return {wa * a.x + wb * b.x + wc * c.x + wd * d.x, wa * a.y + wb * b.y + wc * c.y + wd * d.y};
}

// The path as a polyline of samples with their running arc length.
struct Samples
{
    std::vector<Point> points;
    std::vector<double> length;
    double total() const { return length.empty() ? 0.0 : length.back(); }
    Point at(double s) const
    {
        const auto it = std::lower_bound(length.begin(), length.end(), s);
        if (it == length.begin())
            return points.front();
        if (it == length.end())
            return points.back();
        const std::size_t i = static_cast<std::size_t>(it - length.begin());
        const double span = length[i] - length[i - 1];
        const double f = span > 0 ? (s - length[i - 1]) / span : 0.0;
        return {points[i - 1].x + f * (points[i].x - points[i - 1].x),
                points[i - 1].y + f * (points[i].y - points[i - 1].y)};
    }
};

Samples sample(const std::vector<Point> &spline)
{
    Samples s;
    if (spline.empty())
        return s;
    s.points.push_back(spline[0]);
    s.length.push_back(0.0);
    for (std::size_t i = 1; i + 2 < spline.size(); i += 3) {
        // About one sample per 4 points of the control polygon: the chords stay within a fraction
        // of a point of the curve, also on dot's long skip-edge segments.
        const double hull = std::hypot(spline[i].x - spline[i - 1].x, spline[i].y - spline[i - 1].y) +
                            std::hypot(spline[i + 1].x - spline[i].x, spline[i + 1].y - spline[i].y) +
                            std::hypot(spline[i + 2].x - spline[i + 1].x, spline[i + 2].y - spline[i + 1].y);
        const int steps = std::isfinite(hull) ? std::clamp(int(hull / 4.0), 4, 256) : 4;
        for (int k = 1; k <= steps; ++k) {
            const Point p = bezier(spline[i - 1], spline[i], spline[i + 1], spline[i + 2], double(k) / steps);
            const Point &q = s.points.back();
            s.length.push_back(s.length.back() + std::hypot(p.x - q.x, p.y - q.y));
            s.points.push_back(p);
        }
    }
    return s;
}

bool finite(const Box &b)
{
    return std::isfinite(b.x0) && std::isfinite(b.y0) && std::isfinite(b.x1) && std::isfinite(b.y1);
}

} // namespace

std::vector<std::optional<Box>> placeEdgeLabels(const std::vector<std::vector<Point>> &splines,
                                                const std::vector<Point> &labelSizes,
                                                const std::vector<Box> &obstacles)
{
    std::vector<std::optional<Box>> placed(splines.size());
    BoxGrid taken;
    for (const Box &b : obstacles)
        if (finite(b))
            taken.add(b);

    std::vector<Samples> paths(splines.size());
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < splines.size() && i < labelSizes.size(); ++i) {
        if (!(labelSizes[i].x > 0) || !(labelSizes[i].y > 0))
            continue;
        paths[i] = sample(splines[i]);
        if (paths[i].points.size() >= 2 && std::isfinite(paths[i].total()))
            order.push_back(i);
    }
    for (std::size_t i = 0; i < splines.size(); ++i) { // every edge, labelled or not, can be crossed
        const Samples s = paths[i].points.empty() ? sample(splines[i]) : paths[i];
        for (const Point &p : s.points)
            if (std::isfinite(p.x) && std::isfinite(p.y))
                taken.addPoint(p, i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return paths[a].total() < paths[b].total(); });

    // Fractions of the edge's length, nearest the middle first.
    static constexpr double kAlong[] = {0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.12, 0.88};
    constexpr double kGap = 4.0;  // between the edge and its label
    // Between two labels: side by side they must not read as one string ("int64[2,3,5]float32[…").
    constexpr double kPadX = 8.0, kPadY = 1.0;
    for (std::size_t i : order) {
        const double w = labelSizes[i].x, h = labelSizes[i].y;
        // Of the free spots, the one nearest the middle that crosses the fewest other edges: a
        // label between two edges of a fan-out takes the room its neighbour's label needs, one on
        // the outer side does not.
        int fewest = std::numeric_limits<int>::max();
        for (double f : kAlong) {
            const Point p = paths[i].at(f * paths[i].total());
            const Box right{p.x + kGap, p.y - h / 2, p.x + kGap + w, p.y + h / 2};
            const Box left{p.x - kGap - w, p.y - h / 2, p.x - kGap, p.y + h / 2};
            for (const Box &b : {right, left}) {
                const Box padded{b.x0 - kPadX, b.y0 - kPadY, b.x1 + kPadX, b.y1 + kPadY};
                if (taken.hits(padded))
                    continue;
                if (const int crossed = taken.pointsIn(b, i); crossed < fewest) {
                    fewest = crossed;
                    placed[i] = b;
                }
            }
            if (fewest == 0)
                break;
        }
        if (placed[i])
            taken.add(*placed[i]);
    }
    return placed;
}

} // namespace opscope::layout
