// Indexing ops. Every index is range-checked: an out-of-range index is an error naming the node,
// never a read outside the tensor.

#include "runtime/kernels/kernelutil.h"
#include "runtime/kernels/slice.h"
#include "runtime/kernels/wrapping.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace opscope {
namespace kernels {
namespace {

// Normalizes index v into [0, n) or reports it.
Status checkIndex(const KernelContext &ctx, std::int64_t &v, std::int64_t n, const char *what)
{
    if (v < -n || v >= n)
        return ctx.fail(std::string(what) + " index " + std::to_string(v) + " is out of range [" +
                        std::to_string(-n) + ", " + std::to_string(n) + ")");
    if (v < 0)
        v += n;
    return Status::ok();
}

} // namespace

Expected<SliceGeometry> sliceGeometry(const KernelContext &ctx, const RuntimeTensor &x)
{
    const auto rank = static_cast<std::int64_t>(x.rank());
    std::vector<std::int64_t> starts, ends, axes, steps;
    if (ctx.opset() < 10) {
        starts = ctx.attrInts("starts");
        ends = ctx.attrInts("ends");
        axes = ctx.attrInts("axes");
    } else {
        OPSCOPE_TRY(ctx.requireInputs(3));
        starts = ctx.in(1).toInt64Vector();
        ends = ctx.in(2).toInt64Vector();
        if (ctx.input(3))
            axes = ctx.in(3).toInt64Vector();
        if (ctx.input(4))
            steps = ctx.in(4).toInt64Vector();
    }
    if (axes.empty()) {
        axes.resize(starts.size());
        std::iota(axes.begin(), axes.end(), 0);
    }
    if (steps.empty())
        steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        return ctx.fail("starts, ends, axes and steps differ in length");

    std::vector<std::int64_t> begin(static_cast<std::size_t>(rank), 0),
        step(static_cast<std::size_t>(rank), 1), shape = x.shape();
    std::vector<bool> seen(static_cast<std::size_t>(rank), false);
    for (std::size_t i = 0; i < starts.size(); ++i) {
        const Expected<std::int64_t> ax = normalizeAxis(axes[i], rank, ctx);
        if (!ax)
            return ax.status();
        // A repeated axis would be sliced by its last entry alone (ONNX Runtime refuses it too).
        if (seen[std::size_t(*ax)])
            return ctx.fail("axis " + std::to_string(axes[i]) + " is given twice in axes");
        seen[std::size_t(*ax)] = true;
        const std::int64_t n = x.dim(std::size_t(*ax));
        const std::int64_t st = steps[i];
        if (st == 0)
            return ctx.fail("slice step is zero");
        std::int64_t s = starts[i], e = ends[i];
        s = s < 0 ? s + n : s;
        e = e < 0 ? e + n : e;
        if (st > 0) {
            s = std::clamp(s, std::int64_t(0), n);
            e = std::clamp(e, std::int64_t(0), n);
        } else {
            s = std::clamp(s, std::int64_t(-1), n - 1);
            e = std::clamp(e, std::int64_t(-1), n - 1);
        }
        const std::int64_t len =
            st > 0 ? (e > s ? (e - s + st - 1) / st : 0) : (s > e ? (s - e - st - 1) / -st : 0);
        begin[std::size_t(*ax)] = s;
        step[std::size_t(*ax)] = st;
        shape[std::size_t(*ax)] = len;
    }
    SliceGeometry g;
    g.shape = std::move(shape);
    const Shape64 inStrides = stridesOf(x.shape());
    g.strides.resize(static_cast<std::size_t>(rank));
    for (std::size_t d = 0; d < std::size_t(rank); ++d) {
        g.strides[d] = inStrides[d] * step[d];
        g.base += begin[d] * inStrides[d];
    }
    return g;
}

namespace {

Status sliceKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    Expected<SliceGeometry> geometry = sliceGeometry(ctx, x);
    if (!geometry)
        return geometry.status();
    const auto rank = static_cast<std::int64_t>(x.rank());
    const Shape64 &shape = geometry->shape, &strides = geometry->strides;
    const std::int64_t base = geometry->base;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), shape);
    if (!out)
        return out.status();
    Broadcast b;
    b.outShape = shape;
    b.strides = {strides};
    if (x.dtype() == DataType::String) {
        forEachBroadcast(b, [&](std::int64_t o, const std::int64_t *i) {
            (*out)->mutableStrings()[std::size_t(o)] = x.strings()[std::size_t(base + i[0])];
        });
        return Status::ok();
    }
    return dispatchBySize(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T *src = x.data<T>() + base;
        T *dst = (*out)->template mutableData<T>();
        // An output row (the last axis) at a time: its start found once, then a copy (step 1) or
        // a strided gather; the per-element index walk was 2.3x ONNX Runtime.
        const std::size_t r = std::size_t(rank);
        const std::int64_t len = r ? shape[r - 1] : 1, inner = r ? strides[r - 1] : 1;
        const std::int64_t rows = len ? (*out)->elementCount() / len : 0;
        parallelFor(
            rows,
            [&](std::int64_t row) {
                std::int64_t rem = row, off = 0;
                for (std::size_t d = r ? r - 1 : 0; d-- > 0;) {
                    off += (rem % shape[d]) * strides[d];
                    rem /= shape[d];
                }
                const T *in = src + off;
                T *o = dst + row * len;
                if (inner == 1)
                    std::copy(in, in + len, o);
                else
                    for (std::int64_t j = 0; j < len; ++j)
                        o[j] = in[j * inner];
            },
            (*out)->elementCount() < 65536 ? rows + 1 : 1);
        return Status::ok();
    });
}

