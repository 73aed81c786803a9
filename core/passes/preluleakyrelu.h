#pragma once
// prelu-to-leakyrelu (operator replacement): a PRelu whose slope is a single constant value is a
// LeakyRelu with alpha = slope; LeakyRelu needs no slope tensor and broadcasting.
//
//     x ──► PRelu(slope=[0.1]) ──► y     →     x ──► LeakyRelu(alpha=0.1) ──► y
//
// Valid when the slope is a float constant with one element and rank ≤ x's rank (so it cannot
// broadcast the output bigger).

#include "passes/pass.h"

namespace opscope::passes {

class PReluToLeakyRelu final : public RewritePass
{
public:
    std::string name() const override { return "prelu-to-leakyrelu"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
