#pragma once
// A direct depthwise convolution (group = C_in = C_out) on plain NCW / NCHW float tensors: one
// filter per channel, channels in parallel, the activation (and FusedConv's post affine) applied
// per output row. oneDNN runs plain-layout depthwise convolutions as one tiny GEMM per channel
// (gemm:jit), which on an audio model's [1, 258, 8] input took 150 µs for 10k multiply-adds; this
// loop takes a few. convKernel times it against oneDNN's variants and keeps the fastest.

#include "runtime/kernels/convgeometry.h"
#include "runtime/kernels/fusedactivation.h"

namespace opscope::kernels {

// x [N, C, *spatial], w [C, 1, *k]: 1 or 2 spatial dims, multiplier 1.
bool depthwiseApplies(const ConvGeometry &geo, const Shape64 &x, const Shape64 &w);

void depthwiseConv(const ConvGeometry &geo, const Shape64 &x, const float *xData, const float *w,
                   const float *bias, float *y, const FusedActivation &act);

} // namespace opscope::kernels
