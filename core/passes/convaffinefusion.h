#pragma once
// conv-affine-fusion: a scalar scale and shift after a fused convolution's activation run inside
// the convolution too (one more oneDNN post-op), recorded as FusedConv's `activation_post`
// = [scale, shift]: y = scale · activation(conv(x)) + shift.
//
//     x ──► FusedConv(HardSwish) ──► Mul(·s) ──► Add(+b) ──► y
//                          →     x ──► FusedConv(HardSwish, activation_post=[s, b]) ──► y
//
// PaddlePaddle's "learnable affine blocks" (PP-LCNetV3, the PP-OCRv4 backbones) put exactly this
// after every activation; left alone, each is a full pass over the tensor, and it splits the
// layout pass's regions at every convolution. Absorbs Mul, Add, Sub (either side) and Div by a
// one-element float constant, repeatedly. --target onnx/ort write the Mul/Add out again.

#include "passes/pass.h"

namespace opscope::passes {

class ConvAffineFusion final : public RewritePass
{
public:
    std::string name() const override { return "conv-affine-fusion"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