// Slices of x along `axis` picked by (already range-checked) indices; indexShape replaces the axis.
// Written where the memory plan put ctx's output `output` (Gather's output is often an
// embedding, among a transformer's larger tensors).
Expected<RuntimeTensor> takeAlongAxis(const KernelContext &ctx, std::size_t output, const RuntimeTensor &x,
                                      std::size_t axis, const std::vector<std::int64_t> &indices,
                                      const Shape64 &indexShape)
{
    Shape64 shape(x.shape().begin(), x.shape().begin() + std::ptrdiff_t(axis));
    shape.insert(shape.end(), indexShape.begin(), indexShape.end());
    shape.insert(shape.end(), x.shape().begin() + std::ptrdiff_t(axis) + 1, x.shape().end());
    Expected<RuntimeTensor> out = ctx.newOutputTensor(output, x.dtype(), shape);
    if (!out)
        return out;
    const std::int64_t outer = product(x.shape(), 0, axis), inner = product(x.shape(), axis + 1),
                       n = x.dim(axis);
    const auto k = static_cast<std::int64_t>(indices.size());
    if (x.dtype() == DataType::String) {
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t j = 0; j < k; ++j)
                for (std::int64_t i = 0; i < inner; ++i)
                    out->mutableStrings()[std::size_t((o * k + j) * inner + i)] =
                        x.strings()[std::size_t((o * n + indices[std::size_t(j)]) * inner + i)];
        return out;
    }
    const std::size_t es = dataTypeSize(x.dtype());
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t j = 0; j < k; ++j)
            std::memcpy(out->mutableBytes() + (o * k + j) * inner * std::int64_t(es),
                        x.bytes() + (o * n + indices[std::size_t(j)]) * inner * std::int64_t(es),
                        std::size_t(inner) * es);
    return out;
}

Status gatherKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0), &idx = ctx.in(1);
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", 0), std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    std::vector<std::int64_t> indices = idx.toInt64Vector();
    for (std::int64_t &v : indices)
        OPSCOPE_TRY(checkIndex(ctx, v, x.dim(std::size_t(*axis)), "Gather"));
    Expected<RuntimeTensor> out = takeAlongAxis(ctx, 0, x, std::size_t(*axis), indices, idx.shape());
    if (!out)
        return out.status();
    ctx.setOutput(0, std::move(*out));
    return Status::ok();
}

