// Convolution, transposed convolution and pooling on cuDNN (its classic descriptor API). The
// algorithm is found once per node and input shape (cudnnFind… times the candidates) and kept;
// bias and a fused activation follow as one epilogue kernel. float32 convolutions use FMA math
// (no TF32) unless the backend allows TF32. Asymmetric padding, output_shape and ceil_mode that
// changes the output run on the host.

#include "cudaexec.h"
#include "runtime/kernels/fusedactivation.h"

#include <algorithm>
#include <limits>

namespace opscope::gpu {
namespace {

cudnnDataType_t dnnType(DataType t)
{
    switch (t) {
    case DataType::Float16: return CUDNN_DATA_HALF;
    case DataType::BFloat16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_FLOAT;
    }
}

// RAII for the descriptors.
struct TensorDesc
{
    cudnnTensorDescriptor_t d = nullptr;
    TensorDesc() { cudnnCreateTensorDescriptor(&d); }
    ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
    Status set(DataType t, std::vector<std::int64_t> dims)
    {
        while (dims.size() < 4)
            dims.push_back(1); // cuDNN wants ≥ 4 dims: a 1-D conv is a 2-D one of height 1
        // The classic API takes int dims and strides: a tensor of 2³¹ elements or more is the
        // host's (Unsupported falls back), never a wrapped stride.
        std::vector<int> di(dims.size()), st(dims.size());
        std::int64_t s = 1;
        for (std::size_t i = dims.size(); i-- > 0;) {
            if (dims[i] > std::numeric_limits<int>::max() || s > std::numeric_limits<int>::max())
                return Status::unsupported("a tensor " + shapeText(dims) + " beyond cuDNN's 32-bit strides");
            di[i] = int(dims[i]);
            st[i] = int(s);
            s *= std::max<std::int64_t>(dims[i], 1);
        }
        if (s > std::numeric_limits<int>::max())
            return Status::unsupported("a tensor " + shapeText(dims) + " beyond cuDNN's 32-bit strides");
        return cudnnCheck(cudnnSetTensorNdDescriptor(d, dnnType(t), int(di.size()), di.data(), st.data()),
                          "tensor descriptor");
    }
};

struct FilterDesc
{
    cudnnFilterDescriptor_t d = nullptr;
    FilterDesc() { cudnnCreateFilterDescriptor(&d); }
    ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
};

struct ConvDesc
{
    cudnnConvolutionDescriptor_t d = nullptr;
    ConvDesc() { cudnnCreateConvolutionDescriptor(&d); }
    ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
};

bool fitsInt(const std::vector<std::int64_t> &v)
{
    return std::all_of(v.begin(), v.end(), [](std::int64_t x) { return x >= 0 && x < (std::int64_t(1) << 31); });
}

// Spatial geometry of a Conv/ConvTranspose/pool node for an input with `spatial` dims.
struct Geometry
{
    std::vector<std::int64_t> kernel, strides, dilations, pads; // pads: one per dim (symmetric)
};

// nullopt: padding the host must do (asymmetric, or auto_pad SAME with odd total).
std::optional<Geometry> geometry(const KernelContext &ctx, const std::vector<std::int64_t> &inSpatial,
                                 std::vector<std::int64_t> kernel, bool transposed)
{
    const std::size_t n = inSpatial.size();
    Geometry g;
    g.kernel = std::move(kernel);
    g.strides = ctx.attrInts("strides", std::vector<std::int64_t>(n, 1));
    g.dilations = ctx.attrInts("dilations", std::vector<std::int64_t>(n, 1));
    std::vector<std::int64_t> pads = ctx.attrInts("pads", std::vector<std::int64_t>(2 * n, 0));
    if (g.kernel.size() != n || g.strides.size() != n || g.dilations.size() != n || pads.size() != 2 * n)
        return std::nullopt;
    const std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
    if (autoPad == "VALID") {
        std::fill(pads.begin(), pads.end(), 0);
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        if (transposed)
            return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            const std::int64_t out = (inSpatial[i] + g.strides[i] - 1) / g.strides[i];
            const std::int64_t total =
                std::max<std::int64_t>(0, (out - 1) * g.strides[i] + (g.kernel[i] - 1) * g.dilations[i] + 1 - inSpatial[i]);
            if (total % 2)
                return std::nullopt;
            pads[i] = pads[i + n] = total / 2;
        }
    } else if (autoPad != "NOTSET") {
        return std::nullopt;
    }
    for (std::size_t i = 0; i < n; ++i)
        if (pads[i] != pads[i + n])
            return std::nullopt;
    g.pads.assign(pads.begin(), pads.begin() + std::ptrdiff_t(n));
    return g;
}

std::vector<int> ints(const std::vector<std::int64_t> &v, std::size_t atLeast, int fill)
{
    std::vector<int> out(v.begin(), v.end());
    while (out.size() < atLeast)
        out.push_back(fill);
    return out;
}

std::optional<Unary> unaryOf(const kernels::FusedActivation &a, UnaryParams &p)
{
    using K = kernels::FusedActivation::Kind;
    p.alpha = a.alpha;
    p.beta = a.beta;
    switch (a.kind) {
    case K::None: return Unary::Identity;
    case K::Relu: return Unary::Relu;
    case K::LeakyRelu: return Unary::LeakyRelu;
    case K::Clip: return Unary::Clip;
    case K::HardSigmoid: return Unary::HardSigmoid;
    case K::Sigmoid: return Unary::Sigmoid;
    case K::Tanh: return Unary::Tanh;
    case K::HardSwish: return Unary::HardSwish;
    case K::Swish: return Unary::Swish;
    }
    return std::nullopt;
}

// ---- Conv / FusedConv / ConvTranspose --------------------------------------------------------

// cudnnFind… sorts its candidates fastest first: the first that ran, or −1.
template<class Perf>
int fastestWorking(const Perf *perf, int found)
{
    for (int i = 0; i < found; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS)
            return i;
    return -1;
}

// A plan is valid for exactly the shapes and type it was made for: a node's weights are an input
// like any other (a graph may feed them), so they are part of the key.
struct ConvPlan
{
    DataType dtype = DataType::Undefined;
    std::vector<std::int64_t> inShape, wShape, outShape;
    TensorDesc x, y;
    FilterDesc w;
    ConvDesc conv;
    int algo = 0; // −1: cuDNN found none (the host runs the node)
    std::size_t workspace = 0;
};

template<bool Transposed>
bool convAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0), *w = ctx.input(1), *b = ctx.input(2);
    if (!x || !w || !isFloatType(x->dtype()) || w->dtype() != x->dtype() || x->rank() < 3 || x->rank() > 5 ||
        w->rank() != x->rank() || (b && b->dtype() != x->dtype()) || ctx.input(3))
        return false;
    // cuDNN rejects zero-sized dimensions; the host kernel gives the empty result.
    if (!fitsInt(x->shape()) || !fitsInt(w->shape()) || x->elementCount() == 0 || w->elementCount() == 0)
        return false;
    if (Transposed && (ctx.hasAttr("output_shape") || ctx.attrString("auto_pad", "NOTSET") != "NOTSET"))
        return false;
    std::vector<std::int64_t> in(x->shape().begin() + 2, x->shape().end());
    std::vector<std::int64_t> k(w->shape().begin() + 2, w->shape().end());
    if (ctx.hasAttr("kernel_shape") && ctx.attrInts("kernel_shape") != k)
        return false;
    if (!geometry(ctx, in, k, Transposed))
        return false;
    Expected<kernels::FusedActivation> act = kernels::FusedActivation::fromNode(ctx);
    UnaryParams p;
    return act && !act->hasPost() && unaryOf(*act, p);
}

