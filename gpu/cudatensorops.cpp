// Data movement on the CUDA backend: views (Reshape, Squeeze…: the CPU kernel relabels the
// device tensor), Transpose, Expand, Slice, Concat, Split, Gather, global pooling. Index maps
// come from indexing.h, which the tests check on the host.

#include "cudaexec.h"
#include "runtime/kernels/pad.h"
#include "runtime/kernels/resize.h"
#include "runtime/kernels/slice.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace opscope::gpu {
namespace {

bool anyDeviceType(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    return x && x->dtype() != DataType::String && cudaType(x->dtype()).has_value();
}

bool hostInput(const KernelContext &ctx, std::size_t i)
{
    const RuntimeTensor *t = ctx.input(i);
    return !t || t->onHost();
}

Status gatherMapOutput(CudaExec &e, KernelContext &ctx, const RuntimeTensor &x, const IndexMap &map,
                       std::vector<std::int64_t> shape, const std::byte *base, const char *what)
{
    Expected<RuntimeTensor> y = e.allocate(x.dtype(), std::move(shape));
    if (!y)
        return y.status();
    const cudaError_t err =
        launchGatherMap(dataTypeSize(x.dtype()), base, map, y->mutableBytes(), y->elementCount(), e.stream);
    return e.finish(ctx, 0, std::move(*y), err, what);
}

// ---- Transpose -------------------------------------------------------------------------------

Status transposeKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    std::vector<std::int64_t> perm = ctx.attrInts("perm");
    if (perm.empty()) {
        perm.resize(x->rank());
        std::iota(perm.rbegin(), perm.rend(), 0);
    }
    std::vector<bool> seen(x->rank(), false);
    if (perm.size() != x->rank())
        return ctx.fail("perm has " + std::to_string(perm.size()) + " entries for a rank-" + std::to_string(x->rank()) +
                        " input");
    for (std::int64_t &p : perm) {
        if (p < 0)
            p += std::int64_t(x->rank());
        if (p < 0 || p >= std::int64_t(x->rank()) || seen[std::size_t(p)])
            return ctx.fail("perm is not a permutation of the input's axes");
        seen[std::size_t(p)] = true;
    }
    IndexMap map;
    if (!transposeMap(x->shape(), perm, map))
        return ctx.unsupported("transpose of rank above 8");
    std::vector<std::int64_t> out(x->rank());
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = x->dim(std::size_t(perm[i]));
    return gatherMapOutput(e, ctx, *x, map, std::move(out), x->bytes(), "Transpose");
}

bool transposeAccepts(const KernelContext &ctx)
{
    return anyDeviceType(ctx) && ctx.in(0).rank() <= std::size_t(kMaxDims);
}

// ---- Expand ----------------------------------------------------------------------------------

Status expandKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    const std::vector<std::int64_t> target = ctx.in(1).toInt64Vector();
    std::vector<std::int64_t> out;
    if (!broadcastShape({x->shape(), target}, out))
        return ctx.fail("cannot expand " + x->shapeText() + " to " + shapeText(target));
    std::vector<IndexMap> maps;
    if (!broadcastMaps(out, {x->shape()}, maps))
        return ctx.unsupported("expand of rank above 8 after merging dims");
    return gatherMapOutput(e, ctx, *x, maps[0], std::move(out), x->bytes(), "Expand");
}

bool expandAccepts(const KernelContext &ctx)
{
    return anyDeviceType(ctx) && hostInput(ctx, 1) && ctx.input(1);
}

// ---- Slice -----------------------------------------------------------------------------------

// The CPU kernel's geometry (starts/ends/axes/steps read and clamped by the same code), gathered
// through one index map.
Status sliceKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    Expected<kernels::SliceGeometry> g = kernels::sliceGeometry(ctx, *x);
    if (!g)
        return g.status();
    const std::vector<std::int64_t> outStrides = rowMajorStrides(g->shape);
    IndexMap map;
    map.rank = int(x->rank());
    for (std::size_t d = 0; d < x->rank(); ++d) {
        map.outStrides[d] = outStrides[d];
        map.inStrides[d] = g->strides[d];
    }
    return gatherMapOutput(e, ctx, *x, map, g->shape, x->bytes() + g->base * std::int64_t(dataTypeSize(x->dtype())),
                           "Slice");
}

bool sliceAccepts(const KernelContext &ctx)
{
    if (!anyDeviceType(ctx) || ctx.in(0).rank() > std::size_t(kMaxDims) || ctx.in(0).rank() == 0)
        return false;
    for (std::size_t i = 1; i < 5; ++i)
        if (!hostInput(ctx, i))
            return false;
    return true;
}

