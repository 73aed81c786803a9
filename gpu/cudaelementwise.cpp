// Elementwise, row-wise (Softmax, reductions, normalizations) and cast kernels of the CUDA
// backend: shapes and attributes are worked out here, on the host, exactly as the CPU kernels do;
// the device code is in cudaops_*.cu.

#include "cudaexec.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace opscope::gpu {
namespace {

bool floatInputs(const KernelContext &ctx)
{
    return allInputsOfType(ctx, isFloatType, ctx.inputCount());
}

// ---- unary ----------------------------------------------------------------------------------

template<Unary Op>
Status unaryKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    UnaryParams p;
    if constexpr (Op == Unary::LeakyRelu)
        p.alpha = ctx.attrFloat("alpha", 0.01f);
    else if constexpr (Op == Unary::Elu)
        p.alpha = ctx.attrFloat("alpha", 1.0f);
    else if constexpr (Op == Unary::Selu) {
        p.alpha = ctx.attrFloat("alpha", 1.67326319217681884765625f);
        p.gamma = ctx.attrFloat("gamma", 1.05070102214813232421875f);
    } else if constexpr (Op == Unary::HardSigmoid) {
        p.alpha = ctx.attrFloat("alpha", 0.2f);
        p.beta = ctx.attrFloat("beta", 0.5f);
    } else if constexpr (Op == Unary::Swish)
        p.alpha = ctx.attrFloat("alpha", 1.0f);
    Unary op = Op;
    if constexpr (Op == Unary::GeluErf)
        if (ctx.attrString("approximate", "none") == "tanh")
            op = Unary::GeluTanh;
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), x->shape());
    if (!y)
        return y.status();
    const cudaError_t err = launchUnary(op, *cudaType(x->dtype()), x->bytes(), y->mutableBytes(), x->elementCount(),
                                        p, e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "unary kernel");
}

bool unaryFloat(const KernelContext &ctx)
{
    return ctx.input(0) && isFloatType(ctx.in(0).dtype());
}

bool unarySigned(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    return x && (isFloatType(x->dtype()) || x->dtype() == DataType::Int64 || x->dtype() == DataType::Int32);
}

// Clip: bounds from inputs 1–2 (opset 11) or attributes; the bounds are scalars read on the host.
bool clipAccepts(const KernelContext &ctx)
{
    if (!unaryFloat(ctx))
        return false;
    for (std::size_t i = 1; i < 3; ++i)
        if (const RuntimeTensor *b = ctx.input(i); b && (!b->onHost() || b->elementCount() != 1))
            return false;
    return true;
}

Status clipKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    UnaryParams p;
    p.alpha = ctx.attrFloat("min", -INFINITY);
    p.beta = ctx.attrFloat("max", INFINITY);
    if (const RuntimeTensor *lo = ctx.input(1))
        p.alpha = float(lo->valueAsDouble(0));
    if (const RuntimeTensor *hi = ctx.input(2))
        p.beta = float(hi->valueAsDouble(0));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), x->shape());
    if (!y)
        return y.status();
    const cudaError_t err = launchUnary(Unary::Clip, *cudaType(x->dtype()), x->bytes(), y->mutableBytes(),
                                        x->elementCount(), p, e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "Clip");
}

// ---- binary, with multidirectional broadcasting ------------------------------------------------

struct Broadcast
{
    std::vector<std::int64_t> shape;
    std::vector<IndexMap> maps;
};

Expected<Broadcast> broadcastOf(const KernelContext &ctx, std::initializer_list<const RuntimeTensor *> operands)
{
    Broadcast b;
    std::vector<std::vector<std::int64_t>> shapes;
    for (const RuntimeTensor *t : operands)
        shapes.push_back(t->shape());
    if (!broadcastShape(shapes, b.shape)) {
        std::string list;
        for (const auto &s : shapes)
            list += (list.empty() ? "" : " and ") + shapeText(s);
        return ctx.fail("shapes " + list + " do not broadcast");
    }
    if (!broadcastMaps(b.shape, shapes, b.maps))
        return ctx.unsupported("broadcast of rank above 8 after merging dims");
    return b;
}

