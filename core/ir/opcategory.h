#pragma once
// Which family an operator belongs to, for colouring graph views and timelines consistently.

#include <string_view>

namespace opscope {

enum class OpCategory
{
    Compute,       // Conv, MatMul, Gemm, RNNs: the heavy arithmetic
    Activation,    // Relu, Sigmoid, Gelu, Softmax...
    Normalization, // BatchNormalization, LayerNormalization...
    Elementwise,   // Add, Mul, Pow, comparisons, logic
    ShapeLayout,   // Reshape, Transpose, Concat, Slice, Gather, Cast...
    Reduction,     // ReduceMean, pooling, ArgMax, TopK
    ControlFlow,   // If, Loop, Scan
    Fused,         // opscope's and ONNX Runtime's fused ops
    Quantization,  // QuantizeLinear, QLinearConv...
    Communication, // Send/Recv, collectives
    Other,
};

OpCategory opCategory(std::string_view opType, std::string_view domain);
std::string_view opCategoryName(OpCategory c);

} // namespace opscope
