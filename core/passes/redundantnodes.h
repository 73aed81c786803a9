#pragma once
// redundant-node-elimination: nodes (and pairs of nodes) that compute their input unchanged.
//
//     x ──► Identity ──► y                          x ──► y
//     x ──► Transpose(0,2,1) ──► Transpose(0,2,1)   →  x
//     x ──► Transpose(1,0,2) ──► Transpose(0,2,1)   →  x ──► Transpose(1,2,0)
//     x ──► Cast(f32→f64) ──► Cast(f64→f32)         →  x
//     a,b ──► Concat(axis 1) ──► Slice(axis 1, [0, |a|))  →  a
//
// Rules, each valid only as stated:
//  identity                Identity.
//  dropout                 Dropout in inference (no training_mode, or a constant false) whose mask is unused.
//  cast-same-type          Cast to the type the input already has (known from the IR).
//  concat-single           Concat of one input.
//  noop-view               Reshape/Flatten/Squeeze/Unsqueeze/Expand whose output shape provably equals the
//                          input's (static, symbolic by name, or a Reshape shape of 0s and matching
//                          sizes — the Reshape after a global pooling that changes nothing).
//  noop-slice              Slice keeping the whole shape with all steps 1 (not -1: that reverses).
//  noop-pad / noop-tile    Pad with all-zero pads; Tile with all repeats 1.
//  noop-transpose          Transpose by the identity permutation.
//  noop-pool               Max/AveragePool with 1×1 kernel, stride 1, no padding (MaxPool: indices unused).
//  view-pair               Two views (Reshape/Flatten/Squeeze/Unsqueeze) whose outer shapes agree.
//  cast-roundtrip          Cast A→B→A where B represents every A value exactly (f32→f64, i32→i64,
//  bool→any...). reshape-reshape         Reshape(Reshape(x), s) → Reshape(x, s) when s is constant without 0
//  entries
//                          (a 0 would copy a dim of the intermediate, not of x).
//  transpose-transpose     Two Transposes: composed into one, or removed when they cancel.
//  concat-slice            A Slice (steps 1, one axis) of a Concat taking back exactly one input.

#include "passes/pass.h"

namespace opscope::passes {

class RedundantNodeElimination final : public RewritePass
{
public:
    std::string name() const override { return "redundant-node-elimination"; }
    bool repeatsToFixedPoint() const override { return true; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
