#pragma once
// Building blocks for elementwise kernels, shared by the math, activation and fused kernels.

#include "runtime/kernels/kernelutil.h"

namespace opscope::kernels {

// A new tensor: op(a[ia], b[ib]) over the broadcast shape. Fast paths: same shapes, scalars.
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
    if (bc->allSame)
        parallelFor(n, [&](std::int64_t i) { po[i] = op(pa[i], pb[i]); });
    else if (b.elementCount() == 1 && a.shape() == bc->outShape)
        parallelFor(n, [&](std::int64_t i) { po[i] = op(pa[i], pb[0]); });
    else if (a.elementCount() == 1 && b.shape() == bc->outShape)
        parallelFor(n, [&](std::int64_t i) { po[i] = op(pa[0], pb[i]); });
    else
        forEachBroadcast(
            *bc, [&](std::int64_t o, const std::int64_t *idx) { po[o] = op(pa[idx[0]], pb[idx[1]]); });
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
