// Normalizations: BatchNormalization (inference), InstanceNormalization, LayerNormalization,
// GroupNormalization, LRN, MeanVarianceNormalization, LpNormalization, RMSNormalization.

#include "runtime/kernels/kernelutil.h"
#include "util/cpuclones.h"

#include <numeric>

namespace opscope {
namespace kernels {
namespace {

template<class T>
double at(const RuntimeTensor &t, std::int64_t i)
{
    return double(ComputeType<T>(t.data<T>()[i]));
}

Status batchNormKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(5));
    const RuntimeTensor &x = ctx.in(0);
    if (ctx.attrInt("training_mode", 0) != 0 || (ctx.wantsOutput(1) && ctx.opset() >= 14))
        return ctx.unsupported("training mode (running statistics) is not supported");
    OPSCOPE_TRY(requireBatchAndChannels(x, "input", ctx));
    const double eps = ctx.attrFloat("epsilon", 1e-5f);
    const std::int64_t c = x.dim(1), inner = product(x.shape(), 2), outer = x.dim(0);
    for (std::size_t i = 1; i < 5; ++i)
        if (ctx.in(i).elementCount() != c)
            return ctx.fail("input " + std::to_string(i) + " must have " + std::to_string(c) + " elements");
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        std::vector<double> scale(static_cast<std::size_t>(c)), shift(static_cast<std::size_t>(c));
        const auto param = [&](std::size_t input, std::int64_t i) {
            const RuntimeTensor &t = ctx.in(input);
            return t.dtype() == x.dtype() ? at<T>(t, i) : t.valueAsDouble(i);
        };
        for (std::int64_t i = 0; i < c; ++i) {
            scale[std::size_t(i)] = param(1, i) / std::sqrt(param(4, i) + eps);
            shift[std::size_t(i)] = param(2, i) - param(3, i) * scale[std::size_t(i)];
        }
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        parallelFor(
            outer * c,
            [&](std::int64_t plane) {
                const double s = scale[std::size_t(plane % c)], b = shift[std::size_t(plane % c)];
                for (std::int64_t i = 0; i < inner; ++i)
                    dst[plane * inner + i] = static_cast<T>(
                        static_cast<ComputeType<T>>(double(ComputeType<T>(src[plane * inner + i])) * s + b));
            },
            16);
        return Status::ok();
    });
}

// Normalizes contiguous groups of `groupSize` elements; scale/bias indexed by `paramOf(group, i)`.
template<class T, class ParamFn>
void normalizeGroups(const T *src, T *dst, std::int64_t groups, std::int64_t groupSize, double eps,
                     ParamFn paramOf, double *means = nullptr, double *invStd = nullptr)
{
    parallelFor(
        groups,
        [&](std::int64_t gi) {
            const T *in = src + gi * groupSize;
            double mean = 0, var = 0;
            for (std::int64_t i = 0; i < groupSize; ++i)
                mean += double(ComputeType<T>(in[i]));
            mean /= double(std::max<std::int64_t>(groupSize, 1));
            for (std::int64_t i = 0; i < groupSize; ++i) {
                const double d = double(ComputeType<T>(in[i])) - mean;
                var += d * d;
            }
            var /= double(std::max<std::int64_t>(groupSize, 1));
            const double inv = 1.0 / std::sqrt(var + eps);
            if (means)
                means[gi] = mean;
            if (invStd)
                invStd[gi] = inv;
            for (std::int64_t i = 0; i < groupSize; ++i) {
                const auto [s, b] = paramOf(gi, i);
                dst[gi * groupSize + i] = static_cast<T>(static_cast<ComputeType<T>>(
                    (static_cast<double>(static_cast<ComputeType<T>>(in[i])) - mean) * inv * s + b));
            }
        },
        8);
}

