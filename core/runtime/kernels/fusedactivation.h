#pragma once
// The activation a fused kernel (FusedConv, FusedGemm) applies to its output. Read from the node
// in either attribute form: opscope's / ONNX Runtime FusedConv's `activation` + `activation_params`,
// or ONNX Runtime FusedGemm's `activation_alpha` / `activation_beta`.

#include "runtime/kernel.h"

namespace opscope::kernels {

struct FusedActivation
{
    enum class Kind
    {
        None,
        Relu,
        LeakyRelu,
        Clip,
        HardSigmoid,
        Sigmoid,
        Tanh,
        HardSwish,
        Swish, // x·Sigmoid(alpha·x)
    };
    Kind kind = Kind::None;
    float alpha = 0.0f, beta = 0.0f; // LeakyRelu: alpha; Clip: min, max; HardSigmoid: alpha, beta
    // FusedConv's `activation_post` = [scale, shift]: y = scale·activation(x) + shift.
    float postScale = 1.0f, postShift = 0.0f;
    bool hasPost() const { return postScale != 1.0f || postShift != 0.0f; }

    static Expected<FusedActivation> fromNode(const KernelContext &ctx);
    // In place.
    void apply(float *data, std::int64_t count) const;
};

} // namespace opscope::kernels
