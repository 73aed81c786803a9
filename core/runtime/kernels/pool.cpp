// Pooling over any number of spatial dims: MaxPool (with Indices), AveragePool, LpPool, and the
// global variants. Parallel over (batch, channel) planes.

#include "runtime/kernels/convgeometry.h"
#include "runtime/kernels/dnnlengine.h"
#include "runtime/kernels/poolseparable.h"
#include "runtime/kernels/reduce.h"
#include "util/cpuclones.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>

namespace opscope {
namespace kernels {
namespace {

enum class Pool
{
    Max,
    Average,
    Lp
};

// Per output column of a 2-D window: its taps inside the input and inside the padded extent
// (AveragePool's divisors without and with count_include_pad).
struct ColumnTaps
{
    std::vector<std::int64_t> inside, padded;
};

ColumnTaps columnTaps(const ConvGeometry &g, std::int64_t W, std::int64_t OW)
{
    const std::int64_t kw = g.kernel[1], sw = g.strides[1], dw = g.dilations[1], pw = g.padBegin[1];
    ColumnTaps c{std::vector<std::int64_t>(std::size_t(OW)), std::vector<std::int64_t>(std::size_t(OW))};
    for (std::int64_t ow = 0; ow < OW; ++ow) {
        const auto [a, b] = tapRange(ow * sw - pw, W, kw, dw);
        const auto [lo, hi] = tapRange(ow * sw, W + pw + g.padEnd[1], kw, dw);
        c.inside[std::size_t(ow)] = b - a;
        c.padded[std::size_t(ow)] = hi - lo;
    }
    return c;
}

// 2-D float LpPool (Max and Average take the separable pool2dRows below). Taps outside, output
// columns inside: for each kernel tap the valid output range is computed once and the inner loop
// runs over contiguous outputs.
Status lpPool2d(const float *src, float *dst, std::int64_t planes, const ConvGeometry &g, const Shape64 &in,
                const Shape64 &out, double p)
{
    const std::int64_t H = in[0], W = in[1], OH = out[0], OW = out[1];
    const std::int64_t kh = g.kernel[0], kw = g.kernel[1], sh = g.strides[0], sw = g.strides[1];
    const std::int64_t dh = g.dilations[0], dw = g.dilations[1], ph = g.padBegin[0], pw = g.padBegin[1];
    // Per tap column j: output columns whose tap lands inside the row.
    std::vector<std::pair<std::int64_t, std::int64_t>> tapCols(static_cast<std::size_t>(kw));
    for (std::int64_t j = 0; j < kw; ++j) {
        const std::int64_t off = j * dw - pw; // input column = ow * sw + off
        const std::int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
        const std::int64_t hi = W - 1 - off < 0 ? 0 : std::min(OW, (W - 1 - off) / sw + 1);
        tapCols[std::size_t(j)] = {std::min(lo, OW), std::max(std::min(lo, OW), hi)};
    }
    parallelFor(
        planes,
        [&](std::int64_t plane) {
            const float *x = src + plane * H * W;
            float *y = dst + plane * OH * OW;
            for (std::int64_t oh = 0; oh < OH; ++oh) {
                const std::int64_t hs = oh * sh - ph;
                const auto [h0, h1] = tapRange(hs, H, kh, dh);
                float *yr = y + oh * OW;
                std::fill(yr, yr + OW, 0.0f);
                for (std::int64_t i = h0; i < h1; ++i) {
                    const float *row = x + (hs + i * dh) * W;
                    for (std::int64_t j = 0; j < kw; ++j) {
                        const auto [lo, hi] = tapCols[std::size_t(j)];
                        const float *base = row + j * dw - pw;
                        for (std::int64_t ow = lo; ow < hi; ++ow)
                            yr[ow] += static_cast<float>(std::pow(std::abs(double(base[ow * sw])), p));
                    }
                }
                for (std::int64_t ow = 0; ow < OW; ++ow)
                    yr[ow] = static_cast<float>(std::pow(double(yr[ow]), 1.0 / p));
            }
        },
        2);
    return Status::ok();
}

// Row primitives of the separable 2-D kernel below, vectorized for the CPU at hand. Max lets a
// NaN through from either side and keeps it, as the ONNX reference does.
OPSCOPE_CPU_CLONES void maxInto(float *acc, const float *x, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i) {
        const float a = acc[i], v = x[i];
        acc[i] = (v > a || v != v) ? v : a;
    }
}

OPSCOPE_CPU_CLONES void addInto(float *acc, const float *x, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i)
        acc[i] += x[i];
}

OPSCOPE_CPU_CLONES void maxIntoStrided(float *acc, const float *x, std::int64_t n, std::int64_t stride)
{
    for (std::int64_t i = 0; i < n; ++i) {
        const float a = acc[i], v = x[i * stride];
        acc[i] = (v > a || v != v) ? v : a;
    }
}

OPSCOPE_CPU_CLONES void addIntoStrided(float *acc, const float *x, std::int64_t n, std::int64_t stride)
{
    for (std::int64_t i = 0; i < n; ++i)
        acc[i] += x[i * stride];
}

OPSCOPE_CPU_CLONES void divideInto(float *y, const float *divisor, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i)
        y[i] /= divisor[i];
}

