#pragma once
// The export lowering (lowering.h) of the ops the extended fusions write: Swish, HardSwish below
// opset 14, the tanh Gelu, RMSNormalization, Eltwise and Attention.
//
//   --target onnx:  Swish(α)        → x·Sigmoid(α·x)
//                   HardSwish       → HardSigmoid(1/6, ½) ──► Mul(x, ·)
//                   Gelu(tanh)      → ½·x·(1 + Tanh(√(2/π)·(x + 0.044715·x³)))
//                   RMSNormalization → x / √(ReduceMean(x·x) + ε) · γ
//                   Eltwise(c)      → Mul/Add/Sub/Neg
//                   Attention       → [Reshape/Transpose] MatMul, Mul(scale), [Add mask], Softmax, MatMul
//                   [Transpose/Reshape]
//   --target ort:   Swish → com.microsoft.QuickGelu(alpha)   Gelu(tanh) → com.microsoft.FastGelu
//                   RMSNormalization → SimplifiedLayerNormalization (ONNX Runtime's, ONNX domain)
//                   Attention(num_heads) → com.microsoft.MultiHeadAttention (mask → attention_bias,
//                   expanded to [·,·,Sq,Sk] when it broadcasts along the queries); the rest as for onnx.
//                   Add ──► LayerNormalization → com.microsoft.SkipLayerNormalization.

#include "ir/model.h"
#include "util/status.h"

namespace opscope::passes {

// Lowers node `id` when it is one of these ops; false when it is not.
Expected<bool> lowerExtendedOp(Model &model, Graph &graph, NodeId id);
// Rewrites node `id` into its ONNX Runtime form; false when it has none (lower it instead).
Expected<bool> extendedOpToOrt(Model &model, Graph &graph, NodeId id);
// ONNX Runtime target, after the rest: LayerNormalization(a + b) over the last axis of [B,S,H]
// → com.microsoft.SkipLayerNormalization(a, b, γ, β), its 4th output the sum when the residual
// is read elsewhere.
Expected<bool> fuseSkipLayerNorm(Model &model, Graph &graph);

} // namespace opscope::passes