// float32 rows with one γ (and β) value per element of a row: the common LayerNorm. Sums in 16
// float lanes (vectorizable; ~1e-7 relative where the generic path sums in double).
// Σ term(x[i]) over n floats in 16 float lanes (vectorizable; ~1e-7 relative where a double
// sum is exact enough to compare with).
template<class Term>
[[gnu::always_inline]] inline float laneSum(const float *x, std::int64_t n, Term term)
{
    constexpr std::int64_t kLanes = 16;
    float acc[kLanes] = {};
    std::int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (std::int64_t l = 0; l < kLanes; ++l)
            acc[l] += term(x[i + l]);
    float total = 0.0f;
    for (; i < n; ++i)
        total += term(x[i]);
    for (float a : acc)
        total += a;
    return total;
}

void layerNormRows(const float *src, float *dst, std::int64_t rows, std::int64_t n, float eps,
                   const float *gamma, const float *beta, double *means = nullptr, double *invStd = nullptr)
{
    const auto rowSum = [n](const float *x, auto term) { return laneSum(x, n, term); };
    parallelFor(
        rows,
        [&](std::int64_t r) {
            const float *x = src + r * n;
            float *y = dst + r * n;
            const float count = float(std::max<std::int64_t>(n, 1));
            const float mean = rowSum(x, [](float v) { return v; }) / count;
            const float var = rowSum(x, [mean](float v) { return (v - mean) * (v - mean); }) / count;
            const float inv = 1.0f / std::sqrt(var + eps);
            if (means)
                means[r] = mean;
            if (invStd)
                invStd[r] = inv;
            if (beta)
                for (std::int64_t i = 0; i < n; ++i)
                    y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
            else
                for (std::int64_t i = 0; i < n; ++i)
                    y[i] = (x[i] - mean) * inv * gamma[i];
        },
        std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(n, 1)));
}

// One float32 instance (an N·C plane) normalized: mean and variance summed in 16 float lanes
// (vectorized; the generic path sums in double, element by element through a parameter lambda,
// and was 1.5x ONNX Runtime), then y = x·a + b with a = γ/σ and b = β − mean·a.
OPSCOPE_CPU_CLONES void instanceNormPlaneF32(const float *in, float *out, std::int64_t n, float eps, float gamma,
                                             float beta)
{
    const float mean = n ? laneSum(in, n, [](float v) { return v; }) / float(n) : 0.0f;
    const float var = n ? laneSum(in, n, [mean](float v) { return (v - mean) * (v - mean); }) / float(n) : 0.0f;
    const float a = gamma / std::sqrt(var + eps), b = beta - mean * a;
    for (std::int64_t i = 0; i < n; ++i)
        out[i] = in[i] * a + b;
}

Status instanceNormKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    const RuntimeTensor &x = ctx.in(0), &scale = ctx.in(1), &bias = ctx.in(2);
    OPSCOPE_TRY(requireBatchAndChannels(x, "input", ctx));
    const double eps = ctx.attrFloat("epsilon", 1e-5f);
    const std::int64_t c = x.dim(1), inner = product(x.shape(), 2);
    if (scale.elementCount() != c || bias.elementCount() != c)
        return ctx.fail("scale and bias must have one element per channel (" + std::to_string(c) + "), got " +
                        scale.shapeText() + " and " + bias.shapeText());
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    if (x.dtype() == DataType::Float && scale.dtype() == DataType::Float && bias.dtype() == DataType::Float &&
        scale.elementCount() >= c && bias.elementCount() >= c) {
        const float *src = x.data<float>(), *g = scale.data<float>(), *b = bias.data<float>();
        float *dst = (*out)->mutableData<float>();
        parallelFor(
            x.dim(0) * c,
            [&](std::int64_t plane) {
                instanceNormPlaneF32(src + plane * inner, dst + plane * inner, inner, float(eps), g[plane % c],
                                     b[plane % c]);
            },
            x.elementCount() < 65536 ? x.dim(0) * c + 1 : 1);
        return Status::ok();
    }
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        normalizeGroups<T>(
            x.data<T>(), (*out)->template mutableData<T>(), x.dim(0) * c, inner, eps,
            [&](std::int64_t g, std::int64_t) { return std::pair(at<T>(scale, g % c), at<T>(bias, g % c)); });
        return Status::ok();
    });
}

// LayerNormalization and RMSNormalization normalize the trailing axes from `axis`: `outer` groups
// of `inner` elements; their parameters broadcast to those axes.
struct TrailingNorm
{
    std::int64_t axis = 0, outer = 0, inner = 0;
    Shape64 normShape;
};

