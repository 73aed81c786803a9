// opscope's fused operators (domain ai.opscope, see docs/operators.md) and the ONNX Runtime
// com.microsoft ops they map to, so an optimized model runs here whichever target it was saved for.
//   FusedGemm(A,B,C)      Gemm, then the activation on the output
//   FusedMatMul(A,B,bias) alpha·(op(A)·op(B)) + bias (bias over the last axis), MatMul broadcasting;
//                         op transposes the last two axes when transA / transB
//   Eltwise(x0,x1,…)      Σ coefficients[i]·xi, broadcasting
//   ChannelShuffle(x)     x[N,C,…] with channels regrouped: out[:, a·g + b] = x[:, b·(C/g) + a]
//   BiasGelu(A,B)         com.microsoft: Gelu(A + B); FastGelu(A[,B]) the tanh form
//   Send(x) / Recv(x)     a cross-device transfer (schedule/partition.h): Recv copies into the
//                         memory of its own device
// (LayerNormalization and Gelu in ai.opscope reuse the ONNX kernels: norm.cpp, activation.cpp.)
// FusedConv lives with Conv (conv.cpp): its activation is a oneDNN post-op.

#include "runtime/kernels/dnnleltwise.h"
#include "runtime/kernels/elementwise.h"
#include "runtime/kernels/fusedactivation.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernelutil.h"

#include <algorithm>
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
    if (act->kind != FusedActivation::Kind::None || act->hasPost()) {
        if (!y || y->dtype() != DataType::Float)
            return ctx.unsupported("FusedGemm activations are implemented for float32");
        act->apply(y->mutableData<float>(), y->elementCount());
    }
    return Status::ok();
}

Status fusedMatMulKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    if (ctx.attrInt("transBatchA", 0) || ctx.attrInt("transBatchB", 0))
        return ctx.unsupported("FusedMatMul with transBatchA/transBatchB");
    const RuntimeTensor &a = ctx.in(0), &b = ctx.in(1);
    const RuntimeTensor *bias = ctx.input(2);
    const bool ta = ctx.attrInt("transA", 0) != 0, tb = ctx.attrInt("transB", 0) != 0;
    const float alpha = ctx.attrFloat("alpha", 1.0f);
    if (a.dtype() != DataType::Float || b.dtype() != DataType::Float) {
        if (ta || tb || alpha != 1.0f || bias)
            return ctx.unsupported("FusedMatMul with transposes, alpha or bias is implemented for float32");
        return matMulKernel(ctx);
    }
    if ((ta && a.rank() < 2) || (tb && b.rank() < 2))
        return ctx.fail("a transposed operand must be at least 2-D, got " + a.shapeText() + " × " +
                        b.shapeText());
    // The transposes are read in place by the GEMM: only the shapes are swapped here.
    Shape64 as = a.shape(), bs = b.shape();
    if (ta)
        std::swap(as[as.size() - 1], as[as.size() - 2]);
    if (tb)
        std::swap(bs[bs.size() - 1], bs[bs.size() - 2]);
    const Expected<MatMulShape> mm = matMulShape(ctx, as, bs);
    if (!mm)
        return mm.status();
    const std::int64_t m = mm->m, n = mm->n, k = mm->k;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, mm->outShape);
    if (!out)
        return out.status();
    const float *pa = a.data<float>(), *pb = b.data<float>();
    float *po = (*out)->mutableData<float>();
    for (std::size_t i = 0; i < mm->aBatch.size(); ++i)
        OPSCOPE_TRY(gemmF32(ta, tb, m, n, k, alpha, pa + mm->aBatch[i] * m * k, ta ? m : k,
                            pb + mm->bBatch[i] * k * n, tb ? k : n, 0.0f, po + std::int64_t(i) * m * n, n));
    if (!bias)
        return Status::ok();
    const RuntimeTensor &y = **out;
    const std::int64_t cols = y.rank() ? y.shape().back() : 1;
    if (bias->dtype() != DataType::Float || bias->elementCount() != cols)
        return ctx.fail("bias " + bias->shapeText() + " must have the " + std::to_string(cols) +
                        " values of the last axis");
    const float *pbias = bias->data<float>();
    const std::int64_t rows = cols == 0 ? 0 : y.elementCount() / cols;
    parallelFor(
        rows,
        [&](std::int64_t r) {
            float *row = po + r * cols;
            for (std::int64_t j = 0; j < cols; ++j)
                row[j] += pbias[j];
        },
        256);
    return Status::ok();
}

