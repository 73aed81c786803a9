// Ops that build new tensors by broadcasting, repeating, padding or generating values: Expand,
// Tile, Pad, ConstantOfShape, Range, DepthToSpace/SpaceToDepth, EyeLike, Trilu.

#include "runtime/kernels/kernelutil.h"
#include "runtime/kernels/pad.h"

#include <algorithm>
#include <numeric>

namespace opscope {
namespace kernels {
namespace {

Status expandKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0);
    const std::vector<std::int64_t> target = ctx.in(1).toInt64Vector();
    const Expected<Broadcast> bc = Broadcast::of({&x.shape(), &target}, ctx);
    if (!bc)
        return bc.status();
    Broadcast one;
    one.outShape = bc->outShape;
    one.strides = {bc->strides[0]};
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), bc->outShape);
    if (!out)
        return out.status();
    if (x.dtype() == DataType::String) {
        forEachBroadcast(one, [&](std::int64_t o, const std::int64_t *i) {
            (*out)->mutableStrings()[std::size_t(o)] = x.strings()[std::size_t(i[0])];
        });
        return Status::ok();
    }
    return dispatchBySize(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        // Rows of the coalesced broadcast: a row is a copy (stride 1) or one value repeated.
        const BroadcastRows br = BroadcastRows::of(one);
        parallelFor(
            br.rows,
            [&](std::int64_t r) {
                const T *s = src + br.offset(r, 0);
                T *o = dst + r * br.rowLength;
                if (br.innerStride[0])
                    std::copy(s, s + br.rowLength, o);
                else
                    std::fill(o, o + br.rowLength, s[0]);
            },
            (*out)->elementCount() < 65536 ? br.rows + 1 : 1);
        return Status::ok();
    });
}

Status tileKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0);
    const std::vector<std::int64_t> repeats = ctx.in(1).toInt64Vector();
    if (repeats.size() != x.rank())
        return ctx.fail("repeats has " + std::to_string(repeats.size()) + " entries for rank " +
                        std::to_string(x.rank()));
    std::vector<std::int64_t> shape(x.rank());
    for (std::size_t d = 0; d < x.rank(); ++d) {
        if (repeats[d] < 0)
            return ctx.fail("negative repeat");
        // Repeats come from data: dim × repeat may pass 64 bits before any allocation can refuse
        // the size (3 × 7.2e18, fuzz_run under UBSan).
        if (__builtin_mul_overflow(x.dim(d), repeats[d], &shape[d]))
            return ctx.fail("repeats " + shapeText(repeats) + " make dimension " + std::to_string(d) +
                            " of " + x.shapeText() + " larger than 64 bits can count");
    }
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), shape);
    if (!out)
        return out.status();
    const Shape64 inStrides = stridesOf(x.shape());
    return dispatchBySize(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        // One output row (the last axis) at a time: its source row found once, then copied
        // repeats[last] times (the per-element coordinate division was 10x ONNX Runtime).
        const std::size_t rank = shape.size();
        if (rank == 0) {
            dst[0] = src[0];
            return Status::ok();
        }
        const std::int64_t inLen = x.dim(rank - 1), outLen = shape[rank - 1];
        const std::int64_t rows = outLen ? (*out)->elementCount() / outLen : 0;
        parallelFor(
            rows,
            [&](std::int64_t r) {
                std::int64_t rem = r, off = 0;
                for (std::size_t d = rank - 1; d-- > 0;) {
                    off += (rem % shape[d] % x.dim(d)) * inStrides[d];
                    rem /= shape[d];
                }
                T *o = dst + r * outLen;
                for (std::int64_t k = 0; k < repeats[rank - 1]; ++k)
                    std::copy(src + off, src + off + inLen, o + k * inLen);
            },
            (*out)->elementCount() < 65536 ? rows + 1 : 1);
        return Status::ok();
    });
}

} // namespace

std::int64_t padSource(std::int64_t i, std::int64_t begin, std::int64_t n, PadMode mode)
{
    const std::int64_t c = i - begin;
    if (c >= 0 && c < n)
        return c;
    if (mode == PadMode::Constant || n == 0)
        return -1;
    if (mode == PadMode::Edge)
        return c < 0 ? 0 : n - 1;
    if (mode == PadMode::Reflect)
        return c < 0 ? -c : 2 * (n - 1) - c;
    return ((c % n) + n) % n; // wrap
}