template<Binary Op>
Status binaryKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> a = e.input(ctx, 0);
    if (!a)
        return a.status();
    Expected<RuntimeTensor> b = e.input(ctx, 1);
    if (!b)
        return b.status();
    if (a->dtype() != b->dtype())
        return ctx.fail("inputs are " + std::string(dataTypeName(a->dtype())) + " and " + std::string(dataTypeName(b->dtype())));
    Expected<Broadcast> bc = broadcastOf(ctx, {&*a, &*b});
    if (!bc)
        return bc.status();
    constexpr bool compare = Op >= Binary::Equal && Op <= Binary::GreaterOrEqual;
    constexpr bool logic = Op >= Binary::And;
    const DataType outType = compare || logic ? DataType::Bool : a->dtype();
    Expected<RuntimeTensor> y = e.allocate(outType, bc->shape);
    if (!y)
        return y.status();
    const cudaError_t err = launchBinary(Op, *cudaType(a->dtype()), a->bytes(), bc->maps[0], b->bytes(), bc->maps[1],
                                         y->mutableBytes(), y->elementCount(), e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "binary kernel");
}

// Float types for every op; int64/int32 for the exact integer ones. Float64 stays on the host
// (the kernels compute in float32).
template<Binary Op>
bool binaryAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *a = ctx.input(0), *b = ctx.input(1);
    if (!a || !b || ctx.inputCount() != 2 || a->dtype() != b->dtype())
        return false;
    const DataType t = a->dtype();
    if constexpr (Op >= Binary::And)
        return t == DataType::Bool;
    if (isFloatType(t))
        return true;
    const bool integer = t == DataType::Int64 || t == DataType::Int32;
    if constexpr (Op == Binary::Pow || Op == Binary::Div)
        return false; // integer Pow and Div (truncation, zero divisors) are the CPU's
    return integer;
}

Status whereKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    Expected<RuntimeTensor> c = e.input(ctx, 0), x = e.input(ctx, 1), y = e.input(ctx, 2);
    if (!c || !x || !y)
        return !c ? c.status() : !x ? x.status() : y.status();
    Expected<Broadcast> bc = broadcastOf(ctx, {&*c, &*x, &*y});
    if (!bc)
        return bc.status();
    Expected<RuntimeTensor> out = e.allocate(x->dtype(), bc->shape);
    if (!out)
        return out.status();
    const cudaError_t err =
        launchWhere(dataTypeSize(x->dtype()), reinterpret_cast<const std::uint8_t *>(c->bytes()), bc->maps[0],
                    x->bytes(), bc->maps[1], y->bytes(), bc->maps[2], out->mutableBytes(), out->elementCount(), e.stream);
    return e.finish(ctx, 0, std::move(*out), err, "Where");
}

bool whereAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *c = ctx.input(0), *x = ctx.input(1), *y = ctx.input(2);
    return c && x && y && c->dtype() == DataType::Bool && x->dtype() == y->dtype() && cudaType(x->dtype()) &&
           (isFloatType(x->dtype()) || !x->onHost() || !y->onHost());
}

// ---- cast ------------------------------------------------------------------------------------

// Cast's target: the `to` attribute; CastLike's: its second input's type.
DataType castTarget(const KernelContext &ctx)
{
    if (ctx.node().opType == "CastLike")
        return ctx.input(1) ? ctx.in(1).dtype() : DataType::Undefined;
    return DataType(ctx.attrInt("to", 0));
}

bool castAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    const DataType to = castTarget(ctx);
    // Float → integer conversion rules (saturation, NaN) are the CPU's; the others are exact.
    return x && cudaType(x->dtype()) && cudaType(to) && x->dtype() != DataType::Double && to != DataType::Double &&
           !(isFloatType(x->dtype()) && !isFloatType(to) && to != DataType::Bool);
}

