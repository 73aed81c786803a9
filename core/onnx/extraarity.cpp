#include "onnx/extraarity.h"

#include <climits>
#include <map>
#include <utility>

namespace opscope {

namespace {

using Key = std::pair<std::string, std::string>;

// From the ONNX and ONNX Runtime contrib operator specs; opscope's own ops take what the op they
// stand for takes (FusedConv: Conv's X, W, B and the residual Z). A generous maximum where the
// spec grew optional inputs over versions: the minimum is what keeps passes and kernels safe.
const std::map<Key, OpArity> &table()
{
    static const std::map<Key, OpArity> t = {
        // ONNX, above libonnx 1.12's opset 17.
        {{"", "Gelu"}, {1, 1, 1, 1}},
        {{"", "GroupNormalization"}, {3, 3, 1, 1}},
        {{"", "RMSNormalization"}, {2, 2, 1, 1}},
        {{"", "SimplifiedLayerNormalization"}, {2, 2, 1, 3}},
        {{"", "Attention"}, {3, 7, 1, 4}}, // opset 24 added nonpad_kv_seqlen
        {{"", "RotaryEmbedding"}, {1, 4, 1, 1}},
        // ONNX Runtime's contrib ops.
        {{"com.microsoft", "BiasGelu"}, {2, 2, 1, 1}},
        {{"com.microsoft", "FastGelu"}, {1, 2, 1, 1}},
        {{"com.microsoft", "QuickGelu"}, {1, 1, 1, 1}},
        {{"com.microsoft", "Gelu"}, {1, 1, 1, 1}},
        {{"com.microsoft", "FusedConv"}, {2, 4, 1, 1}},
        {{"com.microsoft", "FusedGemm"}, {2, 3, 1, 1}},
        {{"com.microsoft", "FusedMatMul"}, {2, 2, 1, 1}},
        {{"com.microsoft", "MultiHeadAttention"}, {1, 12, 1, 6}},
        {{"com.microsoft", "SkipLayerNormalization"}, {3, 5, 1, 4}},
        {{"com.microsoft", "SkipSimplifiedLayerNormalization"}, {3, 4, 1, 4}},
        // opscope's own.
        {{"ai.opscope", "Attention"}, {3, 12, 1, 6}},
        {{"ai.opscope", "ChannelShuffle"}, {1, 1, 1, 1}},
        {{"ai.opscope", "Eltwise"}, {1, INT_MAX, 1, 1}},
        {{"ai.opscope", "FusedConv"}, {2, 4, 1, 1}},
        {{"ai.opscope", "FusedGemm"}, {2, 3, 1, 1}},
        {{"ai.opscope", "FusedMatMul"}, {2, 2, 1, 1}},
        {{"ai.opscope", "Gelu"}, {1, 1, 1, 1}},
        {{"ai.opscope", "HardSwish"}, {1, 1, 1, 1}},
        {{"ai.opscope", "Swish"}, {1, 1, 1, 1}},
        {{"ai.opscope", "LayerNormalization"}, {2, 3, 1, 3}},
        {{"ai.opscope", "RMSNormalization"}, {2, 2, 1, 1}},
        {{"ai.opscope", "NchwcConv"}, {2, 4, 1, 1}},
        {{"ai.opscope", "NhwcConv"}, {2, 4, 1, 1}},
        {{"ai.opscope", "NchwcBatchNormalization"}, {5, 5, 1, 1}},
        {{"ai.opscope", "NhwcBatchNormalization"}, {5, 5, 1, 1}},
        {{"ai.opscope", "NchwcMaxPool"}, {1, 1, 1, 2}},
        {{"ai.opscope", "NhwcMaxPool"}, {1, 1, 1, 2}},
        {{"ai.opscope", "NchwcAveragePool"}, {1, 1, 1, 1}},
        {{"ai.opscope", "NhwcAveragePool"}, {1, 1, 1, 1}},
        {{"ai.opscope", "NchwcGlobalAveragePool"}, {1, 1, 1, 1}},
        {{"ai.opscope", "NhwcGlobalAveragePool"}, {1, 1, 1, 1}},
        {{"ai.opscope", "NchwcGlobalMaxPool"}, {1, 1, 1, 1}},
        {{"ai.opscope", "NhwcGlobalMaxPool"}, {1, 1, 1, 1}},
        {{"ai.opscope", "ReorderInput"}, {1, 1, 1, 1}},
        {{"ai.opscope", "ReorderOutput"}, {1, 1, 1, 1}},
        {{"ai.opscope", "Send"}, {1, 1, 1, 1}},
        {{"ai.opscope", "Recv"}, {1, 1, 1, 1}},
    };
    return t;
}

} // namespace

std::optional<OpArity> extraArity(const std::string &domain, const std::string &op)
{
    const auto it = table().find({domain == "ai.onnx" ? std::string() : domain, op});
    if (it == table().end())
        return std::nullopt;
    return it->second;
}

} // namespace opscope
