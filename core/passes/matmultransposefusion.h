#pragma once
// matmul-transpose-fusion: a Transpose that swaps the last two axes of a MatMul operand is read
// in place by the GEMM instead of being materialized (transA / transB), and a Transpose of the
// product turns into swapped, transposed operands: (A·B)ᵀ = Bᵀ·Aᵀ.
//
//     a ──► Transpose(…, -1, -2) ──► MatMul(·, b) ──► y   →   FusedMatMul(a, b, transA=1) ──► y
//     Gemm(Transpose(a), b)                                →   Gemm(a, b, transA=¬transA)
//     MatMul(a, b) ──► Transpose(…, -1, -2) ──► y          →   FusedMatMul(b, a, transA=1, transB=1)
//     Transpose(MatMul(Transpose(a), Transpose(b)))        →   MatMul(b, a)   (transpose pairs cancel)
//
// Valid when the operands' ranks are known and ≥ 2, the Transpose keeps every leading axis in
// place, and the MatMul has no bias input. A FusedMatMul left with no transpose and alpha 1 is a
// MatMul again. --target ort keeps com.microsoft.FusedMatMul; --target onnx writes the Transposes.

#include "passes/pass.h"

namespace opscope::passes {

class MatMulTransposeFusion final : public RewritePass
{
public:
    std::string name() const override { return "matmul-transpose-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
