// The conversions at the borders of the layout-nhwc pass's channel-blocked regions:
//   ai.opscope::ReorderInput(x[N,C,H,W], block=b)  → [N, C/b, H, W, b]   (C a multiple of b)
//   ai.opscope::ReorderOutput(x[N,C/b,H,W,b])      → [N, C, H, W]
// and, with layout="nhwc", to and from channels-last [N, H, W, C].

#include "runtime/kernels/kernelutil.h"

#include <cstring>

namespace opscope {
namespace kernels {
namespace {

Status reorderInputKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (ctx.attrString("layout", "nchwc") == "nhwc") {
        if (x.rank() != 4)
            return ctx.fail("ReorderInput needs [N,C,H,W], got " + x.shapeText());
        Expected<RuntimeTensor> t = permuted(x, {0, 2, 3, 1});
        if (!t)
            return t.status();
        ctx.setOutput(0, std::move(*t));
        return Status::ok();
    }
    const std::int64_t b = ctx.attrInt("block", 8);
    if (x.dtype() != DataType::Float || x.rank() != 4)
        return ctx.fail("ReorderInput needs float32 [N,C,H,W], got " + x.shapeText());
    if (b <= 0 || x.dim(1) % b != 0)
        return ctx.fail(std::to_string(x.dim(1)) + " channels do not fill blocks of " + std::to_string(b));
    const std::int64_t n = x.dim(0), cb = x.dim(1) / b, hw = x.dim(2) * x.dim(3);
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, {n, cb, x.dim(2), x.dim(3), b});
    if (!out)
        return out.status();
    const float *src = x.data<float>();
    float *dst = (*out)->mutableData<float>();
    parallelFor(
        n * cb,
        [&](std::int64_t nc) {
            const float *s = src + nc * b * hw;
            float *d = dst + nc * hw * b;
            for (std::int64_t p = 0; p < hw; ++p)
                for (std::int64_t i = 0; i < b; ++i)
                    d[p * b + i] = s[i * hw + p];
        },
        1);
    return Status::ok();
}

Status reorderOutputKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (ctx.attrString("layout", "nchwc") == "nhwc") {
        if (x.rank() != 4)
            return ctx.fail("ReorderOutput needs [N,H,W,C], got " + x.shapeText());
        Expected<RuntimeTensor> t = permuted(x, {0, 3, 1, 2});
        if (!t)
            return t.status();
        ctx.setOutput(0, std::move(*t));
        return Status::ok();
    }
    if (x.dtype() != DataType::Float || x.rank() != 5)
        return ctx.fail("ReorderOutput needs float32 [N,C/b,H,W,b], got " + x.shapeText());
    const std::int64_t n = x.dim(0), cb = x.dim(1), b = x.dim(4), hw = x.dim(2) * x.dim(3);
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, {n, cb * b, x.dim(2), x.dim(3)});
    if (!out)
        return out.status();
    const float *src = x.data<float>();
    float *dst = (*out)->mutableData<float>();
    parallelFor(
        n * cb,
        [&](std::int64_t nc) {
            const float *s = src + nc * hw * b;
            float *d = dst + nc * b * hw;
            for (std::int64_t i = 0; i < b; ++i)
                for (std::int64_t p = 0; p < hw; ++p)
                    d[i * hw + p] = s[p * b + i];
        },
        1);
    return Status::ok();
}

} // namespace
} // namespace kernels

void registerLayoutKernels(KernelRegistry &r)
{
    r.add("ai.opscope", "ReorderInput", 1, kernels::reorderInputKernel);
    r.add("ai.opscope", "ReorderOutput", 1, kernels::reorderOutputKernel);
}

} // namespace opscope
