// Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer
// convolution/matmul family (ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul), which
// accumulate exactly in int32.

#include "runtime/kernels/convgeometry.h"
#include "runtime/kernels/elementwise.h"
#include "runtime/kernels/gemm.h"

#include <cstring>
#include <limits>
#include <oneapi/dnnl/dnnl.h>

#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

namespace opscope {
namespace kernels {

Expected<bool> dnnlQLinearConv(KernelContext &ctx); // qconv.cpp

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

// Per-tensor or per-axis parameter: element index → parameter index.
struct AxisParam
{
    const RuntimeTensor *t = nullptr;
    std::int64_t inner = 1, count = 1;
    std::int64_t index(std::int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
    double value(std::int64_t i) const { return t ? t->valueAsDouble(index(i)) : 0.0; }
};

Expected<AxisParam> axisParam(const KernelContext &ctx, const RuntimeTensor *p, const RuntimeTensor &x,
                              std::int64_t axisAttr)
{
    AxisParam a;
    a.t = p;
    if (!p || p->elementCount() <= 1)
        return a;
    const Expected<std::int64_t> axis = normalizeAxis(axisAttr, std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    if (p->elementCount() != x.dim(std::size_t(*axis)))
        return ctx.fail("per-axis parameters have " + std::to_string(p->elementCount()) +
                        " entries for a dimension of " + std::to_string(x.dim(std::size_t(*axis))));
    a.count = p->elementCount();
    a.inner = product(x.shape(), std::size_t(*axis) + 1);
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
        if (x.dtype() == DataType::Float && scale->count == 1 &&
            zero->count == 1) { // per-tensor: a tight loop
            // In float32: rint of a float is exact, and adding an integer zero point below 2^24 is
            // too. NaN saturates to the lowest value instead of being undefined.
            const float sc = float(scale->value(0)), z = float(zero->value(0));
            const float lo = float(std::numeric_limits<Q>::lowest()),
                        hi = float(std::numeric_limits<Q>::max());
            const float *src = x.data<float>();
            const std::int64_t total = x.elementCount(), chunk = 16384;
            parallelFor((total + chunk - 1) / chunk,
                        [=](std::int64_t c) {
                            std::int64_t i = c * chunk;
                            const std::int64_t end = std::min(total, i + chunk);
#if defined(__SSE4_1__)
                            // Four at a time: cvtps2dq rounds half to even (the default mode), like rint; the
                            // quotient is first clamped to ±2^30 (NaN to the low end) so the conversion
                            // cannot overflow; the saturating packs clamp to Q's range.
                            const __m128 vsc = _mm_set1_ps(sc), big = _mm_set1_ps(1073741824.0f),
                                         small = _mm_set1_ps(-1073741824.0f);
                            const __m128i vz = _mm_set1_epi32(static_cast<std::int32_t>(z));
                            for (; i + 4 <= end; i += 4) {
                                const __m128 r = _mm_min_ps(
                                    _mm_max_ps(_mm_div_ps(_mm_loadu_ps(src + i), vsc), small), big);
                                storeSaturated4(dst + i, _mm_add_epi32(_mm_cvtps_epi32(r), vz));
                            }
#endif
                            for (; i < end; ++i)
                                dst[i] =
                                    static_cast<Q>(std::min(hi, std::max(lo, std::rint(src[i] / sc) + z)));
                        },
                        2);
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

Status dynamicQuantizeLinearKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (x.dtype() != DataType::Float)
        return ctx.fail("input must be float32");
    const float *src = x.data<float>();
    float lo = 0, hi = 0;
    for (std::int64_t i = 0; i < x.elementCount(); ++i) {
        lo = std::min(lo, src[i]);
        hi = std::max(hi, src[i]);
    }
    const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    const std::uint8_t zp = saturate<std::uint8_t>(std::rint(double((0.0f - lo) / scale)));
    Expected<RuntimeTensor *> y = ctx.allocateOutput(0, DataType::UInt8, x.shape());
    if (!y)
        return y.status();
    for (std::int64_t i = 0; i < x.elementCount(); ++i)
        (*y)->mutableData<std::uint8_t>()[i] = quantize<std::uint8_t>(src[i], scale, zp);
    ctx.setOutput(1, RuntimeTensor::fromValues(DataType::Float, {}, std::vector<float>{scale}));
    ctx.setOutput(2, RuntimeTensor::fromValues(DataType::UInt8, {}, std::vector<std::uint8_t>{zp}));
    return Status::ok();
}

// One row of C = A·B in exact int32: i-p-j order keeps the inner loop contiguous. Cloned for AVX2
// and AVX-512 (vpmulld on 8/16 lanes), picked at run time.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("default", "avx2", "avx512f")))
#endif
void gemmS32Row(std::int64_t n, std::int64_t k, const std::int32_t *arow, const std::int32_t *b, std::int32_t *crow)
{
    for (std::int64_t j = 0; j < n; ++j)
        crow[j] = 0;
    for (std::int64_t p = 0; p < k; ++p) {
        const std::int32_t av = arow[p];
        if (av == 0)
            continue;
        const std::int32_t *brow = b + p * n;
        for (std::int64_t j = 0; j < n; ++j)
            crow[j] += av * brow[j];
    }
}

// C[M,N] = A[M,K]·B[K,N], rows in parallel.
void gemmS32(std::int64_t m, std::int64_t n, std::int64_t k, const std::int32_t *a, const std::int32_t *b,
             std::int32_t *c)
{
    parallelFor(
        m, [&](std::int64_t i) { gemmS32Row(n, k, a + i * k, b, c + i * n); },
        std::max<std::int64_t>(1, 65536 / std::max<std::int64_t>(n * k, 1)));
}

// oneDNN's u8·s8→s32 GEMM is exact only with VNNI (vpdpbusd); without it, intermediate int16
// sums may saturate. So it is used only where the CPU has VNNI.
bool exactInt8Gemm()
{
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool vnni = __builtin_cpu_supports("avx512vnni");
    return vnni;
#else
    return false;
#endif
}

// w − w0 as int8 when every value fits (symmetric or uint8-with-128 weights); else empty.
template<class ZpIndex>
std::vector<std::int8_t> centeredInt8(const RuntimeTensor &w, const RuntimeTensor *zp, ZpIndex zpIndex)
{
    std::vector<std::int8_t> out(static_cast<std::size_t>(w.elementCount()));
    for (std::int64_t i = 0; i < w.elementCount(); ++i) {
        const std::int64_t z = zp ? zp->valueAsInt(zp->elementCount() > 1 ? zpIndex(i) : 0) : 0;
        const std::int64_t v = (w.dtype() == DataType::UInt8 ? std::int64_t(w.data<std::uint8_t>()[i])
                                                             : std::int64_t(w.data<std::int8_t>()[i])) -
                               z;
        if (v < -128 || v > 127)
            return {};
        out[std::size_t(i)] = static_cast<std::int8_t>(v);
    }
    return out;
}

Status gemmU8S8(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k,
                const std::uint8_t *a, std::int64_t lda, std::uint8_t ao, const std::int8_t *b,
                std::int64_t ldb, std::int32_t *c, std::int64_t ldc)
{
    const std::int32_t zero = 0;
    const dnnl_status_t st = dnnl_gemm_u8s8s32(transA ? 'T' : 'N', transB ? 'T' : 'N', 'F', m, n, k, 1.0f, a,
                                               lda, ao, b, ldb, 0, 0.0f, c, ldc, &zero);
    return st == dnnl_success ? Status::ok() : Status::internal("oneDNN u8s8 gemm failed");
}

// Integer tensor minus its zero point(s), widened to int32. `zpIndex(i)` picks the zero point.
template<class ZpIndex>
std::vector<std::int32_t> centered(const RuntimeTensor &t, std::int64_t offset, std::int64_t count,
                                   const RuntimeTensor *zp, ZpIndex zpIndex)
{
    std::vector<std::int32_t> out(static_cast<std::size_t>(count));
    const bool perElement = zp && zp->elementCount() > 1;
    std::vector<std::int32_t> zps;
    if (perElement)
        for (std::int64_t i = 0; i < zp->elementCount(); ++i)
            zps.push_back(std::int32_t(zp->valueAsInt(i)));
    const std::int32_t z = zp && !perElement && zp->elementCount() ? std::int32_t(zp->valueAsInt(0)) : 0;
    const auto fill = [&](const auto *p) {
        if (perElement)
            for (std::int64_t i = 0; i < count; ++i)
                out[std::size_t(i)] = std::int32_t(p[i]) - zps[std::size_t(zpIndex(i))];
        else
            for (std::int64_t i = 0; i < count; ++i)
                out[std::size_t(i)] = std::int32_t(p[i]) - z;
    };
    if (t.dtype() == DataType::UInt8)
        fill(t.data<std::uint8_t>() + offset);
    else
        fill(t.data<std::int8_t>() + offset);
    return out;
}

// (A − a0)·(B − b0) in int32 with numpy batching. Zero points: scalar, per row of A, per column of B.
Expected<RuntimeTensor> integerMatMul(const KernelContext &ctx, const RuntimeTensor &a,
                                      const RuntimeTensor &b, const RuntimeTensor *azp,
                                      const RuntimeTensor *bzp)
{
    for (const RuntimeTensor *t : {&a, &b})
        if (t->dtype() != DataType::UInt8 && t->dtype() != DataType::Int8)
            return ctx.unsupported("integer matmul of " + std::string(dataTypeName(t->dtype())));
    const Expected<MatMulShape> mm = matMulShape(ctx, a.shape(), b.shape());
    if (!mm)
        return mm.status();
    const std::int64_t m = mm->m, n = mm->n, k = mm->k;
    const std::vector<std::int64_t> &aOff = mm->aBatch, &bOff = mm->bBatch;
    Expected<RuntimeTensor> out = RuntimeTensor::allocate(DataType::Int32, mm->outShape);
    if (!out)
        return out;
    auto *dst = out->mutableData<std::int32_t>();
    const bool scalarAzp = !azp || azp->elementCount() == 1;
    if (exactInt8Gemm() && a.dtype() == DataType::UInt8 && scalarAzp && b.elementCount() == k * n) {
        const auto b8 = centeredInt8(b, bzp, [n](std::int64_t i) { return i % n; });
        if (!b8.empty()) {
            const auto ao = static_cast<std::uint8_t>(azp ? azp->valueAsInt(0) : 0);
            for (std::size_t bi = 0; bi < aOff.size(); ++bi)
                OPSCOPE_TRY(gemmU8S8(false, false, m, n, k, a.data<std::uint8_t>() + aOff[bi] * m * k, k, ao,
                                     b8.data(), n, dst + std::int64_t(bi) * m * n, n));
            return out;
        }
    }
    for (std::size_t bi = 0; bi < aOff.size(); ++bi) {
        const auto ca = centered(a, aOff[bi] * m * k, m * k, azp, [k](std::int64_t i) { return i / k; });
        const auto cb = centered(b, bOff[bi] * k * n, k * n, bzp, [n](std::int64_t i) { return i % n; });
        gemmS32(m, n, k, ca.data(), cb.data(), dst + std::int64_t(bi) * m * n);
    }
    return out;
}

Status matMulIntegerKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> r = integerMatMul(ctx, ctx.in(0), ctx.in(1), ctx.input(2), ctx.input(3));
    if (!r)
        return r.status();
    ctx.setOutput(0, std::move(*r));
    return Status::ok();
}

// Integer convolution (x − x0) ⊛ (w − w0) → int32 [N, M, spatial...], as im2col + int32 GEMM per
// group. Padding holds the zero point, so it contributes (x0 − x0) = 0. w0 may be per output channel.
Expected<RuntimeTensor> integerConv(const KernelContext &ctx, const RuntimeTensor &x, const RuntimeTensor &w,
                                    const RuntimeTensor *xzp, const RuntimeTensor *wzp)
{
    for (const RuntimeTensor *t : {&x, &w})
        if (t->dtype() != DataType::UInt8 && t->dtype() != DataType::Int8)
            return ctx.unsupported("integer convolution of " + std::string(dataTypeName(t->dtype())));
    const Expected<ConvGeometry> geo = convGeometry(ctx, x.shape(), w.shape(), false);
    if (!geo)
        return geo.status();
    Expected<RuntimeTensor> out = RuntimeTensor::allocate(DataType::Int32, geo->outShape);
    if (!out)
        return out;
    const std::size_t sp = geo->kernel.size();
    const std::int64_t n = x.dim(0), c = x.dim(1), mOut = w.dim(0), g = geo->group;
    const std::int64_t cg = c / g, mg = mOut / g, kSize = product(geo->kernel);
    const Shape64 inSp(x.shape().begin() + 2, x.shape().end()),
        outSp(geo->outShape.begin() + 2, geo->outShape.end());
    const std::int64_t inSize = product(inSp), outSize = product(outSp), kDim = cg * kSize;
    const Shape64 kStr = stridesOf(geo->kernel), inStr = stridesOf(inSp), outStr = stridesOf(outSp);
    const std::int64_t perChannel = product(w.shape(), 1);
    // Input position of (output position, kernel tap), or -1 in the padding: the general N-d
    // im2col's index table (64-bit divisions per entry — built only when that path needs it).
    std::vector<std::int64_t> srcIndex;
    const auto buildSrcIndex = [&] {
        srcIndex.resize(static_cast<std::size_t>(kSize * outSize));
        for (std::int64_t kk = 0; kk < kSize; ++kk)
            for (std::int64_t o = 0; o < outSize; ++o) {
                std::int64_t off = 0;
                bool inside = true;
                for (std::size_t d = 0; d < sp && inside; ++d) {
                    const std::int64_t pos = ((o / outStr[d]) % outSp[d]) * geo->strides[d] -
                                             geo->padBegin[d] +
                                             ((kk / kStr[d]) % geo->kernel[d]) * geo->dilations[d];
                    inside = pos >= 0 && pos < inSp[d];
                    off += pos * inStr[d];
                }
                srcIndex[std::size_t(kk * outSize + o)] = inside ? off : -1;
            }
    };
    auto *dst = out->mutableData<std::int32_t>();
    if (exactInt8Gemm() && x.dtype() == DataType::UInt8 && (!xzp || xzp->elementCount() == 1)) {
        const auto w8 = centeredInt8(w, wzp, [perChannel](std::int64_t i) { return i / perChannel; });
        if (!w8.empty()) {
            if (sp != 2)
                buildSrcIndex();
            const auto x0 = static_cast<std::uint8_t>(xzp ? xzp->valueAsInt(0) : 0);
            std::vector<std::uint8_t> cols8(static_cast<std::size_t>(kDim * outSize));
            std::vector<std::int32_t> ct(static_cast<std::size_t>(outSize * mg));
            for (std::int64_t ni = 0; ni < n; ++ni)
                for (std::int64_t gi = 0; gi < g; ++gi) {
                    const std::uint8_t *xg = x.data<std::uint8_t>() + (ni * c + gi * cg) * inSize;
                    for (std::int64_t ci = 0; ci < cg; ++ci)
                        for (std::int64_t kk = 0; kk < kSize; ++kk) {
                            std::uint8_t *col = &cols8[std::size_t((ci * kSize + kk) * outSize)];
                            const std::uint8_t *plane = xg + ci * inSize;
                            if (sp == 2) { // rows at a time: bounds once per row, not per element
                                const std::int64_t kh = kk / geo->kernel[1], kw = kk % geo->kernel[1];
                                const std::int64_t OH = outSp[0], OW = outSp[1], IH = inSp[0], IW = inSp[1];
                                for (std::int64_t oh = 0; oh < OH; ++oh) {
                                    const std::int64_t ih =
                                        oh * geo->strides[0] - geo->padBegin[0] + kh * geo->dilations[0];
                                    std::uint8_t *crow = col + oh * OW;
                                    if (ih < 0 || ih >= IH) {
                                        std::fill(crow, crow + OW, x0);
                                        continue;
                                    }
                                    const std::uint8_t *irow = plane + ih * IW;
                                    // Output columns whose input column lies inside the row: [lo, hi);
                                    // the rest is padding, which holds the zero point.
                                    const std::int64_t off = kw * geo->dilations[1] - geo->padBegin[1];
                                    const std::int64_t sw = geo->strides[1];
                                    const std::int64_t lo = std::min(OW, off >= 0 ? 0 : (-off + sw - 1) / sw);
                                    const std::int64_t hi = std::max(
                                        lo, std::min(OW, IW - 1 - off < 0 ? 0 : (IW - 1 - off) / sw + 1));
                                    std::fill(crow, crow + lo, x0);
                                    for (std::int64_t ow = lo; ow < hi; ++ow)
                                        crow[ow] = irow[ow * sw + off];
                                    std::fill(crow + hi, crow + OW, x0);
                                }
                                continue;
                            }
                            const std::int64_t *idx = &srcIndex[std::size_t(kk * outSize)];
                            for (std::int64_t o = 0; o < outSize; ++o)
                                col[o] = idx[o] >= 0 ? plane[idx[o]] : x0;
                        }
                    // Cᵀ[outSize, mg] = colsᵀ · W_gᵀ, then transposed into the output.
                    OPSCOPE_TRY(gemmU8S8(true, true, outSize, mg, kDim, cols8.data(), outSize, x0,
                                         &w8[std::size_t(gi * mg * kDim)], kDim, ct.data(), mg));
                    std::int32_t *y = dst + (ni * mOut + gi * mg) * outSize;
                    constexpr std::int64_t tile = 32; // tiled so both sides stay in cache
                    for (std::int64_t p0 = 0; p0 < outSize; p0 += tile)
                        for (std::int64_t m0 = 0; m0 < mg; m0 += tile)
                            for (std::int64_t mi = m0; mi < std::min(mg, m0 + tile); ++mi)
                                for (std::int64_t p = p0; p < std::min(outSize, p0 + tile); ++p)
                                    y[mi * outSize + p] = ct[std::size_t(p * mg + mi)];
                }
            return out;
        }
    }
    const auto wc =
        centered(w, 0, w.elementCount(), wzp, [perChannel](std::int64_t i) { return i / perChannel; });
    if (srcIndex.empty())
        buildSrcIndex();
    std::vector<std::int32_t> cols(static_cast<std::size_t>(kDim * outSize));
    for (std::int64_t ni = 0; ni < n; ++ni)
        for (std::int64_t gi = 0; gi < g; ++gi) {
            const auto xc =
                centered(x, (ni * c + gi * cg) * inSize, cg * inSize, xzp, [](std::int64_t) { return 0; });
            for (std::int64_t ci = 0; ci < cg; ++ci)
                for (std::int64_t kk = 0; kk < kSize; ++kk) {
                    std::int32_t *col = &cols[std::size_t((ci * kSize + kk) * outSize)];
                    const std::int64_t *idx = &srcIndex[std::size_t(kk * outSize)];
                    const std::int32_t *plane = &xc[std::size_t(ci * inSize)];
                    for (std::int64_t o = 0; o < outSize; ++o)
                        col[o] = idx[o] >= 0 ? plane[idx[o]] : 0;
                }
            gemmS32(mg, outSize, kDim, &wc[std::size_t(gi * mg * kDim)], cols.data(),
                    dst + (ni * mOut + gi * mg) * outSize);
        }
    return out;
}

Status convIntegerKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> r = integerConv(ctx, ctx.in(0), ctx.in(1), ctx.input(2), ctx.input(3));
    if (!r)
        return r.status();
    ctx.setOutput(0, std::move(*r));
    return Status::ok();
}

// Requantizes int32 accumulators: y = sat(round(acc·(sa·sb[c])/sy) + y0), channel c = (i / inner) % count.
Status requantize(KernelContext &ctx, const RuntimeTensor &acc, const RuntimeTensor &sa,
                  const RuntimeTensor &sb, std::int64_t channelInner, const RuntimeTensor &sy,
                  const RuntimeTensor *y0, const RuntimeTensor *bias)
{
    const DataType outType = y0 ? y0->dtype() : DataType::UInt8;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, outType, acc.shape());
    if (!out)
        return out.status();
    const double a = sa.valueAsDouble(0), ys = sy.valueAsDouble(0);
    const double zp = y0 ? y0->valueAsDouble(0) : 0.0;
    const std::int64_t channels = sb.elementCount();
    std::vector<double> mult(static_cast<std::size_t>(std::max<std::int64_t>(channels, 1)));
    for (std::int64_t ch = 0; ch < channels; ++ch)
        mult[std::size_t(ch)] = a * sb.valueAsDouble(ch) / ys;
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
                // float32 like ONNX Runtime's requantization; vectorizes (roundps).
                const float mul = float(mult[std::size_t(ch)]);
                const float add = b ? float(b[blk % biasCount]) : 0.0f;
                const float lo = float(std::numeric_limits<Q>::lowest()),
                            hi = float(std::numeric_limits<Q>::max());
                const float z = float(zp);
                const std::int32_t *in = src + blk * channelInner;
                Q *o = dst + blk * channelInner;
                std::int64_t j = 0;
#if defined(__SSE4_1__)
                // Four at a time: cvtps2dq rounds half to even (default mode); the saturating packs clamp.
                const __m128 vadd = _mm_set1_ps(add), vmul = _mm_set1_ps(mul);
                const __m128i vzp = _mm_set1_epi32(static_cast<std::int32_t>(zp));
                for (; j + 4 <= channelInner; j += 4) {
                    const __m128 acc4 =
                        _mm_cvtepi32_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(in + j)));
                    storeSaturated4(
                        o + j, _mm_add_epi32(_mm_cvtps_epi32(_mm_mul_ps(_mm_add_ps(acc4, vadd), vmul)), vzp));
                }
#endif
                for (; j < channelInner; ++j)
                    o[j] = static_cast<Q>(static_cast<std::int32_t>(
                        std::min(std::max(std::rint((float(in[j]) + add) * mul) + z, lo),
                                 hi))); // min/max: no branches
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
    if (const Expected<bool> done = dnnlQLinearConv(ctx); !done || *done)
        return done ? Status::ok() : done.status();
    Expected<RuntimeTensor> acc = integerConv(ctx, ctx.in(0), ctx.in(3), &ctx.in(2), &ctx.in(5));
    if (!acc)
        return acc.status();
    return requantize(ctx, *acc, ctx.in(1), ctx.in(4), product(acc->shape(), 2), ctx.in(6), ctx.input(7),
                      ctx.input(8));
}

Status qLinearMatMulKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(8));
    Expected<RuntimeTensor> acc = integerMatMul(ctx, ctx.in(0), ctx.in(3), &ctx.in(2), &ctx.in(5));
    if (!acc)
        return acc.status();
    return requantize(ctx, *acc, ctx.in(1), ctx.in(4), 1, ctx.in(6), ctx.input(7), nullptr);
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
