#include "ir/opcategory.h"

#include <array>
#include <string>
#include <unordered_map>

namespace opscope {

namespace {

const std::unordered_map<std::string_view, OpCategory> &table()
{
    using C = OpCategory;
    static const std::unordered_map<std::string_view, OpCategory> t = [] {
        std::unordered_map<std::string_view, OpCategory> m;
        auto add = [&](C c, std::initializer_list<std::string_view> ops) {
            for (std::string_view op : ops)
                m.emplace(op, c);
        };
        add(C::Compute, {"Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum", "LSTM", "GRU", "RNN",
                         "ConvInteger", "MatMulInteger", "Attention", "MultiHeadAttention"});
        add(C::Activation,
            {"Relu",       "LeakyRelu", "PRelu",    "Sigmoid", "HardSigmoid",     "HardSwish", "Tanh",
             "Gelu",       "Elu",       "Selu",     "Celu",    "Softplus",        "Softsign",  "Softmax",
             "LogSoftmax", "Hardmax",   "Clip",     "Mish",    "ThresholdedRelu", "Erf",       "BiasGelu",
             "FastGelu",   "Swish",     "QuickGelu"});
        add(C::Normalization, {"BatchNormalization", "LayerNormalization", "InstanceNormalization",
                               "GroupNormalization", "LRN", "MeanVarianceNormalization", "LpNormalization",
                               "SkipLayerNormalization", "SimplifiedLayerNormalization", "RMSNormalization"});
        add(C::Elementwise,
            {"Add",      "Sub",    "Mul",    "Div",        "Pow",     "Sqrt",        "Exp",
             "Log",      "Neg",    "Abs",    "Reciprocal", "Floor",   "Ceil",        "Round",
             "Sign",     "Sin",    "Cos",    "Tan",        "Max",     "Min",         "Mean",
             "Sum",      "Mod",    "Equal",  "Less",       "Greater", "LessOrEqual", "GreaterOrEqual",
             "And",      "Or",     "Xor",    "Not",        "Where",   "IsNaN",       "IsInf",
             "BitShift", "CumSum", "Eltwise"});
        add(C::ShapeLayout, {"Reshape",
                             "Transpose",
                             "Concat",
                             "Split",
                             "Slice",
                             "Gather",
                             "GatherElements",
                             "GatherND",
                             "Scatter",
                             "ScatterND",
                             "ScatterElements",
                             "Squeeze",
                             "Unsqueeze",
                             "Flatten",
                             "Expand",
                             "Tile",
                             "Pad",
                             "Shape",
                             "Size",
                             "Cast",
                             "CastLike",
                             "Identity",
                             "Dropout",
                             "ConstantOfShape",
                             "Constant",
                             "Range",
                             "Resize",
                             "Upsample",
                             "DepthToSpace",
                             "SpaceToDepth",
                             "NonZero",
                             "OneHot",
                             "Trilu",
                             "ChannelShuffle",
                             "EyeLike"});
        add(C::Reduction,
            {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
             "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "MaxPool", "AveragePool",
             "GlobalAveragePool", "GlobalMaxPool", "LpPool", "ArgMax", "ArgMin", "TopK"});
        add(C::ControlFlow, {"If", "Loop", "Scan"});
        add(C::Quantization, {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
                              "QLinearMatMul", "QLinearAdd", "QLinearMul"});
        add(C::Communication, {"Send", "Recv", "AllReduce", "AllGather", "ReduceScatter", "Broadcast"});
        return m;
    }();
    return t;
}

} // namespace

OpCategory opCategory(std::string_view opType, std::string_view domain)
{
    if (opType.rfind("Fused", 0) == 0 || opType == "BiasGelu")
        return OpCategory::Fused;
    if (domain == "ai.opscope" && opType != "ChannelShuffle")
        return OpCategory::Fused;
    const auto it = table().find(opType);
    return it == table().end() ? OpCategory::Other : it->second;
}

std::string_view opCategoryName(OpCategory c)
{
    static constexpr std::array<std::string_view, 11> names{
        "compute",      "activation", "normalization", "elementwise",   "shape/layout", "reduction",
        "control flow", "fused",      "quantization",  "communication", "other"};
    const auto i = static_cast<std::size_t>(c);
    return i < names.size() ? names[i] : std::string_view("idle"); // waits and host setup in traces
}

} // namespace opscope
