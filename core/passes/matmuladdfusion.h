#pragma once
// matmul-add-fusion: MatMul followed by a bias Add.
//
//     a[M,K], B[K,N] ──► MatMul ──► Add(c) ──► y     →     a, B, c ──► Gemm ──► y          (2-D)
//     a[…,M,K], B ──► MatMul ──► Add(bias[N]) ──► y  →     a, B, bias ──► FusedMatMul ──► y (otherwise)
//
// 2-D: both MatMul inputs have rank 2 and c broadcasts one way to [M,N] ([N], [1,N], [M,1],
// [M,N] or a single value) without changing the output shape. Otherwise the bias must be a
// constant of shape [N] (or [1,…,1,N]) and the MatMul float32: opscope's FusedMatMul adds it per
// output row. The MatMul output must have no other reader.

#include "passes/pass.h"

namespace opscope::passes {

class MatMulAddFusion final : public RewritePass
{
public:
    std::string name() const override { return "matmul-add-fusion"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
