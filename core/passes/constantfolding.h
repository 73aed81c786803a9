#pragma once
// constant-folding: a node whose inputs are all constant is evaluated once, by the CPU runtime's own
// kernels, and replaced by an initializer holding its result. Shape-only folding: Shape and Size
// of a value whose shape is static (and a Gather/Slice of a Shape picking only static dims) become
// constants, so the arithmetic exporters build around them folds away too.
//
//     W ──► Transpose ──► MatMul ◄── x             W' (=Wᵀ, initializer) ──► MatMul ◄── x
//     x ──► Shape ──► Gather(1) ──► Reshape   →    [64] (initializer) ──► Reshape
//
// Not folded: nodes with subgraphs (constant-propagation handles If), random ops, Quantize/
// DequantizeLinear (they are the QDQ format's markers), ops without a CPU kernel, and results
// larger than PassOptions::foldSizeLimit (expanding ops are skipped before evaluation when their
// static output shape says so).

#include "passes/pass.h"

#include <map>
#include <string>

namespace opscope::passes {

class ConstantFolding final : public Pass
{
public:
    std::string name() const override { return "constant-folding"; }
    Expected<bool> run(Model &model, PassContext &context) override;
};

// Folds one graph (not its subgraphs). Used by constant-propagation for If/Loop bodies.
Expected<bool> foldConstants(Graph &graph, const std::map<std::string, int> &opsets,
                             const PassOptions &options,
                             std::vector<PatternMatch> *folded = nullptr);

} // namespace opscope::passes