Expected<PadGeometry> padGeometry(const KernelContext &ctx, const RuntimeTensor &x)
{
    const auto rank = static_cast<std::int64_t>(x.rank());
    std::vector<std::int64_t> pads = ctx.opset() < 11 ? ctx.attrInts("pads") : ctx.in(1).toInt64Vector();
    std::vector<std::int64_t> axes(static_cast<std::size_t>(rank));
    std::iota(axes.begin(), axes.end(), 0);
    if (const RuntimeTensor *a = ctx.input(3)) {
        axes = a->toInt64Vector();
        std::vector<bool> seen(static_cast<std::size_t>(rank), false);
        for (std::int64_t &ax : axes) {
            const std::int64_t given = ax;
            ax = ax < 0 ? ax + rank : ax;
            if (ax < 0 || ax >= rank)
                return ctx.fail("axis " + std::to_string(given) + " is out of range for a rank-" +
                                std::to_string(rank) + " input");
            if (seen[std::size_t(ax)])
                return ctx.fail("axis " + std::to_string(given) + " is given twice");
            seen[std::size_t(ax)] = true;
        }
    }
    if (pads.size() != 2 * axes.size())
        return ctx.fail("pads has " + std::to_string(pads.size()) + " entries, expected " +
                        std::to_string(2 * axes.size()));
    PadGeometry g;
    g.begin.assign(static_cast<std::size_t>(rank), 0);
    std::vector<std::int64_t> end(static_cast<std::size_t>(rank), 0);
    for (std::size_t i = 0; i < axes.size(); ++i) {
        g.begin[std::size_t(axes[i])] = pads[i];
        end[std::size_t(axes[i])] = pads[i + axes.size()];
    }
    const std::string mode = ctx.attrString("mode", "constant");
    g.mode = mode == "edge"      ? PadMode::Edge
             : mode == "reflect" ? PadMode::Reflect
             : mode == "wrap"    ? PadMode::Wrap
                                 : PadMode::Constant;
    g.shape.resize(static_cast<std::size_t>(rank));
    for (std::size_t d = 0; d < std::size_t(rank); ++d) {
        // In long double first: pads of 2^63 - 1 (fuzzing) overflowed the sum.
        const long double size = (long double)x.dim(d) + (long double)g.begin[d] + (long double)end[d];
        if (size > (long double)(std::int64_t(1) << 62))
            return ctx.fail("pads make dimension " + std::to_string(d) + " too large");
        g.shape[d] = x.dim(d) + g.begin[d] + end[d];
        if (g.shape[d] < 0)
            return ctx.fail("pads make dimension " + std::to_string(d) + " negative");
        if (g.mode == PadMode::Reflect && (g.begin[d] >= x.dim(d) || end[d] >= x.dim(d)) &&
            (g.begin[d] > 0 || end[d] > 0))
            return ctx.fail("reflect padding larger than the input");
    }
    return g;
}

namespace {

Status padKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const auto rank = static_cast<std::int64_t>(x.rank());
    Expected<PadGeometry> geometry = padGeometry(ctx, x);
    if (!geometry)
        return geometry.status();
    const std::vector<std::int64_t> &shape = geometry->shape, &begin = geometry->begin;
    const PadMode padMode = geometry->mode;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), shape);
    if (!out)
        return out.status();
    const Shape64 inStrides = stridesOf(x.shape());
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        T value{};
        if (ctx.opset() < 11)
            value = static_cast<T>(static_cast<ComputeType<T>>(ctx.attrFloat("value", 0.0f)));
        else if (const RuntimeTensor *v = ctx.input(2); v && v->elementCount())
            value = v->data<T>()[0];
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        if (rank == 0) {
            if ((*out)->elementCount())
                dst[0] = src[0];
            return Status::ok();
        }
        // Row by row (every axis but the last): the row's source is found once, its middle is one
        // memcpy, only the padded ends are filled element by element. Per element index
        // arithmetic made a [1,32,512,512] Pad take 40 ms, ten times a copy.
        const std::size_t last = std::size_t(rank) - 1;
        const std::int64_t width = shape[last], n = x.dim(last), b = begin[last];
        const std::int64_t rows = width ? (*out)->elementCount() / width : 0;
        const std::int64_t keepFrom = std::clamp<std::int64_t>(b, 0, width),
                           keepTo = std::clamp<std::int64_t>(b + n, 0, width);
        parallelFor(
            rows,
            [&](std::int64_t row) {
                T *o = dst + row * width;
                std::int64_t rem = row, off = 0;
                for (std::size_t d = last; d-- > 0;) {
                    const std::int64_t c = padSource(rem % shape[d], begin[d], x.dim(d), padMode);
                    rem /= shape[d];
                    if (c < 0) {
                        std::fill(o, o + width, value);
                        return;
                    }
                    off += c * inStrides[d];
                }
                const T *in = src + off;
                for (std::int64_t j = 0; j < keepFrom; ++j) {
                    const std::int64_t c = padSource(j, b, n, padMode);
                    o[j] = c < 0 ? value : in[c];
                }
                if (keepTo > keepFrom)
                    std::copy(in + (keepFrom - b), in + (keepTo - b), o + keepFrom);
                for (std::int64_t j = std::max(keepTo, keepFrom); j < width; ++j) {
                    const std::int64_t c = padSource(j, b, n, padMode);
                    o[j] = c < 0 ? value : in[c];
                }
            },
            std::max<std::int64_t>(1, 32768 / std::max<std::int64_t>(1, width)));
        return Status::ok();
    });
}

