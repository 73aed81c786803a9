#pragma once
// Building blocks for elementwise kernels, shared by the math, activation and fused kernels.

#include "runtime/kernels/kernelutil.h"

namespace opscope::kernels {

// A new tensor: op(a[ia], b[ib]) over the broadcast shape. Dims are coalesced so the work is a
// set of rows whose inner loop reads each input with stride 1 or 0 — contiguous and
// vectorizable for the same-shape, scalar and per-channel cases alike. With `output` ≥ 0 the
// tensor is that output's (memory planning may have put it over a or b: each element is written
// after it is read, at the same index).
template<class A, class B, class R, class Op>
Expected<RuntimeTensor> binaryApply(const KernelContext &ctx, const RuntimeTensor &a, const RuntimeTensor &b,
                                    DataType outType, Op op, int output = -1)
{
    const Expected<Broadcast> bc = Broadcast::of({&a.shape(), &b.shape()}, ctx);
    if (!bc)
        return bc.status();
    Expected<RuntimeTensor> out = output >= 0 ? ctx.newOutputTensor(std::size_t(output), outType, bc->outShape)
                                              : RuntimeTensor::allocate(outType, bc->outShape);
    if (!out)
        return out;
    const A *pa = a.data<A>();
    const B *pb = b.data<B>();
    R *po = out->template mutableData<R>();
    const std::int64_t n = out->elementCount();
    if (n == 0)
        return out;
    const BroadcastRows rows = BroadcastRows::of(*bc);
    const std::int64_t len = rows.rowLength;
    const std::int64_t sa = rows.innerStride[0], sb = rows.innerStride[1];
    // z[0, count) from x, y read with stride sa, sb ∈ {0, 1}: four straight loops that vectorize.
    const auto span = [&](const A *x, const B *y, R *z, std::int64_t count) {
        if (sa == 1 && sb == 1)
            for (std::int64_t i = 0; i < count; ++i)
                z[i] = op(x[i], y[i]);
        else if (sa == 1) {
            const B yv = y[0];
            for (std::int64_t i = 0; i < count; ++i)
                z[i] = op(x[i], yv);
        } else if (sb == 1) {
            const A xv = x[0];
            for (std::int64_t i = 0; i < count; ++i)
                z[i] = op(xv, y[i]);
        } else {
            const R v = op(x[0], y[0]);
            for (std::int64_t i = 0; i < count; ++i)
                z[i] = v;
        }
    };
    if (rows.rows == 1 && len >= 65536) { // one long row: split it across threads
        const std::int64_t chunk = 16384, chunks = (len + chunk - 1) / chunk;
        parallelFor(
            chunks,
            [&](std::int64_t c) {
                const std::int64_t begin = c * chunk;
                span(pa + sa * begin, pb + sb * begin, po + begin, std::min(chunk, len - begin));
            },
            2);
    } else {
        parallelFor(
            rows.rows,
            [&](std::int64_t r) { span(pa + rows.offset(r, 0), pb + rows.offset(r, 1), po + r * len, len); },
            std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(len, 1)));
    }
    return out;
}

template<class A, class B, class R, class Op>
Status binaryKernel(KernelContext &ctx, const RuntimeTensor &a, const RuntimeTensor &b, DataType outType,
                    Op op)
{
    Expected<RuntimeTensor> r = binaryApply<A, B, R>(ctx, a, b, outType, op, 0);
    if (!r)
        return r.status();
    ctx.setOutput(0, std::move(*r));
    return Status::ok();
}

template<class T, class R, class Op>
Status unaryKernel(KernelContext &ctx, const RuntimeTensor &x, DataType outType, Op op)
{
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, outType, x.shape());
    if (!out)
        return out.status();
    const T *px = x.data<T>();
    R *po = (*out)->template mutableData<R>();
    parallelFor(x.elementCount(), [&](std::int64_t i) { po[i] = op(px[i]); });
    return Status::ok();
}

// A float-only unary op f(x) computed in ComputeType (float for the half types).
template<class F>
Status unaryFloat(KernelContext &ctx, F f)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    return dispatchFloat(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        return unaryKernel<T, T>(ctx, x, x.dtype(),
                                 [&f](T v) { return static_cast<T>(static_cast<C>(f(C(v)))); });
    });
}

// A unary op whose float32 tensors (64 values and up) go by blocks of its own vectorized
// function, in parallel; other types and tiny tensors take the scalar `exact` loop.
template<class Block, class Exact>
Status blockedUnary(KernelContext &ctx, Block block, Exact exact)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (x.dtype() != DataType::Float || x.elementCount() < 64)
        return unaryFloat(ctx, exact);
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, x.shape());
    if (!out)
        return out.status();
    const float *src = x.data<float>();
    float *dst = (*out)->mutableData<float>(); // may be src: memory planning runs these in place
    const std::int64_t n = x.elementCount(), blocks = (n + 4095) / 4096;
    parallelFor(
        blocks,
        [&](std::int64_t b) { block(src + b * 4096, dst + b * 4096, std::min<std::int64_t>(4096, n - b * 4096)); },
        blocks < 16 ? blocks + 1 : 1);
    return Status::ok();
}

// float32 blocks of GELU's tanh approximation (elementwise.cpp).
void geluTanhBlockF32(const float *x, float *y, std::int64_t n);
// tanh and the logistic sigmoid of n float32 values (y may be x), in opscope's own vectorized
// arithmetic (expApproxF32; < 2e-7 relative error, NaN kept): no call per element or per block,
// for kernels that apply them to short rows many times (a recurrent cell's gates every step).
void tanhF32(const float *x, float *y, std::int64_t n);
void sigmoidF32(const float *x, float *y, std::int64_t n);

} // namespace opscope::kernels
