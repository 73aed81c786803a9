#pragma once
// layout-nhwc: data layout conversion. Convolutions, pooling, BatchNormalization and the
// layout-agnostic ops between them (activations; elementwise ops on two operands of equal channel
// count, a per-channel or a scalar operand; channel Concat) form regions; each region runs in a
// layout the CPU kernels are faster in, with conversions only at its borders:
//
//   NCHWc (the NC1HWC0 layout, C0 = the SIMD width: 8 on AVX2, 16 on AVX-512): tensors are
//   [N, C/C0, H, W, C0]; oneDNN's convolutions run there without the reorders they otherwise do
//   around every call. Needs every channel count inside the region to be a multiple of C0
//   (a region's first convolution may read plain NCHW, e.g. 3 input channels).
//   NHWC (channels last): any channel count; chosen when NCHWc does not fit.
//
//   x ──► Conv ──► Relu ──► Conv ──┬──► Add ──► y          x ──► ReorderInput ──► NchwcConv ──► Relu ──►
//          └───────────────────────┘                            NchwcConv ──┬──► Add ──► ReorderOutput ──► y
//                                                                   (same Conv inputs and attributes)
//
// Graph inputs and outputs keep their layout. A cost estimate decides per region: the bytes of
// the per-call reorders the region saves (input + output of each convolution; half of that for
// NHWC, whose kernels gain less) against the bytes its border conversions move. An NHWC region
// must save more than it converts; an NCHWc region twice as much, with at least three
// convolutions (bench/datalayout_bench.py measured smaller blocked regions not paying). Otherwise
// the region stays NCHW. Every decision is reported (PassRecord::notes). Conversions that meet
// their inverse cancel. Layout ops are ai.opscope's (docs/operators.md); both export targets turn
// a converted model back into standard NCHW ops (ONNX Runtime applies its own NCHWc transform at
// load, tuned to the machine it runs on).

#include "passes/pass.h"

namespace opscope::passes {

class LayoutNhwc final : public Pass
{
public:
    std::string name() const override { return "layout-nhwc"; }
    Expected<bool> run(Model &model, PassContext &context) override;
};

// This CPU's NCHWc block (16 with AVX-512, else 8).
int nativeChannelBlock();

// Undoes layout-nhwc in `graph`: every layout op back to its NCHW form (lower-to-onnx/-ort).
Expected<bool> stripLayouts(Graph &graph);

} // namespace opscope::passes