Status constantOfShapeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const std::vector<std::int64_t> shape = ctx.in(0).toInt64Vector();
    const Attribute *value = ctx.attr("value");
    const DataType dtype = value && value->type == AttributeType::Tensor ? value->t.dtype : DataType::Float;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, dtype, shape);
    if (!out)
        return out.status();
    return dispatchBySize(dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        T v{};
        if (value && value->t.data && value->t.data->size() >= sizeof(T))
            std::memcpy(&v, value->t.bytes().data(), sizeof(T));
        std::fill_n((*out)->template mutableData<T>(), (*out)->elementCount(), v);
        return Status::ok();
    });
}

Status rangeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    const RuntimeTensor &start = ctx.in(0);
    return dispatchAll(start.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
            return ctx.unsupported("Range on bool");
        } else {
            const T s = start.data<T>()[0], limit = ctx.in(1).data<T>()[0], delta = ctx.in(2).data<T>()[0];
            if (delta == 0)
                return ctx.fail("delta is zero");
            const double count = std::ceil((double(limit) - double(s)) / double(delta));
            const auto n = static_cast<std::int64_t>(std::max(0.0, count));
            Expected<RuntimeTensor *> out = ctx.allocateOutput(0, start.dtype(), {n});
            if (!out)
                return out.status();
            for (std::int64_t i = 0; i < n; ++i)
                (*out)->template mutableData<T>()[i] = static_cast<T>(s + static_cast<T>(i) * delta);
            return Status::ok();
        }
    });
}