// AveragePool's divisor of each output cell of row `oh`, handed to f(ow, divisor): the one
// place the counts (with and without count_include_pad) are computed, for both paths.
template<class F>
void forEachDivisor(std::int64_t oh, const ConvGeometry &g, std::int64_t H, std::int64_t OW, const ColumnTaps &cols,
                    bool includePad, F &&f)
{
    const std::int64_t kh = g.kernel[0], sh = g.strides[0], dh = g.dilations[0], ph = g.padBegin[0];
    const std::int64_t hs = oh * sh - ph;
    const auto [h0, h1] = tapRange(hs, H, kh, dh);
    const auto [hp0, hp1] = tapRange(hs + ph, H + ph + g.padEnd[0], kh, dh);
    for (std::int64_t ow = 0; ow < OW; ++ow) {
        const std::int64_t count =
            includePad ? (hp1 - hp0) * cols.padded[std::size_t(ow)] : (h1 - h0) * cols.inside[std::size_t(ow)];
        f(ow, float(std::max<std::int64_t>(count, 1)));
    }
}

// The unit-stride case a plane at a time. Row by row, each combine is one row long: at 28
// columns an AVX-512 loop does one 16-lane step and 12 scalar ones (MaxPool 3x3 s1 on
// [1,480,28,28] ran 4.4x ONNX Runtime's time on such a CPU). Here every combine runs over a
// whole plane: the vertical taps of all output rows at once (output row oh reads input row
// oh − ph + i·dh, a shift by whole rows), then the horizontal taps over the plane laid out
// with padded rows, where a row's valid outputs only read inside their own padded row.
template<Pool K>
Status poolPlanes(const float *src, float *dst, std::int64_t planes, const ConvGeometry &g, const Shape64 &in,
                  const Shape64 &out, bool includePad, const ColumnTaps &cols, std::int64_t width)
{
    const std::int64_t H = in[0], W = in[1], OH = out[0], OW = out[1];
    const std::int64_t kh = g.kernel[0], kw = g.kernel[1], dh = g.dilations[0], dw = g.dilations[1];
    const std::int64_t ph = g.padBegin[0], pw = g.padBegin[1];
    const float fill = K == Pool::Max ? -std::numeric_limits<float>::infinity() : 0.0f;
    const auto combine = [](float *acc, const float *x, std::int64_t n) {
        if constexpr (K == Pool::Max)
            maxInto(acc, x, n);
        else
            addInto(acc, x, n);
    };
    // The horizontal pass reads (kw−1)·dw past a row's last output: inside the padded row.
    const std::int64_t span = OH * width - (kw - 1) * dw;
    // AveragePool's divisors, once per call: the per-plane division is then one vector loop.
    std::vector<float> divisors;
    if constexpr (K == Pool::Average) {
        divisors.resize(std::size_t(OH * OW));
        for (std::int64_t oh = 0; oh < OH; ++oh)
            forEachDivisor(oh, g, H, OW, cols, includePad,
                           [&](std::int64_t ow, float d) { divisors[std::size_t(oh * OW + ow)] = d; });
    }
    parallelFor(
        planes,
        [&](std::int64_t plane) {
            // The padded plane's pad cells hold `fill` for every plane of this geometry; only its
            // rows' middles are rewritten, so it is filled again only when the geometry changes.
            struct Scratch
            {
                std::vector<float> vertical, padded, wide;
                std::int64_t key[4] = {-1, -1, -1, -1};
                float fill = 0;
            };
            thread_local Scratch sc;
            auto &[vertical, padded, wide, key, scFill] = sc;
            if (key[0] != OH || key[1] != width || key[2] != pw || key[3] != W || scFill != fill ||
                padded.size() != std::size_t(OH * width)) {
                padded.assign(std::size_t(OH * width), fill);
                key[0] = OH, key[1] = width, key[2] = pw, key[3] = W;
                scFill = fill;
            }
            vertical.assign(std::size_t(OH * W), fill);
            wide.resize(std::size_t(OH * width));
            const float *x = src + plane * H * W;
            float *y = dst + plane * OH * OW;
            for (std::int64_t i = 0; i < kh; ++i) {
                // Output rows whose tap i is an input row: oh − ph + i·dh in [0, H).
                const std::int64_t lo = std::clamp<std::int64_t>(ph - i * dh, 0, OH);
                const std::int64_t hi = std::clamp<std::int64_t>(H + ph - i * dh, lo, OH);
                if (hi > lo)
                    combine(vertical.data() + lo * W, x + (lo - ph + i * dh) * W, (hi - lo) * W);
            }
            for (std::int64_t oh = 0; oh < OH; ++oh)
                std::copy_n(vertical.data() + oh * W, W, padded.data() + oh * width + pw);
            if (span > 0) {
                std::copy_n(padded.data(), span, wide.data());
                for (std::int64_t j = 1; j < kw; ++j)
                    combine(wide.data(), padded.data() + j * dw, span);
            }
            for (std::int64_t oh = 0; oh < OH; ++oh)
                std::copy_n(wide.data() + oh * width, OW, y + oh * OW);
            if constexpr (K == Pool::Average)
                divideInto(y, divisors.data(), OH * OW);
        },
        2);
    return Status::ok();
}

