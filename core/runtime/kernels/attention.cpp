// Fused scaled dot-product attention (ai.opscope::Attention, written by attention-fusion) and ONNX
// Runtime's com.microsoft.MultiHeadAttention in the form lower-to-ort writes:
//
//     out = Softmax(scale · Q·Kᵀ + mask) · V        per batch and head
//
// FlashAttention-style: for a block of query rows the keys are visited in tiles; each tile's
// scores are turned into probabilities with a running (online) row maximum and sum, and the
// output accumulator is rescaled whenever the maximum grows. The Sq×Sk score matrix never exists:
// the working set is one Br×Bc tile per thread, so memory stays linear in the sequence length.
//
// Layouts (attributes):
//   num_heads = 0   Q [B,H,Sq,D], K [B,H,Sk,D] (k_transposed=1: [B,H,D,Sk]), V [B,H,Sk,Dv];
//                   out [B,H,Sq,Dv] (transpose_output=1: [B,Sq,H,Dv]). B and H broadcast (1 → n).
//   num_heads = H   Q [B,Sq,H·D], K [B,Sk,H·D], V [B,Sk,H·Dv]; out [B,Sq,H·Dv].
//   mask (input 3, optional): float, added to the scores, broadcast to [B,H,Sq,Sk].
//   scale: default 1/√D.

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernelutil.h"
#include "util/cpuclones.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace opscope {
namespace kernels {
namespace {

// Element offset of (b, h, s, d) in a tensor; stride 0 where a dim broadcasts.
struct View
{
    const float *data = nullptr;
    std::int64_t b = 0, h = 0, s = 0, d = 0;
    const float *at(std::int64_t bi, std::int64_t hi, std::int64_t si) const
    {
        return data + bi * b + hi * h + si * s;
    }
};

struct Problem
{
    std::int64_t batch = 0, heads = 0, sq = 0, sk = 0, dk = 0, dv = 0;
    View q, k, v;
    float *out = nullptr;
    std::int64_t ob = 0, oh = 0, os = 0; // output strides (d stride 1)
    const float *mask = nullptr;
    std::int64_t mb = 0, mh = 0, mq = 0, mk = 0;
    float scale = 1.0f;
};

std::int64_t broadcastStride(std::int64_t dim, std::int64_t target, std::int64_t stride)
{
    return dim == 1 && target != 1 ? 0 : stride;
}

// max(init, row[0..n)), NaN skipped as std::max skips it, in eight lanes: a scalar max chain is
// bound by its latency.
OPSCOPE_CPU_CLONES float rowMaxF32(const float *row, std::int64_t n, float init)
{
    F32x8 m;
    for (int l = 0; l < 8; ++l)
        m[l] = init;
    std::int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        F32x8 v;
        std::memcpy(&v, row + j, sizeof v);
        m = v > m ? v : m;
    }
    float r = init;
    for (int l = 0; l < 8; ++l)
        r = std::max(r, m[l]);
    for (; j < n; ++j)
        r = std::max(r, row[j]);
    return r;
}

// row[j] = exp(row[j] − base) in place; returns their sum. expApproxF32 (< 2e-7 relative) in a
// loop that vectorizes: a libm exp per score was most of the kernel (ViT-Ti/16's 12 attentions
// took 10.7 of the model's ~47 ms, where ONNX Runtime ran the whole model in 40). Below −87.3 the result is 0, as
// exp's underflow (against the row's maximum, whose term is 1, such terms are below float's
// precision anyway), −∞ (masked) gives 0 and NaN stays NaN.
OPSCOPE_CPU_CLONES float expRowF32(float *row, std::int64_t n, float base)
{
    for (std::int64_t j = 0; j < n; ++j) {
        const float x = row[j] - base;
        const float e = expApproxF32(x);
        row[j] = x != x ? x : (x < -87.33654f ? 0.0f : e);
    }
    F32x8 acc{};
    std::int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        F32x8 v;
        std::memcpy(&v, row + j, sizeof v);
        acc += v;
    }
    float sum = 0.0f;
    for (int l = 0; l < 8; ++l)
        sum += acc[l];
    for (; j < n; ++j)
        sum += row[j];
    return sum;
}

