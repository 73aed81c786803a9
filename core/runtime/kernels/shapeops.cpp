// Shape and data-movement ops: views (Reshape, Flatten, Squeeze, Unsqueeze, Identity) that share
// their input's storage, and copies that rearrange (Transpose, Concat, Split). Ops that generate,
// pad or repeat values are in fillops.cpp.

#include "runtime/kernels/kernelutil.h"

#include <algorithm>
#include <numeric>

namespace opscope {
namespace kernels {
namespace {

// Input `i` (int32/int64) as a list, or the attribute of the same meaning for older opsets.
std::vector<std::int64_t> listInputOrAttr(const KernelContext &ctx, std::size_t i, const char *attr)
{
    if (const RuntimeTensor *t = ctx.input(i))
        return t->toInt64Vector();
    return ctx.attrInts(attr);
}

Status identityKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    ctx.setOutput(0, ctx.in(0));
    return Status::ok();
}

Status dropoutKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    // Inference: training_mode (input 2) must be false; the ratio does not matter then.
    if (const RuntimeTensor *training = ctx.input(2);
        training && training->elementCount() && training->data<std::uint8_t>()[0] != 0)
        return ctx.unsupported("training mode (random masks) is not supported");
    ctx.setOutput(0, ctx.in(0));
    if (ctx.wantsOutput(1)) {
        Expected<RuntimeTensor *> mask = ctx.allocateOutput(1, DataType::Bool, ctx.in(0).shape());
        if (!mask)
            return mask.status();
        std::fill_n((*mask)->mutableData<bool>(), (*mask)->elementCount(), true);
    }
    return Status::ok();
}

Status constantKernel(KernelContext &ctx)
{
    if (const Attribute *a = ctx.attr("value"); a && a->type == AttributeType::Tensor) {
        ctx.setOutput(0, RuntimeTensor::fromConstant(a->t));
        return Status::ok();
    }
    if (const Attribute *a = ctx.attr("value_float")) {
        ctx.setOutput(0, RuntimeTensor::fromValues(DataType::Float, {}, std::vector<float>{a->f}));
        return Status::ok();
    }
    if (const Attribute *a = ctx.attr("value_floats")) {
        ctx.setOutput(
            0, RuntimeTensor::fromValues(DataType::Float, {std::int64_t(a->floats.size())}, a->floats));
        return Status::ok();
    }
    if (const Attribute *a = ctx.attr("value_int")) {
        ctx.setOutput(0, RuntimeTensor::fromValues(DataType::Int64, {}, std::vector<std::int64_t>{a->i}));
        return Status::ok();
    }
    if (const Attribute *a = ctx.attr("value_ints")) {
        ctx.setOutput(0, RuntimeTensor::fromValues(DataType::Int64, {std::int64_t(a->ints.size())}, a->ints));
        return Status::ok();
    }
    if (const Attribute *a = ctx.attr("value_string")) {
        ctx.setOutput(0, RuntimeTensor::fromStrings({}, {a->s}));
        return Status::ok();
    }
    if (const Attribute *a = ctx.attr("value_strings")) {
        ctx.setOutput(0, RuntimeTensor::fromStrings({std::int64_t(a->strings.size())}, a->strings));
        return Status::ok();
    }
    if (const Attribute *a = ctx.attr("sparse_value")) {
        Expected<Tensor> dense = denseFromSparse(a->sparse, "sparse_value");
        if (!dense)
            return ctx.fail(dense.status().message());
        ctx.setOutput(0, RuntimeTensor::fromConstant(*dense));
        return Status::ok();
    }
    return ctx.fail("Constant has no value attribute");
}

Status shapeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const auto &shape = ctx.in(0).shape();
    const auto rank = static_cast<std::int64_t>(shape.size());
    std::int64_t start = ctx.attrInt("start", 0), end = ctx.attrInt("end", rank);
    if (!ctx.hasAttr("end"))
        end = rank;
    start = std::clamp(start < 0 ? start + rank : start, std::int64_t(0), rank);
    end = std::clamp(end < 0 ? end + rank : end, std::int64_t(0), rank);
    std::vector<std::int64_t> dims(shape.begin() + start, shape.begin() + std::max(start, end));
    ctx.setOutput(0, RuntimeTensor::fromValues(DataType::Int64, {std::int64_t(dims.size())}, dims));
    return Status::ok();
}

