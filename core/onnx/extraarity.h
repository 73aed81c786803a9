#pragma once
// How many inputs and outputs the ops opscope runs but this libonnx has no schema for take:
// ONNX ops newer than its newest opset (Gelu-20, RMSNormalization-23), ONNX Runtime's contrib
// ops (com.microsoft) and opscope's own fused and layout ops (ai.opscope). Without a schema the
// structure checks had nothing to hold a node to, and passes and kernels that index a matched
// node's inputs (FusedMatMul's A and B) read past an empty list.

#include <optional>
#include <string>

namespace opscope {

struct OpArity
{
    int minInputs = 0, maxInputs = 0;   // inputs after minInputs are optional (may be omitted)
    int minOutputs = 1, maxOutputs = 1; // outputs after minOutputs are optional
};

// Null for an op not in the table. `domain` as in the model ("" or "ai.onnx" for ONNX's own).
std::optional<OpArity> extraArity(const std::string &domain, const std::string &op);

} // namespace opscope
