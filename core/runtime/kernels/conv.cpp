// Conv through oneDNN's convolution primitive: oneDNN picks the memory formats it is fastest in;
// the primitive and the reordered constant weights are cached per node. ConvTranspose is an
// sgemm followed by col2im.

#include "runtime/kernels/convgeometry.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernelutil.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace opscope {
namespace kernels {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine &cpuEngine()
{
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
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

struct ConvState
{
    Shape64 xShape, wShape;
    bool hasBias = false;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::convolution_forward prim;
    memory weights; // in pd.weights_desc() layout, when the weights are constant
    bool weightsCached = false;
};

Status convKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &x = ctx.in(0), &w = ctx.in(1);
    const RuntimeTensor *b = ctx.input(2);
    if (x.dtype() != DataType::Float || w.dtype() != DataType::Float)
        return ctx.unsupported("Conv is implemented for float32 (got " +
                               std::string(dataTypeName(x.dtype())) + ")");
    const Expected<ConvGeometry> geo = convGeometry(ctx, x.shape(), w.shape(), false);
    if (!geo)
        return geo.status();
    const std::size_t spatial = geo->kernel.size();
    if (spatial < 1 || spatial > 3)
        return ctx.unsupported("Conv with " + std::to_string(spatial) + " spatial dimensions");
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, geo->outShape);
    if (!out)
        return out.status();
    if ((*out)->elementCount() == 0)
        return Status::ok();

