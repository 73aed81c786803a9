#pragma once
// Output shapes and paddings of convolutions and pooling windows, from the ONNX attributes
// (kernel_shape, strides, dilations, pads, auto_pad, group, ceil_mode, output_shape/padding).

#include "runtime/kernels/kernelutil.h"

namespace opscope::kernels {

struct ConvGeometry
{
    Shape64 kernel, strides, dilations, padBegin, padEnd;
    std::int64_t group = 1;
    Shape64 outShape; // full output shape [N, C_out, spatial...]
};

// x: [N, C, *spatial]. Conv: w [M, C/group, *k]; transposed: w [C, M/group, *k].
// A convolution's bias must hold one value per output channel: a longer one would be read past
// its end by no kernel, a shorter one past its end by all of them.
Status checkConvBias(const KernelContext &ctx, const RuntimeTensor *bias, std::int64_t outChannels);

Expected<ConvGeometry> convGeometry(const KernelContext &ctx, const Shape64 &x, const Shape64 &w,
                                    bool transposed);
// Pooling: kernel_shape from the attribute; honours ceil_mode.
Expected<ConvGeometry> poolGeometry(const KernelContext &ctx, const Shape64 &x);

void registerPoolKernels(KernelRegistry &r);

} // namespace opscope::kernels
