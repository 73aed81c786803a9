#pragma once
// Re-runs ONNX shape inference over a model that passes have rewritten, and takes the types it
// finds for values whose type is unknown or less specific. Rewrites create values (a Reshape
// given a constant shape, a folded Shape) whose shapes later rules need; this keeps them known.
// Weights are not copied: initializers above a few KiB travel as typed graph inputs, since
// inference needs only the values of small (shape-like) constants.

#include "ir/model.h"
#include "util/status.h"

namespace opscope {

// Main graph only (and the types of what its bodies capture from it). Returns how many values got
// a more specific type.
Expected<std::size_t> refreshShapes(Model &model);

// Ranks ONNX's inference leaves unknown but the graph's structure fixes: a Reshape to a shape
// tensor of static length k has rank k (its dims computed at run time, e.g. from Shape ops), and
// Transpose, Squeeze/Unsqueeze, elementwise ops, Softmax and MatMul carry ranks through. Only
// values without any shape get one (dims unknown). Returns how many.
std::size_t propagateRanks(Graph &graph);

} // namespace opscope
