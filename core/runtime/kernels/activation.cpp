// Activations (float types), Clip, PRelu, and Softmax/LogSoftmax/Hardmax; opscope's Swish and
// ONNX Runtime's QuickGelu.

#include "runtime/kernels/dnnleltwise.h"
#include "runtime/kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace opscope {
namespace kernels {
namespace {

Status reluKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>)
            return ctx.unsupported("Relu on bool");
        else
            return unaryKernel<T, T>(ctx, x, x.dtype(), [](T v) {
                // Written as a select so it vectorizes; NaN fails the test and propagates, like max(x, 0).
                return ComputeType<T>(v) < 0 ? T(0) : v;
            });
    });
}

Status leakyReluKernel(KernelContext &ctx)
{
    const float alpha = ctx.attrFloat("alpha", 0.01f);
    // max/min instead of a branch: random signs would mispredict half the time. NaN propagates.
    return unaryFloat(ctx, [alpha](auto v) {
        using C = decltype(v);
        return std::max(v, C(0)) + C(alpha) * std::min(v, C(0));
    });
}

Status sigmoidKernel(KernelContext &ctx)
{
    if (Status st; fastEltwise(ctx, FastEltwise::Sigmoid, 0.0f, &st))
        return st;
    // exp of −|v| never overflows; the sign is applied as a select, not a branch.
    return unaryFloat(ctx, [](auto v) {
        using C = decltype(v);
        const C r = C(1) / (C(1) + std::exp(-std::abs(v)));
        return v >= 0 ? r : C(1) - r;
    });
}

Status hardSigmoidKernel(KernelContext &ctx)
{
    const float alpha = ctx.attrFloat("alpha", 0.2f), beta = ctx.attrFloat("beta", 0.5f);
    return unaryFloat(ctx, [=](auto v) {
        using C = decltype(v);
        // min/max, not std::clamp, so it vectorizes; operand order keeps NaN propagating.
        return std::max(std::min(C(alpha) * v + C(beta), C(1)), C(0));
    });
}

Status hardSwishKernel(KernelContext &ctx)
{
    return unaryFloat(ctx, [](auto v) {
        using C = decltype(v);
        // ONNX's definition, x·max(0, min(1, x/6 + ½)), with min/max so it vectorizes (std::clamp
        // does not). NaN propagates through the product.
        return v * std::max(std::min(v * C(1.0 / 6.0) + C(0.5), C(1)), C(0));
    });
}

Status eluKernel(KernelContext &ctx)
{
    const float alpha = ctx.attrFloat("alpha", 1.0f);
    if (Status st; fastEltwise(ctx, FastEltwise::Elu, alpha, &st))
        return st;
    return unaryFloat(ctx, [alpha](auto v) { return v >= 0 ? v : decltype(v)(alpha) * std::expm1(v); });
}

Status seluKernel(KernelContext &ctx)
{
    const float alpha = ctx.attrFloat("alpha", 1.67326319217681884765625f);
    const float gamma = ctx.attrFloat("gamma", 1.05070102214813232421875f);
    return unaryFloat(ctx, [=](auto v) {
        using C = decltype(v);
        return v > 0 ? C(gamma) * v : C(gamma) * (C(alpha) * std::exp(v) - C(alpha));
    });
}

Status celuKernel(KernelContext &ctx)
{
    const float alpha = ctx.attrFloat("alpha", 1.0f);
    return unaryFloat(ctx, [alpha](auto v) {
        using C = decltype(v);
        return std::max(C(0), v) + std::min(C(0), C(alpha) * std::expm1(v / C(alpha)));
    });
}

Status softplusKernel(KernelContext &ctx)
{
    if (Status st; fastEltwise(ctx, FastEltwise::SoftPlus, 0.0f, &st))
        return st;
    return unaryFloat(ctx, [](auto v) { return v > 20 ? v : std::log1p(std::exp(v)); });
}

Status softsignKernel(KernelContext &ctx)
{
    return unaryFloat(ctx, [](auto v) { return v / (decltype(v)(1) + std::abs(v)); });
}

Status thresholdedReluKernel(KernelContext &ctx)
{
    const float alpha = ctx.attrFloat("alpha", 1.0f);
    return unaryFloat(ctx, [alpha](auto v) { return v > decltype(v)(alpha) ? v : decltype(v)(0); });
}

Status geluKernel(KernelContext &ctx)
{
    const bool tanhApprox = ctx.attrString("approximate", "none") == "tanh";
    if (tanhApprox)
        return blockedUnary(ctx, geluTanhBlockF32, [](auto v) {
            using C = decltype(v);
            return C(0.5) * v * (C(1) + std::tanh(C(0.7978845608028654) * (v + C(0.044715) * v * v * v)));
        });
    if (Status st; fastEltwise(ctx, FastEltwise::GeluErf, 0.0f, &st))
        return st;
    return unaryFloat(ctx, [](auto v) {
        using C = decltype(v);
        return C(0.5) * v * (C(1) + std::erf(v * C(0.7071067811865476)));
    });
}