// ---- Concat and Split: row copies ------------------------------------------------------------

Status concatKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    std::vector<RuntimeTensor> in;
    for (std::size_t i = 0; i < ctx.inputCount(); ++i) {
        if (!ctx.input(i))
            continue;
        Expected<RuntimeTensor> t = e.input(ctx, i);
        if (!t)
            return t.status();
        in.push_back(std::move(*t));
    }
    const RuntimeTensor &first = in[0];
    const auto rank = std::int64_t(first.rank());
    std::int64_t axis = ctx.attrInt("axis", 0);
    if (axis < -rank || axis >= rank)
        return ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (axis < 0)
        axis += rank;
    std::vector<std::int64_t> out = first.shape();
    out[std::size_t(axis)] = 0;
    for (const RuntimeTensor &t : in) {
        if (t.rank() != first.rank() || t.dtype() != first.dtype())
            return ctx.fail("inputs differ in rank or type");
        for (std::int64_t d = 0; d < rank; ++d)
            if (d != axis && t.dim(std::size_t(d)) != first.dim(std::size_t(d)))
                return ctx.fail("input shapes " + first.shapeText() + " and " + t.shapeText() + " differ off the axis");
        out[std::size_t(axis)] += t.dim(std::size_t(axis));
    }
    const RowsCols rc = rowsCols(out, std::size_t(axis));
    const std::size_t elem = dataTypeSize(first.dtype());
    Expected<RuntimeTensor> y = e.allocate(first.dtype(), out);
    if (!y)
        return y.status();
    const std::size_t dstPitch = std::size_t(rc.cols) * elem;
    std::size_t offset = 0;
    for (const RuntimeTensor &t : in) {
        const std::size_t width = std::size_t(t.elementCount() / std::max<std::int64_t>(rc.rows, 1)) * elem;
        OPSCOPE_TRY(e.copyRows(y->mutableBytes() + offset, dstPitch, t.bytes(), width, width, std::size_t(rc.rows),
                               "Concat copy"));
        offset += width;
    }
    ctx.setOutput(0, std::move(*y));
    return Status::ok();
}

bool concatAccepts(const KernelContext &ctx)
{
    for (std::size_t i = 0; i < ctx.inputCount(); ++i)
        if (const RuntimeTensor *t = ctx.input(i); t && (t->dtype() == DataType::String || !cudaType(t->dtype())))
            return false;
    return ctx.input(0) && ctx.in(0).rank() > 0;
}

Status splitKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    const auto rank = std::int64_t(x->rank());
    std::int64_t axis = ctx.attrInt("axis", 0);
    if (axis < -rank || axis >= rank)
        return ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (axis < 0)
        axis += rank;
    const std::int64_t dim = x->dim(std::size_t(axis));
    const std::size_t outputs = ctx.outputCount();
    std::vector<std::int64_t> sizes;
    if (ctx.input(1))
        sizes = ctx.in(1).toInt64Vector();
    else if (ctx.hasAttr("split"))
        sizes = ctx.attrInts("split");
    if (sizes.empty()) {
        // Equal parts; from opset 18 the last may be smaller (num_outputs).
        const std::int64_t n = std::int64_t(outputs);
        const std::int64_t part = (dim + n - 1) / n;
        for (std::int64_t i = 0; i < n; ++i)
            sizes.push_back(std::max<std::int64_t>(0, std::min(part, dim - i * part)));
        if (ctx.opset() < 18 && dim % n != 0)
            return ctx.fail("dimension " + std::to_string(dim) + " does not split into " + std::to_string(n) +
                            " equal parts");
    }
    if (sizes.size() != outputs || std::accumulate(sizes.begin(), sizes.end(), std::int64_t(0)) != dim)
        return ctx.fail("split sizes do not add up to dimension " + std::to_string(dim));
    const RowsCols rc = rowsCols(x->shape(), std::size_t(axis));
    const std::size_t elem = dataTypeSize(x->dtype());
    const std::int64_t inner = dim ? rc.cols / dim : 0;
    const std::size_t srcPitch = std::size_t(rc.cols) * elem;
    std::size_t offset = 0;
    for (std::size_t o = 0; o < outputs; ++o) {
        std::vector<std::int64_t> shape = x->shape();
        shape[std::size_t(axis)] = sizes[o];
        const std::size_t width = std::size_t(sizes[o] * inner) * elem;
        if (ctx.wantsOutput(o)) {
            Expected<RuntimeTensor> y = e.allocate(x->dtype(), shape);
            if (!y)
                return y.status();
            OPSCOPE_TRY(e.copyRows(y->mutableBytes(), width, x->bytes() + offset, srcPitch, width,
                                   std::size_t(rc.rows), "Split copy"));
            ctx.setOutput(o, std::move(*y));
        }
        offset += width;
    }
    return Status::ok();
}