// 2-D float MaxPool / AveragePool on the plain NCHW layout, separably: each output row first
// combines its window's input rows into one padded row (contiguous, vectorized), then each
// output column combines its window's taps of that row. 2 + 2 passes over a row for a 3x3
// window instead of 9 strided ones, and no reorder: oneDNN's plain-layout pooling ran 7-18x
// ONNX Runtime's time (bench/op_bench.py), which at level extended was most of an Inception run.
template<Pool K>
Status pool2dRows(const float *src, float *dst, std::int64_t planes, const ConvGeometry &g, const Shape64 &in,
                  const Shape64 &out, bool includePad)
{
    static_assert(K == Pool::Max || K == Pool::Average);
    const std::int64_t H = in[0], W = in[1], OH = out[0], OW = out[1];
    const std::int64_t kh = g.kernel[0], kw = g.kernel[1], sh = g.strides[0], sw = g.strides[1];
    const std::int64_t dh = g.dilations[0], dw = g.dilations[1], ph = g.padBegin[0], pw = g.padBegin[1];
    const float fill = K == Pool::Max ? -std::numeric_limits<float>::infinity() : 0.0f;
    // The padded row: pw cells, the input's W, and as many after as the last window reaches (with
    // ceil_mode it may reach past padEnd); padding holds `fill`, which never wins or adds.
    const std::int64_t width = std::max((OW - 1) * sw + (kw - 1) * dw + 1, pw + W);
    const ColumnTaps cols = columnTaps(g, W, OW);
    // Unit strides (Inception's 3x3 s1 pools, SPPF's 5x5): whole planes at once, see poolPlane.
    if (sh == 1 && sw == 1)
        return poolPlanes<K>(src, dst, planes, g, in, out, includePad, cols, width);
    parallelFor(
        planes,
        [&](std::int64_t plane) {
            thread_local std::vector<float> row;
            row.assign(static_cast<std::size_t>(width), fill);
            float *padded = row.data(), *inner = padded + pw;
            const float *x = src + plane * H * W;
            float *y = dst + plane * OH * OW;
            for (std::int64_t oh = 0; oh < OH; ++oh) {
                const std::int64_t hs = oh * sh - ph;
                const auto [h0, h1] = tapRange(hs, H, kh, dh);
                float *yr = y + oh * OW;
                if (h0 == h1) { // a window of padding rows alone (dilated windows can be)
                    std::fill(yr, yr + OW, fill);
                    continue;
                }
                std::copy(x + (hs + h0 * dh) * W, x + (hs + h0 * dh) * W + W, inner);
                for (std::int64_t i = h0 + 1; i < h1; ++i) {
                    if constexpr (K == Pool::Max)
                        maxInto(inner, x + (hs + i * dh) * W, W);
                    else
                        addInto(inner, x + (hs + i * dh) * W, W);
                }
                if (sw == 1) {
                    std::copy(padded, padded + OW, yr);
                    for (std::int64_t j = 1; j < kw; ++j) {
                        if constexpr (K == Pool::Max)
                            maxInto(yr, padded + j * dw, OW);
                        else
                            addInto(yr, padded + j * dw, OW);
                    }
                } else {
                    for (std::int64_t ow = 0; ow < OW; ++ow)
                        yr[ow] = padded[ow * sw];
                    for (std::int64_t j = 1; j < kw; ++j) {
                        if constexpr (K == Pool::Max)
                            maxIntoStrided(yr, padded + j * dw, OW, sw);
                        else
                            addIntoStrided(yr, padded + j * dw, OW, sw);
                    }
                }
                if constexpr (K == Pool::Average)
                    forEachDivisor(oh, g, H, OW, cols, includePad, [&](std::int64_t ow, float d) { yr[ow] /= d; });
            }
        },
        2);
    return Status::ok();
}

