#pragma once
// A layout per side for two graphs that share little.
//
// BEFORE and AFTER normally share one layout of their union, so an unchanged node keeps its place
// on both sides. That only helps where most nodes are shared. A model compared with its export by
// another tool (or with opscope's own optimized output, whose fused nodes have new names) shares
// almost nothing by name: the union then interleaves the two graphs, and each side shows its
// nodes scattered among the other side's hidden ones (an input, one long edge, and the rest a
// screen further down).
//
// Such a pair is laid out as two disjoint copies in one request (one cache entry, one ticket),
// and the result is split into a layout per side, each moved to the origin:
//
//   union request:   [a b c d]            per-side request:  [a b c] [b' d' e']
//                    shared b                                  side 0   side 1

#include "layout/presentation.h"

#include <array>

namespace opscope::layout {

// True when two graphs share fewer than half of the smaller side's nodes (inputs and outputs
// not counted: every pair of versions of one model shares those).
bool sharesLittle(const Presentation &p);

// Each side's items and edges as its own component: side 0's items first, in presentation order,
// then side 1's.
LayoutRequest layoutRequestBySide(const Presentation &p, const std::function<Point(const VisualItem &)> &size);

// The layout of side 0 and side 1 in the presentation's index space (an item absent from a side
// keeps a zero centre and no path there), from the result of layoutRequestBySide's request.
std::array<LayoutResult, 2> splitBySide(const Presentation &p, const LayoutRequest &request,
                                        const LayoutResult &combined);

} // namespace opscope::layout
