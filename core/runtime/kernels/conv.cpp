// Conv through oneDNN's convolution primitive: oneDNN picks the memory formats it is fastest in;
// the primitive and the reordered constant weights are cached per node. ConvTranspose is an
// sgemm followed by col2im.

#include "runtime/kernels/convgeometry.h"
#include "runtime/kernels/depthwiseconv.h"
#include "runtime/kernels/dnnlengine.h"
#include "runtime/kernels/fusedactivation.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernelutil.h"

#include <chrono>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>

namespace opscope {
namespace kernels {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine &cpuEngine()
{
    return dnnlEngine();
}

memory::dims toDims(const Shape64 &s)
{
    return memory::dims(s.begin(), s.end());
}

Tag plainActivationTag(std::size_t spatial)
{
    return spatial == 1 ? Tag::ncw : spatial == 2 ? Tag::nchw : Tag::ncdhw;
}

Tag plainWeightsTag(std::size_t spatial, bool grouped)
{
    if (grouped)
        return spatial == 1 ? Tag::goiw : spatial == 2 ? Tag::goihw : Tag::goidhw;
    return spatial == 1 ? Tag::oiw : spatial == 2 ? Tag::oihw : Tag::oidhw;
}

// One way to run a convolution: a primitive for some memory layout, with its reorder primitives
// and (for constant weights) the weights already in the primitive's layout.
struct ConvVariant
{
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward prim;
    memory weights;
    bool weightsCached = false;
    std::optional<dnnl::reorder> srcReorder, weightReorder, dstReorder;
};

// Per node: the variants for the current shapes, and which one won the timing on first use.
struct ConvState
{
    Shape64 xShape, wShape;
    bool hasBias = false;
    std::vector<ConvVariant> variants; // [0] oneDNN's preferred (blocked) layout, [1] plain, if available
    static constexpr int kDirect = -1; // depthwiseconv.h's loop instead of a oneDNN variant
    int chosen = 0;
    // The workspace every call asks for: the largest any variant needs, whichever won. Which wins
    // is timed, so it differs between processes; a memory plan sized by the winner differed too
    // (a U-Net's arena 16 or 24 MiB from one run of `opscope-cli memory` to the next).
    std::uint64_t reservedBytes = 0;
};

struct ConvCall
{
    const memory::desc &xUser, &wUser, &yUser;
    const RuntimeTensor &x, &w;
    const RuntimeTensor *b;
    RuntimeTensor &y;
    // The call's workspace (KernelContext::workspace, workspaceParts(variant).total() bytes).
    std::byte *workspace = nullptr;
};

// The fused activation as oneDNN post-ops, applied while the output is still in registers.
dnnl::primitive_attr postOps(const FusedActivation &act)
{
    using K = FusedActivation::Kind;
    using A = dnnl::algorithm;
    dnnl::post_ops ops;
    switch (act.kind) {
    case K::None: break;
    case K::Relu: ops.append_eltwise(1.0f, A::eltwise_relu, 0.0f, 0.0f); break;
    case K::LeakyRelu: ops.append_eltwise(1.0f, A::eltwise_relu, act.alpha, 0.0f); break;
    case K::Clip: ops.append_eltwise(1.0f, A::eltwise_clip_v2, act.alpha, act.beta); break;
    case K::HardSigmoid:
        ops.append_eltwise(1.0f, A::eltwise_linear, act.alpha, act.beta);
        ops.append_eltwise(1.0f, A::eltwise_clip_v2, 0.0f, 1.0f);
        break;
    case K::Sigmoid: ops.append_eltwise(1.0f, A::eltwise_logistic, 0.0f, 0.0f); break;
    case K::Tanh: ops.append_eltwise(1.0f, A::eltwise_tanh, 0.0f, 0.0f); break;
    case K::HardSwish: ops.append_eltwise(1.0f, A::eltwise_hardswish, 0.0f, 0.0f); break;
    case K::Swish: ops.append_eltwise(1.0f, A::eltwise_swish, act.alpha, 0.0f); break;
    }
    if (act.hasPost())
        ops.append_eltwise(1.0f, A::eltwise_linear, act.postScale, act.postShift);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    return attr;
}

Expected<ConvVariant> makeVariant(const ConvGeometry &geo, const memory::desc &xd, const memory::desc &wUser,
                                  const memory::desc &yd, const ConvCall &call, bool constantWeights,
                                  const FusedActivation &act)
{
    const memory::desc wAny(wUser.dims(), memory::data_type::f32, Tag::any);
    memory::dims strides = toDims(geo.strides), dil = toDims(geo.dilations);
    for (auto &d : dil)
        d -= 1; // oneDNN counts the gap, ONNX the step
    const auto desc =
        call.b
            ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                              dnnl::algorithm::convolution_direct, xd, wAny,
                                              memory::desc({call.w.dim(0)}, memory::data_type::f32, Tag::x),
                                              yd, strides, dil, toDims(geo.padBegin), toDims(geo.padEnd))
            : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                              dnnl::algorithm::convolution_direct, xd, wAny, yd, strides, dil,
                                              toDims(geo.padBegin), toDims(geo.padEnd));
    ConvVariant v;
    // A scratchpad of our own per thread: with the library's, convolutions running at once on two
    // queues (parallel schedules) crashed inside oneDNN now and then.
    dnnl::primitive_attr attr = postOps(act);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    v.pd = dnnl::convolution_forward::primitive_desc(desc, attr, cpuEngine());
    v.prim = dnnl::convolution_forward(v.pd);
    if (v.pd.src_desc() != call.xUser)
        v.srcReorder = dnnl::reorder(
            dnnl::reorder::primitive_desc(cpuEngine(), call.xUser, cpuEngine(), v.pd.src_desc()));
    if (v.pd.dst_desc() != call.yUser)
        v.dstReorder = dnnl::reorder(
            dnnl::reorder::primitive_desc(cpuEngine(), v.pd.dst_desc(), cpuEngine(), call.yUser));
    if (v.pd.weights_desc() != call.wUser)
        v.weightReorder = dnnl::reorder(
            dnnl::reorder::primitive_desc(cpuEngine(), call.wUser, cpuEngine(), v.pd.weights_desc()));
    if (constantWeights) {
        memory user(call.wUser, cpuEngine(), const_cast<std::byte *>(call.w.bytes()));
        v.weights = v.weightReorder ? memory(v.pd.weights_desc(), cpuEngine()) : user;
        if (v.weightReorder) {
            dnnl::stream s(cpuEngine());
            v.weightReorder->execute(s, user, v.weights);
            s.wait();
        }
        v.weightsCached = true;
    }
    return v;
}

