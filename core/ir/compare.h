#pragma once
// Structural equality of two models or graphs, with the first difference described
// ("graph 'main': node 3 (Conv): attribute 'pads' differs: [0,0,0,0] vs [1,1,1,1]").
// Tensors compare by content, so a model equals its own export/re-import round trip.

#include "ir/graph.h"
#include "ir/model.h"
#include "util/status.h"

namespace opscope {

Status compareGraphs(const Graph &a, const Graph &b);
Status compareModels(const Model &a, const Model &b);

} // namespace opscope
