#pragma once
// eltwise-fusion: a sum of scaled terms with scalar constant coefficients → one ai.opscope::Eltwise
// that reads each input once and writes the result once, instead of one tensor per Mul and Add.
//
//     a ──► Mul(c1) ──┐                         a ──┐
//                     Add ──► Sub ──► y    →    b ──┼──► Eltwise(coefficients=[c1, c2, -1]) ──► y
//     b ──► Mul(c2) ──┘      ▲                  d ──┘
//     d ─────────────────────┘
//     (terms: x·c, c·x, x/c, −x, or x itself; Add and Sub nest to any depth)
//
// Valid when every term is float32, at least one term is scaled (a plain Add stays an Add), the
// inner Add/Sub/Mul results have no other readers, and the coefficients are scalar constants.
// Both export targets spell it out again (Mul/Add/Sub): the fused op is opscope's own.

#include "passes/pass.h"

namespace opscope::passes {

class EltwiseFusion final : public RewritePass
{
public:
    std::string name() const override { return "eltwise-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