// One block of query rows of one (batch, head): the online-softmax loop over key tiles.
Status attendBlock(const Problem &p, std::int64_t b, std::int64_t h, std::int64_t q0, std::int64_t rows,
                   std::vector<float> &scratch)
{
    constexpr std::int64_t kTile = 256;
    const std::int64_t dk = p.dk, dv = p.dv;
    scratch.resize(std::size_t(rows * dk + rows * kTile + rows * dv + 2 * rows));
    float *qs = scratch.data();      // Q block, scaled, [rows, dk]
    float *s = qs + rows * dk;       // scores / probabilities, [rows, kTile]
    float *acc = s + rows * kTile;   // output accumulator, [rows, dv]
    float *rowMax = acc + rows * dv; // running maximum per row
    float *rowSum = rowMax + rows;   // running sum of exp per row
    for (std::int64_t i = 0; i < rows; ++i) {
        const float *src = p.q.at(b, h, q0 + i);
        for (std::int64_t d = 0; d < dk; ++d)
            qs[i * dk + d] = src[d * p.q.d] * p.scale;
        rowMax[i] = -std::numeric_limits<float>::infinity();
        rowSum[i] = 0.0f;
    }
    std::fill(acc, acc + rows * dv, 0.0f);
    for (std::int64_t k0 = 0; k0 < p.sk; k0 += kTile) {
        const std::int64_t cols = std::min(kTile, p.sk - k0);
        // Scores: Q block · K tileᵀ. K rows are contiguous (d stride 1) or, transposed, K's
        // columns are (s stride 1): either is one strided GEMM.
        const float *kt = p.k.at(b, h, k0);
        if (p.k.d == 1)
            OPSCOPE_TRY(gemmF32(false, true, rows, cols, dk, 1.0f, qs, dk, kt, p.k.s, 0.0f, s, kTile));
        else
            OPSCOPE_TRY(gemmF32(false, false, rows, cols, dk, 1.0f, qs, dk, kt, p.k.d, 0.0f, s, kTile));
        for (std::int64_t i = 0; i < rows; ++i) {
            float *row = s + i * kTile;
            if (p.mask) {
                const float *m = p.mask + b * p.mb + h * p.mh + (q0 + i) * p.mq + k0 * p.mk;
                for (std::int64_t j = 0; j < cols; ++j)
                    row[j] += m[j * p.mk];
            }
            const float tileMax = rowMaxF32(row, cols, rowMax[i]);
            // A row masked with −∞ so far keeps max −∞: its probabilities are 0 (not NaN) until a
            // finite score arrives; Softmax over an all −∞ row is NaN, and so is this (0/0 below).
            const float base = tileMax == -std::numeric_limits<float>::infinity() ? 0.0f : tileMax;
            const float sum = expRowF32(row, cols, base);
            const float rescale =
                rowMax[i] == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(rowMax[i] - base);
            if (rescale != 1.0f)
                for (std::int64_t d = 0; d < dv; ++d)
                    acc[i * dv + d] *= rescale;
            rowSum[i] = rowSum[i] * rescale + sum;
            rowMax[i] = tileMax;
        }
        // acc += P · V tile.
        const float *vt = p.v.at(b, h, k0);
        OPSCOPE_TRY(gemmF32(false, false, rows, dv, cols, 1.0f, s, kTile, vt, p.v.s, 1.0f, acc, dv));
    }
    for (std::int64_t i = 0; i < rows; ++i) {
        float *dst = p.out + b * p.ob + h * p.oh + (q0 + i) * p.os;
        const float inv = 1.0f / rowSum[i];
        for (std::int64_t d = 0; d < dv; ++d)
            dst[d] = acc[i * dv + d] * inv;
    }
    return Status::ok();
}

// Fills Q/K/V views and the output shape from the layout attributes.
Status describe(KernelContext &ctx, Problem &p, Shape64 &outShape)
{
    const RuntimeTensor &q = ctx.in(0), &k = ctx.in(1), &v = ctx.in(2);
    if (q.dtype() != DataType::Float || k.dtype() != DataType::Float || v.dtype() != DataType::Float)
        return ctx.unsupported("Attention is implemented for float32");
    const std::int64_t heads = ctx.attrInt("num_heads", 0);
    if (heads > 0) {
        if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3)
            return ctx.fail("with num_heads, Q, K and V must be [batch, sequence, hidden]; got " +
                            q.shapeText() + ", " + k.shapeText() + ", " + v.shapeText());
        if (q.dim(2) % heads || k.dim(2) % heads || v.dim(2) % heads || q.dim(2) != k.dim(2))
            return ctx.fail("hidden sizes " + q.shapeText() + ", " + k.shapeText() + ", " + v.shapeText() +
                            " do not split into " + std::to_string(heads) + " heads");
        if (k.dim(0) != q.dim(0) || v.dim(0) != q.dim(0) || v.dim(1) != k.dim(1))
            return ctx.fail("batch or key length differ: " + k.shapeText() + " and " + v.shapeText());
        p.batch = q.dim(0);
        p.heads = heads;
        p.sq = q.dim(1);
        p.sk = k.dim(1);
        p.dk = q.dim(2) / heads;
        p.dv = v.dim(2) / heads;
        p.q = {q.data<float>(), p.sq * q.dim(2), p.dk, q.dim(2), 1};
        p.k = {k.data<float>(), p.sk * k.dim(2), p.dk, k.dim(2), 1};
        p.v = {v.data<float>(), p.sk * v.dim(2), p.dv, v.dim(2), 1};
        outShape = {p.batch, p.sq, heads * p.dv};
        p.ob = p.sq * heads * p.dv;
        p.oh = p.dv;
        p.os = heads * p.dv;
        return Status::ok();
    }
    if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
        return ctx.fail("Q, K and V must be [batch, heads, sequence, head size]; got " + q.shapeText() +
                        ", " + k.shapeText() + ", " + v.shapeText());
    const bool kT = ctx.attrInt("k_transposed", 0) != 0;
    const std::int64_t sk = kT ? k.dim(3) : k.dim(2), kd = kT ? k.dim(2) : k.dim(3);
    const Shape64 qb{q.dim(0), q.dim(1)}, kb{k.dim(0), k.dim(1)}, vb{v.dim(0), v.dim(1)};
    const Expected<Broadcast> bc = Broadcast::of({&qb, &kb, &vb}, ctx);
    if (!bc)
        return bc.status();
    if (kd != q.dim(3) || v.dim(2) != sk)
        return ctx.fail("shapes do not attend: Q " + q.shapeText() + ", K " + k.shapeText() +
                        (kT ? " (transposed)" : "") + ", V " + v.shapeText());
    p.batch = bc->outShape[0];
    p.heads = bc->outShape[1];
    p.sq = q.dim(2);
    p.sk = sk;
    p.dk = q.dim(3);
    p.dv = v.dim(3);
    auto view = [&](const RuntimeTensor &t, std::int64_t s, std::int64_t d) {
        const std::int64_t hs = t.dim(2) * t.dim(3);
        return View{t.data<float>(), broadcastStride(t.dim(0), p.batch, t.dim(1) * hs),
                    broadcastStride(t.dim(1), p.heads, hs), s, d};
    };
    p.q = view(q, p.dk, 1);
    p.k = kT ? view(k, 1, p.sk) : view(k, p.dk, 1);
    p.v = view(v, p.dv, 1);
    if (ctx.attrInt("transpose_output", 0)) {
        outShape = {p.batch, p.sq, p.heads, p.dv};
        p.ob = p.sq * p.heads * p.dv;
        p.oh = p.dv;
        p.os = p.heads * p.dv;
    } else {
        outShape = {p.batch, p.heads, p.sq, p.dv};
        p.ob = p.heads * p.sq * p.dv;
        p.oh = p.sq * p.dv;
        p.os = p.dv;
    }
    return Status::ok();
}

