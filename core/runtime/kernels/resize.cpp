// Resize (opset 10–18) and Upsample: nearest / linear / cubic over any dims, every coordinate
// transformation and nearest-rounding mode, separably computed per-dimension tap tables.

#include "runtime/kernels/resize.h"

#include "runtime/kernels/kernelutil.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace opscope {
namespace kernels {
namespace {

// `outLength` is the resized length before flooring (input × scale when scales are given): the
// ONNX reference resolves align_corners and tf_crop_and_resize with it.
double sourceCoord(const std::string &mode, double outCoord, double scale, std::int64_t inSize,
                   double outLength, double roiStart, double roiEnd)
{
    const auto outSize = static_cast<std::int64_t>(outLength);
    if (mode == "asymmetric")
        return outCoord / scale;
    if (mode == "align_corners")
        return outLength == 1.0 ? 0.0 : outCoord * double(inSize - 1) / (outLength - 1.0);
    if (mode == "tf_half_pixel_for_nn")
        return (outCoord + 0.5) / scale;
    if (mode == "pytorch_half_pixel")
        return outSize > 1 ? (outCoord + 0.5) / scale - 0.5 : 0.0;
    if (mode == "tf_crop_and_resize")
        return outSize > 1 ? roiStart * double(inSize - 1) +
                                 outCoord * (roiEnd - roiStart) * double(inSize - 1) / (outLength - 1.0)
                           : 0.5 * (roiStart + roiEnd) * double(inSize - 1);
    if (mode == "half_pixel_symmetric") {
        const double adjust = double(outSize) / (scale * double(inSize));
        const double center = double(inSize) / 2.0;
        const double offset = center * (1.0 - adjust);
        return offset + (outCoord + 0.5) / scale - 0.5;
    }
    return (outCoord + 0.5) / scale - 0.5; // half_pixel (the default)
}

std::int64_t nearestIndex(const std::string &mode, double x, bool downsampling)
{
    if (mode == "floor")
        return std::int64_t(std::floor(x));
    if (mode == "ceil")
        return std::int64_t(std::ceil(x));
    if (mode == "round_prefer_ceil")
        return std::int64_t(std::floor(x + 0.5));
    // round_prefer_floor (default): halves go down
    if (x == std::floor(x) + 0.5)
        return std::int64_t(std::floor(x));
    (void)downsampling;
    return std::int64_t(std::round(x));
}

double cubicWeight(double t, double a)
{
    t = std::abs(t);
    if (t <= 1)
        return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2)
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
    return 0;
}

Expected<ResizeTaps> resizeTapsImpl(const KernelContext &ctx, const RuntimeTensor &x, std::vector<double> scales,
                                    Shape64 sizes, std::vector<double> roi)
{
    const std::size_t rank = x.rank();
    const std::string mode = ctx.attrString("mode", "nearest");
    const std::string coord =
        ctx.opset() < 11 ? "asymmetric" : ctx.attrString("coordinate_transformation_mode", "half_pixel");
    // Resize-10 and Upsample take the floor of the asymmetric source coordinate.
    const std::string nearest =
        ctx.opset() < 11 ? "floor" : ctx.attrString("nearest_mode", "round_prefer_floor");
    const double cubicA = ctx.attrFloat("cubic_coeff_a", -0.75f);
    const bool excludeOutside = ctx.attrInt("exclude_outside", 0) != 0;
    const double extrapolation = ctx.attrFloat("extrapolation_value", 0.0f);
    const Shape64 axesAttr = ctx.attrInts("axes");
    const std::string keepAspect = ctx.attrString("keep_aspect_ratio_policy", "stretch");
    static const char *const coords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    if (std::find(std::begin(coords), std::end(coords), coord) == std::end(coords))
        return ctx.fail("coordinate_transformation_mode '" + coord + "' is not one ONNX defines");
    if (keepAspect != "stretch" && keepAspect != "not_larger" && keepAspect != "not_smaller")
        return ctx.fail("keep_aspect_ratio_policy '" + keepAspect + "' is not stretch, not_larger or not_smaller");

    // Expand axes-restricted scales/sizes/roi to every dim.
    std::vector<std::int64_t> axes(rank);
    for (std::size_t d = 0; d < rank; ++d)
        axes[d] = std::int64_t(d);
    if (!axesAttr.empty()) {
        axes = axesAttr;
        for (auto &a : axes) {
            a = a < 0 ? a + std::int64_t(rank) : a;
            if (a < 0 || a >= std::int64_t(rank))
                return ctx.fail("axes " + shapeText(axesAttr) + " are out of range for rank " + std::to_string(rank));
        }
        if ((!scales.empty() && scales.size() != axes.size()) || (!sizes.empty() && sizes.size() != axes.size()) ||
            (!roi.empty() && roi.size() != 2 * axes.size()))
            return ctx.fail("scales, sizes and roi need one entry per axis in " + shapeText(axesAttr));
        std::vector<double> fullScales(rank, 1.0), fullRoi;
        Shape64 fullSizes = x.shape();
        if (!roi.empty()) {
            fullRoi.assign(2 * rank, 0.0);
            for (std::size_t d = 0; d < rank; ++d)
                fullRoi[rank + d] = 1.0;
        }
        for (std::size_t i = 0; i < axes.size(); ++i) {
            const auto d = std::size_t(axes[i]);
            if (!scales.empty())
                fullScales[d] = scales[i];
            if (!sizes.empty())
                fullSizes[d] = sizes[i];
            if (!roi.empty()) {
                fullRoi[d] = roi[i];
                fullRoi[rank + d] = roi[axes.size() + i];
            }
        }
        scales = scales.empty() ? scales : fullScales;
        sizes = sizes.empty() ? sizes : fullSizes;
        roi = fullRoi;
    }
    Shape64 outShape(rank);
    const bool sizesGiven = !sizes.empty();
    if (!sizes.empty()) {
        if (sizes.size() != rank)
            return ctx.fail("sizes has " + std::to_string(sizes.size()) + " entries for rank " +
                            std::to_string(rank));
        scales.assign(rank, 1.0);
        if (keepAspect != "stretch") {
            double s = keepAspect == "not_larger" ? 1e300 : 0.0;
            for (std::int64_t a : axes) {
                const double r = double(sizes[std::size_t(a)]) / double(x.dim(static_cast<std::size_t>(a)));
                s = keepAspect == "not_larger" ? std::min(s, r) : std::max(s, r);
            }
            for (std::int64_t a : axes) {
                scales[std::size_t(a)] = s;
                sizes[std::size_t(a)] =
                    std::int64_t(std::round(s * double(x.dim(static_cast<std::size_t>(a)))));
            }
        }
        for (std::size_t d = 0; d < rank; ++d) {
            if (sizes[d] < 0)
                return ctx.fail("sizes " + shapeText(sizes) + " must not be negative");
            outShape[d] = sizes[d];
            if (keepAspect == "stretch")
                scales[d] = double(sizes[d]) / double(x.dim(d));
        }
    } else {
        if (scales.size() != rank)
            return ctx.fail("scales has " + std::to_string(scales.size()) + " entries for rank " +
                            std::to_string(rank));
        for (std::size_t d = 0; d < rank; ++d) {
            // !(s > 0) also catches NaN; the bound keeps the floor inside int64.
            if (!(scales[d] > 0) || !std::isfinite(scales[d]) || double(x.dim(d)) * scales[d] > 0x1p62)
                return ctx.fail("scale " + std::to_string(scales[d]) + " on axis " + std::to_string(d) +
                                " must be a positive, finite number that gives a representable size");
            // In float, as ONNX's shape inference and ONNX Runtime compute it: 10 × 2.3f is 23
            // in float and 22.9999995 in double, one row fewer than every other tool.
            outShape[d] = std::int64_t(std::floor(static_cast<float>(x.dim(d)) * static_cast<float>(scales[d])));
        }
    }
    if (!roi.empty() && roi.size() != 2 * rank && coord == "tf_crop_and_resize")
        return ctx.fail("roi has " + std::to_string(roi.size()) + " entries; it needs a start and an end per axis (" +
                        std::to_string(2 * rank) + ")");
    if (roi.size() != 2 * rank) {
        roi.assign(2 * rank, 0.0);
        for (std::size_t d = 0; d < rank; ++d)
            roi[rank + d] = 1.0;
    }

    // Per-dim taps for every output coordinate; an index of -1 means "extrapolate".
    std::vector<std::vector<std::vector<Tap>>> taps(rank);
    for (std::size_t d = 0; d < rank; ++d) {
        const std::int64_t in = x.dim(d), out = outShape[d];
        taps[d].resize(static_cast<std::size_t>(out));
        for (std::int64_t o = 0; o < out; ++o) {
            auto &t = taps[d][std::size_t(o)];
            if (in == out && scales[d] == 1.0 && coord != "tf_crop_and_resize") {
                t.push_back({o, 1.0});
                continue;
            }
            const double outLength = sizesGiven ? double(out) : double(in) * scales[d];
            const double src = sourceCoord(coord, double(o), scales[d], in, outLength, roi[d], roi[rank + d]);
            if (coord == "tf_crop_and_resize" && (src < 0 || src > double(in - 1))) {
                t.push_back({-1, 1.0});
                continue;
            }
            if (mode == "nearest") {
                t.push_back(
                    {std::clamp<std::int64_t>(nearestIndex(nearest, src, scales[d] < 1), 0, in - 1), 1.0});
            } else if (mode == "linear") {
                const double s = std::clamp(src, 0.0, double(in - 1));
                const auto lo = std::int64_t(std::floor(s));
                const std::int64_t hi = std::min(lo + 1, in - 1);
                const double f = s - double(lo);
                t.push_back({lo, 1.0 - f});
                if (hi != lo)
                    t.push_back({hi, f});
            } else if (mode == "cubic") {
                const auto base = std::int64_t(std::floor(src));
                const double f = src - double(base);
                double total = 0;
                for (std::int64_t k = -1; k <= 2; ++k) {
                    const std::int64_t idx = base + k;
                    double w = cubicWeight(f - double(k), cubicA);
                    if (excludeOutside && (idx < 0 || idx >= in))
                        w = 0;
                    total += w;
                    t.push_back({std::clamp<std::int64_t>(idx, 0, in - 1), w});
                }
                if (excludeOutside && total != 0)
                    for (Tap &tap : t)
                        tap.weight /= total;
            } else {
                return ctx.fail("unknown mode '" + mode + "'");
            }
        }
    }

    return ResizeTaps{std::move(outShape), std::move(taps), extrapolation};
}

// Taps of one dimension flattened to a fixed count per output coordinate (shorter lists padded
// from their last tap, below), weights in float as ONNX Runtime computes them.
struct FlatTaps
{
    std::int64_t count = 0;
    std::vector<std::int64_t> index;
    std::vector<float> weight;
};

FlatTaps flatten(const std::vector<std::vector<Tap>> &taps)
{
    FlatTaps f;
    for (const auto &t : taps)
        f.count = std::max<std::int64_t>(f.count, std::int64_t(t.size()));
    f.index.assign(taps.size() * std::size_t(f.count), 0);
    f.weight.assign(taps.size() * std::size_t(f.count), 0.0f);
    for (std::size_t o = 0; o < taps.size(); ++o) {
        const std::size_t at = o * std::size_t(f.count), n = taps[o].size();
        for (std::size_t k = 0; k < n; ++k) {
            f.index[at + k] = taps[o][k].index;
            f.weight[at + k] = static_cast<float>(taps[o][k].weight);
        }
        // A shorter list (linear's clamped edge has one tap) is padded by halving its last tap
        // into the free slots: x·w/2 + x·w/2 is exactly x·w, and no other row or column is read
        // (a padding tap of weight 0 at index 0 turned an inf there into NaN here).
        for (std::size_t k = n; k < std::size_t(f.count) && n > 0; ++k) {
            f.index[at + k] = f.index[at + k - 1];
            f.weight[at + k - 1] *= 0.5f;
            f.weight[at + k] = f.weight[at + k - 1];
        }
    }
    return f;
}

// Linear and cubic resizing of the last two dims, separably: each input row a tap list reads is
// resized along W once into a small cache (one slot per vertical tap), and each output row is a
// weighted sum of cached rows — vectorizable loops over OW. Work is spread over blocks of output
// rows, so one large plane uses every thread too. Evaluating every tap pair per output value in
// double through the tap vectors was 1.7x ONNX Runtime (align_corners, [1,32,128,128] → 256).
// false: out of memory for a thread's row cache.
bool resizePlanesSeparable(const float *src, float *dst, std::int64_t planes, std::int64_t H, std::int64_t W,
                           std::int64_t OH, std::int64_t OW, const std::vector<std::vector<Tap>> &th,
                           const std::vector<std::vector<Tap>> &tw)
{
    if (planes * OH * OW == 0)
        return true;
    std::atomic<bool> failed = false;
    const FlatTaps fh = flatten(th), fw = flatten(tw);
    const std::int64_t kh = fh.count, kw = fw.count;
    constexpr std::int64_t rowsPerTask = 16;
    const std::int64_t blocks = (OH + rowsPerTask - 1) / rowsPerTask;
    parallelFor(
        planes * blocks,
        [&](std::int64_t task) {
            const std::int64_t plane = task / blocks, oh0 = task % blocks * rowsPerTask;
            const float *xp = src + plane * H * W;
            // One horizontal row per vertical tap, from this thread's scratch (a vector per task
            // would be fresh pages for wide rows).
            float *cache = reinterpret_cast<float *>(threadScratch(0, std::uint64_t(kh * OW) * sizeof(float)));
            if (!cache) {
                failed = true;
                return;
            }
            std::vector<std::int64_t> cached(static_cast<std::size_t>(kh), -1); // the input row in each slot
            std::vector<const float *> rows(static_cast<std::size_t>(kh));
            for (std::int64_t oh = oh0; oh < std::min(OH, oh0 + rowsPerTask); ++oh) {
                const std::int64_t *ih = &fh.index[std::size_t(oh * kh)];
                for (std::int64_t a = 0; a < kh; ++a) {
                    std::int64_t slot = -1;
                    for (std::int64_t q = 0; q < kh && slot < 0; ++q)
                        if (cached[std::size_t(q)] == ih[a])
                            slot = q;
                    if (slot < 0) { // a slot no tap of this output row needs
                        for (std::int64_t q = 0; q < kh && slot < 0; ++q)
                            if (std::find(ih, ih + kh, cached[std::size_t(q)]) == ih + kh)
                                slot = q;
                        cached[std::size_t(slot)] = ih[a];
                        const float *__restrict xr = xp + ih[a] * W;
                        float *__restrict c = cache + slot * OW;
                        const std::int64_t *__restrict iw = fw.index.data();
                        const float *__restrict ww = fw.weight.data();
                        if (kw == 2)
                            for (std::int64_t ow = 0; ow < OW; ++ow)
                                c[ow] = ww[2 * ow] * xr[iw[2 * ow]] + ww[2 * ow + 1] * xr[iw[2 * ow + 1]];
                        else
                            for (std::int64_t ow = 0; ow < OW; ++ow) {
                                float acc = 0.0f;
                                for (std::int64_t b = 0; b < kw; ++b)
                                    acc += ww[ow * kw + b] * xr[iw[ow * kw + b]];
                                c[ow] = acc;
                            }
                    }
                    rows[std::size_t(a)] = cache + slot * OW;
                }
                const float *wh = &fh.weight[std::size_t(oh * kh)];
                float *__restrict yr = dst + (plane * OH + oh) * OW;
                const float *__restrict r0 = rows[0];
                const float w0 = wh[0];
                for (std::int64_t ow = 0; ow < OW; ++ow)
                    yr[ow] = w0 * r0[ow];
                for (std::int64_t a = 1; a < kh; ++a) {
                    const float *__restrict ra = rows[std::size_t(a)];
                    const float wa = wh[a];
                    for (std::int64_t ow = 0; ow < OW; ++ow)
                        yr[ow] += wa * ra[ow];
                }
            }
        },
        1);
    return !failed;
}

// Resize and Upsample on the CPU: the taps resizeTaps (shared with the CUDA backend) reads from
// the node's inputs and attributes, then the gather.
Status resizeKernel(KernelContext &ctx)
{
    Expected<ResizeTaps> plan = resizeTaps(ctx);
    if (!plan)
        return plan.status();
    const RuntimeTensor &x = ctx.in(0);
    const std::size_t rank = x.rank();
    const Shape64 &outShape = plan->outShape;
    const auto &taps = plan->taps;
    const double extrapolation = plan->extrapolation;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), outShape);
    if (!out)
        return out.status();
    // Fast path: float, only the last two dims resized, no extrapolation — a separable gather
    // over planes (covers the ×2 nearest/linear upsampling of detectors and segmenters).
    bool planar = x.dtype() == DataType::Float && rank >= 2;
    for (std::size_t d = 0; planar && d + 2 < rank; ++d)
        planar = outShape[d] == x.dim(d) && taps[d].size() == std::size_t(outShape[d]) &&
                 std::all_of(taps[d].begin(), taps[d].end(),
                             [&](const std::vector<Tap> &t) { return t.size() == 1; });
    for (std::size_t d = rank - 2; planar && d < rank; ++d)
        for (const auto &t : taps[d])
            planar = planar && t[0].index >= 0;
    if (planar) {
        const std::int64_t H = x.dim(rank - 2), W = x.dim(rank - 1), OH = outShape[rank - 2],
                           OW = outShape[rank - 1];
        const auto &th = taps[rank - 2], &tw = taps[rank - 1];
        const float *src = x.data<float>();
        float *dst = (*out)->mutableData<float>();
        const auto single = [](const std::vector<std::vector<Tap>> &t) {
            return std::all_of(t.begin(), t.end(), [](const std::vector<Tap> &v) { return v.size() == 1; });
        };
        if (single(th) && single(tw)) { // nearest: a plain gather, no weights to multiply
            std::vector<std::int64_t> wi(static_cast<std::size_t>(OW));
            for (std::int64_t ow = 0; ow < OW; ++ow)
                wi[std::size_t(ow)] = tw[std::size_t(ow)][0].index;
            parallelFor(
                product(outShape, 0, rank - 2) * OH,
                [&](std::int64_t row) {
                    const std::int64_t plane = row / OH, oh = row % OH;
                    const float *__restrict xr = src + plane * H * W + th[std::size_t(oh)][0].index * W;
                    float *__restrict yr = dst + row * OW;
                    const std::int64_t *__restrict idx = wi.data();
                    for (std::int64_t ow = 0; ow < OW; ++ow)
                        yr[ow] = xr[idx[ow]];
                },
                64);
            return Status::ok();
        }
        if (!resizePlanesSeparable(src, dst, product(outShape, 0, rank - 2), H, W, OH, OW, th, tw))
            return Status::io("out of memory for the row cache of " + ctx.node().name);
        return Status::ok();
    }
    const Shape64 inStr = stridesOf(x.shape()), outStr = stridesOf(outShape);
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
            return ctx.unsupported("Resize of bool");
        } else {
            const T *src = x.data<T>();
            T *dst = (*out)->template mutableData<T>();
            parallelFor((*out)->elementCount(),
                        [&](std::int64_t o) {
                            // Walk the Cartesian product of the taps of every dim.
                            std::vector<const std::vector<Tap> *> sel(rank);
                            bool extrapolate = false;
                            for (std::size_t d = 0; d < rank; ++d) {
                                sel[d] = &taps[d][std::size_t((o / outStr[d]) % outShape[d])];
                                extrapolate |= (*sel[d])[0].index < 0;
                            }
                            if (extrapolate) {
                                dst[o] = static_cast<T>(static_cast<ComputeType<T>>(extrapolation));
                                return;
                            }
                            std::vector<std::size_t> k(rank, 0);
                            double acc = 0;
                            while (true) {
                                double w = 1;
                                std::int64_t off = 0;
                                for (std::size_t d = 0; d < rank; ++d) {
                                    const Tap &tap = (*sel[d])[k[d]];
                                    w *= tap.weight;
                                    off += tap.index * inStr[d];
                                }
                                acc += w * double(ComputeType<T>(src[off]));
                                std::size_t d = rank;
                                while (d-- > 0) {
                                    if (++k[d] < sel[d]->size())
                                        break;
                                    k[d] = 0;
                                }
                                if (d == std::size_t(-1))
                                    break;
                            }
                            if constexpr (isFloatLike<T>)
                                dst[o] = static_cast<T>(static_cast<ComputeType<T>>(acc));
                            else
                                dst[o] = static_cast<T>(std::llround(acc));
                        },
                        4096);
            return Status::ok();
        }
    });
}

