#pragma once
// conv-activation-fusion: an activation right after a Conv runs inside the convolution (oneDNN
// post-op) as opscope's FusedConv (domain ai.opscope; the attributes of ONNX Runtime's
// com.microsoft.FusedConv: activation, activation_params).
//
//     x ──► Conv ──► Relu ──► y        →     x ──► FusedConv(activation=Relu) ──► y
//
// Activations: Relu, LeakyRelu, Clip (constant bounds), HardSigmoid, Sigmoid, Tanh, HardSwish.
// Valid when the Conv output has no other reader and the Conv is float32 (its weights need not be
// constant). --target onnx lowers FusedConv back to Conv + activation; --target ort keeps it as
// com.microsoft.FusedConv except for HardSwish, which ONNX Runtime's FusedConv lacks.

#include "passes/pass.h"

namespace opscope::passes {

class ConvActivationFusion final : public RewritePass
{
public:
    std::string name() const override { return "conv-activation-fusion"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