bool splitAccepts(const KernelContext &ctx)
{
    return anyDeviceType(ctx) && ctx.in(0).rank() > 0 && hostInput(ctx, 1);
}

// ---- Gather (indices on the host: checked there, then sent) ---------------------------------

Status gatherKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> data = e.input(ctx, 0);
    if (!data)
        return data.status();
    const RuntimeTensor &indices = ctx.in(1);
    const auto rank = std::int64_t(data->rank());
    std::int64_t axis = ctx.attrInt("axis", 0);
    if (axis < -rank || axis >= rank)
        return ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (axis < 0)
        axis += rank;
    const std::int64_t axisDim = data->dim(std::size_t(axis));
    std::vector<std::int64_t> idx = indices.toInt64Vector();
    for (std::int64_t &v : idx) {
        if (v < -axisDim || v >= axisDim)
            return ctx.fail("index " + std::to_string(v) + " is out of range for a dimension of " +
                            std::to_string(axisDim));
        if (v < 0)
            v += axisDim;
    }
    std::vector<std::int64_t> out(data->shape().begin(), data->shape().begin() + axis);
    out.insert(out.end(), indices.shape().begin(), indices.shape().end());
    out.insert(out.end(), data->shape().begin() + axis + 1, data->shape().end());
    const RowsCols outerRest = rowsCols(data->shape(), std::size_t(axis));
    const std::int64_t inner = axisDim ? outerRest.cols / axisDim : 0;
    Expected<RuntimeTensor> deviceIdx = e.allocate(DataType::Int64, {std::int64_t(idx.size())});
    if (!deviceIdx)
        return deviceIdx.status();
    if (!idx.empty())
        OPSCOPE_TRY(cudaCheck(cudaMemcpyAsync(deviceIdx->mutableBytes(), idx.data(), idx.size() * sizeof(std::int64_t),
                                              cudaMemcpyHostToDevice, e.stream),
                              "Gather indices"));
    Expected<RuntimeTensor> y = e.allocate(data->dtype(), out);
    if (!y)
        return y.status();
    const cudaError_t err =
        launchGather(dataTypeSize(data->dtype()), data->bytes(), deviceIdx->data<std::int64_t>(), y->mutableBytes(),
                     outerRest.rows, axisDim, std::int64_t(idx.size()), inner, e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "Gather");
}

bool gatherAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *idx = ctx.input(1);
    return anyDeviceType(ctx) && ctx.in(0).rank() > 0 && idx && idx->onHost() &&
           (idx->dtype() == DataType::Int64 || idx->dtype() == DataType::Int32) &&
           // A lookup into a host table with host indices (embeddings of token ids) is the
           // host's unless the table is big enough to be worth the device (it then stays there).
           (!ctx.in(0).onHost() || ctx.isConstantInput(0));
}

// ---- Pad, Tile, Trilu, CumSum: per-element index maps (indexing.h) ----------------------------

// Pad with the CPU kernel's geometry (pads, axes, mode read and checked by the same code).
bool padAccepts(const KernelContext &ctx)
{
    if (!anyDeviceType(ctx) || ctx.in(0).rank() > std::size_t(kMaxDims))
        return false;
    for (std::size_t i = 1; i < 4; ++i)
        if (!hostInput(ctx, i))
            return false;
    // Before opset 11 the constant is a float attribute: the device takes only a zero.
    return ctx.opset() >= 11 || ctx.attrFloat("value", 0.0f) == 0.0f;
}

Status padKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    Expected<kernels::PadGeometry> g = kernels::padGeometry(ctx, *x);
    if (!g)
        return g.status();
    PadMap m;
    m.rank = int(x->rank());
    m.mode = PadKind(int(g->mode));
    const std::vector<std::int64_t> inStrides = rowMajorStrides(x->shape());
    for (std::size_t d = 0; d < x->rank(); ++d) {
        m.outDims[d] = g->shape[d];
        m.inDims[d] = x->dim(d);
        m.inStrides[d] = inStrides[d];
        m.begin[d] = g->begin[d];
    }
    // The constant's bytes, as the CPU reads it: input 2's first element, of x's type.
    std::uint64_t value = 0;
    const std::size_t size = dataTypeSize(x->dtype());
    if (const RuntimeTensor *v = ctx.input(2); ctx.opset() >= 11 && v && v->elementCount()) {
        if (v->dtype() != x->dtype())
            return ctx.fail("constant_value is " + std::string(dataTypeName(v->dtype())) + ", the data " +
                            std::string(dataTypeName(x->dtype())));
        std::memcpy(&value, v->bytes(), size);
    }
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), g->shape);
    if (!y)
        return y.status();
    const cudaError_t err = launchPad(size, x->bytes(), y->mutableBytes(), m, value, y->elementCount(), e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "Pad");
}