Status castKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    const DataType to = castTarget(ctx);
    Expected<RuntimeTensor> y = e.allocate(to, x->shape());
    if (!y)
        return y.status();
    cudaError_t err;
    if (to == DataType::Bool) // x != 0
        err = launchCast(*cudaType(x->dtype()), DType::U8, x->bytes(), y->mutableBytes(), x->elementCount(), e.stream,
                         true);
    else
        err = launchCast(*cudaType(x->dtype()), *cudaType(to), x->bytes(), y->mutableBytes(), x->elementCount(),
                         e.stream, false);
    return e.finish(ctx, 0, std::move(*y), err, ctx.node().opType.c_str());
}

// ---- row-wise --------------------------------------------------------------------------------

std::int64_t normalizedAxis(std::int64_t axis, std::size_t rank)
{
    return axis < 0 ? axis + std::int64_t(rank) : axis;
}

// Softmax before opset 13 flattens at `axis` (default 1); from 13 it is over one axis (default
// −1), which is rows × cols only when that axis is the last.
bool softmaxAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    if (!x || !isFloatType(x->dtype()) || x->rank() == 0)
        return false;
    if (ctx.opset() >= 13)
        return normalizedAxis(ctx.attrInt("axis", -1), x->rank()) == std::int64_t(x->rank()) - 1;
    return true;
}

template<bool Log>
Status softmaxKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    const std::int64_t axis = normalizedAxis(ctx.attrInt("axis", ctx.opset() >= 13 ? -1 : 1), x->rank());
    if (axis < 0 || axis >= std::int64_t(x->rank()))
        return ctx.fail("axis " + std::to_string(ctx.attrInt("axis", -1)) + " is out of range");
    const RowsCols rc = rowsCols(x->shape(), std::size_t(axis));
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), x->shape());
    if (!y)
        return y.status();
    const cudaError_t err =
        launchSoftmax(*cudaType(x->dtype()), Log, x->bytes(), y->mutableBytes(), rc.rows, rc.cols, e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "Softmax");
}

// Reductions over any axes (ReduceMap: kept dims → output, reduced dims → the elements of each).
// Axes come from the attribute (before opset 18, 13 for ReduceSum) or from input 1, which must be
// on the host; none means every axis, unless noop_with_empty_axes (the host's identity copy).
std::optional<std::vector<std::int64_t>> reduceAxes(const KernelContext &ctx)
{
    const bool fromInput = ctx.node().opType == "ReduceSum" ? ctx.opset() >= 13 : ctx.opset() >= 18;
    if (fromInput) {
        const RuntimeTensor *a = ctx.input(1);
        if (!a)
            return std::vector<std::int64_t>{};
        if (!a->onHost())
            return std::nullopt;
        return a->toInt64Vector();
    }
    return ctx.attrInts("axes");
}

// Which of the input's dims are reduced; one function for accepts and the kernel, so the kernel
// never reads the raw attribute (−1 and 2 on a rank-3 input are one axis, not two).
std::optional<std::vector<bool>> reducedDims(const KernelContext &ctx, std::size_t rank)
{
    std::optional<std::vector<std::int64_t>> axes = reduceAxes(ctx);
    if (!axes)
        return std::nullopt;
    if (axes->empty()) {
        if (ctx.attrInt("noop_with_empty_axes", 0) != 0)
            return std::nullopt;
        return std::vector<bool>(rank, true);
    }
    std::vector<bool> mask(rank, false);
    for (std::int64_t v : *axes) {
        const std::int64_t n = normalizedAxis(v, rank);
        if (n < 0 || n >= std::int64_t(rank))
            return std::nullopt;
        mask[std::size_t(n)] = true;
    }
    return mask;
}

bool reduceAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    if (!x || !isFloatType(x->dtype()) || x->rank() == 0 || x->elementCount() == 0)
        return false;
    const std::optional<std::vector<bool>> mask = reducedDims(ctx, x->rank());
    ReduceMap m;
    return mask && reduceMap(x->shape(), *mask, m) && (m.count <= 32 || m.outputs <= 2147483647);
}

// The output shape of a reduction: reduced dims become 1 with keepdims, else go.
std::vector<std::int64_t> reducedShape(const std::vector<std::int64_t> &shape, const std::vector<bool> &mask, bool keep)
{
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < shape.size(); ++i)
        if (!mask[i])
            out.push_back(shape[i]);
        else if (keep)
            out.push_back(1);
    return out;
}