std::vector<double> doubles(const RuntimeTensor *t)
{
    std::vector<double> v;
    if (t)
        for (std::int64_t i = 0; i < t->elementCount(); ++i)
            v.push_back(t->valueAsDouble(i));
    return v;
}

} // namespace

Expected<ResizeTaps> resizeTaps(const KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    if (ctx.node().opType == "Upsample") {
        std::vector<double> scales = ctx.input(1) ? doubles(ctx.input(1)) : std::vector<double>();
        if (scales.empty())
            for (float f : ctx.attrFloats("scales"))
                scales.push_back(f);
        return resizeTapsImpl(ctx, ctx.in(0), scales, {}, {});
    }
    if (ctx.opset() < 11)
        return resizeTapsImpl(ctx, ctx.in(0), doubles(ctx.input(1)), {}, {});
    const RuntimeTensor *sizes = ctx.input(3), *scales = ctx.input(2);
    if (sizes && sizes->elementCount() && scales && scales->elementCount())
        return ctx.fail("both scales and sizes are given; ONNX allows only one of them");
    return resizeTapsImpl(
        ctx, ctx.in(0), sizes && sizes->elementCount() ? std::vector<double>() : doubles(ctx.input(2)),
        sizes && sizes->elementCount() ? sizes->toInt64Vector() : Shape64(), doubles(ctx.input(1)));
}

} // namespace kernels

void registerResizeKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("Resize", resizeKernel);
    r.add("Upsample", resizeKernel);
}

} // namespace opscope
