// Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer
// convolution/matmul family (ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul), which
// accumulate exactly in int32 (intgemm.h, intconv.h) and round like ONNX Runtime: x / scale in
// float32, half to even; requantization multipliers in float32 as ORT forms them.

#include "runtime/kernels/convgeometry.h"
#include "runtime/kernels/elementwise.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/intconv.h"
#include "runtime/kernels/intgemm.h"
#include "util/cpuclones.h"

#include <cstring>
#include <limits>

#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

namespace opscope {
namespace kernels {

namespace {

#if defined(__SSE4_1__)
// Four int32 to Q (uint8 or int8) with saturation (the packs clamp), stored at dst.
template<class Q>
void storeSaturated4(Q *dst, __m128i q)
{
    const __m128i w16 = _mm_packs_epi32(q, q);
    const __m128i b8 =
        std::is_same_v<Q, std::uint8_t> ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16);
    const std::int32_t four = _mm_cvtsi128_si32(b8);
    std::memcpy(dst, &four, 4);
}
#endif

// Per-tensor, per-axis or blocked (opset 21 block_size: `block` consecutive elements along the
// axis share one) parameter: element index → parameter index.
struct AxisParam
{
    const RuntimeTensor *t = nullptr;
    std::int64_t inner = 1, count = 1, dim = 1, block = 0;
    std::int64_t index(std::int64_t i) const
    {
        if (count == 1)
            return 0;
        if (block == 0)
            return (i / inner) % count;
        const std::int64_t blocks = (dim + block - 1) / block;
        return ((i / (inner * dim)) * blocks + ((i / inner) % dim) / block) * inner + i % inner;
    }
    double value(std::int64_t i) const { return t ? t->valueAsDouble(index(i)) : 0.0; }
};

Expected<AxisParam> axisParam(const KernelContext &ctx, const RuntimeTensor *p, const RuntimeTensor &x,
                              std::int64_t axisAttr)
{
    AxisParam a;
    a.t = p;
    const std::int64_t block = ctx.attrInt("block_size", 0);
    if (!p || (p->elementCount() <= 1 && block <= 0))
        return a;
    const Expected<std::int64_t> axis = normalizeAxis(axisAttr, std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    const std::size_t ax = std::size_t(*axis);
    a.count = p->elementCount();
    a.inner = product(x.shape(), ax + 1);
    a.dim = x.dim(ax);
    if (block > 0) { // the parameter has x's shape with ceil(dim / block) along the axis
        Shape64 want = x.shape();
        want[ax] = (a.dim + block - 1) / block;
        if (p->shape() != want)
            return ctx.fail("blocked parameters of shape " + shapeText(p->shape()) + " for an input of " +
                            shapeText(x.shape()) + " with block_size " + std::to_string(block) + " (want " +
                            shapeText(want) + ")");
        a.block = block;
        return a;
    }
    if (p->elementCount() != a.dim)
        return ctx.fail("per-axis parameters have " + std::to_string(p->elementCount()) +
                        " entries for a dimension of " + std::to_string(a.dim));
    return a;
}

template<class Q>
Q saturate(double v)
{
    return static_cast<Q>(
        std::clamp(v, double(std::numeric_limits<Q>::lowest()), double(std::numeric_limits<Q>::max())));
}

// ONNX: saturate(round_half_even(x / scale) + zero_point), the division in float32 like the reference.
// std::rint rounds half to even in the default rounding mode and, unlike nearbyint, is inlined
// (roundss) instead of being a libm call per element.
template<class Q>
Q quantize(float x, float scale, double zeroPoint)
{
    return saturate<Q>(std::rint(double(x / scale)) + zeroPoint);
}

// y = saturate(round_half_even(x / scale) + zp) over floats with one scale and zero point, like
// MLAS: the division in float32 (not a multiplication by 1/scale), clamped to [lo − zp, hi − zp]
// before rounding, so NaN becomes the lowest value (max(NaN, lo) is lo, as with maxps) and the
// conversion cannot overflow. rint of a float is exact. Plain loops cloned for AVX2 and AVX-512,
// which the compiler vectorizes (vdivps, vroundps in the default round-to-nearest-even mode).
template<class Q>
[[gnu::always_inline]] inline void quantizeBlockBody(const float *__restrict src, Q *__restrict dst, std::int64_t n,
                                                     float sc, std::int32_t zp)
{
    const float lo = float(std::int32_t(std::numeric_limits<Q>::lowest()) - zp),
                hi = float(std::int32_t(std::numeric_limits<Q>::max()) - zp);
    for (std::int64_t i = 0; i < n; ++i) {
        float q = src[i] / sc;
        q = q > lo ? q : lo;
        q = q < hi ? q : hi;
        dst[i] = static_cast<Q>(static_cast<std::int32_t>(std::rint(q)) + zp);
    }
}

OPSCOPE_CPU_CLONES void quantizeBlock(const float *src, std::uint8_t *dst, std::int64_t n, float sc, std::int32_t zp)
{
    quantizeBlockBody(src, dst, n, sc, zp);
}

OPSCOPE_CPU_CLONES void quantizeBlock(const float *src, std::int8_t *dst, std::int64_t n, float sc, std::int32_t zp)
{
    quantizeBlockBody(src, dst, n, sc, zp);
}

template<class Q>
void quantizePerTensor(const float *src, Q *dst, std::int64_t total, float sc, float z)
{
    const std::int64_t chunk = 16384;
    const auto zp = static_cast<std::int32_t>(z);
    parallelFor(
        (total + chunk - 1) / chunk,
        [=](std::int64_t c) { quantizeBlock(src + c * chunk, dst + c * chunk, std::min(chunk, total - c * chunk), sc, zp); },
        2);
}

Status quantizeLinearKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0);
    const RuntimeTensor *zp = ctx.input(2);
    const DataType outType = zp ? zp->dtype() : DataType::UInt8;
    const Expected<AxisParam> scale = axisParam(ctx, &ctx.in(1), x, ctx.attrInt("axis", 1));
    const Expected<AxisParam> zero = axisParam(ctx, zp, x, ctx.attrInt("axis", 1));
    if (!scale || !zero)
        return !scale ? scale.status() : zero.status();
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, outType, x.shape());
    if (!out)
        return out.status();
    const auto run = [&](auto qtag) -> Status {
        using Q = decltype(qtag);
        Q *dst = (*out)->template mutableData<Q>();
        if (x.dtype() == DataType::Float && scale->count == 1 && zero->count == 1) {
            quantizePerTensor(x.data<float>(), dst, x.elementCount(), float(scale->value(0)), float(zero->value(0)));
            return Status::ok();
        }
        for (std::int64_t i = 0; i < x.elementCount(); ++i) {
            const double xv = x.dtype() == DataType::Float16 ? double(halfToFloat(x.data<std::uint16_t>()[i]))
                                                             : x.valueAsDouble(i);
            dst[i] = quantize<Q>(float(xv), float(scale->value(i)), zero->value(i));
        }
        return Status::ok();
    };
    if (outType == DataType::UInt8)
        return run(std::uint8_t{});
    if (outType == DataType::Int8)
        return run(std::int8_t{});
    return ctx.unsupported("quantizing to " + std::string(dataTypeName(outType)));
}