template<RowReduce Op>
Status reduceKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    const std::optional<std::vector<bool>> mask = reducedDims(ctx, x->rank());
    ReduceMap m;
    if (!mask || !reduceMap(x->shape(), *mask, m))
        return ctx.unsupported("axes on the device, or more than 8 dims after merging");
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), reducedShape(x->shape(), *mask, ctx.attrInt("keepdims", 1) != 0));
    if (!y)
        return y.status();
    const cudaError_t err = launchReduce(*cudaType(x->dtype()), Op, x->bytes(), y->mutableBytes(), m, e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "reduction");
}

// ArgMax/ArgMin over float types (integers compared in float would not be exact past 2^24).
bool argAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    if (!x || !isFloatType(x->dtype()) || x->rank() == 0 || x->elementCount() == 0)
        return false;
    const std::int64_t axis = normalizedAxis(ctx.attrInt("axis", 0), x->rank());
    return axis >= 0 && axis < std::int64_t(x->rank()) && x->elementCount() / x->dim(std::size_t(axis)) <= 2147483647;
}

template<bool IsMax>
Status argKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    const std::int64_t axis = normalizedAxis(ctx.attrInt("axis", 0), x->rank());
    if (axis < 0 || axis >= std::int64_t(x->rank()))
        return ctx.fail("axis " + std::to_string(ctx.attrInt("axis", 0)) + " is out of range for rank " +
                        std::to_string(x->rank()));
    std::vector<bool> mask(x->rank(), false);
    mask[std::size_t(axis)] = true;
    ReduceMap m;
    if (!reduceMap(x->shape(), mask, m))
        return ctx.unsupported("more than 8 dims after merging");
    Expected<RuntimeTensor> y =
        e.allocate(DataType::Int64, reducedShape(x->shape(), mask, ctx.attrInt("keepdims", 1) != 0));
    if (!y)
        return y.status();
    const cudaError_t err =
        launchArgReduce(*cudaType(x->dtype()), IsMax, ctx.attrInt("select_last_index", 0) != 0, x->bytes(),
                        reinterpret_cast<std::int64_t *>(y->mutableBytes()), m, e.stream);
    return e.finish(ctx, 0, std::move(*y), err, IsMax ? "ArgMax" : "ArgMin");
}

// LayerNormalization (and RMSNorm): scale and bias of exactly the normalized dims; the optional
// Mean and InvStdDev outputs are the host's.
template<bool Rms>
bool layerNormAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0), *scale = ctx.input(1), *bias = Rms ? nullptr : ctx.input(2);
    if (!x || !scale || !isFloatType(x->dtype()) || scale->dtype() != x->dtype() || x->rank() == 0)
        return false;
    if (bias && bias->dtype() != x->dtype())
        return false;
    for (std::size_t i = 1; i < ctx.outputCount(); ++i)
        if (ctx.wantsOutput(i))
            return false;
    const std::int64_t axis = normalizedAxis(ctx.attrInt("axis", -1), x->rank());
    if (axis < 0 || axis >= std::int64_t(x->rank()))
        return false;
    const RowsCols rc = rowsCols(x->shape(), std::size_t(axis));
    return scale->elementCount() == rc.cols && (!bias || bias->elementCount() == rc.cols);
}

template<bool Rms>
Status layerNormKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> x = e.input(ctx, 0), scale = e.input(ctx, 1);
    if (!x || !scale)
        return !x ? x.status() : scale.status();
    RuntimeTensor bias;
    if (!Rms && ctx.input(2)) {
        Expected<RuntimeTensor> b = e.input(ctx, 2);
        if (!b)
            return b.status();
        bias = *b;
    }
    const std::int64_t axis = normalizedAxis(ctx.attrInt("axis", -1), x->rank());
    const RowsCols rc = rowsCols(x->shape(), std::size_t(axis));
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), x->shape());
    if (!y)
        return y.status();
    const cudaError_t err =
        launchLayerNorm(*cudaType(x->dtype()), Rms, x->bytes(), scale->bytes(), bias.isValid() ? bias.bytes() : nullptr,
                        y->mutableBytes(), rc.rows, rc.cols, ctx.attrFloat("epsilon", 1e-5f), e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "LayerNormalization");
}