// GatherElements / ScatterElements walk the indices' shape and address the data with it: the data
// must have a rank (an axis to index), the same rank as the indices, and at least as many
// elements as the indices on every other axis — else the walk reads or writes past the data.
Status checkElementsShapes(const KernelContext &ctx, const RuntimeTensor &x, const RuntimeTensor &idx,
                           std::int64_t axis, const char *op)
{
    if (x.rank() == 0)
        return ctx.fail(std::string(op) + " needs data of rank ≥ 1");
    if (idx.rank() != x.rank())
        return ctx.fail("indices must have the data's rank");
    for (std::size_t d = 0; d < x.rank(); ++d)
        if (std::int64_t(d) != axis && idx.dim(d) > x.dim(d))
            return ctx.fail("indices " + idx.shapeText() + " are larger than the data " + x.shapeText() +
                            " on axis " + std::to_string(d));
    return Status::ok();
}

Status gatherElementsKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0), &idx = ctx.in(1);
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", 0), std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    OPSCOPE_TRY(checkElementsShapes(ctx, x, idx, *axis, "GatherElements"));
    const std::int64_t n = x.dim(std::size_t(*axis));
    // int64 indices already in [0, n) (what exporters write) are read in place after one
    // vectorized range check; others are copied, checked one by one and made non-negative.
    const std::int64_t *indexData = nullptr;
    std::vector<std::int64_t> indices;
    if (idx.dtype() == DataType::Int64) {
        const std::int64_t *raw = idx.data<std::int64_t>();
        bool inRange = true;
        for (std::int64_t i = 0; i < idx.elementCount(); ++i)
            inRange &= (raw[i] >= 0) & (raw[i] < n);
        if (inRange)
            indexData = raw;
    }
    if (!indexData) {
        indices = idx.toInt64Vector();
        for (std::int64_t &v : indices)
            OPSCOPE_TRY(checkIndex(ctx, v, n, "GatherElements"));
        indexData = indices.data();
    }
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), idx.shape());
    if (!out)
        return out.status();
    const Shape64 xs = stridesOf(x.shape());
    return dispatchBySize(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        // Row by row along the indices' last axis: the row's base offset once, then one add per
        // element (the per-element coordinate division was 6x ONNX Runtime).
        const std::size_t rank = idx.rank();
        const std::int64_t len = rank ? idx.dim(rank - 1) : 1;
        const std::int64_t rows = len ? idx.elementCount() / len : 0;
        const std::int64_t lastStride = rank ? xs[rank - 1] : 1, axisStride = rank ? xs[std::size_t(*axis)] : 1;
        const bool alongLast = rank == 0 || std::size_t(*axis) == rank - 1;
        parallelFor(
            rows,
            [&](std::int64_t r) {
                std::int64_t rem = r, base = 0;
                for (std::size_t d = rank ? rank - 1 : 0; d-- > 0;) {
                    const std::int64_t c = rem % idx.dim(d);
                    rem /= idx.dim(d);
                    if (std::int64_t(d) != *axis)
                        base += c * xs[d];
                }
                const std::int64_t *ir = indexData + r * len;
                T *o = dst + r * len;
                if (alongLast)
                    for (std::int64_t j = 0; j < len; ++j)
                        o[j] = src[base + ir[j]];
                else
                    for (std::int64_t j = 0; j < len; ++j)
                        o[j] = src[base + j * lastStride + ir[j] * axisStride];
            },
            idx.elementCount() < 65536 ? rows + 1 : 1);
        return Status::ok();
    });
}