// What a call of `v` needs besides its inputs and output, in the order runVariant carves it: the
// reordered source, the reordered weights (unless cached), the destination before its reorder,
// oneDNN's scratchpad; each part 64-byte aligned.
struct WorkspaceParts
{
    std::uint64_t src = 0, weights = 0, dst = 0, scratchpad = 0;
    std::uint64_t total() const { return src + weights + dst + scratchpad; }
};

WorkspaceParts workspaceParts(const ConvVariant &v)
{
    const auto aligned = [](std::uint64_t b) { return (b + 63) / 64 * 64; };
    WorkspaceParts p;
    if (v.srcReorder)
        p.src = aligned(v.pd.src_desc().get_size());
    if (!v.weightsCached && v.weightReorder)
        p.weights = aligned(v.pd.weights_desc().get_size());
    if (v.dstReorder)
        p.dst = aligned(v.pd.dst_desc().get_size());
    p.scratchpad = aligned(v.pd.scratchpad_desc().get_size());
    return p;
}

void runVariant(const ConvVariant &v, const ConvCall &call)
{
    dnnl::stream &s = dnnlStream();
    const WorkspaceParts parts = workspaceParts(v);
    const auto part = [&](const memory::desc &desc, std::uint64_t at) {
        return memory(desc, cpuEngine(), call.workspace + at);
    };
    memory xMem(call.xUser, cpuEngine(), const_cast<std::byte *>(call.x.bytes()));
    if (v.srcReorder) {
        memory converted = part(v.pd.src_desc(), 0);
        v.srcReorder->execute(s, xMem, converted);
        xMem = converted;
    }
    memory wMem = v.weightsCached ? v.weights
                                  : memory(call.wUser, cpuEngine(), const_cast<std::byte *>(call.w.bytes()));
    if (!v.weightsCached && v.weightReorder) {
        memory converted = part(v.pd.weights_desc(), parts.src);
        v.weightReorder->execute(s, wMem, converted);
        wMem = converted;
    }
    memory yMem(call.yUser, cpuEngine(), call.y.mutableBytes());
    memory yConv = v.dstReorder ? part(v.pd.dst_desc(), parts.src + parts.weights) : yMem;
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, xMem}, {DNNL_ARG_WEIGHTS, wMem}, {DNNL_ARG_DST, yConv}};
    if (call.b)
        args.emplace(DNNL_ARG_BIAS,
                     memory(v.pd.bias_desc(), cpuEngine(), const_cast<std::byte *>(call.b->bytes())));
    if (v.pd.scratchpad_desc().get_size() > 0)
        args.emplace(DNNL_ARG_SCRATCHPAD, part(v.pd.scratchpad_desc(), parts.src + parts.weights + parts.dst));
    v.prim.execute(s, args);
    if (v.dstReorder)
        v.dstReorder->execute(s, yConv, yMem);
    s.wait();
}

