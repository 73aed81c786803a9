#pragma once
// The outputs ranks send rank 0 (micro-batches: runtime/microbatches.h).

#include "runtime/microbatches.h"

#include <cstddef>
#include <vector>

namespace opscope::dist {

// This rank's share of the outputs (those it computed; rank 0 keeps its own) as (index,
// micro-batch, tensor), packed.
std::vector<std::byte> packOutputs(const std::vector<std::vector<RuntimeTensor>> &perBatch, int rank);

} // namespace opscope::dist