Status gatherNdKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0), &idx = ctx.in(1);
    const std::int64_t b = ctx.attrInt("batch_dims", 0);
    if (idx.rank() < 1)
        return ctx.fail("indices must be at least 1-D");
    // The schema's rules: 0 <= batch_dims < rank(indices), the leading batch_dims dims of data
    // and indices equal, 1 <= k <= rank(data) - batch_dims.
    if (b < 0 || b >= std::int64_t(idx.rank()) || b >= std::int64_t(x.rank()))
        return ctx.fail("batch_dims " + std::to_string(b) + " is out of range for data " + x.shapeText() +
                        " and indices " + idx.shapeText());
    for (std::size_t d = 0; d < std::size_t(b); ++d)
        if (x.dim(d) != idx.dim(d))
            return ctx.fail("the batch dims of data " + x.shapeText() + " and indices " + idx.shapeText() +
                            " differ");
    const std::int64_t k = idx.dim(idx.rank() - 1);
    if (k < 1 || b + k > std::int64_t(x.rank()))
        return ctx.fail("indices' last dimension (" + std::to_string(k) + ") must be 1 to " +
                        std::to_string(std::int64_t(x.rank()) - b) + " for data " + x.shapeText());
    std::vector<std::int64_t> shape(idx.shape().begin(), idx.shape().end() - 1);
    shape.insert(shape.end(), x.shape().begin() + b + k, x.shape().end());
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), shape);
    if (!out)
        return out.status();
    const std::vector<std::int64_t> indices = idx.toInt64Vector();
    const Shape64 xs = stridesOf(x.shape());
    const std::int64_t slice = product(x.shape(), std::size_t(b + k));
    const std::int64_t batch = product(x.shape(), 0, std::size_t(b));
    const std::int64_t tuples = product(idx.shape(), 0, idx.rank() - 1);
    const std::int64_t perBatch = batch ? tuples / batch : 0;
    const std::size_t es = dataTypeSize(x.dtype());
    for (std::int64_t t = 0; t < tuples; ++t) {
        const std::int64_t bi = perBatch ? t / perBatch : 0;
        std::int64_t off = bi * (b ? xs[std::size_t(b - 1)] : 0);
        for (std::int64_t j = 0; j < k; ++j) {
            std::int64_t v = indices[std::size_t(t * k + j)];
            OPSCOPE_TRY(checkIndex(ctx, v, x.dim(std::size_t(b + j)), "GatherND"));
            off += v * xs[std::size_t(b + j)];
        }
        std::memcpy((*out)->mutableBytes() + t * slice * std::int64_t(es), x.bytes() + off * std::int64_t(es),
                    std::size_t(slice) * es);
    }
    return Status::ok();
}

enum class ScatterReduction
{
    None,
    Add,
    Mul,
    Max,
    Min
};

template<class T>
T reduceInto(ScatterReduction mode, T a, T b)
{
    using C = ComputeType<T>;
    switch (mode) {
    case ScatterReduction::Add: return static_cast<T>(C(a) + C(b));
    case ScatterReduction::Mul: return static_cast<T>(C(a) * C(b));
    case ScatterReduction::Max: return C(a) > C(b) ? a : b;
    case ScatterReduction::Min: return C(a) < C(b) ? a : b;
    case ScatterReduction::None: break;
    }
    return b;
}

// The `reduction` attribute, parsed once per node run, not compared as a string per element
// (that made ScatterND 2.4x ONNX Runtime).
Expected<ScatterReduction> scatterReduction(const KernelContext &ctx)
{
    const std::string mode = ctx.attrString("reduction", "none");
    if (mode == "none")
        return ScatterReduction::None;
    if (mode == "add")
        return ScatterReduction::Add;
    if (mode == "mul")
        return ScatterReduction::Mul;
    if (mode == "max")
        return ScatterReduction::Max;
    if (mode == "min")
        return ScatterReduction::Min;
    return ctx.fail("reduction '" + mode + "' is not one of none, add, mul, max, min");
}

Status scatterNdKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    const RuntimeTensor &x = ctx.in(0), &idx = ctx.in(1), &upd = ctx.in(2);
    const Expected<ScatterReduction> parsed = scatterReduction(ctx);
    if (!parsed)
        return parsed.status();
    const ScatterReduction mode = *parsed;
    if (idx.rank() == 0) // its last dim is the index tuple's length
        return ctx.fail("indices must be at least 1-D, got a scalar");
    const std::int64_t k = idx.dim(idx.rank() - 1);
    if (k > std::int64_t(x.rank()))
        return ctx.fail("indices last dimension exceeds the data's rank");
    const Shape64 xs = stridesOf(x.shape());
    const std::int64_t slice = product(x.shape(), std::size_t(k));
    const std::int64_t tuples = product(idx.shape(), 0, idx.rank() - 1);
    if (upd.elementCount() != tuples * slice)
        return ctx.fail("updates shape " + upd.shapeText() + " does not match indices and data");
    const std::vector<std::int64_t> indices = idx.toInt64Vector();
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    std::memcpy((*out)->mutableBytes(), x.bytes(), x.byteSize());
    if (slice == 0) // nothing to scatter, but maybe 2^41 empty tuples to walk
        return Status::ok();
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        T *dst = (*out)->template mutableData<T>();
        const T *src = upd.data<T>();
        for (std::int64_t t = 0; t < tuples; ++t) {
            std::int64_t off = 0;
            for (std::int64_t j = 0; j < k; ++j) {
                std::int64_t v = indices[std::size_t(t * k + j)];
                OPSCOPE_TRY(checkIndex(ctx, v, x.dim(static_cast<std::size_t>(j)), "ScatterND"));
                off += v * xs[std::size_t(j)];
            }
            if (mode == ScatterReduction::None)
                std::copy(src + t * slice, src + (t + 1) * slice, dst + off);
            else
                for (std::int64_t i = 0; i < slice; ++i)
                    dst[off + i] = reduceInto(mode, dst[off + i], src[t * slice + i]);
        }
        return Status::ok();
    });
}