Status dequantizeLinearKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0);
    const Expected<AxisParam> scale = axisParam(ctx, &ctx.in(1), x, ctx.attrInt("axis", 1));
    const Expected<AxisParam> zero = axisParam(ctx, ctx.input(2), x, ctx.attrInt("axis", 1));
    if (!scale || !zero)
        return !scale ? scale.status() : zero.status();
    const DataType outType = ctx.in(1).dtype();
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, outType, x.shape());
    if (!out)
        return out.status();
    if (outType == DataType::Float && scale->count == 1 && zero->count == 1 &&
        (x.dtype() == DataType::UInt8 || x.dtype() == DataType::Int8)) { // per-tensor 8-bit: a tight loop
        const float sc = float(scale->value(0)), z = float(zero->value(0));
        float *dst = (*out)->mutableData<float>();
        if (x.dtype() == DataType::UInt8)
            parallelFor(x.elementCount(),
                        [&](std::int64_t i) { dst[i] = (float(x.data<std::uint8_t>()[i]) - z) * sc; });
        else
            parallelFor(x.elementCount(),
                        [&](std::int64_t i) { dst[i] = (float(x.data<std::int8_t>()[i]) - z) * sc; });
        return Status::ok();
    }
    return dispatchFloat(outType, [&](auto tag) -> Status {
        using T = decltype(tag);
        T *dst = (*out)->template mutableData<T>();
        for (std::int64_t i = 0; i < x.elementCount(); ++i)
            dst[i] = static_cast<T>(
                static_cast<ComputeType<T>>((x.valueAsDouble(i) - zero->value(i)) * scale->value(i)));
        return Status::ok();
    });
}