// Eltwise(x0, x1, …) = Σ coefficients[i]·xi with multidirectional broadcasting (eltwise-fusion).
Status eltwiseKernel(KernelContext &ctx)
{
    const std::vector<float> coef = ctx.attrFloats("coefficients");
    const std::size_t count = ctx.inputCount();
    if (count == 0 || coef.size() != count)
        return ctx.fail(std::to_string(coef.size()) + " coefficients for " + std::to_string(count) +
                        " inputs");
    OPSCOPE_TRY(ctx.requireInputs(count));
    std::vector<const Shape64 *> shapes;
    for (std::size_t i = 0; i < count; ++i) {
        if (ctx.in(i).dtype() != DataType::Float)
            return ctx.unsupported("Eltwise is implemented for float32");
        shapes.push_back(&ctx.in(i).shape());
    }
    const Expected<Broadcast> bc = Broadcast::of(shapes, ctx);
    if (!bc)
        return bc.status();
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, bc->outShape);
    if (!out)
        return out.status();
    float *dst = (*out)->mutableData<float>();
    // Rows of the coalesced broadcast; a same-shape sum is cut into chunks so it still parallelizes.
    const BroadcastRows br = BroadcastRows::of(*bc);
    const std::int64_t chunk = br.rows == 1 ? std::min<std::int64_t>(br.rowLength, 16384) : br.rowLength;
    const std::int64_t pieces = chunk == 0 ? 0 : br.rows * ((br.rowLength + chunk - 1) / chunk);
    const std::int64_t perRow = chunk == 0 ? 1 : (br.rowLength + chunk - 1) / chunk;
    parallelFor(
        pieces,
        [&](std::int64_t piece) {
            const std::int64_t row = piece / perRow, begin = (piece % perRow) * chunk;
            const std::int64_t len = std::min(chunk, br.rowLength - begin);
            float *o = dst + row * br.rowLength + begin;
            // Stride 1 (the input varies along the row) or 0 (one value for the whole row), each
            // its own loop so both vectorize.
            for (std::size_t i = 0; i < count; ++i) {
                const float c = coef[i];
                const bool varies = br.innerStride[i] != 0;
                const float *x = ctx.in(i).data<float>() + br.offset(row, i) + (varies ? begin : 0);
                if (!varies) {
                    const float v = c * x[0];
                    if (i == 0)
                        std::fill(o, o + len, v);
                    else
                        for (std::int64_t j = 0; j < len; ++j)
                            o[j] += v;
                } else if (i == 0) {
                    for (std::int64_t j = 0; j < len; ++j)
                        o[j] = c * x[j];
                } else {
                    for (std::int64_t j = 0; j < len; ++j)
                        o[j] += c * x[j];
                }
            }
        },
        (*out)->elementCount() < 32768 ? pieces + 1 : 1); // small sums stay on this thread
    return Status::ok();
}

// com.microsoft.BiasGelu(A, B) = Gelu(A + B) and FastGelu(A[, B]) = tanh-Gelu(A + B), B one value
// per element of A's last axis.
template<bool Tanh>
Status biasGeluKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(Tanh ? 1 : 2));
    const RuntimeTensor &a = ctx.in(0);
    const RuntimeTensor *b = ctx.input(1);
    if (a.dtype() != DataType::Float || (b && b->dtype() != DataType::Float))
        return ctx.unsupported(std::string(Tanh ? "FastGelu" : "BiasGelu") + " is implemented for float32");
    const std::int64_t n = a.rank() ? a.shape().back() : 1;
    if (b && b->elementCount() != n)
        return ctx.fail("bias " + b->shapeText() + " must have the " + std::to_string(n) +
                        " values of the last axis");
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, a.shape());
    if (!out)
        return out.status();
    const float *pa = a.data<float>(), *pb = b ? b->data<float>() : nullptr;
    float *po = (*out)->mutableData<float>();
    // The sum, then a vectorized GELU in place: the tanh form through opscope's own blocks
    // (oneDNN's is slow on AVX2), the erf form through oneDNN, or the scalar loop if it declines.
    parallelFor(a.elementCount(), [&](std::int64_t i) { po[i] = pa[i] + (pb ? pb[i % n] : 0.0f); });
    if constexpr (Tanh) {
        const std::int64_t total = a.elementCount(), blocks = (total + 4095) / 4096;
        // parallelFor's grain counts iterations: here a 4096-value block each, so threads from
        // 16 blocks on (the default grain would keep a [1,128,3072] FastGelu on one thread).
        parallelFor(
            blocks,
            [&](std::int64_t k) {
                geluTanhBlockF32(po + k * 4096, po + k * 4096, std::min<std::int64_t>(4096, total - k * 4096));
            },
            blocks < 16 ? blocks + 1 : 1);
    } else if (!dnnlEltwise(FastEltwise::GeluErf, po, po, a.elementCount())) {
        parallelFor(a.elementCount(), [&](std::int64_t i) { po[i] = 0.5f * po[i] * (1.0f + std::erf(po[i] * 0.70710678f)); });
    }
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
    if (x.elementCount() == 0) // no values, but maybe 2^41 empty planes to walk
        return Status::ok();
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
    r.add("ai.opscope", "Eltwise", 1, eltwiseKernel);
    r.add("ai.opscope", "ChannelShuffle", 1, channelShuffleKernel);
    r.add("com.microsoft", "BiasGelu", 1, biasGeluKernel<false>);
    r.add("com.microsoft", "FastGelu", 1, biasGeluKernel<true>);
    r.add("ai.opscope", "Recv", 1, recvKernel);
}

} // namespace opscope