// Inference BatchNormalization on float32 parameters; training mode is the host's.
bool batchNormAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    if (!x || !isFloatType(x->dtype()) || x->rank() < 2 || ctx.attrInt("training_mode", 0) != 0)
        return false;
    for (std::size_t i = 1; i < 5; ++i)
        if (const RuntimeTensor *p = ctx.input(i); !p || p->dtype() != DataType::Float || p->elementCount() != x->dim(1))
            return false;
    for (std::size_t i = 1; i < ctx.outputCount(); ++i)
        if (ctx.wantsOutput(i))
            return false;
    return true;
}

Status batchNormKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(5));
    std::vector<RuntimeTensor> in;
    for (std::size_t i = 0; i < 5; ++i) {
        Expected<RuntimeTensor> t = e.input(ctx, i);
        if (!t)
            return t.status();
        in.push_back(std::move(*t));
    }
    const RuntimeTensor &x = in[0];
    std::int64_t spatial = 1;
    for (std::size_t d = 2; d < x.rank(); ++d)
        spatial *= x.dim(d);
    Expected<RuntimeTensor> y = e.allocate(x.dtype(), x.shape());
    if (!y)
        return y.status();
    const cudaError_t err =
        launchBatchNorm(*cudaType(x.dtype()), x.bytes(), in[1].data<float>(), in[2].data<float>(), in[3].data<float>(),
                        in[4].data<float>(), y->mutableBytes(), x.dim(0), x.dim(1), spatial,
                        ctx.attrFloat("epsilon", 1e-5f), e.stream);
    return e.finish(ctx, 0, std::move(*y), err, "BatchNormalization");
}

} // namespace