// x·Sigmoid(alpha·x): opscope's Swish (alpha 1, swish-fusion) and ONNX Runtime's QuickGelu
// (alpha 1.702 unless given).
Status swishWith(KernelContext &ctx, float alpha)
{
    if (Status st; fastEltwise(ctx, FastEltwise::Swish, alpha, &st))
        return st;
    return unaryFloat(ctx, [alpha](auto v) {
        using C = decltype(v);
        const C z = C(alpha) * v;
        const C r = C(1) / (C(1) + std::exp(-std::abs(z)));
        return v * (z >= 0 ? r : C(1) - r);
    });
}

Status swishKernel(KernelContext &ctx)
{
    return swishWith(ctx, ctx.attrFloat("alpha", 1.0f));
}

Status quickGeluKernel(KernelContext &ctx)
{
    return swishWith(ctx, ctx.attrFloat("alpha", 1.702f));
}

Status shrinkKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const double bias = ctx.attrFloat("bias", 0.0f), lambd = ctx.attrFloat("lambd", 0.5f);
    const RuntimeTensor &x = ctx.in(0);
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>)
            return ctx.unsupported("Shrink on bool");
        else
            return unaryKernel<T, T>(ctx, x, x.dtype(), [=](T t) {
                const double v = double(ComputeType<T>(t));
                return static_cast<T>(static_cast<ComputeType<T>>(v < -lambd  ? v + bias
                                                                  : v > lambd ? v - bias
                                                                              : 0.0));
            });
    });
}

Status clipKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        if constexpr (std::is_same_v<T, bool>) {
            return ctx.unsupported("Clip on bool");
        } else {
            C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
            if (ctx.opset() < 11) {
                // The float attributes clamped into C first: ±FLT_MAX does not fit an integer type
                // (undefined behaviour, found by the run fuzzer on a uint8 Clip).
                const auto bound = [](float v) -> C {
                    if constexpr (std::is_integral_v<C>) {
                        const double d = std::isnan(v) ? 0.0 : double(v);
                        if (d >= double(std::numeric_limits<C>::max())) // ≥, as int64's max rounds up
                            return std::numeric_limits<C>::max();
                        if (d <= double(std::numeric_limits<C>::lowest()))
                            return std::numeric_limits<C>::lowest();
                        return static_cast<C>(d);
                    } else {
                        return static_cast<C>(v);
                    }
                };
                lo = bound(ctx.attrFloat("min", -std::numeric_limits<float>::max()));
                hi = bound(ctx.attrFloat("max", std::numeric_limits<float>::max()));
            } else {
                if (const RuntimeTensor *m = ctx.input(1); m && m->elementCount() > 0)
                    lo = C(m->data<T>()[0]);
                if (const RuntimeTensor *m = ctx.input(2); m && m->elementCount() > 0)
                    hi = C(m->data<T>()[0]);
            }
            // Both comparisons are false for NaN, so NaN passes through without a branch.
            return unaryKernel<T, T>(ctx, x, x.dtype(), [lo, hi](T v) {
                const C c = v;
                return static_cast<T>(c < lo ? lo : (c > hi ? hi : c));
            });
        }
    });
}

Status preluKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0);
    RuntimeTensor slope = ctx.in(1);
    // Before opset 7 a 1-D slope with C entries applies along the channel axis.
    if (ctx.opset() < 7 && slope.rank() == 1 && x.rank() > 2 && slope.dim(0) == x.dim(1) &&
        slope.dim(0) != x.dim(x.rank() - 1)) {
        Shape64 shape(x.rank() - 1, 1);
        shape[0] = slope.dim(0);
        slope = slope.reshaped(shape);
    }
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        if constexpr (std::is_same_v<T, bool>)
            return ctx.unsupported("PRelu on bool");
        else
            return binaryKernel<T, T, T>(ctx, x, slope, x.dtype(), [](T v, T s) {
                return C(v) < 0 ? static_cast<T>(static_cast<C>(C(s) * C(v))) : v;
            });
    });
}

enum class SoftmaxKind
{
    Softmax,
    LogSoftmax,
    Hardmax
};

