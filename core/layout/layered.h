#pragma once
// opscope's own layered (Sugiyama) layout: the fallback when Graphviz dot runs out of its time
// budget, and the layout of graphs too big for dot. Same contract as layoutWithGraphviz (points,
// y down, origin top left, edges as cubic Bézier paths) so the views cannot tell them apart.
//
//   1. cycles broken by reversing DFS back edges (collapsed groups can form cycles)
//   2. layers by longest path, sources pulled down next to their first reader (weights, inputs)
//   3. long edges split into chains of dummy points, one per layer crossed
//   4. order within layers: barycenter sweeps down and up, keeping the order with fewest crossings
//   5. x by weighted isotonic regression per layer (pool adjacent violators): each item as close
//      to its neighbours' mean as the spacing allows; dummy chains weigh more so long edges run
//      straight
//   6. edges through their dummy points as vertical-tangent Bézier segments
//
// Linear in items + dummies per sweep: 10,000 items lay out in well under a second, where dot
// takes minutes on graphs with long skip edges (../shared/TOOLCHAIN.md).

#include "layout/graphlayout.h"

namespace opscope::layout {

// Never fails on a well-formed request (edges out of range or self loops get an empty path).
LayoutResult layoutLayered(const LayoutRequest &request);

} // namespace opscope::layout
