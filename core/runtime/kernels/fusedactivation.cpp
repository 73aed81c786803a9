#include "runtime/kernels/fusedactivation.h"

#include "runtime/kernels/kernelutil.h"

#include <cmath>
#include <limits>

namespace opscope::kernels {

Expected<FusedActivation> FusedActivation::fromNode(const KernelContext &ctx)
{
    FusedActivation a;
    const std::vector<float> post = ctx.attrFloats("activation_post");
    if (!post.empty() && post.size() != 2)
        return ctx.fail("activation_post needs 2 values [scale, shift], got " + std::to_string(post.size()));
    if (post.size() == 2) {
        a.postScale = post[0];
        a.postShift = post[1];
    }
    const std::string name = ctx.attrString("activation", "");
    if (name.empty())
        return a;
    std::vector<float> params = ctx.attrFloats("activation_params");
    if (params.empty() && ctx.hasAttr("activation_alpha")) {
        params.push_back(ctx.attrFloat("activation_alpha"));
        if (ctx.hasAttr("activation_beta"))
            params.push_back(ctx.attrFloat("activation_beta"));
    }
    auto param = [&](std::size_t i, float fallback) { return i < params.size() ? params[i] : fallback; };
    using K = Kind;
    if (name == "Relu") {
        a.kind = K::Relu;
    } else if (name == "LeakyRelu") {
        a.kind = K::LeakyRelu;
        a.alpha = param(0, 0.01f);
    } else if (name == "Clip") {
        a.kind = K::Clip;
        a.alpha = param(0, std::numeric_limits<float>::lowest());
        a.beta = param(1, std::numeric_limits<float>::max());
    } else if (name == "HardSigmoid") {
        a.kind = K::HardSigmoid;
        a.alpha = param(0, 0.2f);
        a.beta = param(1, 0.5f);
    } else if (name == "Sigmoid") {
        a.kind = K::Sigmoid;
    } else if (name == "Tanh") {
        a.kind = K::Tanh;
    } else if (name == "HardSwish") {
        a.kind = K::HardSwish;
    } else if (name == "Swish") {
        a.kind = K::Swish;
        a.alpha = param(0, 1.0f);
    } else {
        return ctx.unsupported("fused activation '" + name + "'");
    }
    return a;
}

void FusedActivation::apply(float *data, std::int64_t count) const
{
    if (kind == Kind::None && !hasPost())
        return;
    const FusedActivation a = *this;
    parallelFor(count, [&](std::int64_t i) {
        {
            const float x = data[i];
            float y = x;
            switch (a.kind) {
            case Kind::None: break;
            case Kind::Relu: y = x > 0.0f ? x : 0.0f; break;
            case Kind::LeakyRelu: y = x >= 0.0f ? x : a.alpha * x; break;
            case Kind::Clip: y = std::fmin(std::fmax(x, a.alpha), a.beta); break;
            case Kind::HardSigmoid: y = std::fmax(0.0f, std::fmin(1.0f, a.alpha * x + a.beta)); break;
            case Kind::Sigmoid: y = 1.0f / (1.0f + std::exp(-x)); break;
            case Kind::Tanh: y = std::tanh(x); break;
            case Kind::HardSwish: y = x * std::fmax(0.0f, std::fmin(1.0f, x / 6.0f + 0.5f)); break;
            case Kind::Swish: y = x / (1.0f + std::exp(-a.alpha * x)); break;
            }
            data[i] = y * a.postScale + a.postShift;
        }
    });
}

} // namespace opscope::kernels