// oneDNN's pooling primitive on the layout-nhwc pass's layouts (NHWC, nChw8c/16c), where it is
// fast, cached per node by input shape. Returns false when it does not apply: average pooling that counts padding while ceil_mode
// reaches past it (oneDNN would count the extra cells).
struct DnnlPoolState
{
    Shape64 xShape;
    dnnl::pooling_v2_forward::primitive_desc pd;
    dnnl::pooling_v2_forward prim;
};

template<Pool K>
Expected<bool> dnnlPool2d(KernelContext &ctx, const RuntimeTensor &x, RuntimeTensor &y, const ConvGeometry &g,
                          bool includePad, const Shape64 &logicalX,
                          dnnl::memory::format_tag tag = dnnl::memory::format_tag::nchw)
{
    dnnl::engine &engine = dnnlEngine();
    using dnnl::memory;
    memory::dims padR(2);
    for (std::size_t d = 0; d < 2; ++d) {
        padR[d] = (g.outShape[d + 2] - 1) * g.strides[d] + (g.kernel[d] - 1) * g.dilations[d] + 1 -
                  logicalX[d + 2] - g.padBegin[d];
        if (K == Pool::Average && includePad && padR[d] > g.padEnd[d])
            return false;
    }
    try {
        std::shared_ptr<DnnlPoolState> state;
        {
            std::lock_guard lock(ctx.cache().mutex);
            state = std::static_pointer_cast<DnnlPoolState>(ctx.cache().state);
            if (!state || state->xShape != x.shape()) {
                state = std::make_shared<DnnlPoolState>();
                state->xShape = x.shape();
                const memory::desc xd(memory::dims(logicalX.begin(), logicalX.end()), memory::data_type::f32,
                                      tag);
                const memory::desc yd(memory::dims(g.outShape.begin(), g.outShape.end()),
                                      memory::data_type::f32, tag);
                const auto alg = K == Pool::Max ? dnnl::algorithm::pooling_max
                                 : includePad   ? dnnl::algorithm::pooling_avg_include_padding
                                                : dnnl::algorithm::pooling_avg_exclude_padding;
                const dnnl::pooling_v2_forward::desc desc(
                    dnnl::prop_kind::forward_inference, alg, xd, yd, {g.strides[0], g.strides[1]},
                    {g.kernel[0], g.kernel[1]}, {g.dilations[0] - 1, g.dilations[1] - 1},
                    {g.padBegin[0], g.padBegin[1]}, padR);
                state->pd = dnnl::pooling_v2_forward::primitive_desc(desc, engine);
                state->prim = dnnl::pooling_v2_forward(state->pd);
                ctx.cache().state = state;
            }
        }
        dnnl::stream &stream = dnnlStream();
        memory xm(state->pd.src_desc(), engine, const_cast<std::byte *>(x.bytes()));
        memory ym(state->pd.dst_desc(), engine, y.mutableBytes());
        state->prim.execute(stream, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}});
        stream.wait();
    } catch (const dnnl::error &) {
        return false; // fall back to our own loop
    }
    return true;
}

