// Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and the integer
// convolution/matmul family (ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul), which
// accumulate exactly in int32.

#include "runtime/kernels/convgeometry.h"
#include "runtime/kernels/elementwise.h"

#include <limits>

namespace opscope {
namespace kernels {
namespace {

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
template<class Q>
Q quantize(float x, float scale, double zeroPoint)
{
    return saturate<Q>(std::nearbyint(double(x / scale)) + zeroPoint);
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
    const std::uint8_t zp = saturate<std::uint8_t>(std::nearbyint(double((0.0f - lo) / scale)));
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
    Shape64 as = a.shape(), bs = b.shape();
    const bool aVec = as.size() == 1, bVec = bs.size() == 1;
    if (aVec)
        as.insert(as.begin(), 1);
    if (bVec)
        bs.push_back(1);
    const std::int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
    if (bs[bs.size() - 2] != k)
        return ctx.fail("inner dimensions differ: " + a.shapeText() + " × " + b.shapeText());
    const Shape64 ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    const Expected<Broadcast> bc = Broadcast::of({&ab, &bb}, ctx);
    if (!bc)
        return bc.status();
    Shape64 outShape = bc->outShape;
    if (!aVec)
        outShape.push_back(m);
    if (!bVec)
        outShape.push_back(n);
    Expected<RuntimeTensor> out = RuntimeTensor::allocate(DataType::Int32, outShape);
    if (!out)
        return out;
    std::vector<std::int64_t> aOff{0}, bOff{0};
    if (!bc->outShape.empty()) {
        aOff.clear();
        bOff.clear();
        forEachBroadcast(*bc, [&](std::int64_t, const std::int64_t *i) {
            aOff.push_back(i[0]);
            bOff.push_back(i[1]);
        });
    }
    auto *dst = out->mutableData<std::int32_t>();
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
    const auto wc =
        centered(w, 0, w.elementCount(), wzp, [perChannel](std::int64_t i) { return i / perChannel; });
    // Input position of (output position, kernel tap) per spatial dim, or -1 in the padding.
    std::vector<std::int64_t> srcIndex(static_cast<std::size_t>(kSize * outSize));
    for (std::int64_t kk = 0; kk < kSize; ++kk)
        for (std::int64_t o = 0; o < outSize; ++o) {
            std::int64_t off = 0;
            bool inside = true;
            for (std::size_t d = 0; d < sp && inside; ++d) {
                const std::int64_t pos = ((o / outStr[d]) % outSp[d]) * geo->strides[d] - geo->padBegin[d] +
                                         ((kk / kStr[d]) % geo->kernel[d]) * geo->dilations[d];
                inside = pos >= 0 && pos < inSp[d];
                off += pos * inStr[d];
            }
            srcIndex[std::size_t(kk * outSize + o)] = inside ? off : -1;
        }
    std::vector<std::int32_t> cols(static_cast<std::size_t>(kDim * outSize));
    auto *dst = out->mutableData<std::int32_t>();
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
    const auto run = [&](auto qtag) -> Status {
        using Q = decltype(qtag);
        Q *dst = (*out)->template mutableData<Q>();
        parallelFor(acc.elementCount(), [&](std::int64_t i) {
            const std::int64_t ch = channels > 1 ? (i / channelInner) % channels : 0;
            double v = double(src[i]);
            if (b)
                v += double(b[(i / channelInner) % biasCount]);
            dst[i] = saturate<Q>(std::nearbyint(v * mult[std::size_t(ch)]) + zp);
        });
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
