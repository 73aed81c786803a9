#pragma once
// layernorm-fusion: the layer normalization exporters spell out op by op becomes one
// LayerNormalization (ONNX opset 17; below that opscope's ai.opscope::LayerNormalization, same
// attributes, lowered back for --target onnx).
//
//     x ──► ReduceMean ──► Sub(x, ·) ──► Pow(2) | Mul(d,d) ──► ReduceMean ──► Add(ε) ──► Sqrt ──┐
//                            └───────────────────────────────────────────────► Div | ·Reciprocal ◄┘
//                                                                  ──► [Mul(γ)] ──► [Add(β)] ──► y
//     →   x ──► LayerNormalization(γ, β, axis, epsilon=ε) ──► y
//
// Valid when both ReduceMeans average the same trailing axes of x with keepdims, ε is a one-value
// constant, γ and β (when present) are float constants that broadcast to the normalized dims only,
// x is float32, and the intermediates have no other readers (d: exactly the square and the
// division). Without γ/β the normalized size must be static (γ = 1, β = 0 are materialized).
//
// The RMSNorm form (T5, LLaMA: no mean subtracted, no β) becomes ai.opscope::RMSNormalization —
// ONNX's RMSNormalization (opset 23) semantics; --target ort writes ONNX Runtime's
// SimplifiedLayerNormalization, --target onnx the ops again:
//
//     x ──► Pow(2) | Mul(x,x) ──► ReduceMean ──► Add(ε) ──► Sqrt ──► Div(x, ·) | Reciprocal ──► Mul(x, ·)
//                                                                  ──► [Mul(γ)] ──► y
//     →   x ──► RMSNormalization(γ, axis, epsilon=ε) ──► y

#include "passes/pass.h"

namespace opscope::passes {

class LayerNormFusion final : public RewritePass
{
public:
    std::string name() const override { return "layernorm-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;

private:
    void selectRms(const Graph &graph, std::vector<Match> &matches) const;
};

} // namespace opscope::passes
