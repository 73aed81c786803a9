#pragma once
// Resize's per-dimension tap tables (which input indices, with which weights, make each output
// coordinate), shared by the CPU kernel and the CUDA backend so that both resolve every mode,
// coordinate transformation and rounding rule the same way.

#include "runtime/kernel.h"

#include <cstdint>
#include <vector>

namespace opscope::kernels {

struct Tap
{
    std::int64_t index; // -1: outside the input (tf_crop_and_resize extrapolates)
    double weight;
};

struct ResizeTaps
{
    std::vector<std::int64_t> outShape;
    std::vector<std::vector<std::vector<Tap>>> taps; // [dim][output coordinate] → taps
    double extrapolation = 0.0;
};

// For a Resize (any opset) or Upsample node's call; the inputs other than X must be on the host.
Expected<ResizeTaps> resizeTaps(const KernelContext &ctx);

} // namespace opscope::kernels
