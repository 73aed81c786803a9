#pragma once
// Graph layout by Graphviz's dot (top to bottom), as plain data: node centres and edge splines in
// points, y down, origin at the top left. Graphviz is not thread-safe: calls are serialized here,
// and the app runs them on one worker thread.

#include "util/status.h"

#include <cstddef>
#include <vector>

namespace opscope::layout {

struct Point
{
    double x = 0.0, y = 0.0;
    friend bool operator==(const Point &, const Point &) = default;
};

struct LayoutRequest
{
    struct Node
    {
        double width = 0.0, height = 0.0; // points
    };
    struct Edge
    {
        std::size_t from = 0, to = 0;
    };
    std::vector<Node> nodes;
    std::vector<Edge> edges;
    // Big graphs: bound dot's network-simplex iterations (slightly less tidy, much faster).
    bool fast = false;
};

struct LayoutResult
{
    std::vector<Point> centers;            // per request node
    std::vector<std::vector<Point>> edges; // per request edge: cubic Bézier, start then (c1, c2, end)…
    double width = 0.0, height = 0.0;
};

Expected<LayoutResult> layoutWithGraphviz(const LayoutRequest &request);

} // namespace opscope::layout
