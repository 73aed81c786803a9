#include "runtime/kernels/depthwiseconv.h"

#include "util/cpuclones.h"

#include <algorithm>
#include <cstring>

namespace opscope::kernels {
namespace {

// row[o] += Σ_j k[j] · in[o + j·dw − pw] for o in [from, to), taps outside the input skipped.
void addTapsBounded(const float *in, std::int64_t iw, const float *k, std::int64_t kw, std::int64_t dw,
                    std::int64_t pw, std::int64_t sw, float *row, std::int64_t from, std::int64_t to)
{
    for (std::int64_t j = 0; j < kw; ++j) {
        const float wt = k[j];
        const std::int64_t offset = j * dw - pw;
        // Output columns whose input column o·sw + offset lies inside the row.
        const std::int64_t lo = std::max<std::int64_t>(from, (-offset + sw - 1) / sw);
        const std::int64_t hi = std::min<std::int64_t>(to, (iw - offset + sw - 1) / sw);
        if (sw == 1) {
            const float *in0 = in + offset;
            for (std::int64_t o = lo; o < hi; ++o)
                row[o] += wt * in0[o];
        } else {
            for (std::int64_t o = lo; o < hi; ++o)
                row[o] += wt * in[o * sw + offset];
        }
    }
}

// The same at stride 1 over columns whose every tap is inside the input: 32 outputs held in four
// vector accumulators across all kw taps, so only loads remain per tap. Tap by tap over the whole
// row (a load, a multiply-add and a store per value and tap) bound a long kernel (conformer's
// k31 Conv1d) by its stores.
OPSCOPE_CPU_CLONES void addTapsInterior(const float *in, const float *k, std::int64_t kw, std::int64_t dw,
                                        std::int64_t pw, float *row, std::int64_t from, std::int64_t to)
{
    std::int64_t o = from;
    for (; o + 32 <= to; o += 32) {
        F32x8 a[4];
        std::memcpy(a, row + o, sizeof a);
        for (std::int64_t j = 0; j < kw; ++j) {
            const float wt = k[j];
            const float *src = in + (o - pw) + j * dw;
            for (int v = 0; v < 4; ++v) {
                F32x8 x;
                std::memcpy(&x, src + 8 * v, sizeof x);
                a[v] += wt * x;
            }
        }
        std::memcpy(row + o, a, sizeof a);
    }
    for (; o + 8 <= to; o += 8) {
        F32x8 a;
        std::memcpy(&a, row + o, sizeof a);
        for (std::int64_t j = 0; j < kw; ++j) {
            F32x8 x;
            std::memcpy(&x, in + (o - pw) + j * dw, sizeof x);
            a += k[j] * x;
        }
        std::memcpy(row + o, &a, sizeof a);
    }
    for (; o < to; ++o) {
        float acc = row[o];
        for (std::int64_t j = 0; j < kw; ++j)
            acc += k[j] * in[o - pw + j * dw];
        row[o] = acc;
    }
}

} // namespace

bool depthwiseApplies(const ConvGeometry &geo, const Shape64 &x, const Shape64 &w)
{
    const std::size_t spatial = geo.kernel.size();
    return (spatial == 1 || spatial == 2) && x.size() == spatial + 2 && w.size() == spatial + 2 &&
           geo.group > 1 && x[1] == geo.group && w[0] == geo.group && w[1] == 1;
}

void depthwiseConv(const ConvGeometry &geo, const Shape64 &x, const float *xData, const float *w,
                   const float *bias, float *y, const FusedActivation &act)
{
    // 1-D as 2-D with a height of one.
    const bool one = geo.kernel.size() == 1;
    const std::int64_t n = x[0], c = x[1], ih = one ? 1 : x[2], iw = x.back();
    const std::int64_t oh = one ? 1 : geo.outShape[2], ow = geo.outShape.back();
    const std::int64_t kh = one ? 1 : geo.kernel[0], kw = geo.kernel.back();
    const std::int64_t sh = one ? 1 : geo.strides[0], sw = geo.strides.back();
    const std::int64_t dh = one ? 1 : geo.dilations[0], dw = geo.dilations.back();
    const std::int64_t ph = one ? 0 : geo.padBegin[0], pw = geo.padBegin.back();
    const std::int64_t planes = n * c;
    // Parallel over planes once there is enough work per thread.
    const std::int64_t grain =
        std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(1, oh * ow * kh * kw));
    parallelFor(
        planes,
        [&](std::int64_t p) {
            const std::int64_t ch = p % c;
            const float *src = xData + p * ih * iw;
            const float *k = w + ch * kh * kw;
            float *dst = y + p * oh * ow;
            const float b = bias ? bias[ch] : 0.0f;
            for (std::int64_t r = 0; r < oh; ++r) {
                float *row = dst + r * ow;
                std::fill(row, row + ow, b);
                for (std::int64_t i = 0; i < kh; ++i) {
                    const std::int64_t inRow = r * sh - ph + i * dh;
                    if (inRow < 0 || inRow >= ih)
                        continue;
                    const float *in = src + inRow * iw;
                    const float *kr = k + i * kw;
                    if (sw == 1 && kw >= 4) {
                        // Columns [lo, hi) read no padding: o − pw ≥ 0 and o + (kw−1)·dw − pw < iw.
                        const std::int64_t lo = std::clamp<std::int64_t>(pw, 0, ow);
                        const std::int64_t hi = std::clamp<std::int64_t>(iw - (kw - 1) * dw + pw, lo, ow);
                        addTapsBounded(in, iw, kr, kw, dw, pw, sw, row, 0, lo);
                        addTapsInterior(in, kr, kw, dw, pw, row, lo, hi);
                        addTapsBounded(in, iw, kr, kw, dw, pw, sw, row, hi, ow);
                    } else {
                        addTapsBounded(in, iw, kr, kw, dw, pw, sw, row, 0, ow);
                    }
                }
            }
            act.apply(dst, oh * ow);
        },
        grain);
}

} // namespace opscope::kernels