Expected<TrailingNorm> trailingNorm(const KernelContext &ctx, const RuntimeTensor &x)
{
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", -1), std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    TrailingNorm n;
    n.axis = *axis;
    n.outer = product(x.shape(), 0, std::size_t(*axis));
    n.inner = product(x.shape(), std::size_t(*axis));
    n.normShape.assign(x.shape().begin() + *axis, x.shape().end());
    return n;
}

// For each element of the normalized axes, the index of the parameter value it uses.
Expected<std::vector<std::int64_t>> parameterIndex(const KernelContext &ctx, const RuntimeTensor &p,
                                                   const Shape64 &normShape, const char *what)
{
    const Expected<Broadcast> b = Broadcast::of({&p.shape(), &normShape}, ctx);
    if (!b || b->outShape != normShape)
        return ctx.fail(std::string(what) + " " + p.shapeText() + " does not broadcast to " +
                        shapeText(normShape));
    std::vector<std::int64_t> index;
    forEachBroadcast(*b, [&](std::int64_t, const std::int64_t *i) { index.push_back(i[0]); });
    return index;
}

Status layerNormKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0), &scale = ctx.in(1);
    const RuntimeTensor *bias = ctx.input(2);
    const Expected<TrailingNorm> geo = trailingNorm(ctx, x);
    if (!geo)
        return geo.status();
    const double eps = ctx.attrFloat("epsilon", 1e-5f);
    const std::int64_t outer = geo->outer, inner = geo->inner;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    Shape64 statShape = x.shape();
    for (std::size_t d = std::size_t(geo->axis); d < statShape.size(); ++d)
        statShape[d] = 1;
    const DataType statType =
        ctx.hasAttr("stash_type") && ctx.attrInt("stash_type") != 1 ? x.dtype() : DataType::Float;
    // Mean and InvStdDev, when asked for: value(o, i) of row i.
    const auto writeStats = [&](auto value) -> Status {
        for (std::size_t o = 1; o <= 2; ++o) {
            if (!ctx.wantsOutput(o))
                continue;
            Expected<RuntimeTensor *> t = ctx.allocateOutput(o, statType, statShape);
            if (!t)
                return t.status();
            OPSCOPE_TRY(dispatchFloat(statType, [&](auto tag) -> Status {
                using T = decltype(tag);
                T *d = (*t)->template mutableData<T>();
                for (std::int64_t i = 0, n = (*t)->elementCount(); i < n; ++i)
                    d[i] = static_cast<T>(static_cast<ComputeType<T>>(value(o, i)));
                return Status::ok();
            }));
        }
        return Status::ok();
    };
    // Rows of no elements: nothing to normalize. The per-row scratch below is sized by the row
    // count, which an empty input ([2^40, 2, 0]) can make 2^41: never walk or allocate it.
    // Statistics, when asked for, are a tensor of that size, allocated (or refused) as such; the
    // mean and variance of no values are NaN, as in the ONNX reference.
    if (x.elementCount() == 0)
        return writeStats([](std::size_t, std::int64_t) { return std::nan(""); });
    std::vector<double> means(static_cast<std::size_t>(outer)), invStd(static_cast<std::size_t>(outer));
    // One float parameter per element of a row (shapes equal up to leading 1s): the fast path.
    const auto perElement = [&](const RuntimeTensor &p) {
        const auto trimmed = [](const Shape64 &s) {
            auto it = std::find_if(s.begin(), s.end(), [](std::int64_t d) { return d != 1; });
            return Shape64(it, s.end());
        };
        return p.dtype() == DataType::Float && trimmed(p.shape()) == trimmed(geo->normShape);
    };
    if (x.dtype() == DataType::Float && perElement(scale) && (!bias || perElement(*bias))) {
        layerNormRows(x.data<float>(), (*out)->mutableData<float>(), outer, inner, float(eps),
                      scale.data<float>(), bias ? bias->data<float>() : nullptr, means.data(), invStd.data());
    } else {
        // Scale/bias may broadcast: expanded once to the normalized shape.
        const Expected<std::vector<std::int64_t>> sIdx = parameterIndex(ctx, scale, geo->normShape, "scale");
        if (!sIdx)
            return sIdx.status();
        std::vector<std::int64_t> bIdx;
        if (bias) {
            Expected<std::vector<std::int64_t>> b = parameterIndex(ctx, *bias, geo->normShape, "bias");
            if (!b)
                return b.status();
            bIdx = std::move(*b);
        }
        OPSCOPE_TRY(dispatchFloat(x.dtype(), [&](auto tag) -> Status {
            using T = decltype(tag);
            normalizeGroups<T>(
                x.data<T>(), (*out)->template mutableData<T>(), outer, inner, eps,
                [&](std::int64_t, std::int64_t i) {
                    return std::pair(at<T>(scale, (*sIdx)[std::size_t(i)]),
                                     bias ? at<T>(*bias, bIdx[std::size_t(i)]) : 0.0);
                },
                means.data(), invStd.data());
            return Status::ok();
        }));
    }
    return writeStats([&](std::size_t o, std::int64_t i) { return (o == 1 ? means : invStd)[std::size_t(i)]; });
}

