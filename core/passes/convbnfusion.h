#pragma once
// conv-bn-fusion: a BatchNormalization (inference) right after a Conv is folded into the Conv's
// weights and bias: W'[m] = W[m]·s[m], B'[m] = B[m]·s[m] + t[m] with s = γ/√(σ²+ε), t = β − μ·s.
//
//     x ──► Conv(W,B) ──► BatchNormalization(γ,β,μ,σ²) ──► y     →     x ──► Conv(W',B') ──► y
//
// Valid when W, B and the BN parameters are float constants, the Conv output has no other reader,
// and the BN's training outputs are unused.

#include "passes/pass.h"

namespace opscope::passes {

class ConvBnFusion final : public RewritePass
{
public:
    std::string name() const override { return "conv-bn-fusion"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
