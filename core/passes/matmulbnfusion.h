#pragma once
// matmul-bn-fusion: a BatchNormalization over the features of a MatMul output (rank 2, channel
// axis 1 = the MatMul's N) is folded into the weight columns and a bias.
//
//     x[M,K] ──► MatMul(W[K,N]) ──► BN ──► y     →     x ──► Gemm(W·s, bias=t) ──► y
//
// Valid when W and the BN parameters are float constants, x has rank 2, and the MatMul output has
// no other reader.

#include "passes/pass.h"

namespace opscope::passes {

class MatMulBnFusion final : public RewritePass
{
public:
    std::string name() const override { return "matmul-bn-fusion"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