template<bool Transposed>
Status convKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> x = e.input(ctx, 0), w = e.input(ctx, 1);
    if (!x || !w)
        return !x ? x.status() : w.status();
    RuntimeTensor bias;
    if (ctx.input(2)) {
        Expected<RuntimeTensor> b = e.input(ctx, 2);
        if (!b)
            return b.status();
        bias = *b;
    }
    Expected<cudnnHandle_t> dnn = e.dnn();
    if (!dnn)
        return dnn.status();
    const std::int64_t group = ctx.attrInt("group", 1);
    const std::size_t nsp = x->rank() - 2;
    std::vector<std::int64_t> in(x->shape().begin() + 2, x->shape().end());
    const std::optional<Geometry> g =
        geometry(ctx, in, std::vector<std::int64_t>(w->shape().begin() + 2, w->shape().end()), Transposed);
    if (!g)
        return ctx.unsupported("padding cuDNN cannot express");
    const std::int64_t channels = x->dim(1);
    if (group <= 0 || channels % group != 0)
        return ctx.fail("group " + std::to_string(group) + " does not divide " + std::to_string(channels) + " channels");
    if (!Transposed && w->dim(1) * group != channels)
        return ctx.fail("weights " + w->shapeText() + " do not match " + std::to_string(channels) + " input channels");
    if (Transposed && w->dim(0) != channels)
        return ctx.fail("weights " + w->shapeText() + " do not match " + std::to_string(channels) + " input channels");
    std::vector<std::int64_t> out{x->dim(0), Transposed ? w->dim(1) * group : w->dim(0)};
    // The epilogue reads one bias value per output channel.
    if (bias.isValid() && (bias.rank() != 1 || bias.dim(0) != out[1]))
        return ctx.fail("bias " + bias.shapeText() + " does not match " + std::to_string(out[1]) + " output channels");
    const std::vector<std::int64_t> outPad = ctx.attrInts("output_padding", std::vector<std::int64_t>(nsp, 0));
    for (std::size_t i = 0; i < nsp; ++i) {
        const std::int64_t span = (g->kernel[i] - 1) * g->dilations[i] + 1;
        std::int64_t o = Transposed ? g->strides[i] * (in[i] - 1) + (i < outPad.size() ? outPad[i] : 0) + span -
                                          2 * g->pads[i]
                                    : (in[i] + 2 * g->pads[i] - span) / g->strides[i] + 1;
        if (o <= 0)
            return ctx.fail("the output of input " + x->shapeText() + " with kernel " + w->shapeText() + " is empty");
        out.push_back(o);
    }

    // Descriptors and the algorithm: once per node and input shape.
    std::shared_ptr<ConvPlan> plan;
    {
        std::lock_guard lock(e.caches->mutex);
        auto &slot = e.caches->slot(e.nodeCache);
        plan = std::static_pointer_cast<ConvPlan>(slot);
        if (!plan || plan->dtype != x->dtype() || plan->inShape != x->shape() || plan->wShape != w->shape() ||
            plan->outShape != out) {
            plan = std::make_shared<ConvPlan>();
            plan->dtype = x->dtype();
            plan->inShape = x->shape();
            plan->wShape = w->shape();
            plan->outShape = out;
            const DataType t = x->dtype();
            OPSCOPE_TRY(plan->x.set(t, x->shape()));
            OPSCOPE_TRY(plan->y.set(t, out));
            std::vector<int> wd = ints(w->shape(), 4, 1);
            OPSCOPE_TRY(cudnnCheck(cudnnSetFilterNdDescriptor(plan->w.d, dnnType(t), CUDNN_TENSOR_NCHW, int(wd.size()),
                                                              wd.data()),
                                   "filter descriptor"));
            const std::vector<int> pad = ints(g->pads, 2, 0), stride = ints(g->strides, 2, 1),
                                   dil = ints(g->dilations, 2, 1);
            OPSCOPE_TRY(cudnnCheck(cudnnSetConvolutionNdDescriptor(plan->conv.d, int(pad.size()), pad.data(),
                                                                   stride.data(), dil.data(), CUDNN_CROSS_CORRELATION,
                                                                   CUDNN_DATA_FLOAT),
                                   "convolution descriptor"));
            cudnnSetConvolutionGroupCount(plan->conv.d, int(group));
            cudnnSetConvolutionMathType(plan->conv.d, t != DataType::Float ? CUDNN_TENSOR_OP_MATH
                                                      : e.allowTf32        ? CUDNN_DEFAULT_MATH
                                                                           : CUDNN_FMA_MATH);
            int found = 0;
            if constexpr (Transposed) {
                cudnnConvolutionBwdDataAlgoPerf_t perf[8];
                OPSCOPE_TRY(cudnnCheck(cudnnFindConvolutionBackwardDataAlgorithm(*dnn, plan->w.d, plan->x.d,
                                                                                 plan->conv.d, plan->y.d, 8, &found, perf),
                                       "choosing a transposed-convolution algorithm"));
                const int pick = fastestWorking(perf, found);
                plan->algo = pick < 0 ? -1 : int(perf[pick].algo);
                plan->workspace = pick < 0 ? 0 : perf[pick].memory;
            } else {
                cudnnConvolutionFwdAlgoPerf_t perf[8];
                OPSCOPE_TRY(cudnnCheck(cudnnFindConvolutionForwardAlgorithm(*dnn, plan->x.d, plan->w.d, plan->conv.d,
                                                                            plan->y.d, 8, &found, perf),
                                       "choosing a convolution algorithm"));
                const int pick = fastestWorking(perf, found);
                plan->algo = pick < 0 ? -1 : int(perf[pick].algo);
                plan->workspace = pick < 0 ? 0 : perf[pick].memory;
            }
            slot = plan; // also without an algorithm: cudnnFind… is not asked again for these shapes
        }
    }
    if (plan->algo < 0)
        return ctx.unsupported(std::string("cuDNN has no algorithm for this ") +
                               (Transposed ? "transposed convolution" : "convolution"));
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), out);
    if (!y)
        return y.status();
    Expected<void *> ws = e.scratch(plan->workspace);
    if (!ws)
        return ws.status();
    const float one = 1.0f, zero = 0.0f;
    if constexpr (Transposed)
        OPSCOPE_TRY(cudnnCheck(cudnnConvolutionBackwardData(*dnn, &one, plan->w.d, w->bytes(), plan->x.d, x->bytes(),
                                                            plan->conv.d, cudnnConvolutionBwdDataAlgo_t(plan->algo), *ws,
                                                            plan->workspace, &zero, plan->y.d, y->mutableBytes()),
                               "ConvTranspose"));
    else
        OPSCOPE_TRY(cudnnCheck(cudnnConvolutionForward(*dnn, &one, plan->x.d, x->bytes(), plan->w.d, w->bytes(),
                                                       plan->conv.d, cudnnConvolutionFwdAlgo_t(plan->algo), *ws,
                                                       plan->workspace, &zero, plan->y.d, y->mutableBytes()),
                               "Conv"));
    Expected<kernels::FusedActivation> act = kernels::FusedActivation::fromNode(ctx);
    if (!act)
        return act.status();
    UnaryParams p;
    const Unary u = *unaryOf(*act, p);
    if (bias.isValid() || u != Unary::Identity) {
        std::int64_t spatial = 1;
        for (std::size_t i = 2; i < out.size(); ++i)
            spatial *= out[i];
        OPSCOPE_TRY(cudaCheck(launchBiasActivation(*cudaType(x->dtype()), y->mutableBytes(),
                                                   bias.isValid() ? bias.bytes() : nullptr, out[0], out[1], spatial, u,
                                                   p, e.stream),
                              "bias and activation"));
    }
    ctx.setOutput(0, std::move(*y));
    return Status::ok();
}

