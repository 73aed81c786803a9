// Reductions (ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare) and ArgMax/ArgMin.
// Axes come from the attribute or, from opset 13 (ReduceSum) / 18 (the rest), from input 1.

#include "runtime/kernels/kernelutil.h"

#include <algorithm>
#include <limits>
#include <type_traits>

namespace opscope {
namespace kernels {
namespace {

// Integer sums and products wrap around as two's complement, as ONNX Runtime's do; in signed C++
// arithmetic an overflow is undefined (the fuzzer's UBSan run found ReduceSum of int32 maxima).
template<class A>
A wrapAdd(A a, A b)
{
    if constexpr (std::is_integral_v<A> && std::is_signed_v<A>)
        return static_cast<A>(static_cast<std::make_unsigned_t<A>>(a) + static_cast<std::make_unsigned_t<A>>(b));
    else
        return a + b;
}

template<class A>
A wrapMul(A a, A b)
{
    if constexpr (std::is_integral_v<A> && std::is_signed_v<A>)
        return static_cast<A>(static_cast<std::make_unsigned_t<A>>(a) * static_cast<std::make_unsigned_t<A>>(b));
    else
        return a * b;
}

enum class Red
{
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    L1,
    L2,
    LogSum,
    LogSumExp,
    SumSquare
};

struct ReducePlan
{
    std::vector<bool> reduced;
    Shape64 keptShape; // with 1 in reduced dims
    Shape64 outShape;  // honours keepdims
    bool noop = false;
};

Expected<ReducePlan> planReduce(const KernelContext &ctx, const RuntimeTensor &x, bool axesFromInput)
{
    ReducePlan p;
    const auto rank = static_cast<std::int64_t>(x.rank());
    std::vector<std::int64_t> axes;
    if (axesFromInput) {
        if (const RuntimeTensor *a = ctx.input(1))
            axes = a->toInt64Vector();
    } else {
        axes = ctx.attrInts("axes");
    }
    const bool keep = ctx.attrInt("keepdims", 1) != 0;
    p.reduced.assign(x.rank(), axes.empty());
    if (axes.empty() && ctx.attrInt("noop_with_empty_axes", 0) != 0) {
        p.noop = true;
        p.reduced.assign(x.rank(), false);
    }
    for (std::int64_t a : axes) {
        const Expected<std::int64_t> n = normalizeAxis(a, rank, ctx);
        if (!n)
            return n.status();
        p.reduced[std::size_t(*n)] = true;
    }
    for (std::size_t d = 0; d < x.rank(); ++d) {
        p.keptShape.push_back(p.reduced[d] ? 1 : x.dim(d));
        if (!p.reduced[d] || keep)
            p.outShape.push_back(p.reduced[d] ? 1 : x.dim(d));
    }
    return p;
}

// Output index of every input element: drop the reduced coordinates.
template<class F>
void forEachReduced(const RuntimeTensor &x, const ReducePlan &p, F &&f)
{
    Broadcast b;
    b.outShape = x.shape();
    Shape64 outStrides = stridesOf(p.keptShape);
    for (std::size_t d = 0; d < x.rank(); ++d)
        if (p.reduced[d])
            outStrides[d] = 0;
    b.strides = {outStrides};
    forEachBroadcast(b, [&](std::int64_t i, const std::int64_t *o) { f(i, o[0]); });
}

template<Red K>
Status reduceKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const bool axesFromInput = (K == Red::Sum && ctx.opset() >= 13) || ctx.opset() >= 18;
    const Expected<ReducePlan> p = planReduce(ctx, x, axesFromInput);
    if (!p)
        return p.status();
    if (p->noop) {
        ctx.setOutput(0, x);
        return Status::ok();
    }
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
            return ctx.unsupported("reduction of bool");
        } else {
            using Acc = std::conditional_t<isFloatLike<T>, double, ComputeType<T>>;
            Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), p->outShape);
            if (!out)
                return out.status();
            const std::int64_t n = (*out)->elementCount();
            Acc init = 0;
            if constexpr (K == Red::Max)
                init = std::numeric_limits<Acc>::lowest();
            else if constexpr (K == Red::Min)
                init = std::numeric_limits<Acc>::max();
            else if constexpr (K == Red::Prod)
                init = 1;
            std::vector<Acc> acc(static_cast<std::size_t>(n), init);
            std::vector<bool> sawNan(static_cast<std::size_t>(n), false);
            const T *src = x.data<T>();
            // Fast path: the reduced axes form one contiguous block [first, last], so the input is
            // outer × len × inner and each output reads a strided run (LayerNorm's ReduceMean, GAP).
            std::size_t first = x.rank(), last = 0;
            for (std::size_t d = 0; d < x.rank(); ++d)
                if (p->reduced[d] && x.dim(d) != 1) {
                    first = std::min(first, d);
                    last = d;
                }
            bool block = first < x.rank();
            for (std::size_t d = first; block && d <= last; ++d)
                block = p->reduced[d] || x.dim(d) == 1;
            if constexpr (K == Red::Sum || K == Red::Mean || K == Red::SumSquare || K == Red::Max ||
                          K == Red::Min) {
                if (block && x.elementCount() > 0) {
                    const std::int64_t outer = product(x.shape(), 0, first),
                                       len = product(x.shape(), first, last + 1),
                                       inner = product(x.shape(), last + 1);
                    T *dst = (*out)->template mutableData<T>();
                    parallelFor(
                        outer * inner,
                        [&](std::int64_t job) {
                            const std::int64_t o = job / inner, i = job % inner;
                            const T *run = src + o * len * inner + i;
                            Acc a = init;
                            bool nan = false;
                            for (std::int64_t k = 0; k < len; ++k) {
                                const Acc v = static_cast<Acc>(ComputeType<T>(run[k * inner]));
                                if constexpr (K == Red::Max || K == Red::Min) {
                                    nan |= v != v;
                                    a = K == Red::Max ? (a < v ? v : a) : (v < a ? v : a);
                                } else if constexpr (K == Red::SumSquare) {
                                    a = wrapAdd(a, wrapMul(v, v));
                                } else {
                                    a = wrapAdd(a, v);
                                }
                            }
                            if constexpr (K == Red::Mean)
                                a = static_cast<Acc>(a / static_cast<Acc>(len));
                            if constexpr (isFloatLike<T>)
                                if (nan)
                                    a = std::numeric_limits<Acc>::quiet_NaN();
                            dst[job] = static_cast<T>(static_cast<ComputeType<T>>(a));
                        },
                        256);
                    return Status::ok();
                }
            }
            forEachReduced(x, *p, [&](std::int64_t i, std::int64_t o) {
                const Acc v = static_cast<Acc>(ComputeType<T>(src[i]));
                Acc &a = acc[std::size_t(o)];
                if constexpr (isFloatLike<T>) {
                    if (std::isnan(static_cast<double>(v)))
                        sawNan[std::size_t(o)] = true;
                }
                switch (K) {
                case Red::Sum:
                case Red::Mean:
                case Red::LogSum: a = wrapAdd(a, v); break;
                case Red::Max: a = std::max(a, v); break;
                case Red::Min: a = std::min(a, v); break;
                case Red::Prod: a = wrapMul(a, v); break;
                case Red::L1: a = wrapAdd(a, v < 0 ? wrapMul(v, Acc(-1)) : v); break;
                case Red::L2:
                case Red::SumSquare: a = wrapAdd(a, wrapMul(v, v)); break;
                case Red::LogSumExp: break; // two passes below
                }
            });
            if constexpr (K == Red::LogSumExp) {
                std::vector<Acc> mx(static_cast<std::size_t>(n), std::numeric_limits<Acc>::lowest());
                forEachReduced(x, *p, [&](std::int64_t i, std::int64_t o) {
                    mx[std::size_t(o)] =
                        std::max(mx[std::size_t(o)], static_cast<Acc>(ComputeType<T>(src[i])));
                });
                forEachReduced(x, *p, [&](std::int64_t i, std::int64_t o) {
                    acc[std::size_t(o)] +=
                        std::exp(static_cast<double>(ComputeType<T>(src[i])) - double(mx[std::size_t(o)]));
                });
                for (std::int64_t o = 0; o < n; ++o)
                    acc[std::size_t(o)] =
                        static_cast<Acc>(std::log(double(acc[std::size_t(o)])) + double(mx[std::size_t(o)]));
            }
            const std::int64_t count = n ? x.elementCount() / std::max<std::int64_t>(n, 1) : 0;
            T *dst = (*out)->template mutableData<T>();
            for (std::int64_t o = 0; o < n; ++o) {
                Acc a = acc[std::size_t(o)];
                if constexpr (K == Red::Mean)
                    a = count ? static_cast<Acc>(a / static_cast<Acc>(count)) : a;
                if constexpr (K == Red::L2)
                    a = static_cast<Acc>(std::sqrt(double(a)));
                if constexpr (K == Red::LogSum)
                    a = static_cast<Acc>(std::log(double(a)));
                if constexpr (isFloatLike<T>) {
                    if ((K == Red::Max || K == Red::Min) && sawNan[std::size_t(o)])
                        a = std::numeric_limits<Acc>::quiet_NaN();
                }
                dst[o] = static_cast<T>(static_cast<ComputeType<T>>(a));
            }
            return Status::ok();
        }
    });
}

