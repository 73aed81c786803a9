#pragma once
// channel-shuffle-canonicalization (operator replacement): the Reshape → Transpose → Reshape a
// ShuffleNet exporter writes for a channel shuffle becomes one opscope ChannelShuffle(group).
//
//     x[N,C,H,W] ──► Reshape[N,g,C/g,H,W] ──► Transpose(0,2,1,3,4) ──► Reshape[N,C,H,W]
//                                   →     x ──► ChannelShuffle(group=g) ──► y
//
// Also the rank-4 form Reshape[N,g,C/g,H·W] → Transpose(0,2,1,3). Valid when C, H, W of x are
// static, the first Reshape splits exactly the channel axis into (g, C/g), the Transpose swaps
// those two axes only, the last Reshape restores x's shape, and the intermediates have no other
// reader. Both targets lower it back to the three-node form with constant shapes.

#include "passes/pass.h"

namespace opscope::passes {

class ChannelShuffleCanonicalization final : public RewritePass
{
public:
    std::string name() const override { return "channel-shuffle-canonicalization"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