Status depthSpaceKernel(KernelContext &ctx, bool toSpace)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (x.rank() != 4)
        return ctx.fail("input must be 4-D (NCHW)");
    const std::int64_t b = ctx.attrInt("blocksize", 0);
    if (b <= 0)
        return ctx.fail("blocksize must be positive");
    const std::int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    // blocksize² and the channels times it must not wrap: 2^40 squared wrapped to 0, and
    // `c % 0` stopped the process.
    std::int64_t bb = 0, grown = 0;
    if (__builtin_mul_overflow(b, b, &bb) || __builtin_mul_overflow(c, bb, &grown))
        return ctx.fail("blocksize " + std::to_string(b) + " is too large");
    RuntimeTensor view;
    std::vector<std::int64_t> perm, outShape;
    if (toSpace) {
        if (c % (b * b))
            return ctx.fail("channels are not divisible by blocksize²");
        const bool crd = ctx.attrString("mode", "DCR") == "CRD";
        if (x.dtype() != DataType::String) {
            // Directly, an output row at a time interleaving b input rows (PixelShuffle): the
            // 6-D permutation below has a b-long innermost axis and was 1.8x ONNX Runtime.
            const std::int64_t oc = c / (b * b);
            Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), {n, oc, h * b, w * b});
            if (!out)
                return out.status();
            return dispatchBySize(x.dtype(), [&](auto tag) -> Status {
                using T = decltype(tag);
                const T *src = x.data<T>();
                T *dst = (*out)->template mutableData<T>();
                parallelFor(
                    n * oc * h * b,
                    [&](std::int64_t row) {
                        const std::int64_t i = row % b, y = (row / b) % h, ch = (row / (b * h)) % oc,
                                           batch = row / (b * h * oc);
                        T *o = dst + row * w * b;
                        for (std::int64_t j = 0; j < b; ++j) {
                            const std::int64_t inC = crd ? ch * b * b + i * b + j : (i * b + j) * oc + ch;
                            const T *in = src + ((batch * c + inC) * h + y) * w;
                            for (std::int64_t xw = 0; xw < w; ++xw)
                                o[xw * b + j] = in[xw];
                        }
                    },
                    x.elementCount() < 65536 ? n * oc * h * b + 1 : 1);
                return Status::ok();
            });
        }
        view = crd ? x.reshaped({n, c / (b * b), b, b, h, w}) : x.reshaped({n, b, b, c / (b * b), h, w});
        perm =
            crd ? std::vector<std::int64_t>{0, 1, 4, 2, 5, 3} : std::vector<std::int64_t>{0, 3, 4, 1, 5, 2};
        outShape = {n, c / (b * b), h * b, w * b};
    } else {
        if (h % b || w % b)
            return ctx.fail("height and width must be divisible by blocksize");
        view = x.reshaped({n, c, h / b, b, w / b, b});
        perm = {0, 3, 5, 1, 2, 4};
        outShape = {n, c * b * b, h / b, w / b};
    }
    std::vector<std::int64_t> permShape(6);
    for (std::size_t d = 0; d < 6; ++d)
        permShape[d] = view.dim(std::size_t(perm[d]));
    // The permuted block has the output's elements: it is the output, where the plan put it.
    Expected<RuntimeTensor> tmp = ctx.newOutputTensor(0, x.dtype(), permShape);
    if (!tmp)
        return tmp.status();
    OPSCOPE_TRY(permuteCopy(view, perm, *tmp));
    ctx.setOutput(0, tmp->reshaped(outShape));
    return Status::ok();
}

Status depthToSpaceKernel(KernelContext &ctx)
{
    return depthSpaceKernel(ctx, true);
}

Status spaceToDepthKernel(KernelContext &ctx)
{
    return depthSpaceKernel(ctx, false);
}

Status eyeLikeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (x.rank() != 2)
        return ctx.fail("input must be 2-D");
    const DataType dtype = ctx.hasAttr("dtype") ? static_cast<DataType>(ctx.attrInt("dtype")) : x.dtype();
    const std::int64_t k = ctx.attrInt("k", 0);
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, dtype, x.shape());
    if (!out)
        return out.status();
    return dispatchNumeric(dtype, [&](auto tag) -> Status {
        using T = decltype(tag);
        T *dst = (*out)->template mutableData<T>();
        for (std::int64_t i = 0; i < x.dim(0); ++i)
            for (std::int64_t j = 0; j < x.dim(1); ++j)
                dst[i * x.dim(1) + j] = static_cast<T>(j - i == k ? 1 : 0);
        return Status::ok();
    });
}

Status triluKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    if (x.rank() < 2)
        return ctx.fail("input must be at least 2-D");
    if (ctx.input(1))
        OPSCOPE_TRY(requireOneValue(ctx.in(1), "k", ctx));
    const std::int64_t k = ctx.input(1) ? ctx.in(1).valueAsInt(0) : 0;
    const bool upper = ctx.attrInt("upper", 1) != 0;
    const std::int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), x.shape());
    if (!out)
        return out.status();
    return dispatchBySize(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        const T *src = x.data<T>();
        T *dst = (*out)->template mutableData<T>();
        for (std::int64_t i = 0; i < x.elementCount(); ++i) {
            const std::int64_t c = i % cols, r = (i / cols) % rows;
            const bool keep = upper ? c - r >= k : c - r <= k;
            dst[i] = keep ? src[i] : T{};
        }
        return Status::ok();
    });
}

} // namespace
} // namespace kernels

void registerFillKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("Expand", expandKernel);
    r.add("Tile", tileKernel);
    r.add("Pad", padKernel);
    r.add("ConstantOfShape", constantOfShapeKernel);
    r.add("Range", rangeKernel);
    r.add("DepthToSpace", depthToSpaceKernel);
    r.add("SpaceToDepth", spaceToDepthKernel);
    r.add("EyeLike", eyeLikeKernel);
    r.add("Trilu", triluKernel);
}

} // namespace opscope
