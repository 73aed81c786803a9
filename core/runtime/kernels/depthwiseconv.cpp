#include "runtime/kernels/depthwiseconv.h"

#include <algorithm>

namespace opscope::kernels {

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
                    for (std::int64_t j = 0; j < kw; ++j) {
                        const float wt = k[i * kw + j];
                        const std::int64_t offset = j * dw - pw;
                        // Output columns whose input column o·sw + offset lies inside the row.
                        const std::int64_t lo = std::max<std::int64_t>(0, (-offset + sw - 1) / sw);
                        const std::int64_t hi = std::min<std::int64_t>(ow, (iw - offset + sw - 1) / sw);
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
            }
            act.apply(dst, oh * ow);
        },
        grain);
}

} // namespace opscope::kernels