void registerCudaElementwiseOps(CudaOpTable &t)
{
    t.add("Relu", {unaryKernel<Unary::Relu>, unarySigned});
    t.add("Neg", {unaryKernel<Unary::Neg>, unarySigned});
    t.add("Abs", {unaryKernel<Unary::Abs>, unarySigned});
    t.add("Sign", {unaryKernel<Unary::Sign>, unarySigned});
    t.add("Sigmoid", {unaryKernel<Unary::Sigmoid>, unaryFloat});
    t.add("Tanh", {unaryKernel<Unary::Tanh>, unaryFloat});
    t.add("Exp", {unaryKernel<Unary::Exp>, unaryFloat});
    t.add("Log", {unaryKernel<Unary::Log>, unaryFloat});
    t.add("Sqrt", {unaryKernel<Unary::Sqrt>, unaryFloat});
    t.add("Erf", {unaryKernel<Unary::Erf>, unaryFloat});
    t.add("Reciprocal", {unaryKernel<Unary::Reciprocal>, unaryFloat});
    t.add("Floor", {unaryKernel<Unary::Floor>, unaryFloat});
    t.add("Ceil", {unaryKernel<Unary::Ceil>, unaryFloat});
    t.add("Round", {unaryKernel<Unary::Round>, unaryFloat});
    t.add("Sin", {unaryKernel<Unary::Sin>, unaryFloat});
    t.add("Cos", {unaryKernel<Unary::Cos>, unaryFloat});
    t.add("Softplus", {unaryKernel<Unary::Softplus>, unaryFloat});
    t.add("Softsign", {unaryKernel<Unary::Softsign>, unaryFloat});
    t.add("LeakyRelu", {unaryKernel<Unary::LeakyRelu>, unaryFloat});
    t.add("Elu", {unaryKernel<Unary::Elu>, unaryFloat});
    t.add("Selu", {unaryKernel<Unary::Selu>, unaryFloat});
    t.add("HardSigmoid", {unaryKernel<Unary::HardSigmoid>, unaryFloat});
    t.add("HardSwish", {unaryKernel<Unary::HardSwish>, unaryFloat});
    t.add("ai.opscope", "HardSwish", {unaryKernel<Unary::HardSwish>, unaryFloat});
    t.add("Gelu", {unaryKernel<Unary::GeluErf>, unaryFloat});
    t.add("ai.opscope", "Gelu", {unaryKernel<Unary::GeluErf>, unaryFloat});
    t.add("ai.opscope", "Swish", {unaryKernel<Unary::Swish>, unaryFloat});
    t.add("Clip", {clipKernel, clipAccepts});

    t.add("Add", {binaryKernel<Binary::Add>, binaryAccepts<Binary::Add>});
    t.add("Sub", {binaryKernel<Binary::Sub>, binaryAccepts<Binary::Sub>});
    t.add("Mul", {binaryKernel<Binary::Mul>, binaryAccepts<Binary::Mul>});
    t.add("Div", {binaryKernel<Binary::Div>, binaryAccepts<Binary::Div>});
    t.add("Pow", {binaryKernel<Binary::Pow>, binaryAccepts<Binary::Pow>});
    t.add("Max", {binaryKernel<Binary::Max>, binaryAccepts<Binary::Max>});
    t.add("Min", {binaryKernel<Binary::Min>, binaryAccepts<Binary::Min>});
    t.add("PRelu", {binaryKernel<Binary::PRelu>, binaryAccepts<Binary::PRelu>});
    t.add("Equal", {binaryKernel<Binary::Equal>, binaryAccepts<Binary::Equal>});
    t.add("Less", {binaryKernel<Binary::Less>, binaryAccepts<Binary::Less>});
    t.add("Greater", {binaryKernel<Binary::Greater>, binaryAccepts<Binary::Greater>});
    t.add("LessOrEqual", {binaryKernel<Binary::LessOrEqual>, binaryAccepts<Binary::LessOrEqual>});
    t.add("GreaterOrEqual", {binaryKernel<Binary::GreaterOrEqual>, binaryAccepts<Binary::GreaterOrEqual>});
    t.add("And", {binaryKernel<Binary::And>, binaryAccepts<Binary::And>});
    t.add("Or", {binaryKernel<Binary::Or>, binaryAccepts<Binary::Or>});
    t.add("Xor", {binaryKernel<Binary::Xor>, binaryAccepts<Binary::Xor>});
    t.add("Where", {whereKernel, whereAccepts});
    t.add("Cast", {castKernel, castAccepts});
    t.add("CastLike", {castKernel, castAccepts});

    t.add("Softmax", {softmaxKernel<false>, softmaxAccepts});
    t.add("LogSoftmax", {softmaxKernel<true>, softmaxAccepts});
    t.add("ReduceMean", {reduceKernel<RowReduce::Mean>, reduceAccepts});
    t.add("ReduceSum", {reduceKernel<RowReduce::Sum>, reduceAccepts});
    t.add("ReduceMax", {reduceKernel<RowReduce::Max>, reduceAccepts});
    t.add("ReduceMin", {reduceKernel<RowReduce::Min>, reduceAccepts});
    t.add("ReduceSumSquare", {reduceKernel<RowReduce::SumSquare>, reduceAccepts});
    t.add("ReduceL2", {reduceKernel<RowReduce::L2>, reduceAccepts});
    t.add("ReduceLogSumExp", {reduceKernel<RowReduce::LogSumExp>, reduceAccepts});
    t.add("ReduceProd", {reduceKernel<RowReduce::Prod>, reduceAccepts});
    t.add("ReduceL1", {reduceKernel<RowReduce::L1>, reduceAccepts});
    t.add("ReduceLogSum", {reduceKernel<RowReduce::LogSum>, reduceAccepts});
    t.add("ArgMax", {argKernel<true>, argAccepts});
    t.add("ArgMin", {argKernel<false>, argAccepts});
    t.add("LayerNormalization", {layerNormKernel<false>, layerNormAccepts<false>});
    t.add("ai.opscope", "LayerNormalization", {layerNormKernel<false>, layerNormAccepts<false>});
    t.add("ai.opscope", "RMSNormalization", {layerNormKernel<true>, layerNormAccepts<true>});
    t.add("SimplifiedLayerNormalization", {layerNormKernel<true>, layerNormAccepts<true>});
    t.add("BatchNormalization", {batchNormKernel, batchNormAccepts});
}

} // namespace opscope::gpu