Status attentionKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    Problem p;
    Shape64 outShape;
    OPSCOPE_TRY(describe(ctx, p, outShape));
    p.scale = ctx.hasAttr("scale") ? ctx.attrFloat("scale")
                                   : 1.0f / std::sqrt(static_cast<float>(std::max<std::int64_t>(p.dk, 1)));
    // MultiHeadAttention's bias goes on the scores as `attention_bias` (input 5); opscope's as input 3.
    const bool ort = ctx.node().domain == "com.microsoft";
    if (ort)
        for (std::size_t i : {3u, 4u, 6u, 7u})
            if (ctx.hasInput(i))
                return ctx.unsupported("MultiHeadAttention with bias, key padding mask or past state");
    if (const RuntimeTensor *mask = ctx.input(ort ? 5 : 3)) {
        if (mask->dtype() != DataType::Float || mask->rank() > 4)
            return ctx.unsupported("an attention mask must be float32 of rank ≤ 4, got " + mask->shapeText());
        Shape64 m(4 - mask->rank(), 1);
        m.insert(m.end(), mask->shape().begin(), mask->shape().end());
        const Shape64 full{p.batch, p.heads, p.sq, p.sk};
        for (std::size_t d = 0; d < 4; ++d)
            if (m[d] != 1 && m[d] != full[d])
                return ctx.fail("mask " + mask->shapeText() + " does not broadcast to the scores " +
                                shapeText(full));
        p.mask = mask->data<float>();
        const std::int64_t sk = m[3], sq = m[2] * sk, sh = m[1] * sq;
        p.mk = broadcastStride(m[3], p.sk, 1);
        p.mq = broadcastStride(m[2], p.sq, sk);
        p.mh = broadcastStride(m[1], p.heads, sq);
        p.mb = broadcastStride(m[0], p.batch, sh);
    }
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, outShape);
    if (!out)
        return out.status();
    p.out = (*out)->mutableData<float>();
    if (p.sk == 0) {
        std::fill(p.out, p.out + (*out)->elementCount(), std::numeric_limits<float>::quiet_NaN());
        return Status::ok();
    }
    constexpr std::int64_t kRows = 64;
    const std::int64_t blocks = (p.sq + kRows - 1) / kRows;
    const std::int64_t tasks = p.batch * p.heads * blocks;
    std::vector<Status> failures(static_cast<std::size_t>(std::max<std::int64_t>(tasks, 0)));
    parallelFor(
        tasks,
        [&](std::int64_t t) {
            thread_local std::vector<float> scratch;
            const std::int64_t blk = t % blocks, bh = t / blocks;
            const std::int64_t q0 = blk * kRows;
            failures[std::size_t(t)] =
                attendBlock(p, bh / p.heads, bh % p.heads, q0, std::min(kRows, p.sq - q0), scratch);
        },
        1);
    for (const Status &s : failures)
        if (!s.isOk())
            return s;
    return Status::ok();
}

} // namespace
} // namespace kernels

void registerAttentionKernels(KernelRegistry &r)
{
    r.add("ai.opscope", "Attention", 1, kernels::attentionKernel);
    r.add("com.microsoft", "MultiHeadAttention", 1, kernels::attentionKernel);
}

} // namespace opscope