// min and max of floats, vectorized, in parallel blocks. minps/maxps keep the accumulator when
// the element is NaN, like the scalar `x < lo ? x : lo`.
void minMax(const float *src, std::int64_t total, float &lo, float &hi)
{
    const std::int64_t chunk = 65536, chunks = (total + chunk - 1) / chunk;
    std::vector<float> los(std::size_t(std::max<std::int64_t>(chunks, 1)), std::numeric_limits<float>::max()),
        his(los.size(), std::numeric_limits<float>::lowest());
    parallelFor(
        chunks,
        [&](std::int64_t c) {
            std::int64_t i = c * chunk;
            const std::int64_t end = std::min(total, i + chunk);
            float l = los[std::size_t(c)], h = his[std::size_t(c)];
#if defined(__SSE4_1__)
            __m128 vl = _mm_set1_ps(l), vh = _mm_set1_ps(h);
            for (; i + 4 <= end; i += 4) {
                const __m128 v = _mm_loadu_ps(src + i);
                vl = _mm_min_ps(v, vl);
                vh = _mm_max_ps(v, vh);
            }
            alignas(16) float lv[4], hv[4];
            _mm_store_ps(lv, vl);
            _mm_store_ps(hv, vh);
            for (int j = 0; j < 4; ++j) {
                l = std::min(l, lv[j]);
                h = std::max(h, hv[j]);
            }
#endif
            for (; i < end; ++i) {
                l = src[i] < l ? src[i] : l;
                h = src[i] > h ? src[i] : h;
            }
            los[std::size_t(c)] = l;
            his[std::size_t(c)] = h;
        },
        2);
    lo = *std::min_element(los.begin(), los.end());
    hi = *std::max_element(his.begin(), his.end());
}

// ONNX DynamicQuantizeLinear, as ONNX Runtime computes it: the range widened to include 0,
// scale = (max − min) / 255 in float32 (1 for an all-zero range), zero point = round half to even
// of the clamped 0 − min / scale, then QuantizeLinear with them.
Status dynamicQuantizeLinearKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (x.dtype() != DataType::Float)
        return ctx.fail("input must be float32");
    const float *src = x.data<float>();
    float lo = 0, hi = 0;
    minMax(src, x.elementCount(), lo, hi);
    lo = std::min(lo, 0.0f);
    hi = std::max(hi, 0.0f);
    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const float initialZero = 0.0f - lo / scale;
    const auto zp = static_cast<std::uint8_t>(std::rint(std::clamp(initialZero, 0.0f, 255.0f)));
    Expected<RuntimeTensor *> y = ctx.allocateOutput(0, DataType::UInt8, x.shape());
    if (!y)
        return y.status();
    quantizePerTensor(src, (*y)->mutableData<std::uint8_t>(), x.elementCount(), scale, float(zp));
    ctx.setOutput(1, RuntimeTensor::fromValues(DataType::Float, {}, std::vector<float>{scale}));
    ctx.setOutput(2, RuntimeTensor::fromValues(DataType::UInt8, {}, std::vector<std::uint8_t>{zp}));
    return Status::ok();
}

// One zero point per tensor, per row/column of the matrices (shared by every batch), or per row/
// column of every batch: the value for batch `batch` (index into the operand's own batches) and
// row/column `i`. ONNX writes the per-row form of an [.., M, K] operand as [.., M, 1].
struct MatZero
{
    const RuntimeTensor *t = nullptr;
    std::int64_t perBatch = 0; // rows or columns per batch; 0: one value
    bool batched = false;
    std::int32_t at(std::int64_t batch, std::int64_t i) const
    {
        if (!t)
            return 0;
        if (perBatch == 0)
            return std::int32_t(t->valueAsInt(0));
        return std::int32_t(t->valueAsInt(batched ? batch * perBatch + i : i));
    }
};

