#pragma once
// swish-fusion: x·Sigmoid(x) (SiLU), and x·Sigmoid(β·x) with a constant β, → ai.opscope::Swish.
//
//     x ──┬──► Sigmoid ──► Mul ──► y          x ──► Mul(β) ──► Sigmoid ──► Mul(x, ·) ──► y
//         └──────────────────┘          →     x ──► Swish(alpha=β) ──► y
//
// Valid when x is float32 and the Sigmoid (and the β product) have no other readers. --target ort
// writes com.microsoft.QuickGelu(alpha=β) — the same function; --target onnx spells it out again.

#include "passes/pass.h"

namespace opscope::passes {

class SwishFusion final : public RewritePass
{
public:
    std::string name() const override { return "swish-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
