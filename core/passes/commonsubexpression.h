#pragma once
// common-subexpression-elimination: two nodes with the same op, domain, inputs (by value) and
// attributes compute the same outputs; the later one is dropped and its consumers read the first.
// Small constants with identical dtype, shape and bytes are merged first, so nodes that differ
// only by a duplicated constant (exporters repeat scalars like 1.0 and axes lists) match too.
//
//     x ──► Transpose(0,2,1) ──► a          x ──► Transpose(0,2,1) ──┬──► a'
//     x ──► Transpose(0,2,1) ──► b     →                             └──► b'
//
// Not merged: random ops (each draws its own numbers), nodes with subgraphs, nodes producing a
// graph output that would then duplicate an output name (kept via replaceValue's Identity rule).

#include "passes/pass.h"

namespace opscope::passes {

class CommonSubexpressionElimination final : public RewritePass
{
public:
    std::string name() const override { return "common-subexpression-elimination"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