bool tileAccepts(const KernelContext &ctx)
{
    return anyDeviceType(ctx) && ctx.in(0).rank() <= std::size_t(kMaxDims) && ctx.input(1) && hostInput(ctx, 1);
}

Status tileKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    const std::vector<std::int64_t> repeats = ctx.in(1).toInt64Vector();
    if (repeats.size() != x->rank())
        return ctx.fail("repeats has " + std::to_string(repeats.size()) + " entries for rank " +
                        std::to_string(x->rank()));
    TileMap m;
    m.rank = int(x->rank());
    std::vector<std::int64_t> shape(x->rank());
    const std::vector<std::int64_t> inStrides = rowMajorStrides(x->shape());
    for (std::size_t d = 0; d < x->rank(); ++d) {
        if (repeats[d] < 0)
            return ctx.fail("negative repeat");
        shape[d] = x->dim(d) * repeats[d];
        m.outDims[d] = shape[d];
        m.inDims[d] = x->dim(d);
        m.inStrides[d] = inStrides[d];
    }
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), shape);
    if (!y)
        return y.status();
    const cudaError_t err =
        launchTile(dataTypeSize(x->dtype()), x->bytes(), y->mutableBytes(), m, y->elementCount(), e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "Tile");
}

bool triluAccepts(const KernelContext &ctx)
{
    return anyDeviceType(ctx) && ctx.in(0).rank() >= 2 && hostInput(ctx, 1);
}

Status triluKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    if (x->rank() < 2)
        return ctx.fail("input must be at least 2-D");
    const std::int64_t k = ctx.input(1) ? ctx.in(1).valueAsInt(0) : 0;
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), x->shape());
    if (!y)
        return y.status();
    const cudaError_t err =
        launchTrilu(dataTypeSize(x->dtype()), x->bytes(), y->mutableBytes(), x->dim(x->rank() - 2),
                    x->dim(x->rank() - 1), k, ctx.attrInt("upper", 1) != 0, y->elementCount(), e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "Trilu");
}

// CumSum: float32/16, bfloat16, float64, int32, int64 (the others are the host's).
bool cumSumAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    if (!x || !ctx.input(1) || !hostInput(ctx, 1) || x->rank() == 0)
        return false;
    const DataType t = x->dtype();
    return isFloatType(t) || t == DataType::Double || t == DataType::Int32 || t == DataType::Int64;
}

Status cumSumKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    const std::int64_t given = ctx.in(1).valueAsInt(0), rank = std::int64_t(x->rank());
    const std::int64_t axis = given < 0 ? given + rank : given;
    if (axis < 0 || axis >= rank)
        return ctx.fail("axis " + std::to_string(given) + " is out of range for rank " + std::to_string(rank));
    const RowsCols before = rowsCols(x->shape(), std::size_t(axis)), after = rowsCols(x->shape(), std::size_t(axis) + 1);
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), x->shape());
    if (!y)
        return y.status();
    const cudaError_t err = launchCumSum(*cudaType(x->dtype()), x->bytes(), y->mutableBytes(), before.rows,
                                         x->dim(std::size_t(axis)), after.cols, ctx.attrInt("exclusive", 0) != 0,
                                         ctx.attrInt("reverse", 0) != 0, e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "CumSum");
}

// ---- global pooling: one row per (n, c) ------------------------------------------------------

template<RowReduce Op>
Status globalPoolKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    if (x->rank() < 3)
        return ctx.fail("input " + x->shapeText() + " has no spatial dims");
    const RowsCols rc = rowsCols(x->shape(), 2);
    std::vector<std::int64_t> out = x->shape();
    std::fill(out.begin() + 2, out.end(), 1);
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), out);
    if (!y)
        return y.status();
    if (rc.cols == 0)
        return ctx.fail("input " + x->shapeText() + " has an empty spatial extent");
    const cudaError_t err =
        launchRowReduce(*cudaType(x->dtype()), Op, x->bytes(), y->mutableBytes(), rc.rows, rc.cols, e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "global pooling");
}