template<Pool K>
Status poolKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const Expected<ConvGeometry> geo = poolGeometry(ctx, x.shape());
    if (!geo)
        return geo.status();
    const std::size_t sp = geo->kernel.size();
    const Shape64 inSp(x.shape().begin() + 2, x.shape().end()),
        outSp(geo->outShape.begin() + 2, geo->outShape.end());
    const bool includePad = ctx.attrInt("count_include_pad", 0) != 0;
    const double p = static_cast<double>(ctx.attrInt("p", 2));
    const bool colMajor = ctx.attrInt("storage_order", 0) != 0;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), geo->outShape);
    if (!out)
        return out.status();
    std::int64_t *indices = nullptr;
    if (K == Pool::Max && ctx.wantsOutput(1)) {
        Expected<RuntimeTensor *> idx = ctx.allocateOutput(1, DataType::Int64, geo->outShape);
        if (!idx)
            return idx.status();
        indices = (*idx)->mutableData<std::int64_t>();
    }
    if ((*out)->elementCount() == 0)
        return Status::ok();
    // An empty input ([1,3,28,0]) whose pads still give windows: every window holds padding only
    // and gets what such a window gets below — the lowest value (index −1) for Max, 0 for Average
    // (with or without the pads counted: no value over at least one) and Lp. Written, not skipped: the output's
    // bytes were whatever the memory plan's range held (the fuzzer's planned run saw them differ).
    // No arithmetic on the input's dims, which an empty tensor may have near 2^62.
    if (x.elementCount() == 0) {
        if (indices)
            std::fill_n(indices, (*out)->elementCount(), std::int64_t(-1));
        if (x.dtype() == DataType::Bool)
            return ctx.unsupported("pooling bool");
        return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
            using T = decltype(tag);
            if constexpr (std::is_same_v<T, bool>) {
                return Status::ok();
            } else {
                using C = ComputeType<T>;
                double value = 0.0;
                if (K == Pool::Max)
                    value = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<double>::infinity()
                                                                 : double(std::numeric_limits<C>::lowest());
                std::fill_n((*out)->template mutableData<T>(), (*out)->elementCount(), static_cast<T>(static_cast<C>(value)));
                return Status::ok();
            }
        });
    }
    // The 2-D row kernels below pad a row to the window's full width and walk every tap of it:
    // fast for real windows, but one as wide as kernel_shape 2^31 (legal, SAME-padded to fit) would
    // allocate and walk 8 GiB per row (and the unit-stride one walks every row tap); pads of 2^40
    // with a stride as large pad the row as far. Such windows take the loop below, which visits
    // only the taps inside the input.
    const auto wide = [&](std::size_t d) {
        const std::int64_t extent = (geo->kernel[d] - 1) * geo->dilations[d] + 1;
        const std::int64_t reach = std::max((outSp[d] - 1) * geo->strides[d] + extent,
                                            geo->padBegin[d] + inSp[d] + geo->padEnd[d]);
        return reach > 4 * inSp[d] + 64;
    };
    const bool wideWindow = sp == 2 && (wide(0) || wide(1));
    // float16/bfloat16 pool in float through the same row kernels: converting the input and the
    // output costs two passes, the general loop a conversion per tap (a 60×80 float16 MaxPool over
    // 1000×1000 took 50 s there, found by fuzzing as a timeout).
    const bool halfLike = x.dtype() == DataType::Float16 || x.dtype() == DataType::BFloat16;
    if (sp == 2 && (x.dtype() == DataType::Float || halfLike) && !indices && !wideWindow) {
        RuntimeTensor xf, yf;
        const RuntimeTensor *src = &x;
        RuntimeTensor *dst = *out;
        if (halfLike) {
            Expected<RuntimeTensor> f = toFloat32(x);
            Expected<RuntimeTensor> y = RuntimeTensor::allocate(DataType::Float, geo->outShape);
            if (!f || !y)
                return !f ? f.status() : y.status();
            xf = std::move(*f);
            yf = std::move(*y);
            src = &xf;
            dst = &yf;
        }
        Status st;
        if constexpr (K == Pool::Lp)
            st = lpPool2d(src->data<float>(), dst->mutableData<float>(), x.dim(0) * x.dim(1), *geo, inSp, outSp, p);
        else
            st = pool2dRows<K>(src->data<float>(), dst->mutableData<float>(), x.dim(0) * x.dim(1), *geo, inSp,
                               outSp, includePad);
        if (!st || !halfLike)
            return st;
        Expected<RuntimeTensor> back = fromFloat32(yf, x.dtype());
        if (!back)
            return back.status();
        std::memcpy((*out)->mutableBytes(), back->bytes(), back->byteSize());
        return Status::ok();
    }
    // Everything else (Indices, other types, 1-D and 3-D, wide windows): one axis at a time.
    if (x.dtype() == DataType::Bool)
        return ctx.unsupported("pooling bool");
    SeparablePool how;
    how.reduction = K == Pool::Max ? PoolReduction::Max : K == Pool::Average ? PoolReduction::Average : PoolReduction::Lp;
    how.includePad = includePad;
    how.p = p;
    how.colMajor = colMajor;
    how.threads = ctx.threads();
    return separablePool(x, **out, indices, *geo, how);
}

