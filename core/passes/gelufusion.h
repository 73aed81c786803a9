#pragma once
// gelu-fusion: the GELU exporters write out op by op becomes opscope's Gelu (ai.opscope::Gelu;
// ONNX's own Gelu arrived in opset 20), both forms:
//
//   erf:   x ──► Div(√2) | Mul(1/√2) ──► Erf ──► Add(1) ──► Mul(x, ·) ──► Mul(0.5) ──► y
//   tanh:  x ──► Pow(3) | x·(x·x) ──► Mul(0.044715) ──► Add(x, ·) ──► Mul(√(2/π)) ──► Tanh ──► Add(1) ──► …
//   (the tail also as x·((t+1)·0.5) and (x·0.5)·(t+1))
//   →   x ──► Gelu(approximate = none | tanh) ──► y
//
// Valid when the constants match within float rounding, x is float32, and the intermediates have
// no other readers. --target ort writes com.microsoft.Gelu (BiasGelu when a bias Add feeds it) or
// FastGelu for the tanh form; --target onnx lowers it back to the ops.

#include "passes/pass.h"

namespace opscope::passes {

class GeluFusion final : public RewritePass
{
public:
    std::string name() const override { return "gelu-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