// Opset < 13 flattens to 2-D at `axis` (default 1); opset 13 works along one axis (default -1).
template<SoftmaxKind K>
Status softmaxKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const auto rank = static_cast<std::int64_t>(x.rank());
    const Expected<std::int64_t> axis =
        normalizeAxis(ctx.attrInt("axis", ctx.opset() < 13 ? 1 : -1), rank, ctx);
    if (!axis)
        return axis.status();
    std::int64_t outer, len, inner;
    if (ctx.opset() < 13) {
        outer = product(x.shape(), 0, std::size_t(*axis));
        len = product(x.shape(), std::size_t(*axis));
        inner = 1;
    } else {
        outer = product(x.shape(), 0, std::size_t(*axis));
        len = rank ? x.dim(std::size_t(*axis)) : 1;
        inner = product(x.shape(), std::size_t(*axis) + 1);
    }
    // No values, but possibly 2^42 empty rows ([2^40, 4, 0]: the loops below ran for hours).
    if (x.elementCount() == 0) {
        Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
        return out ? Status::ok() : out.status();
    }
    if constexpr (K != SoftmaxKind::Hardmax) {
        // float32 of some size: oneDNN's vectorized, threaded softmax (a libm exp per element otherwise).
        if (x.dtype() == DataType::Float && x.elementCount() >= 256) {
            Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, x.shape());
            if (!out)
                return out.status();
            if (dnnlSoftmax(x.data<float>(), (*out)->mutableData<float>(), outer, len, inner,
                            K == SoftmaxKind::LogSoftmax))
                return Status::ok();
        }
    }
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
        if (!out)
            return out.status();
        const T *px = x.data<T>();
        T *po = (*out)->template mutableData<T>();
        parallelFor(
            outer * inner,
            [&](std::int64_t job) {
                const std::int64_t o = job / inner, i = job % inner;
                const T *src = px + o * len * inner + i;
                T *dst = po + o * len * inner + i;
                C mx = -std::numeric_limits<C>::infinity();
                std::int64_t arg = 0;
                for (std::int64_t k = 0; k < len; ++k)
                    if (C(src[k * inner]) > mx) {
                        mx = src[k * inner];
                        arg = k;
                    }
                if constexpr (K == SoftmaxKind::Hardmax) {
                    for (std::int64_t k = 0; k < len; ++k)
                        dst[k * inner] = T(k == arg ? 1.0f : 0.0f);
                    return;
                }
                C sum = 0;
                for (std::int64_t k = 0; k < len; ++k)
                    sum += std::exp(C(src[k * inner]) - mx);
                for (std::int64_t k = 0; k < len; ++k) {
                    const C shifted = C(src[k * inner]) - mx;
                    dst[k * inner] = static_cast<T>(K == SoftmaxKind::Softmax ? std::exp(shifted) / sum
                                                                              : shifted - std::log(sum));
                }
            },
            64);
        return Status::ok();
    });
}

} // namespace

bool fastEltwise(KernelContext &ctx, FastEltwise op, float alpha, Status *status)
{
    const RuntimeTensor *x = ctx.input(0);
    if (!x || x->dtype() != DataType::Float || x->elementCount() < 64)
        return false;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, x->shape());
    if (!out) {
        if (status)
            *status = out.status();
        return true;
    }
    if (dnnlEltwise(op, x->data<float>(), (*out)->mutableData<float>(), x->elementCount(), alpha))
        return true;
    ctx.setOutput(0, RuntimeTensor()); // oneDNN declined: the caller's loop writes it
    return false;
}

} // namespace kernels

void registerActivationKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("Relu", reluKernel);
    r.add("LeakyRelu", leakyReluKernel);
    r.add("Sigmoid", sigmoidKernel);
    r.add("HardSigmoid", hardSigmoidKernel);
    r.add("HardSwish", hardSwishKernel);
    r.add("ai.opscope", "HardSwish", 1, hardSwishKernel); // below opset 14 (hardswish-fusion)
    r.add("ai.opscope", "Swish", 1, swishKernel);
    r.add("com.microsoft", "QuickGelu", 1, quickGeluKernel);
    r.add("Elu", eluKernel);
    r.add("Selu", seluKernel);
    r.add("Celu", celuKernel);
    r.add("Softplus", softplusKernel);
    r.add("Softsign", softsignKernel);
    r.add("ThresholdedRelu", thresholdedReluKernel);
    r.add("Gelu", geluKernel);
    r.add("ai.opscope", "Gelu", 1, geluKernel);
    r.add("com.microsoft", "Gelu", 1, geluKernel);
    r.add("Shrink", shrinkKernel);
    r.add("Clip", clipKernel);
    r.add("PRelu", preluKernel);
    r.add("Softmax", softmaxKernel<SoftmaxKind::Softmax>);
    r.add("LogSoftmax", softmaxKernel<SoftmaxKind::LogSoftmax>);
    r.add("Hardmax", softmaxKernel<SoftmaxKind::Hardmax>);
}

} // namespace opscope