template<Pool K>
Status globalPoolKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (x.rank() < 3)
        return ctx.fail("input must have spatial dimensions");
    Shape64 shape(x.rank(), 1);
    shape[0] = x.dim(0);
    shape[1] = x.dim(1);
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), shape);
    if (!out)
        return out.status();
    const std::int64_t inner = product(x.shape(), 2);
    const double p = static_cast<double>(ctx.attrInt("p", 2));
    if (K != Pool::Lp && x.dtype() == DataType::Float) {
        // The reduction engine's vectorized rows (the double loop below was 2.5-3x ORT).
        reduceRowsF32(K == Pool::Max ? RowReduction::Max : RowReduction::Mean, x.data<float>(),
                      (*out)->mutableData<float>(), x.dim(0) * x.dim(1), inner);
        return Status::ok();
    }
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        parallelFor(
            x.dim(0) * x.dim(1),
            [&](std::int64_t plane) {
                double acc = K == Pool::Max ? -std::numeric_limits<double>::infinity() : 0.0;
                for (std::int64_t i = 0; i < inner; ++i) {
                    const double v = double(C(src[plane * inner + i]));
                    acc = K == Pool::Max  ? std::max(acc, v)
                          : K == Pool::Lp ? acc + std::pow(std::abs(v), p)
                                          : acc + v;
                }
                if (K == Pool::Average)
                    acc /= double(std::max<std::int64_t>(inner, 1));
                if (K == Pool::Lp)
                    acc = std::pow(acc, 1.0 / p);
                dst[plane] = static_cast<T>(static_cast<C>(acc));
            },
            64);
        return Status::ok();
    });
}

// MaxPool / AveragePool in the layout-nhwc pass's layouts: ai.opscope::NhwcMaxPool ([N,H,W,C]),
// NchwcMaxPool ([N,C/b,H,W,b]) and the AveragePool pair; same attributes as the ONNX ops.
template<Pool K>
Status layoutPoolKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const Expected<RegionTensor> region = regionTensor(ctx, x);
    if (!region)
        return region.status();
    const bool nhwc = region->nhwc;
    const std::int64_t block = nhwc ? 0 : region->lanes;
    if (!nhwc && block != 8 && block != 16)
        return ctx.unsupported(ctx.node().opType + " with blocks of " + std::to_string(block) + " (8 or 16)");
    const Shape64 &logical = region->logical;
    const Expected<ConvGeometry> geo = poolGeometry(ctx, logical);
    if (!geo)
        return geo.status();
    if (geo->kernel.size() != 2)
        return ctx.fail("pooling in a channels-last or blocked layout needs 2 spatial dims");
    const Shape64 &o = geo->outShape;
    const Shape64 physical =
        nhwc ? Shape64{o[0], o[2], o[3], o[1]} : Shape64{o[0], o[1] / block, o[2], o[3], block};
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, physical);
    if (!out)
        return out.status();
    using Tag = dnnl::memory::format_tag;
    const Expected<bool> done =
        dnnlPool2d<K>(ctx, x, **out, *geo, ctx.attrInt("count_include_pad", 0) != 0, logical,
                      nhwc          ? Tag::nhwc
                      : block == 16 ? Tag::nChw16c
                                    : Tag::nChw8c);
    if (!done)
        return done.status();
    return *done ? Status::ok() : ctx.unsupported("this pooling in " + ctx.node().opType + "'s layout");
}

} // namespace

void registerPoolKernels(KernelRegistry &r)
{
    r.add("ai.opscope", "NhwcMaxPool", 1, layoutPoolKernel<Pool::Max>);
    r.add("ai.opscope", "NchwcMaxPool", 1, layoutPoolKernel<Pool::Max>);
    r.add("ai.opscope", "NhwcAveragePool", 1, layoutPoolKernel<Pool::Average>);
    r.add("ai.opscope", "NchwcAveragePool", 1, layoutPoolKernel<Pool::Average>);
    r.add("MaxPool", poolKernel<Pool::Max>);
    r.add("AveragePool", poolKernel<Pool::Average>);
    r.add("LpPool", poolKernel<Pool::Lp>);
    r.add("GlobalMaxPool", globalPoolKernel<Pool::Max>);
    r.add("GlobalAveragePool", globalPoolKernel<Pool::Average>);
    r.add("GlobalLpPool", globalPoolKernel<Pool::Lp>);
}

} // namespace kernels
} // namespace opscope
