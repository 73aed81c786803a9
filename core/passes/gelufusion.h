#pragma once
// gelu-fusion: the exact (erf) GELU written out by exporters becomes opscope's Gelu
// (ai.opscope::Gelu, attribute approximate = "none"; ONNX's own Gelu arrived in opset 20).
//
//     x ──► Div(√2) | Mul(1/√2) ──► Erf ──► Add(1) ──► Mul(x, ·) ──► Mul(0.5) ──► y
//     (also  x·((erf+1)·0.5)  and  (x·0.5)·(erf+1))
//     →   x ──► Gelu ──► y
//
// Valid when the constants are √2 (or 1/√2), 1 and 0.5 within float rounding, x is float32,
// and the intermediates have no other readers. --target ort writes com.microsoft.Gelu (or BiasGelu
// when a bias Add feeds it); --target onnx lowers it back to the five ops.

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