Status sizeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    ctx.setOutput(0, RuntimeTensor::fromValues(DataType::Int64, {},
                                               std::vector<std::int64_t>{ctx.in(0).elementCount()}));
    return Status::ok();
}

Status reshapeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    std::vector<std::int64_t> shape = listInputOrAttr(ctx, 1, "shape");
    const bool allowZero = ctx.attrInt("allowzero", 0) != 0;
    std::int64_t known = 1;
    int inferred = -1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0 && !allowZero) {
            if (i >= x.rank())
                return ctx.fail("shape " + shapeText(shape) + " copies dimension " + std::to_string(i) +
                                " of an input of rank " + std::to_string(x.rank()));
            shape[i] = x.dim(i);
        }
        if (shape[i] == -1) {
            if (inferred >= 0)
                return ctx.fail("shape " + shapeText(shape) + " has more than one -1");
            inferred = static_cast<int>(i);
        } else if (shape[i] < 0) {
            return ctx.fail("shape " + shapeText(shape) + " has a negative dimension");
        } else if (__builtin_mul_overflow(known, shape[i], &known)) {
            // Two dims of 2^40 wrapped the product; no tensor holds 2^63 elements anyway.
            return ctx.fail("shape " + shapeText(shape) + " has more elements than any tensor can hold");
        }
    }
    if (inferred >= 0) {
        if (known == 0 || x.elementCount() % known != 0)
            return ctx.fail("cannot reshape " + x.shapeText() + " (" + std::to_string(x.elementCount()) +
                            " elements) to " + shapeText(shape));
        shape[std::size_t(inferred)] = x.elementCount() / known;
    } else if (known != x.elementCount()) {
        return ctx.fail("cannot reshape " + x.shapeText() + " (" + std::to_string(x.elementCount()) +
                        " elements) to " + shapeText(shape) + " (" + std::to_string(known) + " elements)");
    }
    ctx.setOutput(0, x.reshaped(shape));
    return Status::ok();
}

Status flattenKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const auto rank = static_cast<std::int64_t>(x.rank());
    std::int64_t axis = ctx.attrInt("axis", 1);
    if (axis < -rank || axis > rank)
        return ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (axis < 0)
        axis += rank;
    ctx.setOutput(
        0, x.reshaped({product(x.shape(), 0, std::size_t(axis)), product(x.shape(), std::size_t(axis))}));
    return Status::ok();
}

Status squeezeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const auto rank = static_cast<std::int64_t>(x.rank());
    std::vector<std::int64_t> axes = listInputOrAttr(ctx, 1, "axes");
    std::vector<bool> drop(x.rank(), false);
    if (axes.empty()) {
        for (std::size_t d = 0; d < x.rank(); ++d)
            drop[d] = x.dim(d) == 1;
    }
    for (std::int64_t a : axes) {
        const Expected<std::int64_t> n = normalizeAxis(a, rank, ctx);
        if (!n)
            return n.status();
        if (x.dim(std::size_t(*n)) != 1)
            return ctx.fail("cannot squeeze axis " + std::to_string(a) + " of " + x.shapeText() +
                            ": it is not 1");
        drop[std::size_t(*n)] = true;
    }
    std::vector<std::int64_t> shape;
    for (std::size_t d = 0; d < x.rank(); ++d)
        if (!drop[d])
            shape.push_back(x.dim(d));
    ctx.setOutput(0, x.reshaped(shape));
    return Status::ok();
}

