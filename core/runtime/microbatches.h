#pragma once
// A batch as micro-batches and back: what a pipeline's runs take in and give out, in one process
// (runtime/stagerunner.h) and across MPI ranks (dist/).

#include "runtime/session.h"

#include <vector>

namespace opscope {

// Tensors of one type one after another along dim 0 (micro-batches back into a batch).
Expected<RuntimeTensor> concatDim0(const std::vector<RuntimeTensor> &parts);

// Feeds split along dim 0 into `m` micro-batches: every input whose dim 0 is the batch (the first
// input's dim 0: the same symbol, or the same size where the model declares no shape) is split,
// the others go whole to each. Refused: a batch m does not divide, a batch the model fixes.
Expected<std::vector<Feeds>> splitFeeds(const Feeds &feeds, int m, const InferenceSession &session);

} // namespace opscope
