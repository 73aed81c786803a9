#pragma once
// Building blocks for elementwise kernels, shared by the math, activation and fused kernels.

#include "runtime/kernels/kernelutil.h"

namespace opscope::kernels {

// A new tensor: op(a[ia], b[ib]) over the broadcast shape. Dims are coalesced so the work is a
// set of rows whose inner loop reads each input with stride 1 or 0 — contiguous and
// vectorizable for the same-shape, scalar and per-channel cases alike.
template<class A, class B, class R, class Op>
Expected<RuntimeTensor> binaryApply(const KernelContext &ctx, const RuntimeTensor &a, const RuntimeTensor &b,
                                    DataType outType, Op op)
{
    const Expected<Broadcast> bc = Broadcast::of({&a.shape(), &b.shape()}, ctx);
    if (!bc)
        return bc.status();
    Expected<RuntimeTensor> out = RuntimeTensor::allocate(outType, bc->outShape);
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
    const auto row = [&](std::int64_t r) {
        const A *x = pa + rows.offset(r, 0);
        const B *y = pb + rows.offset(r, 1);
        R *z = po + r * len;
        if (sa == 1 && sb == 1)
            for (std::int64_t i = 0; i < len; ++i)
                z[i] = op(x[i], y[i]);
        else if (sa == 1)
            for (std::int64_t i = 0; i < len; ++i)
                z[i] = op(x[i], y[0]);
        else if (sb == 1)
            for (std::int64_t i = 0; i < len; ++i)
                z[i] = op(x[0], y[i]);
        else
            for (std::int64_t i = 0; i < len; ++i)
                z[i] = op(x[0], y[0]);
    };
    if (rows.rows == 1 && len >= 65536) { // one long row: split it across threads
        const std::int64_t chunks = 64, step = (len + chunks - 1) / chunks;
        parallelFor(
            chunks,
            [&](std::int64_t c) {
                for (std::int64_t i = c * step; i < std::min(len, (c + 1) * step); ++i)
                    po[i] = op(pa[sa ? i : 0], pb[sb ? i : 0]);
            },
            2);
    } else {
        parallelFor(rows.rows, row, std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(len, 1)));
    }
    return out;
}

template<class A, class B, class R, class Op>
Status binaryKernel(KernelContext &ctx, const RuntimeTensor &a, const RuntimeTensor &b, DataType outType,
                    Op op)
{
    Expected<RuntimeTensor> r = binaryApply<A, B, R>(ctx, a, b, outType, op);
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

} // namespace opscope::kernels