Status groupNormKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    const RuntimeTensor &x = ctx.in(0), &scale = ctx.in(1), &bias = ctx.in(2);
    OPSCOPE_TRY(requireBatchAndChannels(x, "input", ctx));
    const std::int64_t groups = ctx.attrInt("num_groups", 1), c = x.dim(1);
    if (groups <= 0 || c % groups)
        return ctx.fail("num_groups must divide the channels");
    const double eps = ctx.attrFloat("epsilon", 1e-5f);
    const std::int64_t inner = product(x.shape(), 2), perGroup = c / groups * inner;
    // Opset 18: scale/bias per group; opset 21: per channel.
    const bool perChannel = scale.elementCount() == c;
    const std::int64_t params = perChannel ? c : groups;
    if (scale.elementCount() != params || bias.elementCount() != params)
        return ctx.fail("scale and bias must have one element per channel (" + std::to_string(c) +
                        ") or per group (" + std::to_string(groups) + "), got " + scale.shapeText() + " and " +
                        bias.shapeText());
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        normalizeGroups<T>(x.data<T>(), (*out)->template mutableData<T>(), x.dim(0) * groups, perGroup, eps,
                           [&](std::int64_t g, std::int64_t i) {
                               const std::int64_t idx =
                                   perChannel ? (g % groups) * (c / groups) + i / inner : g % groups;
                               return std::pair(at<T>(scale, idx), at<T>(bias, idx));
                           });
        return Status::ok();
    });
}

Status lrnKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const double alpha = ctx.attrFloat("alpha", 1e-4f), beta = ctx.attrFloat("beta", 0.75f),
                 bias = ctx.attrFloat("bias", 1.0f);
    OPSCOPE_TRY(requireBatchAndChannels(x, "input", ctx));
    const std::int64_t size = ctx.attrInt("size", 1), c = x.dim(1), inner = product(x.shape(), 2);
    if (size < 1)
        return ctx.fail("size must be at least 1, got " + std::to_string(size));
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    if (x.elementCount() == 0)
        return Status::ok(); // the loops below walk batch × channels even when inner is 0
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        const std::int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
        for (std::int64_t n = 0; n < x.dim(0); ++n)
            for (std::int64_t ch = 0; ch < c; ++ch)
                for (std::int64_t i = 0; i < inner; ++i) {
                    double sq = 0;
                    for (std::int64_t k = std::max<std::int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi);
                         ++k) {
                        const double v = double(ComputeType<T>(src[(n * c + k) * inner + i]));
                        sq += v * v;
                    }
                    const std::int64_t at = (n * c + ch) * inner + i;
                    dst[at] = static_cast<T>(static_cast<ComputeType<T>>(
                        double(ComputeType<T>(src[at])) / std::pow(bias + alpha / double(size) * sq, beta)));
                }
        return Status::ok();
    });
}

