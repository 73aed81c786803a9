#pragma once
// Where each edge's label ("float32[1,64,56,56]") goes: on its own edge, covering no item and no
// other label.
//
// Drawn at the middle of its edge, a label collides with its neighbours wherever edges run close:
// a node with several outputs (TopK, Split) or one tensor read by several nodes sends all its edges
// through the same gap between two ranks, and their midpoints sit side by side in it, closer than
// a label is wide. Graphviz would make room by giving every label a node of its own, which widens
// every layout (and the quick layered layout has nothing like it). Instead each label slides along
// its edge, to the right or the left of it, to the free spot nearest the middle that crosses the
// fewest other edges (so a fan-out's labels go to its outer sides, not into the space between two
// edges that both need it); a label with no free spot is left out — its edge's tooltip says it.
//
//            ┌──────┐                          ┌──────┐
//            │ TopK │                          │ TopK │
//            └┬────┬┘                          └┬────┬┘
//            ╱      ╲                          ╱      ╲
//  f32[1,5]█i64[1,5]   ← on one another   f32[1,5]   i64[1,5]   ← each on its outer side
//          ╱          ╲                      ╱          ╲
//         ▼            ▼                    ▼            ▼
//
// Shortest edges choose first: they have the fewest places to go.

#include "layout/graphlayout.h"

#include <optional>
#include <vector>

namespace opscope::layout {

struct Box
{
    double x0 = 0.0, y0 = 0.0, x1 = 0.0, y1 = 0.0;
    bool overlaps(const Box &o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// `splines[i]`: edge i as LayoutResult gives it (start, then c1, c2, end triples). `labelSizes[i]`:
// its label's width and height in points (zero width: no label). `obstacles`: the items' boxes.
// Returns per edge the label's box, or nothing where it is left out. Placed boxes overlap no
// obstacle and no other placed box.
std::vector<std::optional<Box>> placeEdgeLabels(const std::vector<std::vector<Point>> &splines,
                                                const std::vector<Point> &labelSizes,
                                                const std::vector<Box> &obstacles);

} // namespace opscope::layout