template<bool IsMax>
Status argKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", 0), std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    const bool keep = ctx.attrInt("keepdims", 1) != 0, last = ctx.attrInt("select_last_index", 0) != 0;
    std::vector<std::int64_t> shape = x.shape();
    if (keep)
        shape[std::size_t(*axis)] = 1;
    else
        shape.erase(shape.begin() + *axis);
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Int64, shape);
    if (!out)
        return out.status();
    const std::int64_t n = x.dim(std::size_t(*axis));
    const std::int64_t outer = product(x.shape(), 0, std::size_t(*axis)),
                       inner = product(x.shape(), std::size_t(*axis) + 1);
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        const T *src = x.data<T>();
        auto *dst = (*out)->mutableData<std::int64_t>();
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t i = 0; i < inner; ++i) {
                std::int64_t best = 0;
                C bv = src[o * n * inner + i];
                for (std::int64_t j = 1; j < n; ++j) {
                    const C v = src[(o * n + j) * inner + i];
                    const bool better = IsMax ? (last ? v >= bv : v > bv) : (last ? v <= bv : v < bv);
                    if (better) {
                        bv = v;
                        best = j;
                    }
                }
                dst[o * inner + i] = best;
            }
        return Status::ok();
    });
}

} // namespace
} // namespace kernels

void registerReduceKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("ReduceSum", reduceKernel<Red::Sum>);
    r.add("ReduceMean", reduceKernel<Red::Mean>);
    r.add("ReduceMax", reduceKernel<Red::Max>);
    r.add("ReduceMin", reduceKernel<Red::Min>);
    r.add("ReduceProd", reduceKernel<Red::Prod>);
    r.add("ReduceL1", reduceKernel<Red::L1>);
    r.add("ReduceL2", reduceKernel<Red::L2>);
    r.add("ReduceLogSum", reduceKernel<Red::LogSum>);
    r.add("ReduceLogSumExp", reduceKernel<Red::LogSumExp>);
    r.add("ReduceSumSquare", reduceKernel<Red::SumSquare>);
    r.add("ArgMax", argKernel<true>);
    r.add("ArgMin", argKernel<false>);
}

} // namespace opscope