// ---- MaxPool / AveragePool -------------------------------------------------------------------

struct PoolPlan
{
    DataType dtype = DataType::Undefined;
    std::vector<std::int64_t> inShape, outShape;
    TensorDesc x, y;
    cudnnPoolingDescriptor_t pool = nullptr;
    ~PoolPlan()
    {
        if (pool)
            cudnnDestroyPoolingDescriptor(pool);
    }
};

// Output dims; nullopt where cuDNN's floor rule would differ (ceil_mode that rounds up).
std::optional<std::vector<std::int64_t>> poolOut(const KernelContext &ctx, const RuntimeTensor &x, const Geometry &g)
{
    std::vector<std::int64_t> out{x.dim(0), x.dim(1)};
    const bool ceil = ctx.attrInt("ceil_mode", 0) != 0;
    for (std::size_t i = 0; i + 2 < x.rank(); ++i) {
        const std::int64_t span = (g.kernel[i] - 1) * g.dilations[i] + 1;
        const std::int64_t num = x.dim(i + 2) + 2 * g.pads[i] - span;
        if (num < 0)
            return std::nullopt;
        if (ceil && num % g.strides[i] != 0)
            return std::nullopt;
        out.push_back(num / g.strides[i] + 1);
    }
    return out;
}

template<bool Max>
bool poolAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *x = ctx.input(0);
    if (!x || !isFloatType(x->dtype()) || x->rank() < 4 || x->rank() > 5 || !fitsInt(x->shape()) ||
        x->elementCount() == 0)
        return false;
    if (ctx.outputCount() > 1 && ctx.wantsOutput(1))
        return false; // MaxPool's indices
    const std::vector<std::int64_t> in(x->shape().begin() + 2, x->shape().end());
    const std::optional<Geometry> g = geometry(ctx, in, ctx.attrInts("kernel_shape"), false);
    if (!g || std::any_of(g->dilations.begin(), g->dilations.end(), [](std::int64_t d) { return d != 1; }))
        return false;
    return poolOut(ctx, *x, *g).has_value();
}

