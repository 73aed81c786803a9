#pragma once
// gemm-activation-fusion: an activation right after a Gemm is applied by the Gemm kernel on its
// output while it is still in cache, as opscope's FusedGemm (domain ai.opscope; Gemm's attributes
// plus activation, activation_params).
//
//     a,b,c ──► Gemm ──► Relu ──► y        →     a,b,c ──► FusedGemm(activation=Relu) ──► y
//
// Activations as conv-activation-fusion. Valid when the Gemm output has no other reader.
// --target ort maps it to com.microsoft.FusedGemm (activation_alpha/_beta) except for Clip and
// HardSwish; --target onnx lowers it back.

#include "passes/pass.h"

namespace opscope::passes {

class GemmActivationFusion final : public RewritePass
{
public:
    std::string name() const override { return "gemm-activation-fusion"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
