#pragma once
// algebraic-simplification: expression substitution on elementwise arithmetic.
//
//     x ──► Mul ◄── 1           →  x                       (x·1, x/1, x+0, x−0, 1·x, 0+x)
//     x ──► Mul(x,x) ──► Mul(·,x) →  x ──► Pow(3)           (x·x → Pow(x,2); Pow(x,a)·x → Pow(x,a+1))
//     a·s + b·s                  →  (a+b)·s                 (and a·s − b·s → (a−b)·s)
//     Neg(Neg(x)) → x;  Not(Not(x)) → x;  Reciprocal(Reciprocal(x)) → x;  Pow(x,1) → x
//     x + Neg(y)                 →  x − y
//     (x·c1)·c2                  →  x·(c1·c2)               (and (x+c1)+c2; scalar constants)
//
// Validity, rule by rule:
//  - identities: the constant is all 1 (or 0), has x's dtype, and broadcasting it cannot change
//    x's shape (same shape, or a constant of rank ≤ x's with every dim 1). x+0 turns −0 into +0;
//    everything else, NaN and Inf included, passes through unchanged.
//  - Pow: float types only; Pow(x,2) equals x·x exactly, Pow(x,3) differs from (x·x)·x by at most
//    one rounding.
//  - factoring and constant merging re-associate: results may differ in the last bits, never in
//    shape (broadcasting is associative here); both Mul/Add inputs must have no other consumer.
//  - Reciprocal(Reciprocal(x)) is exact up to one rounding for |x| in the normal range; for |x|
//    below ~1e-38 (or above ~1e38) 1/(1/x) saturates, which the rule accepts as fast-math does.
// Reshape(Reshape(x)) → Reshape(x) is redundant-node-elimination's rule "reshape-reshape".

#include "passes/pass.h"

namespace opscope::passes {

class AlgebraicSimplification final : public RewritePass
{
public:
    std::string name() const override { return "algebraic-simplification"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