Status mvnKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    std::vector<std::int64_t> axes = ctx.attrInts("axes", {0, 2, 3});
    std::vector<bool> reduced(x.rank(), false);
    for (std::int64_t a : axes) {
        const Expected<std::int64_t> n = normalizeAxis(a, std::int64_t(x.rank()), ctx);
        if (!n)
            return n.status();
        reduced[std::size_t(*n)] = true;
    }
    Shape64 kept(x.rank());
    for (std::size_t d = 0; d < x.rank(); ++d)
        kept[d] = reduced[d] ? 1 : x.dim(d);
    Broadcast b;
    b.outShape = x.shape();
    Shape64 st = stridesOf(kept);
    for (std::size_t d = 0; d < x.rank(); ++d)
        if (reduced[d])
            st[d] = 0;
    b.strides = {st};
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const std::int64_t groups = product(kept);
        const double count = double(x.elementCount()) / double(std::max<std::int64_t>(groups, 1));
        std::vector<double> mean(static_cast<std::size_t>(groups)), sq(static_cast<std::size_t>(groups));
        const T *src = x.data<T>();
        forEachBroadcast(b, [&](std::int64_t i, const std::int64_t *g) {
            const double v = double(ComputeType<T>(src[i]));
            mean[std::size_t(g[0])] += v;
            sq[std::size_t(g[0])] += v * v;
        });
        T *dst = (*out)->template mutableData<T>();
        forEachBroadcast(b, [&](std::int64_t i, const std::int64_t *g) {
            const double m = mean[std::size_t(g[0])] / count;
            const double var = sq[std::size_t(g[0])] / count - m * m;
            dst[i] = static_cast<T>(static_cast<ComputeType<T>>((double(ComputeType<T>(src[i])) - m) /
                                                                (std::sqrt(std::max(var, 0.0)) + 1e-9)));
        });
        return Status::ok();
    });
}

Status lpNormKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", -1), std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    const std::int64_t p = ctx.attrInt("p", 2);
    if (p != 1 && p != 2)
        return ctx.fail("p must be 1 or 2");
    const std::int64_t n = x.dim(std::size_t(*axis)), outer = product(x.shape(), 0, std::size_t(*axis)),
                       inner = product(x.shape(), std::size_t(*axis) + 1);
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    if (x.elementCount() == 0) // no values, but maybe 2^41 empty rows to walk
        return Status::ok();
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t i = 0; i < inner; ++i) {
                double norm = 0;
                for (std::int64_t k = 0; k < n; ++k) {
                    const double v = double(ComputeType<T>(src[(o * n + k) * inner + i]));
                    norm += p == 1 ? std::abs(v) : v * v;
                }
                norm = p == 1 ? norm : std::sqrt(norm);
                for (std::int64_t k = 0; k < n; ++k) {
                    const std::int64_t at = (o * n + k) * inner + i;
                    dst[at] = static_cast<T>(static_cast<ComputeType<T>>(
                        norm == 0 ? 0.0 : double(ComputeType<T>(src[at])) / norm));
                }
            }
        return Status::ok();
    });
}

