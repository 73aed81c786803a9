#pragma once
// elementwise-forward (operator forward): an elementwise op whose only reader is a Slice or Gather
// moves after it, so it touches only the elements kept.
//
//     x ──► Relu ──► Slice ──► y     →     x ──► Slice ──► Relu ──► y
//     x ──► Mul(s) ──► Gather ──► y  →     x ──► Gather ──► Mul(s) ──► y
//
// Exact: the op is applied element by element to the same values. Valid for unary elementwise ops
// and for binary ones whose other operand is a single-valued constant of rank ≤ x's (it cannot
// broadcast), when the elementwise output has no other reader.

#include "passes/pass.h"

namespace opscope::passes {

class ElementwiseForward final : public RewritePass
{
public:
    std::string name() const override { return "elementwise-forward"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
