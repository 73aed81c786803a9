// The conversions at the borders of the layout-nhwc pass's channel-blocked regions:
//   ai.opscope::ReorderInput(x[N,C,H,W], block=b)  → [N, C/b, H, W, b]   (C a multiple of b)
//   ai.opscope::ReorderOutput(x[N,C/b,H,W,b])      → [N, C, H, W]
// and, with layout="nhwc", to and from channels-last [N, H, W, C].

#include "runtime/kernels/dnnlengine.h"
#include "runtime/kernels/kernelutil.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace opscope {
namespace kernels {
namespace {

// Below this many elements our loops beat a primitive call (a [1,64,1,1] pooled vector: 0.4 µs
// against 1.7 µs).
constexpr std::int64_t kDnnlReorderMin = 4096;

// float32 NCHW ⇄ NHWC / nChw8c / nChw16c through oneDNN's reorder (jit, vectorized), cached per
// node for the current shape. false: oneDNN declined; the loops below run instead.
bool dnnlReorder(KernelContext &ctx, const RuntimeTensor &x, RuntimeTensor &y, const Shape64 &logical,
                 dnnl::memory::format_tag region, bool into)
{
    struct State
    {
        Shape64 shape;
        bool into = false;
        dnnl::memory::format_tag tag{};
        dnnl::memory::desc src, dst;
        dnnl::reorder prim;
    };
    using Tag = dnnl::memory::format_tag;
    try {
        std::shared_ptr<State> st;
        {
            std::lock_guard lock(ctx.cache().mutex);
            st = std::static_pointer_cast<State>(ctx.cache().state);
            if (!st || st->shape != logical || st->into != into || st->tag != region) {
                st = std::make_shared<State>();
                st->shape = logical;
                st->into = into;
                st->tag = region;
                const dnnl::memory::dims dims(logical.begin(), logical.end());
                const dnnl::memory::desc plain(dims, dnnl::memory::data_type::f32, Tag::nchw);
                const dnnl::memory::desc other(dims, dnnl::memory::data_type::f32, region);
                st->src = into ? plain : other;
                st->dst = into ? other : plain;
                st->prim = dnnl::reorder(
                    dnnl::reorder::primitive_desc(dnnlEngine(), st->src, dnnlEngine(), st->dst));
                ctx.cache().state = st;
            }
        }
        dnnl::memory in(st->src, dnnlEngine(), const_cast<std::byte *>(x.bytes()));
        dnnl::memory out(st->dst, dnnlEngine(), y.mutableBytes());
        st->prim.execute(dnnlStream(), in, out);
        dnnlStream().wait();
        return true;
    } catch (const dnnl::error &) {
        return false;
    }
}

// Into the region's layout (ReorderInput) or back to NCHW (ReorderOutput).
template<bool Into>
Status reorderKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const char *op = Into ? "ReorderInput" : "ReorderOutput";
    if (ctx.attrString("layout", "nchwc") == "nhwc") {
        if (x.rank() != 4)
            return ctx.fail(std::string(op) + " needs a rank-4 tensor, got " + x.shapeText());
        if (x.dtype() != DataType::Float) {
            Expected<RuntimeTensor> t = permuted(x, Into ? std::vector<std::int64_t>{0, 2, 3, 1}
                                                         : std::vector<std::int64_t>{0, 3, 1, 2});
            if (!t)
                return t.status();
            ctx.setOutput(0, std::move(*t));
            return Status::ok();
        }
        // NCHW [N,C,H,W] ⇄ NHWC [N,H,W,C]: per image a C × HW transpose, by rows of one channel.
        const std::int64_t n = x.dim(0), c = Into ? x.dim(1) : x.dim(3), h = Into ? x.dim(2) : x.dim(1),
                           w = Into ? x.dim(3) : x.dim(2), hw = h * w;
        Expected<RuntimeTensor *> out =
            ctx.allocateOutput(0, DataType::Float, Into ? Shape64{n, h, w, c} : Shape64{n, c, h, w});
        if (!out)
            return out.status();
        if (x.elementCount() >= kDnnlReorderMin &&
            dnnlReorder(ctx, x, **out, {n, c, h, w}, dnnl::memory::format_tag::nhwc, Into))
            return Status::ok();
        const float *src = x.data<float>();
        float *dst = (*out)->mutableData<float>();
        parallelFor(
            n * h,
            [&](std::int64_t row) {
                const std::int64_t img = row / h, y = row % h;
                for (std::int64_t ch = 0; ch < c; ++ch) {
                    const std::int64_t planar = (img * c + ch) * hw + y * w,
                                       packed = (img * hw + y * w) * c + ch;
                    for (std::int64_t xx = 0; xx < w; ++xx) {
                        if constexpr (Into)
                            dst[packed + xx * c] = src[planar + xx];
                        else
                            dst[planar + xx] = src[packed + xx * c];
                    }
                }
            },
            16);
        return Status::ok();
    }
    if (x.dtype() != DataType::Float || x.rank() != (Into ? 4u : 5u))
        return ctx.fail(std::string(op) + " needs float32 " + (Into ? "[N,C,H,W]" : "[N,C/b,H,W,b]") +
                        ", got " + x.shapeText());
    const std::int64_t b = Into ? ctx.attrInt("block", 8) : x.dim(4);
    if (Into && (b <= 0 || x.dim(1) % b != 0))
        return ctx.fail(std::to_string(x.dim(1)) + " channels do not fill blocks of " + std::to_string(b));
    const std::int64_t n = x.dim(0), cb = Into ? x.dim(1) / b : x.dim(1), h = x.dim(Into ? 2 : 2),
                       w = x.dim(3), hw = h * w;
    Expected<RuntimeTensor *> out =
        ctx.allocateOutput(0, DataType::Float, Into ? Shape64{n, cb, h, w, b} : Shape64{n, cb * b, h, w});
    if (!out)
        return out.status();
    if ((b == 8 || b == 16) && x.elementCount() >= kDnnlReorderMin &&
        dnnlReorder(ctx, x, **out, {n, cb * b, h, w},
                    b == 16 ? dnnl::memory::format_tag::nChw16c : dnnl::memory::format_tag::nChw8c, Into))
        return Status::ok();
    const float *src = x.data<float>();
    float *dst = (*out)->mutableData<float>();
    // Per (batch, block): NCHW holds b planes of hw, NCHWc hw pixels of b lanes.
    parallelFor(
        n * cb,
        [&](std::int64_t nc) {
            const float *s = src + nc * b * hw;
            float *d = dst + nc * b * hw;
            for (std::int64_t p = 0; p < hw; ++p)
                for (std::int64_t i = 0; i < b; ++i) {
                    if constexpr (Into)
                        d[p * b + i] = s[i * hw + p];
                    else
                        d[i * hw + p] = s[p * b + i];
                }
        },
        1);
    return Status::ok();
}

// ai.opscope::NchwcBatchNormalization / NhwcBatchNormalization: BatchNormalization (inference)
// on a region's layout; the channel of an element is (block index, lane) or the last axis.
Status layoutBatchNormKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(5));
    const RuntimeTensor &x = ctx.in(0);
    const Expected<RegionTensor> region = regionTensor(ctx, x);
    if (!region)
        return region.status();
    const bool nhwc = region->nhwc;
    const std::int64_t c = region->logical[1];
    for (std::size_t i = 1; i < 5; ++i)
        if (ctx.in(i).elementCount() != c || ctx.in(i).dtype() != DataType::Float)
            return ctx.fail("parameter " + std::to_string(i) + " must have " + std::to_string(c) +
                            " float values");
    const double eps = ctx.attrFloat("epsilon", 1e-5f);
    std::vector<float> scale(static_cast<std::size_t>(c)), shift(static_cast<std::size_t>(c));
    for (std::int64_t i = 0; i < c; ++i) {
        const double s =
            double(ctx.in(1).data<float>()[i]) / std::sqrt(double(ctx.in(4).data<float>()[i]) + eps);
        scale[std::size_t(i)] = float(s);
        shift[std::size_t(i)] =
            float(double(ctx.in(2).data<float>()[i]) - double(ctx.in(3).data<float>()[i]) * s);
    }
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, x.shape());
    if (!out)
        return out.status();
    const float *src = x.data<float>();
    float *dst = (*out)->mutableData<float>();
    // Rows of `lanes` channels: NHWC a pixel's C channels; NCHWc a pixel's b channels of one block.
    const std::int64_t lanes = nhwc ? c : x.dim(4);
    const std::int64_t rows = lanes ? x.elementCount() / lanes : 0;
    const std::int64_t pixelsPerBlock = nhwc ? 1 : x.dim(2) * x.dim(3);
    parallelFor(
        rows,
        [&](std::int64_t r) {
            const std::int64_t first = nhwc ? 0 : ((r / pixelsPerBlock) % x.dim(1)) * lanes;
            const float *s = scale.data() + first, *t = shift.data() + first;
            for (std::int64_t i = 0; i < lanes; ++i)
                dst[r * lanes + i] = src[r * lanes + i] * s[i] + t[i];
        },
        256);
    return Status::ok();
}