Status unsqueezeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const std::vector<std::int64_t> axes = listInputOrAttr(ctx, 1, "axes");
    const auto outRank = static_cast<std::int64_t>(x.rank() + axes.size());
    std::vector<bool> inserted(static_cast<std::size_t>(outRank), false);
    for (std::int64_t a : axes) {
        const Expected<std::int64_t> n = normalizeAxis(a, outRank, ctx);
        if (!n)
            return n.status();
        if (inserted[std::size_t(*n)])
            return ctx.fail("axis " + std::to_string(a) + " is repeated");
        inserted[std::size_t(*n)] = true;
    }
    std::vector<std::int64_t> shape;
    std::size_t src = 0;
    for (std::int64_t d = 0; d < outRank; ++d)
        shape.push_back(inserted[std::size_t(d)] ? 1 : x.dim(src++));
    ctx.setOutput(0, x.reshaped(shape));
    return Status::ok();
}

Status transposeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    std::vector<std::int64_t> perm = ctx.attrInts("perm");
    if (perm.empty()) {
        perm.resize(x.rank());
        std::iota(perm.rbegin(), perm.rend(), 0);
    }
    if (perm.size() != x.rank())
        return ctx.fail("perm has " + std::to_string(perm.size()) + " entries for an input of rank " +
                        std::to_string(x.rank()));
    std::vector<bool> seen(x.rank(), false);
    std::vector<std::int64_t> shape(x.rank());
    for (std::size_t d = 0; d < perm.size(); ++d) {
        const std::int64_t p = perm[d] < 0 ? perm[d] + std::int64_t(x.rank()) : perm[d];
        if (p < 0 || p >= std::int64_t(x.rank()) || seen[std::size_t(p)])
            return ctx.fail("perm " + shapeText(perm) + " is not a permutation");
        seen[std::size_t(p)] = true;
        perm[d] = p;
        shape[d] = x.dim(static_cast<std::size_t>(p));
    }
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), shape);
    if (!out)
        return out.status();
    return permuteCopy(x, perm, **out);
}

Status concatKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(std::max<std::size_t>(1, ctx.inputCount()))); // none may be omitted
    const RuntimeTensor &first = ctx.in(0);
    const auto rank = static_cast<std::int64_t>(first.rank());
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", 0), rank, ctx);
    if (!axis)
        return axis.status();
    std::vector<std::int64_t> shape = first.shape();
    shape[std::size_t(*axis)] = 0;
    for (std::size_t i = 0; i < ctx.inputCount(); ++i) {
        const RuntimeTensor &t = ctx.in(i);
        if (t.rank() != first.rank() || t.dtype() != first.dtype())
            return ctx.fail("input " + std::to_string(i) + " " + t.shapeText() + " does not match " +
                            first.shapeText());
        for (std::size_t d = 0; d < t.rank(); ++d)
            if (std::int64_t(d) != *axis && t.dim(d) != first.dim(d))
                return ctx.fail("input " + std::to_string(i) + " " + t.shapeText() + " does not match " +
                                first.shapeText() + " outside axis " + std::to_string(*axis));
        shape[std::size_t(*axis)] += t.dim(std::size_t(*axis));
    }
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, first.dtype(), shape);
    if (!out)
        return out.status();
    const std::int64_t outer = product(shape, 0, std::size_t(*axis));
    const std::int64_t outRow = product(shape, std::size_t(*axis));
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < ctx.inputCount(); ++i) {
        const RuntimeTensor &t = ctx.in(i);
        const std::int64_t row = product(t.shape(), std::size_t(*axis));
        if (t.dtype() == DataType::String) {
            for (std::int64_t o = 0; o < outer; ++o)
                for (std::int64_t k = 0; k < row; ++k)
                    (*out)->mutableStrings()[std::size_t(o * outRow + offset + k)] =
                        t.strings()[std::size_t(o * row + k)];
        } else {
            const std::size_t es = dataTypeSize(t.dtype());
            for (std::int64_t o = 0; o < outer && row > 0; ++o) // empty inputs have no buffer to copy from
                std::memcpy((*out)->mutableBytes() + (o * outRow + offset) * std::int64_t(es),
                            t.bytes() + o * row * std::int64_t(es), std::size_t(row) * es);
        }
        offset += row;
    }
    return Status::ok();
}