// Best of three runs of `run`, in milliseconds (the output is written each time).
template<class F>
double bestOfThree(F run)
{
    double best = 1e300;
    for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        best = std::min(
            best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

// A trial run's workspace is the call's own (a sizing run frees it), not the plan's.
double timeVariant(KernelContext &ctx, const ConvVariant &v, const ConvCall &call)
{
    ConvCall trial = call;
    if (const std::uint64_t bytes = workspaceParts(v).total(); bytes > 0) {
        trial.workspace = ctx.workspace(bytes, false);
        if (!trial.workspace)
            throw dnnl::error(dnnl_out_of_memory, "convolution workspace");
    }
    return bestOfThree([&] { runVariant(v, trial); });
}

// The physical layout a convolution reads and writes: plain NCHW (Conv, FusedConv), NHWC
// (ai.opscope::NhwcConv) or channel-blocked NCHWc (ai.opscope::NchwcConv: [N, C/b, H, W, b], the
// layout-nhwc pass's regions; its input may also be plain NCHW, at a region's first convolution).
struct ConvLayout
{
    Shape64 logicalX; // N, C, spatial…
    Tag xTag, yTag;
    std::int64_t block = 0; // NCHWc
    bool nhwc = false;

    Shape64 physicalY(const Shape64 &y) const
    {
        if (nhwc)
            return {y[0], y[2], y[3], y[1]};
        if (block)
            return {y[0], y[1] / block, y[2], y[3], block};
        return y;
    }
};

Expected<ConvLayout> convLayout(const KernelContext &ctx, const RuntimeTensor &x)
{
    ConvLayout l;
    l.logicalX = x.shape();
    const std::string &op = ctx.node().opType;
    if (op == "NhwcConv") {
        if (x.rank() != 4)
            return ctx.fail("NhwcConv needs [N,H,W,C], got " + x.shapeText());
        l.logicalX = {x.dim(0), x.dim(3), x.dim(1), x.dim(2)};
        l.nhwc = true;
        l.xTag = l.yTag = Tag::nhwc;
        return l;
    }
    if (op == "NchwcConv") {
        l.block = ctx.attrInt("block", 8);
        if (l.block != 8 && l.block != 16)
            return ctx.unsupported("NchwcConv with block " + std::to_string(l.block) + " (8 or 16)");
        const Tag blocked = l.block == 16 ? Tag::nChw16c : Tag::nChw8c;
        l.yTag = blocked;
        if (x.rank() == 5) {
            if (x.dim(4) != l.block)
                return ctx.fail("input " + x.shapeText() + " is not blocked by " + std::to_string(l.block));
            l.logicalX = {x.dim(0), x.dim(1) * l.block, x.dim(2), x.dim(3)};
            l.xTag = blocked;
        } else if (x.rank() == 4) {
            l.xTag = Tag::nchw;
        } else {
            return ctx.fail("NchwcConv needs [N,C/b,H,W,b] or [N,C,H,W], got " + x.shapeText());
        }
        return l;
    }
    const std::size_t spatial = x.rank() >= 3 ? x.rank() - 2 : 0;
    l.xTag = l.yTag = plainActivationTag(spatial);
    return l;
}

// Conv, and FusedConv (Conv + activation) from opscope's and ONNX Runtime's domains; NhwcConv
// and NchwcConv (same attributes) in their layouts.
Status convKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const Expected<FusedActivation> act = FusedActivation::fromNode(ctx);
    if (!act)
        return act.status();
    if (ctx.hasInput(3))
        return ctx.unsupported("FusedConv with a Z (sum) input");
    const RuntimeTensor &x = ctx.in(0), &w = ctx.in(1);
    const RuntimeTensor *b = ctx.input(2);
    if (x.dtype() != DataType::Float || w.dtype() != DataType::Float)
        return ctx.unsupported("Conv is implemented for float32 (got " +
                               std::string(dataTypeName(x.dtype())) + ")");
    const Expected<ConvLayout> layout = convLayout(ctx, x);
    if (!layout)
        return layout.status();
    const Expected<ConvGeometry> geo = convGeometry(ctx, layout->logicalX, w.shape(), false);
    if (!geo)
        return geo.status();
    OPSCOPE_TRY(checkConvBias(ctx, b, geo->outShape[1]));
    const std::size_t spatial = geo->kernel.size();
    if (spatial < 1 || spatial > 3 || ((layout->nhwc || layout->block) && spatial != 2))
        return ctx.unsupported(ctx.node().opType + " with " + std::to_string(spatial) +
                               " spatial dimensions");
    if (layout->block && geo->outShape[1] % layout->block != 0)
        return ctx.fail(std::to_string(geo->outShape[1]) + " output channels do not fill blocks of " +
                        std::to_string(layout->block));
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, layout->physicalY(geo->outShape));
    if (!out)
        return out.status();
    if ((*out)->elementCount() == 0)
        return Status::ok();

    try {
        const std::int64_t g = geo->group;
        Shape64 wDims = w.shape();
        if (g > 1) {
            wDims[0] /= g;
            wDims.insert(wDims.begin(), g);
        }
        const memory::desc xUser(toDims(layout->logicalX), memory::data_type::f32, layout->xTag);
        const memory::desc wUser(toDims(wDims), memory::data_type::f32, plainWeightsTag(spatial, g > 1));
        const memory::desc yUser(toDims(geo->outShape), memory::data_type::f32, layout->yTag);
        const ConvCall call{xUser, wUser, yUser, x, w, b, **out};
        const auto direct = [&] {
            depthwiseConv(*geo, x.shape(), x.data<float>(), w.data<float>(), b ? b->data<float>() : nullptr,
                          (*out)->mutableData<float>(), *act);
        };

        std::shared_ptr<ConvState> state;
        std::unique_lock lock(ctx.cache().mutex); // held while (re)building and timing, not while running
        state = std::static_pointer_cast<ConvState>(ctx.cache().state);
        if (!state || state->xShape != x.shape() || state->wShape != w.shape() ||
            state->hasBias != (b != nullptr)) {
            state = std::make_shared<ConvState>();
            state->xShape = x.shape();
            state->wShape = w.shape();
            state->hasBias = b != nullptr;
            const bool constant = ctx.isConstantInput(1);
            const memory::desc xAny(toDims(layout->logicalX), memory::data_type::f32, Tag::any);
            const memory::desc yAny(toDims(geo->outShape), memory::data_type::f32, Tag::any);
            Expected<ConvVariant> blocked = makeVariant(*geo, xAny, wUser, yAny, call, constant, *act);
            if (!blocked)
                return blocked.status();
            state->variants.push_back(std::move(*blocked));
            // The plain layout skips the reorders around the call; which wins depends on shape and
            // CPU, so with constant weights (a model's convolutions) both are timed once, here.
            if (constant && state->variants[0].srcReorder) {
                try {
                    Expected<ConvVariant> plain =
                        makeVariant(*geo, xUser, wUser, yUser, call, constant, *act);
                    if (plain)
                        state->variants.push_back(std::move(*plain));
                } catch (const dnnl::error &) {
                    // no plain-layout implementation: keep the blocked one
                }
                if (state->variants.size() == 2)
                    state->chosen =
                        timeVariant(ctx, state->variants[1], call) < timeVariant(ctx, state->variants[0], call) ? 1 : 0;
            }
            // Plain-layout depthwise: our direct loop against oneDNN's pick.
            if (constant && !layout->nhwc && !layout->block && depthwiseApplies(*geo, x.shape(), w.shape()) &&
                bestOfThree(direct) < timeVariant(ctx, state->variants[std::size_t(state->chosen)], call))
                state->chosen = ConvState::kDirect;
            for (const ConvVariant &v : state->variants)
                state->reservedBytes = std::max(state->reservedBytes, workspaceParts(v).total());
            ctx.cache().state = state;
        }
        lock.unlock();
        // The run's own bytes: planned in the arena when memory planning saw them (a sizing run
        // records what is asked here) — the same size whichever variant won.
        ConvCall run = call;
        if (state->reservedBytes > 0) {
            run.workspace = ctx.workspace(state->reservedBytes);
            if (!run.workspace)
                return Status::io("out of memory for the workspace of " + ctx.node().name);
        }
        if (state->chosen == ConvState::kDirect) {
            direct();
            return Status::ok();
        }
        runVariant(state->variants[std::size_t(state->chosen)], run);
    } catch (const dnnl::error &e) {
        return ctx.unsupported(std::string("oneDNN cannot run this convolution: ") + e.what());
    }
    return Status::ok();
}

