#pragma once
// attention-fusion: scaled dot-product attention written out op by op becomes one
// ai.opscope::Attention, whose CPU kernel is FlashAttention-style (kernels/attention.cpp): the
// Sq×Sk score matrix is never materialized.
//
//   q ─────────────────────────┐
//   k ──► Transpose(-1,-2) ──► MatMul ──► Mul(s) | Div(1/s) ──► [Add(mask)] ──► Softmax(-1) ──► MatMul ──► y
//   v ──────────────────────────────────────────────────────────────────────────────────────────┘
//   →   q, k, v, [mask] ──► Attention(scale=s) ──► y
//
// Variants exporters write: the scale on q (and/or k) before the product, or folded into a
// FusedMatMul's alpha; Kᵀ given directly (k_transposed=1); K·transB. Around it, the head split
// and merge are absorbed when all of them are there (BERT/GPT exports):
//
//   x_q ──► Reshape[B,S,H,D] ──► Transpose(0,2,1,3) ──► q        (x_k: Transpose(0,2,3,1) → Kᵀ)
//   y ──► Transpose(0,2,1,3) ──► Reshape[B,S,H·D]
//   →   x_q, x_k, x_v, [mask] ──► Attention(num_heads=H) ──► [B,S,H·D]
//
// and a lone merge Transpose becomes transpose_output=1. A causal mask written as
// Where(cond, scores, fill) (GPT-2) becomes the additive mask Where(cond, 0, fill) — a constant
// when the condition is — added to any other mask.
//
// Valid when Q, K, V are float32 of known rank 4 (3 with the head split), the Softmax is over
// the last axis, the scale is a scalar constant, the mask (if any) is float and broadcasts to the
// scores without growing them, and every intermediate has no other reader. --target ort writes
// com.microsoft.MultiHeadAttention for the head-split form (the mask as attention_bias);
// everything else is lowered back to the ops.

#include "passes/pass.h"

namespace opscope::passes {

class AttentionFusion final : public RewritePass
{
public:
    std::string name() const override { return "attention-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