template<bool Max>
Status poolKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    Expected<RuntimeTensor> x = e.input(ctx, 0);
    if (!x)
        return x.status();
    Expected<cudnnHandle_t> dnn = e.dnn();
    if (!dnn)
        return dnn.status();
    const std::vector<std::int64_t> in(x->shape().begin() + 2, x->shape().end());
    const std::optional<Geometry> g = geometry(ctx, in, ctx.attrInts("kernel_shape"), false);
    if (!g)
        return ctx.unsupported("padding cuDNN cannot express");
    const std::optional<std::vector<std::int64_t>> out = poolOut(ctx, *x, *g);
    if (!out)
        return ctx.unsupported("ceil_mode output cuDNN cannot express");
    std::shared_ptr<PoolPlan> plan;
    {
        std::lock_guard lock(e.caches->mutex);
        auto &slot = e.caches->slot(e.nodeCache);
        plan = std::static_pointer_cast<PoolPlan>(slot);
        if (!plan || plan->dtype != x->dtype() || plan->inShape != x->shape() || plan->outShape != *out) {
            plan = std::make_shared<PoolPlan>();
            plan->dtype = x->dtype();
            plan->inShape = x->shape();
            plan->outShape = *out;
            OPSCOPE_TRY(plan->x.set(x->dtype(), x->shape()));
            OPSCOPE_TRY(plan->y.set(x->dtype(), *out));
            OPSCOPE_TRY(cudnnCheck(cudnnCreatePoolingDescriptor(&plan->pool), "pooling descriptor"));
            const bool includePad = ctx.attrInt("count_include_pad", 0) != 0;
            const cudnnPoolingMode_t mode = Max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                            : includePad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                         : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
            const std::vector<int> win = ints(g->kernel, 2, 1), pad = ints(g->pads, 2, 0), stride = ints(g->strides, 2, 1);
            OPSCOPE_TRY(cudnnCheck(cudnnSetPoolingNdDescriptor(plan->pool, mode, CUDNN_PROPAGATE_NAN, int(win.size()),
                                                               win.data(), pad.data(), stride.data()),
                                   "pooling descriptor"));
            slot = plan;
        }
    }
    Expected<RuntimeTensor> y = e.allocate(x->dtype(), *out);
    if (!y)
        return y.status();
    const float one = 1.0f, zero = 0.0f;
    OPSCOPE_TRY(cudnnCheck(cudnnPoolingForward(*dnn, plan->pool, &one, plan->x.d, x->bytes(), &zero, plan->y.d,
                                               y->mutableBytes()),
                           Max ? "MaxPool" : "AveragePool"));
    ctx.setOutput(0, std::move(*y));
    return Status::ok();
}

} // namespace

void registerCudaDnnOps(CudaOpTable &t)
{
    t.add("Conv", {convKernel<false>, convAccepts<false>});
    t.add("ai.opscope", "FusedConv", {convKernel<false>, convAccepts<false>});
    t.add("com.microsoft", "FusedConv", {convKernel<false>, convAccepts<false>});
    t.add("ConvTranspose", {convKernel<true>, convAccepts<true>});
    t.add("MaxPool", {poolKernel<true>, poolAccepts<true>});
    t.add("AveragePool", {poolKernel<false>, poolAccepts<false>});
}

} // namespace opscope::gpu
