// QLinearConv through oneDNN's int8 convolution primitive: u8/s8 activations; weights centred on
// their zero point into s8 once (s8 weights with zero point 0, or u8 around 128 — what quantizers
// emit), per-tensor or per-output-channel scales.
// The input zero point is an attribute oneDNN compensates for; requantization (scale, bias,
// output zero point, saturation, round-to-nearest-even) happens in the primitive's epilogue, so
// the int32 accumulators never reach memory. Other cases stay on the im2col path (quant.cpp).

#include "runtime/kernels/convgeometry.h"
#include "runtime/kernels/dnnlengine.h"
#include "runtime/kernels/kernelutil.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>

namespace opscope::kernels {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine &engine()
{
    return dnnlEngine();
}

memory::data_type dnnlType(DataType t)
{
    return t == DataType::UInt8 ? memory::data_type::u8 : memory::data_type::s8;
}

struct QConvState
{
    Shape64 xShape;
    bool usable = false; // false: oneDNN has only its reference kernel (or none) for this case
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward prim;
    memory weights;
    std::optional<dnnl::reorder> srcReorder, dstReorder;
    memory::desc xUser, yUser;
};

} // namespace

// true: done; false: not a case oneDNN takes (the caller falls back).
Expected<bool> dnnlQLinearConv(KernelContext &ctx)
{
    const RuntimeTensor &x = ctx.in(0), &xs = ctx.in(1), &x0 = ctx.in(2), &w = ctx.in(3), &ws = ctx.in(4),
                        &w0 = ctx.in(5), &ys = ctx.in(6);
    const RuntimeTensor *y0 = ctx.input(7), *bias = ctx.input(8);
    const DataType outType = y0 ? y0->dtype() : DataType::UInt8;
    if ((x.dtype() != DataType::UInt8 && x.dtype() != DataType::Int8) ||
        (w.dtype() != DataType::Int8 && w.dtype() != DataType::UInt8) || x.rank() != 4 || w.rank() != 4 ||
        x0.elementCount() != 1 || (y0 && y0->elementCount() != 1) ||
        (outType != DataType::UInt8 && outType != DataType::Int8) || !ctx.isConstantInput(3) ||
        (bias && bias->dtype() != DataType::Int32))
        return false;
    const Expected<ConvGeometry> geo = convGeometry(ctx, x.shape(), w.shape(), false);
    if (!geo)
        return geo.status();
    const std::int64_t m = w.dim(0), g = geo->group;
    if ((ws.elementCount() != 1 && ws.elementCount() != m) ||
        (w0.elementCount() != 1 && w0.elementCount() != m))
        return false;
    if (product(geo->outShape) == 0)
        return false;
    try {
        std::shared_ptr<QConvState> state;
        {
            std::lock_guard lock(ctx.cache().mutex);
            state = std::static_pointer_cast<QConvState>(ctx.cache().state);
            if (!state || state->xShape != x.shape()) {
                state = std::make_shared<QConvState>();
                state->xShape = x.shape();
                Shape64 wDims = w.shape();
                if (g > 1) {
                    wDims[0] /= g;
                    wDims.insert(wDims.begin(), g);
                }
                const memory::dims xd(x.shape().begin(), x.shape().end()),
                    yd(geo->outShape.begin(), geo->outShape.end()), wd(wDims.begin(), wDims.end());
                state->xUser = memory::desc(xd, dnnlType(x.dtype()), Tag::nchw);
                state->yUser = memory::desc(yd, dnnlType(outType), Tag::nchw);
                const memory::desc wUser(wd, memory::data_type::s8, g > 1 ? Tag::goihw : Tag::oihw);
                const memory::desc xAny(xd, dnnlType(x.dtype()), Tag::any),
                    yAny(yd, dnnlType(outType), Tag::any), wAny(wd, memory::data_type::s8, Tag::any);
                memory::dims strides(geo->strides.begin(), geo->strides.end()),
                    dil(geo->dilations.begin(), geo->dilations.end());
                for (auto &d : dil)
                    d -= 1;
                const memory::dims padL(geo->padBegin.begin(), geo->padBegin.end()),
                    padR(geo->padEnd.begin(), geo->padEnd.end());
                const auto desc =
                    bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                           dnnl::algorithm::convolution_direct, xAny, wAny,
                                                           memory::desc({m}, memory::data_type::s32, Tag::x),
                                                           yAny, strides, dil, padL, padR)
                         : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                           dnnl::algorithm::convolution_direct, xAny, wAny,
                                                           yAny, strides, dil, padL, padR);
                // y = sat(round((acc + bias) · xs·ws[c]/ys) + y0), acc over (x − x0)·w.
                std::vector<float> scales(std::size_t(ws.elementCount()));
                for (std::size_t c = 0; c < scales.size(); ++c)
                    scales[c] =
                        float(xs.valueAsDouble(0) * ws.valueAsDouble(std::int64_t(c)) / ys.valueAsDouble(0));
                dnnl::primitive_attr attr;
                attr.set_output_scales(scales.size() > 1 ? 1 << 1 : 0, scales);
                attr.set_zero_points(DNNL_ARG_SRC, 0, {std::int32_t(x0.valueAsInt(0))});
                if (y0)
                    attr.set_zero_points(DNNL_ARG_DST, 0, {std::int32_t(y0->valueAsInt(0))});
                ctx.cache().state = state; // as unusable until the primitive exists
                state->pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine());
                // oneDNN's reference kernels also take this; only a real (JIT) one is worth it.
                if (std::string(state->pd.impl_info_str()).find("ref") != std::string::npos)
                    return false;
                state->prim = dnnl::convolution_forward(state->pd);
                if (state->pd.src_desc() != state->xUser)
                    state->srcReorder = dnnl::reorder(dnnl::reorder::primitive_desc(
                        engine(), state->xUser, engine(), state->pd.src_desc()));
                if (state->pd.dst_desc() != state->yUser)
                    state->dstReorder = dnnl::reorder(dnnl::reorder::primitive_desc(
                        engine(), state->pd.dst_desc(), engine(), state->yUser));
                // Weights as s8 with a zero point of 0: w − w0 (u8 weights quantized around 128
                // fit; any other range stays on the im2col path).
                std::vector<std::int8_t> centered(static_cast<std::size_t>(w.elementCount()));
                const std::int64_t perChannel = w.elementCount() / m;
                for (std::int64_t i = 0; i < w.elementCount(); ++i) {
                    const std::int64_t v =
                        w.valueAsInt(i) - w0.valueAsInt(w0.elementCount() == 1 ? 0 : i / perChannel);
                    if (v < -128 || v > 127)
                        return false;
                    centered[std::size_t(i)] = static_cast<std::int8_t>(v);
                }
                memory user(wUser, engine(), centered.data());
                state->weights = memory(state->pd.weights_desc(), engine());
                dnnl::stream s(engine());
                dnnl::reorder(user, state->weights).execute(s, user, state->weights);
                s.wait();
                state->usable = true;
            }
        }
        if (!state->usable)
            return false;
        Expected<RuntimeTensor *> out = ctx.allocateOutput(0, outType, geo->outShape);
        if (!out)
            return out.status();
        dnnl::stream &s = dnnlStream();
        memory xm(state->xUser, engine(), const_cast<std::byte *>(x.bytes()));
        if (state->srcReorder) {
            memory converted = dnnlScratchMemory(state->pd.src_desc(), 0);
            state->srcReorder->execute(s, xm, converted);
            xm = converted;
        }
        memory ym(state->yUser, engine(), (*out)->mutableBytes());
        memory yc = state->dstReorder ? dnnlScratchMemory(state->pd.dst_desc(), 2) : ym;
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, state->weights}, {DNNL_ARG_DST, yc}};
        if (bias)
            args.emplace(DNNL_ARG_BIAS,
                         memory(state->pd.bias_desc(), engine(), const_cast<std::byte *>(bias->bytes())));
        state->prim.execute(s, args);
        if (state->dstReorder)
            state->dstReorder->execute(s, yc, ym);
        s.wait();
    } catch (const dnnl::error &) {
        return false; // no implementation for this case: the im2col path takes it
    }
    return true;
}

} // namespace opscope::kernels