// Copies the block [start, start + len) along `axis` of x into ctx's output `output`, where the
// memory plan put it.
Expected<RuntimeTensor> sliceAxis(const KernelContext &ctx, std::size_t output, const RuntimeTensor &x,
                                  std::size_t axis, std::int64_t start, std::int64_t len)
{
    std::vector<std::int64_t> shape = x.shape();
    shape[axis] = len;
    Expected<RuntimeTensor> out = ctx.newOutputTensor(output, x.dtype(), shape);
    if (!out)
        return out;
    const std::int64_t outer = product(x.shape(), 0, axis);
    const std::int64_t inner = product(x.shape(), axis + 1);
    const std::int64_t inRow = x.dim(axis) * inner;
    if (x.dtype() == DataType::String) {
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t k = 0; k < len * inner; ++k)
                out->mutableStrings()[std::size_t(o * len * inner + k)] =
                    x.strings()[std::size_t(o * inRow + start * inner + k)];
        return out;
    }
    const std::size_t es = dataTypeSize(x.dtype());
    for (std::int64_t o = 0; o < outer; ++o)
        std::memcpy(out->mutableBytes() + o * len * inner * std::int64_t(es),
                    x.bytes() + (o * inRow + start * inner) * std::int64_t(es),
                    std::size_t(len * inner) * es);
    return out;
}

Status splitKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    const Expected<std::int64_t> axis = normalizeAxis(ctx.attrInt("axis", 0), std::int64_t(x.rank()), ctx);
    if (!axis)
        return axis.status();
    const std::int64_t dim = x.dim(std::size_t(*axis));
    std::vector<std::int64_t> sizes = listInputOrAttr(ctx, 1, "split");
    const auto n = static_cast<std::int64_t>(ctx.outputCount());
    if (sizes.empty()) {
        const std::int64_t parts = ctx.hasAttr("num_outputs") ? ctx.attrInt("num_outputs") : n;
        if (parts < 1)
            return ctx.fail("num_outputs is " + std::to_string(parts) + "; Split needs at least one output");
        const std::int64_t each = (dim + parts - 1) / parts;
        for (std::int64_t i = 0; i < parts; ++i)
            sizes.push_back(std::max<std::int64_t>(0, std::min(each, dim - i * each)));
    }
    if (std::int64_t(sizes.size()) != n ||
        std::accumulate(sizes.begin(), sizes.end(), std::int64_t(0)) != dim)
        return ctx.fail("split sizes " + shapeText(sizes) + " do not add up to dimension " +
                        std::to_string(dim) + " over " + std::to_string(n) + " outputs");
    std::int64_t start = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        Expected<RuntimeTensor> part = sliceAxis(ctx, std::size_t(i), x, std::size_t(*axis), start, sizes[std::size_t(i)]);
        if (!part)
            return part.status();
        ctx.setOutput(static_cast<std::size_t>(i), std::move(*part));
        start += sizes[std::size_t(i)];
    }
    return Status::ok();
}

} // namespace
} // namespace kernels

void registerFillKernels(KernelRegistry &r); // fillops.cpp

void registerShapeKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("Identity", identityKernel);
    r.add("ai.opscope", "Send", 1, identityKernel); // marks where a transfer starts (schedule/partition.h)
    r.add("Dropout", dropoutKernel);
    r.add("Constant", constantKernel);
    r.add("Shape", shapeKernel);
    r.add("Size", sizeKernel);
    r.add("Reshape", reshapeKernel);
    r.add("Flatten", flattenKernel);
    r.add("Squeeze", squeezeKernel);
    r.add("Unsqueeze", unsqueezeKernel);
    r.add("Transpose", transposeKernel);
    r.add("Concat", concatKernel);
    r.add("Split", splitKernel);
    registerFillKernels(r);
}

} // namespace opscope