Expected<MatZero> matZero(const KernelContext &ctx, const RuntimeTensor *zp, std::int64_t lines,
                          std::int64_t batches, const char *what)
{
    MatZero z;
    z.t = zp;
    if (!zp || zp->elementCount() == 1)
        return z;
    if (zp->elementCount() == 0) // at() would read its first value
        return ctx.fail(std::string(what) + " zero point is empty");
    z.perBatch = lines;
    if (zp->elementCount() == batches * lines && batches > 1)
        z.batched = true;
    else if (zp->elementCount() != lines)
        return ctx.fail(std::string(what) + " zero point has " + std::to_string(zp->elementCount()) +
                        " values for " + std::to_string(lines) + " lines in " + std::to_string(batches) +
                        " batches");
    return z;
}

// (A − a0)·(B − b0) in int32 with numpy batching (intgemm.h). Zero points: scalar, per row of A,
// per column of B. `cacheWeights`: B and b0 are constants, so B's prepared form is cached.
// `asOutput`: the result is the node's output 0 (MatMulInteger), where the memory plan put it; else
// QLinearMatMul's accumulator of its own.
Expected<RuntimeTensor> integerMatMul(const KernelContext &ctx, const RuntimeTensor &a, const RuntimeTensor &b,
                                      const RuntimeTensor *azp, const RuntimeTensor *bzp, bool cacheWeights,
                                      bool asOutput = false)
{
    for (const RuntimeTensor *t : {&a, &b})
        if (t->dtype() != DataType::UInt8 && t->dtype() != DataType::Int8)
            return ctx.unsupported("integer matmul of " + std::string(dataTypeName(t->dtype())));
    const Expected<MatMulShape> mm = matMulShape(ctx, a.shape(), b.shape());
    if (!mm)
        return mm.status();
    const std::int64_t m = mm->m, n = mm->n, k = mm->k;
    const std::int64_t aBatches = std::max<std::int64_t>(1, a.elementCount() / std::max<std::int64_t>(m * k, 1)),
                       bBatches = std::max<std::int64_t>(1, b.elementCount() / std::max<std::int64_t>(k * n, 1));
    const Expected<MatZero> az = matZero(ctx, azp, m, aBatches, "A's");
    const Expected<MatZero> bz = matZero(ctx, bzp, n, bBatches, "B's");
    if (!az || !bz)
        return !az ? az.status() : bz.status();
    Expected<RuntimeTensor> out = asOutput ? ctx.newOutputTensor(0, DataType::Int32, mm->outShape)
                                           : RuntimeTensor::allocate(DataType::Int32, mm->outShape);
    if (!out || out->elementCount() == 0)
        return out;
    // B's prepared form per batch of B, built on first use (and kept when B is constant).
    using Prepared = std::vector<std::shared_ptr<const Int8RightWeights>>;
    std::shared_ptr<Prepared> prepared;
    std::unique_lock lock(ctx.cache().mutex, std::defer_lock);
    if (cacheWeights) {
        lock.lock();
        prepared = std::static_pointer_cast<Prepared>(ctx.cache().state);
        if (!prepared || prepared->size() != std::size_t(bBatches)) {
            prepared = std::make_shared<Prepared>(std::size_t(bBatches));
            ctx.cache().state = prepared;
        }
    } else {
        prepared = std::make_shared<Prepared>(std::size_t(bBatches));
    }
    const bool unsignedB = b.dtype() == DataType::UInt8;
    const auto weightsOf = [&](std::int64_t bi) -> const Int8RightWeights & {
        auto &slot = (*prepared)[std::size_t(bi)];
        if (!slot) {
            const std::int64_t base = bi * k * n;
            slot = std::make_shared<const Int8RightWeights>(prepareRightWeights(
                k, n, unsignedB,
                [&](std::int64_t j, std::int64_t p) {
                    return unsignedB ? std::int32_t(b.data<std::uint8_t>()[base + p * n + j])
                                     : std::int32_t(b.data<std::int8_t>()[base + p * n + j]);
                },
                [&](std::int64_t j) { return bz->at(bi, j); }));
        }
        return *slot;
    };
    // A as uint8: int8 activations move by +128 (a byte XOR), their zero points likewise.
    const bool unsignedA = a.dtype() == DataType::UInt8;
    const std::int32_t shiftA = unsignedA ? 0 : 128;
    std::vector<std::uint8_t> moved;
    const auto *abytes = reinterpret_cast<const std::uint8_t *>(a.bytes());
    if (!unsignedA) {
        moved.resize(std::size_t(a.elementCount()));
        for (std::size_t i = 0; i < moved.size(); ++i)
            moved[i] = abytes[i] ^ 0x80;
        abytes = moved.data();
    }
    auto *dst = out->mutableData<std::int32_t>();
    std::vector<std::int32_t> rowZero;
    for (std::size_t bi = 0; bi < mm->aBatch.size(); ++bi) {
        const std::int64_t ab = mm->aBatch[bi], bb = mm->bBatch[bi];
        const Int8RightWeights &w = weightsOf(bb);
        if (az->perBatch) {
            rowZero.resize(std::size_t(m));
            for (std::int64_t i = 0; i < m; ++i)
                rowZero[std::size_t(i)] = az->at(ab, i) + shiftA;
        }
        OPSCOPE_TRY(gemmRightExact(m, abytes + ab * m * k, k, static_cast<std::uint8_t>(az->at(ab, 0) + shiftA),
                                   az->perBatch ? rowZero.data() : nullptr, w, dst + std::int64_t(bi) * m * n, n));
    }
    return out;
}

