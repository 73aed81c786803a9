#pragma once
// A batch as micro-batches and back (a pipeline's runs), and the outputs ranks send rank 0.

#include "runtime/session.h"

#include <cstddef>
#include <vector>

namespace opscope::dist {

// This rank's share of the outputs (those it computed; rank 0 keeps its own) as (index,
// micro-batch, tensor), packed.
std::vector<std::byte> packOutputs(const std::vector<std::vector<RuntimeTensor>> &perBatch, int rank);

// Tensors of one type one after another along dim 0 (micro-batches back into a batch).
Expected<RuntimeTensor> concatDim0(const std::vector<RuntimeTensor> &parts);

// Feeds split along dim 0 into `m` micro-batches: every input whose dim 0 is the batch (the first
// input's dim 0) is split, the others go whole to each. Refused: a batch m does not divide, an
// input whose dim 0 the model fixes.
Expected<std::vector<Feeds>> splitFeeds(const Feeds &feeds, int m, const InferenceSession &session);

} // namespace opscope::dist
