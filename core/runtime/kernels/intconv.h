#pragma once
// The integer convolution under ConvInteger and QLinearConv: (x − x0) ⊛ (w − w0) → int32
// [N, M, spatial…], exact (see intgemm.h). Padding holds the input zero point (ONNX Runtime pads
// ConvInteger's im2col with it), so it contributes (x0 − x0)·w = 0.

#include "runtime/kernels/kernelutil.h"

namespace opscope::kernels {

// x0: absent or one value; w0: absent, one value or one per output channel. `cacheWeights`: w and
// w0 are constants, so their prepared form stays in the node's cache between runs. `asOutput`: the
// int32 result is the node's output 0 (ConvInteger), written where the memory plan put it; else an
// accumulator of its own (QLinearConv, whose output 0 is the requantized result).
Expected<RuntimeTensor> integerConv(const KernelContext &ctx, const RuntimeTensor &x, const RuntimeTensor &w,
                                    const RuntimeTensor *xzp, const RuntimeTensor *wzp, bool cacheWeights,
                                    bool asOutput = false);

} // namespace opscope::kernels