Status matMulIntegerKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const bool constantB = ctx.isConstantInput(1) && (!ctx.hasInput(3) || ctx.isConstantInput(3));
    Expected<RuntimeTensor> r = integerMatMul(ctx, ctx.in(0), ctx.in(1), ctx.input(2), ctx.input(3), constantB, true);
    if (!r)
        return r.status();
    ctx.setOutput(0, std::move(*r));
    return Status::ok();
}

Status convIntegerKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const bool constantW = ctx.isConstantInput(1) && (!ctx.hasInput(3) || ctx.isConstantInput(3));
    Expected<RuntimeTensor> r = integerConv(ctx, ctx.in(0), ctx.in(1), ctx.input(2), ctx.input(3), constantW, true);
    if (!r)
        return r.status();
    ctx.setOutput(0, std::move(*r));
    return Status::ok();
}

// Requantizes int32 accumulators like ONNX Runtime (MLAS's requantize output): the bias added in
// int32, y = sat(round_half_even(float(acc + bias) · m[c]) + y0) with the multiplier formed in
// float32 as ORT does, m[c] = sa · sb[c] / sy; channel c = (i / inner) % count.
// `channelCount`: the channels sb may have one scale each for (conv's M, matmul's N).
Status requantize(KernelContext &ctx, const RuntimeTensor &acc, const RuntimeTensor &sa,
                  const RuntimeTensor &sb, std::int64_t channelInner, std::int64_t channelCount,
                  const RuntimeTensor &sy, const RuntimeTensor *y0, const RuntimeTensor *bias)
{
    OPSCOPE_TRY(requireOneValue(sa, "the input's scale", ctx));
    OPSCOPE_TRY(requireOneValue(sy, "the output's scale", ctx));
    if (y0)
        OPSCOPE_TRY(requireOneValue(*y0, "the output's zero point", ctx));
    if (sb.elementCount() != 1 && sb.elementCount() != channelCount)
        return ctx.fail("the weights' scale has " + std::to_string(sb.elementCount()) +
                        " values: one, or one per output channel (" + std::to_string(channelCount) + ")");
    const DataType outType = y0 ? y0->dtype() : DataType::UInt8;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, outType, acc.shape());
    if (!out)
        return out.status();
    const float a = float(sa.valueAsDouble(0)), ys = float(sy.valueAsDouble(0));
    const std::int32_t zp = y0 ? std::int32_t(y0->valueAsInt(0)) : 0;
    const std::int64_t channels = sb.elementCount();
    std::vector<float> mult(static_cast<std::size_t>(std::max<std::int64_t>(channels, 1)));
    for (std::int64_t ch = 0; ch < channels; ++ch) {
        const float product = a * float(sb.valueAsDouble(ch)); // rounded to float32 before the division
        mult[std::size_t(ch)] = product / ys;
    }
    const std::int32_t *src = acc.data<std::int32_t>();
    const std::int32_t *b = bias ? bias->data<std::int32_t>() : nullptr;
    const std::int64_t biasCount = bias ? bias->elementCount() : 1;
    const std::int64_t total = acc.elementCount(), blocks = total / std::max<std::int64_t>(channelInner, 1);
    const auto run = [&](auto qtag) -> Status {
        using Q = decltype(qtag);
        Q *dst = (*out)->template mutableData<Q>();
        // One block of `channelInner` elements shares a channel: its multiplier and bias.
        parallelFor(
            blocks,
            [&](std::int64_t blk) {
                const std::int64_t ch = channels > 1 ? blk % channels : 0;
                const float mul = mult[std::size_t(ch)];
                const std::int32_t add = b ? b[blk % biasCount] : 0;
                const float lo = float(std::numeric_limits<Q>::lowest()), hi = float(std::numeric_limits<Q>::max());
                const std::int32_t *in = src + blk * channelInner;
                Q *o = dst + blk * channelInner;
                std::int64_t j = 0;
#if defined(__SSE4_1__)
                // Four at a time: cvtps2dq rounds half to even (default mode); the saturating packs clamp.
                const __m128 vmul = _mm_set1_ps(mul);
                const __m128i vadd = _mm_set1_epi32(add), vzp = _mm_set1_epi32(zp);
                for (; j + 4 <= channelInner; j += 4) {
                    const __m128i acc4 =
                        _mm_add_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(in + j)), vadd);
                    storeSaturated4(o + j,
                                    _mm_add_epi32(_mm_cvtps_epi32(_mm_mul_ps(_mm_cvtepi32_ps(acc4), vmul)), vzp));
                }
#endif
                for (; j < channelInner; ++j) {
                    const auto sum = static_cast<std::int32_t>(std::uint32_t(in[j]) + std::uint32_t(add));
                    o[j] = static_cast<Q>(static_cast<std::int32_t>(
                        std::min(std::max(std::rint(float(sum) * mul) + float(zp), lo), hi)));
                }
            },
            std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(channelInner, 1)));
        return Status::ok();
    };
    if (outType == DataType::UInt8)
        return run(std::uint8_t{});
    if (outType == DataType::Int8)
        return run(std::int8_t{});
    return ctx.unsupported("quantized output of type " + std::string(dataTypeName(outType)));
}

