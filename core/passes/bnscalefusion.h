#pragma once
// bn-scale-fusion: a per-channel constant Mul or Add after a BatchNormalization is folded into its
// scale and bias.
//
//     x ──► BN(γ,β,μ,σ²) ──► Mul(c) ──► y     →     x ──► BN(γ·c, β·c, μ, σ²) ──► y
//     x ──► BN(γ,β,μ,σ²) ──► Add(c) ──► y     →     x ──► BN(γ, β+c, μ, σ²) ──► y
//
// Valid when the BN parameters are float constants, its input rank is known, c varies only along
// the channel axis (1), and the BN output has no other reader.

#include "passes/pass.h"

namespace opscope::passes {

class BnScaleFusion final : public RewritePass
{
public:
    std::string name() const override { return "bn-scale-fusion"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
