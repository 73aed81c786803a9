#pragma once
// Re-runs ONNX shape inference over a model that passes have rewritten, and takes the types it
// finds for values whose type is unknown or less specific. Rewrites create values (a Reshape
// given a constant shape, a folded Shape) whose shapes later rules need; this keeps them known.
// Weights are not copied: initializers above a few KiB travel as typed graph inputs, since
// inference needs only the values of small (shape-like) constants.

#include "ir/model.h"
#include "util/status.h"

namespace opscope {

// Main graph only. Returns how many values got a more specific type.
Expected<std::size_t> refreshShapes(Model &model);

} // namespace opscope