Status scatterElementsKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    const RuntimeTensor &x = ctx.in(0), &idx = ctx.in(1), &upd = ctx.in(2);
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", 0), std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    if (idx.shape() != upd.shape() || idx.rank() != x.rank())
        return ctx.fail("indices and updates must have the same shape and the data's rank");
    OPSCOPE_TRY(checkElementsShapes(ctx, x, idx, *axis, "ScatterElements"));
    const Expected<ScatterReduction> parsed = scatterReduction(ctx);
    if (!parsed)
        return parsed.status();
    const ScatterReduction mode = *parsed;
    std::vector<std::int64_t> indices = idx.toInt64Vector();
    for (std::int64_t &v : indices)
        OPSCOPE_TRY(checkIndex(ctx, v, x.dim(std::size_t(*axis)), "ScatterElements"));
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    std::memcpy((*out)->mutableBytes(), x.bytes(), x.byteSize());
    const Shape64 xs = stridesOf(x.shape()), is = stridesOf(idx.shape());
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        T *dst = (*out)->template mutableData<T>();
        const T *src = upd.data<T>();
        for (std::int64_t o = 0; o < idx.elementCount(); ++o) {
            std::int64_t rem = o, off = 0;
            for (std::size_t d = 0; d < idx.rank(); ++d) {
                const std::int64_t c = rem / is[d];
                rem %= is[d];
                off += (std::int64_t(d) == *axis ? indices[std::size_t(o)] : c) * xs[d];
            }
            dst[off] = reduceInto(mode, dst[off], src[o]);
        }
        return Status::ok();
    });
}

Status oneHotKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    const RuntimeTensor &idx = ctx.in(0), &depthT = ctx.in(1), &values = ctx.in(2);
    OPSCOPE_TRY(requireOneValue(depthT, "depth", ctx));
    // Compared as a double first: casting a NaN or 1e30 depth to int64 is undefined.
    const double depthValue = depthT.valueAsDouble(0);
    if (!(depthValue >= 1.0 && depthValue < 9.2e18))
        return ctx.fail("depth must be positive, got " + std::to_string(depthValue));
    const auto depth = static_cast<std::int64_t>(depthValue);
    if (values.elementCount() != 2)
        return ctx.fail("values must hold two elements (off, on), got " + values.shapeText());
    const auto outRank = std::int64_t(idx.rank()) + 1;
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", -1), outRank, ctx);
    if (!axis)
        return axis.status();
    std::vector<std::int64_t> shape = idx.shape();
    shape.insert(shape.begin() + *axis, depth);
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, values.dtype(), shape);
    if (!out)
        return out.status();
    const std::int64_t outer = product(idx.shape(), 0, std::size_t(*axis)),
                       inner = product(idx.shape(), std::size_t(*axis));
    return dispatchBySize(values.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T off = values.data<T>()[0], on = values.data<T>()[1];
        T *dst = (*out)->template mutableData<T>();
        std::fill_n(dst, (*out)->elementCount(), off);
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t i = 0; i < inner; ++i) {
                auto v = static_cast<std::int64_t>(idx.valueAsDouble(o * inner + i));
                if (v < 0)
                    v += depth;
                if (v >= 0 && v < depth)
                    dst[(o * depth + v) * inner + i] = on;
            }
        return Status::ok();
    });
}

