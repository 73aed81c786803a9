#pragma once
// hardswish-fusion: the forms exporters write for x·ReLU6(x+3)/6 → HardSwish (ONNX opset 14;
// ai.opscope::HardSwish below it, lowered back by --target onnx|ort).
//
//     x ──► HardSigmoid(α=1/6, β=½) ──► Mul(x, ·) ──► y
//     x ──► Add(3) ──► Clip(0, 6) ──► Mul(x, ·) ──► Div(6) | Mul(1/6) ──► y
//     x ──► Add(3) ──► Clip(0, 6) ──► Div(6) | Mul(1/6) ──► Mul(x, ·) ──► y
//     →   x ──► HardSwish ──► y
//
// Valid when x is float32, the constants match within float rounding (Clip's bounds as
// attributes below opset 11, as inputs from 11) and the intermediates have no other readers.

#include "passes/pass.h"

namespace opscope::passes {

class HardSwishFusion final : public RewritePass
{
public:
    std::string name() const override { return "hardswish-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
