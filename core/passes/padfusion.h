#pragma once
// pad-fusion: an explicit zero Pad before a Conv or an AveragePool becomes that op's own padding
// (tf2onnx writes one before every stride-2 depthwise convolution, TensorFlow's "SAME" padding;
// run alone, each Pad copies the whole tensor once more).
//
//     x ──► Pad(pads = [0,0,t,l, 0,0,b,r], constant 0) ──► Conv(pads = p) ──► y
//     →   x ──► Conv(pads = p + [t,l, b,r]) ──► y
//
// Valid when the Pad is in constant mode with value 0 (absent, or a constant 0), its pads are a
// constant of non-negative entries with none on the batch and channel axes, the Pad's output is
// read by that op alone (as its input 0), and the op has no auto_pad (NOTSET). AveragePool takes
// the padding only with count_include_pad=1, where padded zeros count as the Pad's did. MaxPool
// is left alone: its own padding is −∞, not 0.

#include "passes/pass.h"

namespace opscope::passes {

class PadFusion final : public RewritePass
{
public:
    std::string name() const override { return "pad-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