bool globalPoolAccepts(const KernelContext &ctx)
{
    return ctx.input(0) && isFloatType(ctx.in(0).dtype()) && ctx.in(0).rank() >= 3;
}

// ---- Resize / Upsample: the CPU kernel's tap tables, applied on the device ---------------------

Status resizeKernel(CudaExec &e, KernelContext &ctx)
{
    Expected<kernels::ResizeTaps> plan = kernels::resizeTaps(ctx);
    if (!plan)
        return plan.status();
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    const std::size_t rank = x->rank();
    ResizeParams p;
    p.rank = int(rank);
    p.extrapolation = float(plan->extrapolation);
    const std::vector<std::int64_t> outStrides = rowMajorStrides(plan->outShape),
                                    inStrides = rowMajorStrides(x->shape());
    std::vector<std::int64_t> indices;
    std::vector<float> weights;
    for (std::size_t d = 0; d < rank; ++d) {
        const auto &coords = plan->taps[d];
        std::size_t most = 1;
        for (const auto &t : coords)
            most = std::max(most, t.size());
        if (most > 4)
            return ctx.unsupported("more than 4 taps per coordinate");
        p.outStrides[d] = outStrides[d];
        p.outDims[d] = plan->outShape[d];
        p.inStrides[d] = inStrides[d];
        p.offset[d] = std::int64_t(indices.size());
        p.taps[d] = int(most);
        for (const auto &t : coords)
            for (std::size_t k = 0; k < most; ++k) {
                indices.push_back(k < t.size() ? t[k].index : (t.empty() ? 0 : std::max<std::int64_t>(t[0].index, 0)));
                weights.push_back(k < t.size() ? float(t[k].weight) : 0.0f);
            }
    }
    Expected<RuntimeTensor> table = e.allocate(DataType::UInt8, {std::int64_t(indices.size() * 12 + 8)});
    if (!table)
        return table.status();
    // One upload: the indices, then the weights (8-byte aligned: indices come first). From
    // pageable memory the copy has taken the bytes when it returns.
    std::vector<std::byte> host(indices.size() * 12);
    std::memcpy(host.data(), indices.data(), indices.size() * 8);
    std::memcpy(host.data() + indices.size() * 8, weights.data(), weights.size() * 4);
    if (!host.empty())
        OPSCOPE_TRY(cudaCheck(cudaMemcpyAsync(table->mutableBytes(), host.data(), host.size(), cudaMemcpyHostToDevice,
                                              e.stream),
                              "Resize tables"));
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), plan->outShape);
    if (!y)
        return y.status();
    const auto *idx = reinterpret_cast<const std::int64_t *>(table->bytes());
    const auto *w = reinterpret_cast<const float *>(table->bytes() + indices.size() * 8);
    const cudaError_t err =
        launchResize(*cudaType(x->dtype()), x->bytes(), y->mutableBytes(), y->elementCount(), p, idx, w, e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "Resize");
}

bool resizeAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    if (!x || !isFloatType(x->dtype()) || x->rank() == 0 || x->rank() > std::size_t(kMaxDims))
        return false;
    for (std::size_t i = 1; i < ctx.inputCount(); ++i)
        if (!hostInput(ctx, i))
            return false;
    return true;
}

} // namespace

void registerCudaTensorOps(CudaOpTable &t)
{
    // Views: the CPU kernel relabels the shape of the device tensor (its other inputs, shapes and
    // axes, come to the host).
    for (const char *op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Shape", "Size"})
        t.add(op, {nullptr, nullptr, true});
    t.add("Transpose", {transposeKernel, transposeAccepts});
    t.add("Expand", {expandKernel, expandAccepts});
    t.add("Slice", {sliceKernel, sliceAccepts});
    t.add("Concat", {concatKernel, concatAccepts});
    t.add("Split", {splitKernel, splitAccepts});
    t.add("Gather", {gatherKernel, gatherAccepts});
    t.add("Pad", {padKernel, padAccepts});
    t.add("Tile", {tileKernel, tileAccepts});
    t.add("Trilu", {triluKernel, triluAccepts});
    t.add("CumSum", {cumSumKernel, cumSumAccepts});
    t.add("GlobalAveragePool", {globalPoolKernel<RowReduce::Mean>, globalPoolAccepts});
    t.add("GlobalMaxPool", {globalPoolKernel<RowReduce::Max>, globalPoolAccepts});
    t.add("Resize", {resizeKernel, resizeAccepts});
    t.add("Upsample", {resizeKernel, resizeAccepts});
}

} // namespace opscope::gpu
