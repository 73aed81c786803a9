#pragma once
// Pad's geometry, shared by the CPU kernel and the CUDA backend so that both read pads (the
// attribute before opset 11, input 1 after), axes (input 3, opset 18) and the mode by the same
// rules and refuse the same calls.

#include "runtime/kernel.h"

#include <cstdint>
#include <vector>

namespace opscope::kernels {

enum class PadMode
{
    Constant,
    Edge,
    Reflect,
    Wrap,
};

struct PadGeometry
{
    std::vector<std::int64_t> shape; // the output's
    std::vector<std::int64_t> begin; // per input dim: elements added before (negative: cropped)
    PadMode mode = PadMode::Constant;
};

// For a Pad node's call on `x`; its inputs other than x (pads, value, axes) must be on the host.
Expected<PadGeometry> padGeometry(const KernelContext &ctx, const RuntimeTensor &x);

// The source index along an axis of `n` elements for output index `i` (−1: the constant value).
std::int64_t padSource(std::int64_t i, std::int64_t begin, std::int64_t n, PadMode mode);

} // namespace opscope::kernels