// ai.opscope::{Nchwc,Nhwc}Global{Average,Max}Pool: global pooling read and written in the region's
// layout ([N,C/b,1,1,b] or [N,1,1,C]), so a squeeze-excitation block stays inside it.
template<bool Max>
Status layoutGlobalPoolKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const Expected<RegionTensor> region = regionTensor(ctx, x);
    if (!region)
        return region.status();
    const bool nhwc = region->nhwc;
    const std::int64_t hw = region->logical[2] * region->logical[3], lanes = region->lanes;
    const std::int64_t groups = nhwc ? x.dim(0) : x.dim(0) * x.dim(1);
    Shape64 outShape = x.shape();
    outShape[nhwc ? 1 : 2] = 1;
    outShape[nhwc ? 2 : 3] = 1;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, outShape);
    if (!out)
        return out.status();
    const float *src = x.data<float>();
    float *dst = (*out)->mutableData<float>();
    // Both layouts: per group, hw rows of `lanes` contiguous channels, reduced row-wise.
    parallelFor(
        groups,
        [&](std::int64_t g) {
            const float *in = src + g * hw * lanes;
            float *o = dst + g * lanes;
            for (std::int64_t i = 0; i < lanes; ++i)
                o[i] = hw ? in[i] : 0.0f;
            for (std::int64_t p = 1; p < hw; ++p)
                for (std::int64_t i = 0; i < lanes; ++i)
                    o[i] = Max ? std::max(o[i], in[p * lanes + i]) : o[i] + in[p * lanes + i];
            if (!Max && hw)
                for (std::int64_t i = 0; i < lanes; ++i)
                    o[i] /= float(hw);
        },
        1);
    return Status::ok();
}

} // namespace
} // namespace kernels

void registerLayoutKernels(KernelRegistry &r)
{
    r.add("ai.opscope", "ReorderInput", 1, kernels::reorderKernel<true>);
    r.add("ai.opscope", "ReorderOutput", 1, kernels::reorderKernel<false>);
    r.add("ai.opscope", "NchwcBatchNormalization", 1, kernels::layoutBatchNormKernel);
    r.add("ai.opscope", "NhwcBatchNormalization", 1, kernels::layoutBatchNormKernel);
    for (const char *prefix : {"Nchwc", "Nhwc"}) {
        r.add("ai.opscope", std::string(prefix) + "GlobalAveragePool", 1,
              kernels::layoutGlobalPoolKernel<false>);
        r.add("ai.opscope", std::string(prefix) + "GlobalMaxPool", 1, kernels::layoutGlobalPoolKernel<true>);
    }
}

} // namespace opscope