Status qLinearConvKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(8));
    const bool constantW = ctx.isConstantInput(3) && ctx.isConstantInput(5);
    Expected<RuntimeTensor> acc = integerConv(ctx, ctx.in(0), ctx.in(3), &ctx.in(2), &ctx.in(5), constantW);
    if (!acc)
        return acc.status();
    // After the conv, which checked W's rank: dim(0) of a scalar W read past its shape.
    const std::int64_t channels = acc->dim(1);
    if (const RuntimeTensor *bias = ctx.input(8)) {
        if (bias->dtype() != DataType::Int32)
            return ctx.fail("the bias must be int32");
        OPSCOPE_TRY(checkConvBias(ctx, bias, channels));
    }
    return requantize(ctx, *acc, ctx.in(1), ctx.in(4), product(acc->shape(), 2), channels, ctx.in(6),
                      ctx.input(7), ctx.input(8));
}

Status qLinearMatMulKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(8));
    const bool constantB = ctx.isConstantInput(3) && ctx.isConstantInput(5);
    Expected<RuntimeTensor> acc = integerMatMul(ctx, ctx.in(0), ctx.in(3), &ctx.in(2), &ctx.in(5), constantB);
    if (!acc)
        return acc.status();
    return requantize(ctx, *acc, ctx.in(1), ctx.in(4), 1, acc->shape().empty() ? 1 : acc->shape().back(), ctx.in(6),
                      ctx.input(7), nullptr);
}

} // namespace
} // namespace kernels

void registerQuantKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("QuantizeLinear", quantizeLinearKernel);
    r.add("DequantizeLinear", dequantizeLinearKernel);
    r.add("DynamicQuantizeLinear", dynamicQuantizeLinearKernel);
    r.add("MatMulInteger", matMulIntegerKernel);
    r.add("ConvInteger", convIntegerKernel);
    r.add("QLinearConv", qLinearConvKernel);
    r.add("QLinearMatMul", qLinearMatMulKernel);
}

} // namespace opscope
