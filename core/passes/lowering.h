#pragma once
// Export targets: what opscope's internal fused ops (domain ai.opscope) become in the saved model.
//
// lower-to-onnx — standard ONNX at the model's opset:
//     FusedConv(act)   → Conv ──► act            FusedGemm(act) → Gemm ──► act
//     FusedMatMul(α,b) → MatMul ──► Mul(α) ──► Add(b)   (each only when needed)
//     ChannelShuffle(g) → Reshape[0,g,C/g,H,W] ──► Transpose(0,2,1,3,4) ──► Reshape[0,C,H,W]
// lower-to-ort — the com.microsoft ops ONNX Runtime implements, the rest as above:
//     FusedConv(act) → com.microsoft.FusedConv      (act ≠ HardSwish)
//     FusedGemm(act) → com.microsoft.FusedGemm      (act ∉ {Clip, HardSwish}; activation_alpha/_beta)
//     FusedMatMul(α,b) → com.microsoft.FusedMatMul(alpha) ──► Add(b)
// Both drop the ai.opscope opset import once nothing uses it.

#include "passes/pass.h"

namespace opscope::passes {

class LowerToOnnx final : public Pass
{
public:
    std::string name() const override { return "lower-to-onnx"; }
    Expected<bool> run(Model &model, PassContext &context) override;
};

class LowerToOrt final : public Pass
{
public:
    std::string name() const override { return "lower-to-ort"; }
    Expected<bool> run(Model &model, PassContext &context) override;
};

} // namespace opscope::passes
