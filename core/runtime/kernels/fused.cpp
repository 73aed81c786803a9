// opscope's fused operators (domain ai.opscope, see docs/operators.md) and the ONNX Runtime
// com.microsoft ops they map to, so an optimized model runs here whichever target it was saved for.
//   FusedGemm(A,B,C)      Gemm, then the activation on the output
//   FusedMatMul(A,B,bias) alpha·(A·B) + bias (bias over the last axis), MatMul broadcasting
//   ChannelShuffle(x)     x[N,C,…] with channels regrouped: out[:, a·g + b] = x[:, b·(C/g) + a]
//   BiasGelu(A,B)         com.microsoft: Gelu(A + B)
//   Send(x) / Recv(x)     a cross-device transfer (schedule/partition.h): Recv copies into its device's memory
// (LayerNormalization and Gelu in ai.opscope reuse the ONNX kernels: norm.cpp, activation.cpp.)
// FusedConv lives with Conv (conv.cpp): its activation is a oneDNN post-op.

#include "runtime/kernels/fusedactivation.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernelutil.h"

#include <cmath>
#include <cstring>

namespace opscope {
namespace kernels {
namespace {

Status fusedGemmKernel(KernelContext &ctx)
{
    const Expected<FusedActivation> act = FusedActivation::fromNode(ctx);
    if (!act)
        return act.status();
    OPSCOPE_TRY(gemmKernel(ctx));
    RuntimeTensor *y = ctx.output(0);
    if (act->kind != FusedActivation::Kind::None) {
        if (!y || y->dtype() != DataType::Float)
            return ctx.unsupported("FusedGemm activations are implemented for float32");
        act->apply(y->mutableData<float>(), y->elementCount());
    }
    return Status::ok();
}

Status fusedMatMulKernel(KernelContext &ctx)
{
    if (ctx.attrInt("transA", 0) || ctx.attrInt("transB", 0) || ctx.attrInt("transBatchA", 0) ||
        ctx.attrInt("transBatchB", 0))
        return ctx.unsupported("FusedMatMul with transposed operands");
    OPSCOPE_TRY(matMulKernel(ctx));
    RuntimeTensor *y = ctx.output(0);
    const float alpha = ctx.attrFloat("alpha", 1.0f);
    const RuntimeTensor *bias = ctx.input(2);
    if (alpha == 1.0f && !bias)
        return Status::ok();
    if (!y || y->dtype() != DataType::Float || y->rank() == 0)
        return ctx.unsupported("FusedMatMul scaling is implemented for float32");
    const std::int64_t n = y->shape().back();
    if (bias && (bias->dtype() != DataType::Float || bias->elementCount() != n))
        return ctx.fail("bias " + bias->shapeText() + " must have the " + std::to_string(n) +
                        " values of the last axis");
    float *p = y->mutableData<float>();
    const float *b = bias ? bias->data<float>() : nullptr;
    const std::int64_t rows = n == 0 ? 0 : y->elementCount() / n;
    parallelFor(
        rows,
        [&](std::int64_t r) {
            float *row = p + r * n;
            for (std::int64_t j = 0; j < n; ++j)
                row[j] = alpha * row[j] + (b ? b[j] : 0.0f);
        },
        256);
    return Status::ok();
}

// com.microsoft.BiasGelu(A, B) = Gelu(A + B), B one value per element of A's last axis.
Status biasGeluKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &a = ctx.in(0), &b = ctx.in(1);
    if (a.dtype() != DataType::Float || b.dtype() != DataType::Float)
        return ctx.unsupported("BiasGelu is implemented for float32");
    const std::int64_t n = a.rank() ? a.shape().back() : 1;
    if (b.elementCount() != n)
        return ctx.fail("bias " + b.shapeText() + " must have the " + std::to_string(n) +
                        " values of the last axis");
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, a.shape());
    if (!out)
        return out.status();
    const float *pa = a.data<float>(), *pb = b.data<float>();
    float *po = (*out)->mutableData<float>();
    parallelFor(a.elementCount(), [&](std::int64_t i) {
        const float v = pa[i] + pb[i % n];
        po[i] = 0.5f * v * (1.0f + std::erf(v * 0.70710678f));
    });
    return Status::ok();
}

// Recv copies the tensor into memory its own device allocated — between CPU devices, a memcpy
// between their arenas. (Send hands the tensor on: it is Identity's kernel, shapeops.cpp.)
Status recvKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (x.dtype() == DataType::String)
        return ctx.unsupported("Recv of a string tensor");
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    if (x.byteSize())
        std::memcpy((*out)->mutableBytes(), x.bytes(), x.byteSize());
    return Status::ok();
}

Status channelShuffleKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const std::int64_t g = ctx.attrInt("group", 1);
    if (x.rank() < 2)
        return ctx.fail("ChannelShuffle needs [N,C,…], got " + x.shapeText());
    const std::int64_t n = x.dim(0), c = x.dim(1);
    if (g <= 0 || c % g != 0)
        return ctx.fail(std::to_string(c) + " channels do not split into " + std::to_string(g) + " groups");
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    const std::int64_t per = c / g;
    const std::size_t plane =
        static_cast<std::size_t>(c == 0 || n == 0 ? 0 : x.elementCount() / (n * c)) * dataTypeSize(x.dtype());
    const std::byte *src = x.bytes();
    std::byte *dst = (*out)->mutableBytes();
    parallelFor(
        n * c,
        [&](std::int64_t i) {
            const std::int64_t batch = i / c, oc = i % c;
            const std::int64_t a = oc / g, b = oc % g;
            const std::int64_t ic = b * per + a;
            std::memcpy(dst + static_cast<std::size_t>(i) * plane,
                        src + static_cast<std::size_t>(batch * c + ic) * plane, plane);
        },
        64);
    return Status::ok();
}

} // namespace
} // namespace kernels

void registerFusedKernels(KernelRegistry &r)
{
    using namespace kernels;
    for (const char *domain : {"ai.opscope", "com.microsoft"}) {
        r.add(domain, "FusedGemm", 1, fusedGemmKernel);
        r.add(domain, "FusedMatMul", 1, fusedMatMulKernel);
    }
    r.add("ai.opscope", "ChannelShuffle", 1, channelShuffleKernel);
    r.add("com.microsoft", "BiasGelu", 1, biasGeluKernel);
    r.add("ai.opscope", "Recv", 1, recvKernel);
}

} // namespace opscope
