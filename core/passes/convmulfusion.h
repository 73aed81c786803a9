#pragma once
// conv-mul-fusion: a Mul by a constant that varies only along the output channels (shape [C,1,1], [1,C,1,1]
// or one value) scales the Conv weights and bias.
//
//     x ──► Conv(W,B) ──► Mul(c) ──► y     →     x ──► Conv(W·c, B·c) ──► y
//
// Valid when W (and B) are float constants, the Conv output has no other reader, and the
// constant cannot broadcast the result to a bigger shape (rank ≤ the Conv output's, 1 off the
// channel axis).

#include "passes/pass.h"

namespace opscope::passes {

class ConvMulFusion final : public RewritePass
{
public:
    std::string name() const override { return "conv-mul-fusion"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
