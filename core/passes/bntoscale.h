#pragma once
// bn-to-scale: a BatchNormalization that no neighbour absorbed, rewritten as the per-channel affine
// map it computes in inference — only when that is cheaper than normalizing: when the map is a
// pure scale (→ Mul), a pure shift (→ Add) or the identity (→ removed).
//
//     x ──► BN(γ,β,μ,σ²) ──► y     →     x ──► Mul(s) ──► y      (t = β − μ·s is 0 everywhere)
//                                   →     x ──► Add(t) ──► y      (s = γ/√(σ²+ε) is 1 everywhere)
//
// Valid when the parameters are float constants and the input rank is known.

#include "passes/pass.h"

namespace opscope::passes {

class BnToScale final : public RewritePass
{
public:
    std::string name() const override { return "bn-to-scale"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