    try {
        const std::int64_t g = geo->group;
        const bool grouped = g > 1;
        Shape64 wDims = w.shape();
        if (grouped) {
            wDims[0] /= g;
            wDims.insert(wDims.begin(), g);
        }
        const memory::desc xUser(toDims(x.shape()), memory::data_type::f32, plainActivationTag(spatial));
        const memory::desc wUser(toDims(wDims), memory::data_type::f32, plainWeightsTag(spatial, grouped));
        const memory::desc yUser(toDims(geo->outShape), memory::data_type::f32, plainActivationTag(spatial));

        std::shared_ptr<ConvState> state;
        {
            std::lock_guard lock(ctx.cache().mutex);
            state = std::static_pointer_cast<ConvState>(ctx.cache().state);
            if (!state || state->xShape != x.shape() || state->wShape != w.shape() ||
                state->hasBias != (b != nullptr)) {
                state = std::make_shared<ConvState>();
                state->xShape = x.shape();
                state->wShape = w.shape();
                state->hasBias = b != nullptr;
                // Small 1-D convolutions run on the plain layout: per-call reorders into oneDNN's blocked
                // layouts would cost more than the blocked kernels save.
                const bool small = spatial == 1 && (*out)->elementCount() < 16384 && x.elementCount() < 16384;
                const Tag actTag = small ? plainActivationTag(spatial) : Tag::any;
                const memory::desc xAny(toDims(x.shape()), memory::data_type::f32, actTag);
                const memory::desc wAny(toDims(wDims), memory::data_type::f32, Tag::any);
                const memory::desc yAny(toDims(geo->outShape), memory::data_type::f32, actTag);
                memory::dims strides = toDims(geo->strides), dil = toDims(geo->dilations);
                for (auto &d : dil)
                    d -= 1; // oneDNN counts the gap, ONNX the step
                const auto desc =
                    b ? dnnl::convolution_forward::desc(
                            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, xAny,
                            wAny, memory::desc({w.dim(0)}, memory::data_type::f32, Tag::x), yAny, strides,
                            dil, toDims(geo->padBegin), toDims(geo->padEnd))
                      : dnnl::convolution_forward::desc(
                            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, xAny,
                            wAny, yAny, strides, dil, toDims(geo->padBegin), toDims(geo->padEnd));
                state->pd = dnnl::convolution_forward::primitive_desc(desc, cpuEngine());
                state->prim = dnnl::convolution_forward(state->pd);
                ctx.cache().state = state;
            }
            if (ctx.isConstantInput(1) && !state->weightsCached) {
                memory user(wUser, cpuEngine(), const_cast<std::byte *>(w.bytes()));
                state->weights = memory(state->pd.weights_desc(), cpuEngine());
                dnnl::stream s(cpuEngine());
                dnnl::reorder(user, state->weights).execute(s, user, state->weights);
                s.wait();
                state->weightsCached = true;
            }
        }

        dnnl::stream s(cpuEngine());
        memory xMem(xUser, cpuEngine(), const_cast<std::byte *>(x.bytes()));
        if (state->pd.src_desc() != xUser) {
            memory converted(state->pd.src_desc(), cpuEngine());
            dnnl::reorder(xMem, converted).execute(s, xMem, converted);
            xMem = converted;
        }
        memory wMem = state->weightsCached ? state->weights
                                           : memory(wUser, cpuEngine(), const_cast<std::byte *>(w.bytes()));
        if (!state->weightsCached && state->pd.weights_desc() != wUser) {
            memory converted(state->pd.weights_desc(), cpuEngine());
            dnnl::reorder(wMem, converted).execute(s, wMem, converted);
            wMem = converted;
        }
        memory yMem(yUser, cpuEngine(), (*out)->mutableBytes());
        const bool yDirect = state->pd.dst_desc() == yUser;
        memory yConv = yDirect ? yMem : memory(state->pd.dst_desc(), cpuEngine());
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, xMem}, {DNNL_ARG_WEIGHTS, wMem}, {DNNL_ARG_DST, yConv}};
        if (b)
            args.emplace(DNNL_ARG_BIAS,
                         memory(state->pd.bias_desc(), cpuEngine(), const_cast<std::byte *>(b->bytes())));
        state->prim.execute(s, args);
        if (!yDirect)
            dnnl::reorder(yConv, yMem).execute(s, yConv, yMem);
        s.wait();
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
    std::vector<float> cols(std::size_t(coutG * kSize * inSize));
    const Shape64 inSp(x.shape().begin() + 2, x.shape().end()),
        outSp(geo->outShape.begin() + 2, geo->outShape.end());
    const Shape64 kStr = stridesOf(geo->kernel), inStr = stridesOf(inSp), outStr = stridesOf(outSp);
    for (std::int64_t ni = 0; ni < n; ++ni)
        for (std::int64_t gi = 0; gi < g; ++gi) {
            // cols[coutG*K, inSize] = W_g^T [coutG*K, cinG] × X_g [cinG, inSize]
            OPSCOPE_TRY(gemmF32(true, false, coutG * kSize, inSize, cinG, 1.0f,
                                w.data<float>() + gi * cinG * coutG * kSize, coutG * kSize,
                                x.data<float>() + (ni * cin + gi * cinG) * inSize, inSize, 0.0f, cols.data(),
                                inSize));
            float *yg = y + (ni * cout + gi * coutG) * outSize;
            if (spatial == 2) {
                // col2im, 2-D: per (channel, tap) the valid input rows/columns are computed once.
                const std::int64_t IH = inSp[0], IW = inSp[1], OH = outSp[0], OW = outSp[1];
                const std::int64_t KH = geo->kernel[0], KW = geo->kernel[1];
                for (std::int64_t co = 0; co < coutG; ++co)
                    for (std::int64_t kh = 0; kh < KH; ++kh)
                        for (std::int64_t kw = 0; kw < KW; ++kw) {
                            const float *c = cols.data() + ((co * KH + kh) * KW + kw) * inSize;
                            float *yc = yg + co * outSize;
                            const std::int64_t offW = kw * geo->dilations[1] - geo->padBegin[1];
                            for (std::int64_t ih = 0; ih < IH; ++ih) {
                                const std::int64_t oh =
                                    ih * geo->strides[0] - geo->padBegin[0] + kh * geo->dilations[0];
                                if (oh < 0 || oh >= OH)
                                    continue;
                                float *yrow = yc + oh * OW;
                                const float *crow = c + ih * IW;
                                for (std::int64_t iw = 0; iw < IW; ++iw) {
                                    const std::int64_t ow = iw * geo->strides[1] + offW;
                                    if (ow >= 0 && ow < OW)
                                        yrow[ow] += crow[iw];
                                }
                            }
                        }
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
    r.add("ConvTranspose", convTransposeKernel);
    registerPoolKernels(r);
}

} // namespace opscope
