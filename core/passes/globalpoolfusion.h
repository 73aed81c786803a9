#pragma once
// global-pool-fusion: a ReduceMean / ReduceMax over every spatial axis of an [N,C,spatial…] tensor
// is a global pooling, which the runtime (and any inference engine) runs as one pass per channel.
//
//     x[N,C,H,W] ──► ReduceMean(axes={2,3} | {-1,-2} | …, keepdims=1) ──► y[N,C,1,1]
//     →   x ──► GlobalAveragePool ──► y
//     x ──► ReduceMax(axes={2,3}, keepdims=0) ──► y[N,C]
//     →   x ──► GlobalMaxPool ──► Flatten(axis=1) ──► y
//
// Valid when x is float32 of known rank ≥ 3 and the axes (attribute or constant input) are
// exactly 2 … rank−1, in any order or sign.

#include "passes/pass.h"

namespace opscope::passes {

class GlobalPoolFusion final : public RewritePass
{
public:
    std::string name() const override { return "global-pool-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
