#pragma once
// matmul-scale-fusion: a scalar constant multiplying (or dividing) a MatMul's input or output is
// folded into a constant operand, or into the alpha of opscope's FusedMatMul.
//
//     x ──► MatMul(·, W) ──► Mul(s) ──► y     →     x ──► MatMul(·, W·s) ──► y
//     q ──► Mul(s) ──► MatMul(·, k) ──► y     →     q, k ──► FusedMatMul(alpha=s) ──► y
//
// Valid for float32 with a single-valued constant s (Div: alpha = 1/s, s ≠ 0) whose broadcast
// cannot change the shape, and when the scaled value has no other reader. Exact up to one rounding
// (the product is associated differently).

#include "passes/pass.h"

namespace opscope::passes {

class MatMulScaleFusion final : public RewritePass
{
public:
    std::string name() const override { return "matmul-scale-fusion"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