Status nonZeroKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (x.dtype() != DataType::String && x.rank() > 0) {
        // Typed: a counting pass (vectorized), then row by row along the last axis with the
        // leading coordinates computed once per row (valueAsDouble and a division per hit were
        // 1.6x ONNX Runtime).
        return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
            using T = decltype(tag);
            using C = ComputeType<T>;
            const T *p = x.data<T>();
            const std::int64_t total = x.elementCount();
            std::int64_t count = 0;
            for (std::int64_t i = 0; i < total; ++i)
                count += C(p[i]) != C(0) ? 1 : 0;
            const std::size_t rank = x.rank();
            Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Int64, {std::int64_t(rank), count});
            if (!out)
                return out.status();
            auto *dst = (*out)->mutableData<std::int64_t>();
            const std::int64_t len = x.dim(rank - 1), rows = len ? total / len : 0;
            std::vector<std::int64_t> lead(rank, 0);
            std::int64_t j = 0;
            for (std::int64_t r = 0; r < rows; ++r) {
                std::int64_t rem = r;
                for (std::size_t d = rank - 1; d-- > 0;) {
                    lead[d] = rem % x.dim(d);
                    rem /= x.dim(d);
                }
                const T *row = p + r * len;
                for (std::int64_t k = 0; k < len; ++k) {
                    if (C(row[k]) == C(0))
                        continue;
                    for (std::size_t d = 0; d + 1 < rank; ++d)
                        dst[std::int64_t(d) * count + j] = lead[d];
                    dst[std::int64_t(rank - 1) * count + j] = k;
                    ++j;
                }
            }
            return Status::ok();
        });
    }
    std::vector<std::int64_t> hits;
    for (std::int64_t i = 0; i < x.elementCount(); ++i)
        if (x.valueAsDouble(i) != 0.0)
            hits.push_back(i);
    const auto n = static_cast<std::int64_t>(hits.size());
    const auto rank = std::int64_t(std::max<std::size_t>(x.rank(), 1));
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Int64, {rank, n});
    if (!out)
        return out.status();
    const Shape64 st = stridesOf(x.shape().empty() ? Shape64{1} : x.shape());
    auto *dst = (*out)->mutableData<std::int64_t>();
    for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t rem = hits[std::size_t(j)];
        for (std::int64_t d = 0; d < rank; ++d) {
            dst[d * n + j] = rem / st[std::size_t(d)];
            rem %= st[std::size_t(d)];
        }
    }
    return Status::ok();
}

Status compressKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0), &cond = ctx.in(1);
    RuntimeTensor data = x;
    std::int64_t axis = 0;
    if (ctx.hasAttr("axis")) {
        const Expected<std::int64_t> a = normalizeAxis(ctx.attrInt("axis"), std::int64_t(x.rank()), ctx);
        if (!a)
            return a.status();
        axis = *a;
    } else {
        data = x.reshaped({x.elementCount()});
    }
    std::vector<std::int64_t> keep;
    for (std::int64_t i = 0; i < std::min(cond.elementCount(), data.dim(static_cast<std::size_t>(axis))); ++i)
        if (cond.data<std::uint8_t>()[i] != 0)
            keep.push_back(i);
    Expected<RuntimeTensor> out = takeAlongAxis(ctx, 0, data, std::size_t(axis), keep, {std::int64_t(keep.size())});
    if (!out)
        return out.status();
    ctx.setOutput(0, std::move(*out));
    return Status::ok();
}