Status convTransposeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0), &w = ctx.in(1);
    const RuntimeTensor *b = ctx.input(2);
    if (x.dtype() != DataType::Float || w.dtype() != DataType::Float)
        return ctx.unsupported("ConvTranspose is implemented for float32");
    const Expected<ConvGeometry> geo = convGeometry(ctx, x.shape(), w.shape(), true);
    if (!geo)
        return geo.status();
    OPSCOPE_TRY(checkConvBias(ctx, b, geo->outShape[1]));
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, geo->outShape);
    if (!out)
        return out.status();
    float *y = (*out)->mutableData<float>();
    std::fill_n(y, (*out)->elementCount(), 0.0f);
    const std::size_t spatial = geo->kernel.size();
    const std::int64_t n = x.dim(0), cin = x.dim(1), g = geo->group, cout = geo->outShape[1];
    const std::int64_t cinG = cin / g, coutG = cout / g;
    const std::int64_t kSize = product(geo->kernel), inSize = product(x.shape(), 2),
                       outSize = product(geo->outShape, 2);
    // The GEMM's columns are the call's workspace (the arena's bytes when memory planning saw the
    // node): a vector per call was fresh memory every run, and first touches of it from two
    // threads took longer than the GEMM (a U-Net's four 2x2 up-convolutions: 9.5 ms at 1 thread,
    // 30 ms at 2, on a VM where a page fault costs ~10 µs).
    float *cols = reinterpret_cast<float *>(
        ctx.workspace(std::uint64_t(coutG) * std::uint64_t(kSize) * std::uint64_t(inSize) * sizeof(float)));
    if (!cols && coutG * kSize * inSize > 0)
        return Status::io("out of memory for the columns of " + ctx.node().name);
    const Shape64 inSp(x.shape().begin() + 2, x.shape().end()),
        outSp(geo->outShape.begin() + 2, geo->outShape.end());
    const Shape64 kStr = stridesOf(geo->kernel), inStr = stridesOf(inSp), outStr = stridesOf(outSp);
    for (std::int64_t ni = 0; ni < n; ++ni)
        for (std::int64_t gi = 0; gi < g; ++gi) {
            // cols[coutG*K, inSize] = W_g^T [coutG*K, cinG] × X_g [cinG, inSize]
            OPSCOPE_TRY(gemmF32(true, false, coutG * kSize, inSize, cinG, 1.0f,
                                w.data<float>() + gi * cinG * coutG * kSize, coutG * kSize,
                                x.data<float>() + (ni * cin + gi * cinG) * inSize, inSize, 0.0f, cols, inSize));
            float *yg = y + (ni * cout + gi * coutG) * outSize;
            if (spatial == 2) {
                // col2im, 2-D: per (channel, tap) the valid input rows/columns are computed once;
                // output channels in parallel (each writes its own plane).
                const std::int64_t IH = inSp[0], IW = inSp[1], OH = outSp[0], OW = outSp[1];
                const std::int64_t KH = geo->kernel[0], KW = geo->kernel[1];
                const std::int64_t sh = geo->strides[0], sw = geo->strides[1];
                parallelFor(
                    coutG,
                    [&](std::int64_t co) {
                        float *yc = yg + co * outSize;
                        for (std::int64_t kh = 0; kh < KH; ++kh)
                            for (std::int64_t kw = 0; kw < KW; ++kw) {
                                const float *c = cols + ((co * KH + kh) * KW + kw) * inSize;
                                const std::int64_t offW = kw * geo->dilations[1] - geo->padBegin[1];
                                // Input columns whose output column iw·sw + offW lies inside the row.
                                const std::int64_t lo = std::max<std::int64_t>(0, (-offW + sw - 1) / sw);
                                const std::int64_t hi = std::min<std::int64_t>(IW, (OW - offW + sw - 1) / sw);
                                for (std::int64_t ih = 0; ih < IH; ++ih) {
                                    const std::int64_t oh = ih * sh - geo->padBegin[0] + kh * geo->dilations[0];
                                    if (oh < 0 || oh >= OH)
                                        continue;
                                    float *__restrict yrow = yc + oh * OW;
                                    const float *__restrict crow = c + ih * IW;
                                    for (std::int64_t iw = lo; iw < hi; ++iw)
                                        yrow[iw * sw + offW] += crow[iw];
                                }
                            }
                    },
                    std::max<std::int64_t>(1, 65536 / std::max<std::int64_t>(1, KH * KW * inSize)));
                continue;
            }
            for (std::int64_t row = 0; row < coutG * kSize; ++row) {
                const std::int64_t co = row / kSize, kk = row % kSize;
                for (std::int64_t p = 0; p < inSize; ++p) {
                    std::int64_t off = 0;
                    bool inside = true;
                    for (std::size_t d = 0; d < spatial && inside; ++d) {
                        const std::int64_t kd = (kk / kStr[d]) % geo->kernel[d];
                        const std::int64_t pd = (p / inStr[d]) % inSp[d];
                        const std::int64_t o =
                            pd * geo->strides[d] - geo->padBegin[d] + kd * geo->dilations[d];
                        inside = o >= 0 && o < outSp[d];
                        off += o * outStr[d];
                    }
                    if (inside)
                        yg[co * outSize + off] += cols[static_cast<std::size_t>(row * inSize + p)];
                }
            }
        }
    if (b)
        for (std::int64_t i = 0; i < n * cout; ++i)
            for (std::int64_t p = 0; p < outSize; ++p)
                y[i * outSize + p] += b->data<float>()[i % cout];
    return Status::ok();
}

} // namespace
} // namespace kernels
} // namespace opscope

namespace opscope {

void registerConvKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("Conv", convKernel);
    r.add("ai.opscope", "FusedConv", 1, convKernel);
    r.add("com.microsoft", "FusedConv", 1, convKernel);
    r.add("ai.opscope", "NhwcConv", 1, convKernel);
    r.add("ai.opscope", "NchwcConv", 1, convKernel);
    r.add("ConvTranspose", convTransposeKernel);
    registerPoolKernels(r);
}

} // namespace opscope
