#pragma once
// Slice's geometry (which elements of the input make the output), shared by the CPU kernel and
// the CUDA backend so that both read starts/ends/axes/steps (attributes before opset 10, inputs
// after) and clamp them by the same rules.

#include "runtime/kernel.h"

#include <cstdint>
#include <vector>

namespace opscope::kernels {

struct SliceGeometry
{
    std::vector<std::int64_t> shape;   // the output's
    std::vector<std::int64_t> strides; // per output dim: the input's stride times the step
    std::int64_t base = 0;             // the first element read, in elements from the input's start
};

// For a Slice node's call on `x`; the inputs other than x must be on the host.
Expected<SliceGeometry> sliceGeometry(const KernelContext &ctx, const RuntimeTensor &x);

} // namespace opscope::kernels