Status reverseSequenceKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0);
    const std::vector<std::int64_t> lens = ctx.in(1).toInt64Vector();
    const std::int64_t batchAxis = ctx.attrInt("batch_axis", 1), timeAxis = ctx.attrInt("time_axis", 0);
    // As the schema says: the two axes are 0 and 1 in either order, of an input of rank 2 or more,
    // with one length per batch entry.
    if (x.rank() < 2)
        return ctx.fail("input must be at least 2-D, got " + x.shapeText());
    if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
        return ctx.fail("batch_axis and time_axis must be 0 and 1 (either way round), got " +
                        std::to_string(batchAxis) + " and " + std::to_string(timeAxis));
    if (std::int64_t(lens.size()) != x.dim(std::size_t(batchAxis)))
        return ctx.fail("sequence_lens has " + std::to_string(lens.size()) + " entries for a batch of " +
                        std::to_string(x.dim(std::size_t(batchAxis))));
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    const Shape64 st = stridesOf(x.shape());
    return dispatchBySize(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        for (std::int64_t o = 0; o < x.elementCount(); ++o) {
            std::int64_t rem = o, off = 0, b = 0, t = 0;
            std::vector<std::int64_t> c(x.rank());
            for (std::size_t d = 0; d < x.rank(); ++d) {
                c[d] = rem / st[d];
                rem %= st[d];
            }
            b = c[std::size_t(batchAxis)];
            t = c[std::size_t(timeAxis)];
            const std::int64_t len =
                std::clamp(lens[std::size_t(b)], std::int64_t(0), x.dim(static_cast<std::size_t>(timeAxis)));
            if (t < len)
                c[std::size_t(timeAxis)] = len - 1 - t;
            for (std::size_t d = 0; d < x.rank(); ++d)
                off += c[d] * st[d];
            dst[o] = src[off];
        }
        return Status::ok();
    });
}

Status topKKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", -1), std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    if (ctx.opset() >= 10) {
        OPSCOPE_TRY(ctx.requireInputs(2));
        OPSCOPE_TRY(requireOneValue(ctx.in(1), "k", ctx));
    }
    const std::int64_t k = ctx.opset() < 10 ? ctx.attrInt("k") : ctx.in(1).valueAsInt(0);
    const std::int64_t n = x.dim(std::size_t(*axis));
    if (k < 0 || k > n)
        return ctx.fail("k = " + std::to_string(k) + " is out of range for a dimension of " +
                        std::to_string(n));
    const bool largest = ctx.attrInt("largest", 1) != 0;
    std::vector<std::int64_t> shape = x.shape();
    shape[std::size_t(*axis)] = k;
    Expected<RuntimeTensor *> values = ctx.allocateOutput(0, x.dtype(), shape);
    if (!values)
        return values.status();
    Expected<RuntimeTensor *> indices = ctx.allocateOutput(1, DataType::Int64, shape);
    if (!indices)
        return indices.status();
    const std::int64_t outer = product(x.shape(), 0, std::size_t(*axis)),
                       inner = product(x.shape(), std::size_t(*axis) + 1);
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        const T *src = x.data<T>();
        T *pv = (*values)->template mutableData<T>();
        auto *pi = (*indices)->mutableData<std::int64_t>();
        // Select, then sort only the k selected: O(n + k log k) per row instead of sorting all n
        // (a top-50 over a 30k vocabulary was 40x ONNX Runtime). The order is total, so selection
        // gives what a stable sort would: ties keep the lower index first (ONNX's rule), and NaN
        // ranks above every number (numpy's and ORT's placement), never breaking the comparator.
        struct Entry
        {
            C value;
            std::int64_t index;
        };
        const auto before = [largest](const Entry &a, const Entry &b) {
            const bool an = a.value != a.value, bn = b.value != b.value; // NaN
            if (an || bn) {
                if (an && bn)
                    return a.index < b.index;
                return largest ? an : bn;
            }
            if (a.value != b.value)
                return largest ? a.value > b.value : a.value < b.value;
            return a.index < b.index;
        };
        const std::int64_t rows = outer * inner;
        const auto runRows = [&](std::int64_t begin, std::int64_t end) {
            // The heap path keeps k entries; a row of n (a vocabulary) is half a megabyte to fault in.
            std::vector<Entry> row(static_cast<std::size_t>(k > 0 && k * 16 <= n ? k : n));
            for (std::int64_t r = begin; r < end; ++r) {
                const std::int64_t o = r / inner, i = r % inner;
                if (k > 0 && k * 16 <= n) {
                    // Few of many (top-50 of a vocabulary): a heap of the best k, whose worst
                    // rejects almost every further value with one comparison.
                    const T *in = src + o * n * inner + i;
                    for (std::int64_t j = 0; j < k; ++j) {
                        row[std::size_t(j)] = {C(in[j * inner]), j};
                        std::push_heap(row.begin(), row.begin() + j + 1, before);
                    }
                    // A value neither better than the worst kept nor NaN cannot enter: it ties or
                    // loses, and comes later (ties keep the lower index). One compare per value.
                    C worst = row[0].value;
                    for (std::int64_t j = k; j < n; ++j) {
                        const C v = C(in[j * inner]);
                        if ((largest ? !(v > worst) : !(v < worst)) && v == v && worst == worst)
                            continue;
                        const Entry e{v, j};
                        if (before(e, row[0])) {
                            std::pop_heap(row.begin(), row.begin() + k, before);
                            row[std::size_t(k - 1)] = e;
                            std::push_heap(row.begin(), row.begin() + k, before);
                            worst = row[0].value;
                        }
                    }
                } else {
                    for (std::int64_t j = 0; j < n; ++j)
                        row[std::size_t(j)] = {C(src[(o * n + j) * inner + i]), j};
                    if (k < n)
                        std::nth_element(row.begin(), row.begin() + k, row.end(), before);
                }
                std::sort(row.begin(), row.begin() + k, before);
                for (std::int64_t j = 0; j < k; ++j) {
                    const std::int64_t from = row[std::size_t(j)].index;
                    pv[(o * k + j) * inner + i] = src[(o * n + from) * inner + i];
                    pi[(o * k + j) * inner + i] = from;
                }
            }
        };
        const int chunks = rows > 1 && rows * n >= (1 << 16) ? int(std::min<std::int64_t>(ctx.threads(), rows)) : 1;
        // Through parallelFor: its region hands a bad_alloc of a row's heap back to the executor.
        parallelFor(
            chunks, [&](std::int64_t c) { runRows(rows * c / chunks, rows * (c + 1) / chunks); }, 2);
        return Status::ok();
    });
}