// com.microsoft.SkipLayerNormalization(input, skip, gamma, beta?, bias?): s = input + skip (+ bias),
// y = LayerNorm(s) over the last axis; output 3, when asked, is s (lower-to-ort writes it for a
// residual sum read elsewhere).
Status skipLayerNormKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    const RuntimeTensor &x = ctx.in(0), &skip = ctx.in(1), &gamma = ctx.in(2);
    const RuntimeTensor *beta = ctx.input(3), *bias = ctx.input(4);
    if (x.dtype() != DataType::Float || skip.dtype() != DataType::Float || gamma.dtype() != DataType::Float)
        return ctx.unsupported("SkipLayerNormalization is implemented for float32");
    const std::int64_t hidden = x.rank() ? x.shape().back() : 0;
    if (skip.shape() != x.shape() || gamma.elementCount() != hidden ||
        (beta && beta->elementCount() != hidden) || (bias && bias->elementCount() != hidden))
        return ctx.fail("input " + x.shapeText() + ", skip " + skip.shapeText() + " and gamma " +
                        gamma.shapeText() + " do not match");
    if (ctx.wantsOutput(1) || ctx.wantsOutput(2))
        return ctx.unsupported("SkipLayerNormalization's mean and inverse std outputs");
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, x.shape());
    if (!out)
        return out.status();
    RuntimeTensor sumTensor;
    float *sum = nullptr;
    std::vector<float> scratch;
    if (ctx.wantsOutput(3)) {
        Expected<RuntimeTensor *> s = ctx.allocateOutput(3, DataType::Float, x.shape());
        if (!s)
            return s.status();
        sum = (*s)->mutableData<float>();
    } else {
        scratch.resize(std::size_t(x.elementCount()));
        sum = scratch.data();
    }
    const float *px = x.data<float>(), *ps = skip.data<float>(), *pb = bias ? bias->data<float>() : nullptr;
    parallelFor(x.elementCount(),
                [&](std::int64_t i) { sum[i] = px[i] + ps[i] + (pb ? pb[i % hidden] : 0.0f); });
    const float *g = gamma.data<float>(), *b = beta ? beta->data<float>() : nullptr;
    layerNormRows(sum, (*out)->mutableData<float>(), hidden ? x.elementCount() / hidden : 0, hidden,
                  ctx.attrFloat("epsilon", 1e-12f), g, b);
    return Status::ok();
}

// RMS normalization over the trailing axes from `axis`: y = x / √(mean(x²) + ε) · scale.
// opscope's RMSNormalization (layernorm-fusion), ONNX's (opset 23) and ONNX Runtime's
// SimplifiedLayerNormalization (what lower-to-ort writes) share these semantics.
Status rmsNormKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0), &scale = ctx.in(1);
    const Expected<TrailingNorm> geo = trailingNorm(ctx, x);
    if (!geo)
        return geo.status();
    if (scale.dtype() != x.dtype())
        return ctx.fail("scale is " + std::string(dataTypeName(scale.dtype())) + ", the input " +
                        std::string(dataTypeName(x.dtype())));
    const double eps = ctx.attrFloat("epsilon", 1e-5f);
    const std::int64_t outer = geo->outer, inner = geo->inner;
    const Expected<std::vector<std::int64_t>> sIdx = parameterIndex(ctx, scale, geo->normShape, "scale");
    if (!sIdx)
        return sIdx.status();
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        std::vector<double> g(static_cast<std::size_t>(inner));
        for (std::int64_t i = 0; i < inner; ++i)
            g[std::size_t(i)] = at<T>(scale, (*sIdx)[std::size_t(i)]);
        parallelFor(
            outer,
            [&](std::int64_t o) {
                const T *row = src + o * inner;
                double sum = 0;
                for (std::int64_t i = 0; i < inner; ++i) {
                    const double v = double(ComputeType<T>(row[i]));
                    sum += v * v;
                }
                const double inv = 1.0 / std::sqrt(sum / double(std::max<std::int64_t>(inner, 1)) + eps);
                for (std::int64_t i = 0; i < inner; ++i)
                    dst[o * inner + i] = static_cast<T>(static_cast<ComputeType<T>>(
                        double(ComputeType<T>(row[i])) * inv * g[std::size_t(i)]));
            },
            16);
        return Status::ok();
    });
}

} // namespace
} // namespace kernels

void registerNormKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("BatchNormalization", batchNormKernel);
    r.add("InstanceNormalization", instanceNormKernel);
    r.add("LayerNormalization", layerNormKernel);
    r.add("ai.opscope", "LayerNormalization", 1, layerNormKernel); // below opset 17 (layernorm-fusion)
    r.add("GroupNormalization", groupNormKernel);
    r.add("ai.opscope", "RMSNormalization", 1, rmsNormKernel);
    r.add("", "RMSNormalization", 23, rmsNormKernel);
    r.add("SimplifiedLayerNormalization", rmsNormKernel); // ONNX Runtime's, in the ONNX domain
    r.add("com.microsoft", "SkipLayerNormalization", 1, skipLayerNormKernel);
    r.add("LRN", lrnKernel);
    r.add("MeanVarianceNormalization", mvnKernel);
    r.add("LpNormalization", lpNormKernel);
}

} // namespace opscope