Status cumSumKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0);
    OPSCOPE_TRY(requireOneValue(ctx.in(1), "axis", ctx));
    const Expected<std::int64_t> axis = normalizeAxis(ctx.in(1).valueAsInt(0), std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    const bool exclusive = ctx.attrInt("exclusive", 0) != 0, reverse = ctx.attrInt("reverse", 0) != 0;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    const std::int64_t n = x.dim(std::size_t(*axis));
    const std::int64_t outer = product(x.shape(), 0, std::size_t(*axis)),
                       inner = product(x.shape(), std::size_t(*axis) + 1);
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        // Whole rows of `inner` sums advance together along the axis (contiguous, vectorized);
        // one strided walk per output column was 2.5x ONNX Runtime.
        parallelFor(
            outer,
            [&](std::int64_t o) {
                std::vector<C> acc(static_cast<std::size_t>(inner), C(0));
                for (std::int64_t s = 0; s < n; ++s) {
                    const std::int64_t j = reverse ? n - 1 - s : s;
                    const T *in = src + (o * n + j) * inner;
                    T *res = dst + (o * n + j) * inner;
                    if (exclusive)
                        for (std::int64_t i = 0; i < inner; ++i) {
                            res[i] = static_cast<T>(acc[std::size_t(i)]);
                            acc[std::size_t(i)] = wrapAdd<C>(acc[std::size_t(i)], C(in[i]));
                        }
                    else
                        for (std::int64_t i = 0; i < inner; ++i) {
                            acc[std::size_t(i)] = wrapAdd<C>(acc[std::size_t(i)], C(in[i]));
                            res[i] = static_cast<T>(acc[std::size_t(i)]);
                        }
                }
            },
            x.elementCount() < 65536 ? outer + 1 : 1);
        return Status::ok();
    });
}

} // namespace
} // namespace kernels

void registerIndexingKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("Slice", sliceKernel);
    r.add("Gather", gatherKernel);
    r.add("GatherElements", gatherElementsKernel);
    r.add("GatherND", gatherNdKernel);
    r.add("ScatterND", scatterNdKernel);
    r.add("ScatterElements", scatterElementsKernel);
    r.add("Scatter", scatterElementsKernel);
    r.add("OneHot", oneHotKernel);
    r.add("NonZero", nonZeroKernel);
    r.add("Compress", compressKernel);
    r.add("ReverseSequence", reverseSequenceKernel);
    r.add("TopK", topKKernel);
    r.add("CumSum", cumSumKernel);
}

} // namespace opscope
