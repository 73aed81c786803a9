#include "runtime/kernels/convgeometry.h"

namespace opscope::kernels {
namespace {

constexpr std::int64_t kMaxWindow = std::int64_t(1) << 48;

Status fillCommon(const KernelContext &ctx, const Shape64 &x, ConvGeometry &g)
{
    const std::size_t sp = g.kernel.size();
    if (x.size() != sp + 2)
        return ctx.fail("input " + shapeText(x) + " must have " + std::to_string(sp + 2) + " dimensions");
    // An unknown auto_pad was taken as NOTSET (libonnx's inference takes it as SAME): refused.
    if (const std::string pad = ctx.attrString("auto_pad", "NOTSET");
        pad != "NOTSET" && pad != "VALID" && pad != "SAME_UPPER" && pad != "SAME_LOWER")
        return ctx.fail("auto_pad '" + pad + "' is none of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
    g.strides = ctx.attrInts("strides", Shape64(sp, 1));
    g.dilations = ctx.attrInts("dilations", Shape64(sp, 1));
    if (g.strides.empty())
        g.strides.assign(sp, 1);
    if (g.dilations.empty())
        g.dilations.assign(sp, 1);
    Shape64 pads = ctx.attrInts("pads", Shape64(2 * sp, 0));
    if (pads.empty())
        pads.assign(2 * sp, 0);
    if (g.strides.size() != sp || g.dilations.size() != sp || pads.size() != 2 * sp)
        return ctx.fail("strides, dilations or pads do not match the " + std::to_string(sp) +
                        " spatial dimensions");
    for (std::size_t d = 0; d < sp; ++d) {
        // An empty tensor's other dims may be anything up to 2^62 (its element count is 0).
        if (x[d + 2] < 0 || x[d + 2] >= kMaxWindow)
            return ctx.fail("input " + shapeText(x) + " has a spatial dim past 2^48");
        if (g.strides[d] <= 0 || g.dilations[d] <= 0 || g.kernel[d] <= 0 || pads[d] < 0 || pads[d + sp] < 0)
            return ctx.fail("kernel, strides and dilations must be positive and pads non-negative");
        // Every sum below (window extent, input plus both pads, SAME's total padding) stays far
        // from overflow: no attribute, window or spatial dim reaches 2^48.
        std::int64_t extent = 0;
        if (__builtin_mul_overflow(g.kernel[d] - 1, g.dilations[d], &extent) || extent >= kMaxWindow ||
            g.strides[d] >= kMaxWindow || pads[d] >= kMaxWindow || pads[d + sp] >= kMaxWindow)
            return ctx.fail("kernel_shape " + shapeText(g.kernel) + ", dilations " + shapeText(g.dilations) +
                            ", strides " + shapeText(g.strides) + " or pads " + shapeText(pads) +
                            " reach past 2^48: no tensor is that large");
        g.padBegin.push_back(pads[d]);
        g.padEnd.push_back(pads[d + sp]);
    }
    return Status::ok();
}

// auto_pad SAME_*/VALID for a forward window (conv and pooling).
void applyAutoPad(const std::string &autoPad, const Shape64 &x, ConvGeometry &g)
{
    if (autoPad == "VALID") {
        std::fill(g.padBegin.begin(), g.padBegin.end(), 0);
        std::fill(g.padEnd.begin(), g.padEnd.end(), 0);
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        for (std::size_t d = 0; d < g.kernel.size(); ++d) {
            const std::int64_t in = x[d + 2];
            const std::int64_t out = (in + g.strides[d] - 1) / g.strides[d];
            const std::int64_t extent = (g.kernel[d] - 1) * g.dilations[d] + 1;
            const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * g.strides[d] + extent - in);
            const std::int64_t small = total / 2;
            g.padBegin[d] = autoPad == "SAME_UPPER" ? small : total - small;
            g.padEnd[d] = total - g.padBegin[d];
        }
    }
}

Status windowOutput(const KernelContext &ctx, const Shape64 &x, ConvGeometry &g, bool ceilMode)
{
    for (std::size_t d = 0; d < g.kernel.size(); ++d) {
        const std::int64_t extent = (g.kernel[d] - 1) * g.dilations[d] + 1;
        const std::int64_t span = x[d + 2] + g.padBegin[d] + g.padEnd[d] - extent;
        if (span < 0)
            return ctx.fail("the window (" + std::to_string(extent) + ") is larger than the padded input (" +
                            std::to_string(x[d + 2] + g.padBegin[d] + g.padEnd[d]) + ")");
        std::int64_t out = (ceilMode ? (span + g.strides[d] - 1) / g.strides[d] : span / g.strides[d]) + 1;
        if (ceilMode && (out - 1) * g.strides[d] >= x[d + 2] + g.padBegin[d])
            --out; // the last window must start inside the input or its leading padding
        g.outShape.push_back(out);
    }
    return Status::ok();
}

} // namespace

Status checkConvBias(const KernelContext &ctx, const RuntimeTensor *bias, std::int64_t outChannels)
{
    if (bias && (bias->rank() != 1 || bias->dim(0) != outChannels))
        return ctx.fail("bias B has shape " + bias->shapeText() + "; it needs one value per output channel [" +
                        std::to_string(outChannels) + "]");
    return Status::ok();
}

Expected<ConvGeometry> convGeometry(const KernelContext &ctx, const Shape64 &x, const Shape64 &w,
                                    bool transposed)
{
    ConvGeometry g;
    if (w.size() < 3 || x.size() != w.size())
        return ctx.fail("input " + shapeText(x) + " and weights " + shapeText(w) +
                        " must have the same rank ≥ 3");
    g.kernel = ctx.attrInts("kernel_shape", Shape64(w.begin() + 2, w.end()));
    if (g.kernel.empty())
        g.kernel.assign(w.begin() + 2, w.end());
    if (g.kernel != Shape64(w.begin() + 2, w.end()))
        return ctx.fail("kernel_shape " + shapeText(g.kernel) + " does not match the weights " + shapeText(w));
    OPSCOPE_TRY(fillCommon(ctx, x, g));
    g.group = ctx.attrInt("group", 1);
    if (g.group <= 0 || x[1] % g.group != 0)
        return ctx.fail("group " + std::to_string(g.group) + " does not divide the " + std::to_string(x[1]) +
                        " channels");
    const std::string autoPad = ctx.attrString("auto_pad", "NOTSET");
    if (!transposed) {
        if (w[1] * g.group != x[1] || w[0] % g.group != 0)
            return ctx.fail("weights " + shapeText(w) + " do not match " + std::to_string(x[1]) +
                            " input channels in " + std::to_string(g.group) + " groups");
        applyAutoPad(autoPad, x, g);
        g.outShape = {x[0], w[0]};
        OPSCOPE_TRY(windowOutput(ctx, x, g, false));
        return g;
    }
    if (w[0] != x[1])
        return ctx.fail("weights " + shapeText(w) + " do not match " + std::to_string(x[1]) +
                        " input channels");
    const std::size_t sp = g.kernel.size();
    Shape64 outPad = ctx.attrInts("output_padding", Shape64(sp, 0));
    if (outPad.empty())
        outPad.assign(sp, 0);
    if (outPad.size() != sp)
        return ctx.fail("output_padding " + shapeText(outPad) + " needs one value per spatial axis");
    for (std::size_t d = 0; d < sp; ++d)
        // As ONNX Runtime and PyTorch: past the stride (or dilation) the extra rows are no longer
        // part of any window's reach, a sign of a wrong model rather than an intent.
        if (outPad[d] < 0 || outPad[d] >= std::max(g.strides[d], g.dilations[d]))
            return ctx.fail("output_padding " + shapeText(outPad) + " must be ≥ 0 and smaller than the stride " +
                            shapeText(g.strides) + " or the dilation in each axis");
    const Shape64 outputShape = ctx.attrInts("output_shape");
    if (!outputShape.empty() && outputShape.size() < sp)
        return ctx.fail("output_shape " + shapeText(outputShape) + " needs a value per spatial axis");
    g.outShape = {x[0], w[1] * g.group};
    for (std::size_t d = 0; d < sp; ++d) {
        const std::int64_t extent = (g.kernel[d] - 1) * g.dilations[d] + 1;
        std::int64_t stretched = 0; // strides × (input - 1): an empty tensor's dim may be 2^40
        if (x[d + 2] < 0 || __builtin_mul_overflow(g.strides[d], x[d + 2], &stretched) || stretched >= kMaxWindow)
            return ctx.fail("strides " + shapeText(g.strides) + " over input " + shapeText(x) +
                            " give an output past 2^48");
        const std::int64_t full = g.strides[d] * (x[d + 2] - 1) + outPad[d] + extent;
        std::int64_t out;
        if (!outputShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            out = !outputShape.empty() ? outputShape[outputShape.size() - sp + d] : x[d + 2] * g.strides[d];
            if (out <= 0 || out >= kMaxWindow)
                return ctx.fail("output_shape " + shapeText(outputShape) + " must be positive and below 2^48");
            const std::int64_t total = std::max<std::int64_t>(0, full - out);
            // ONNX: SAME_UPPER puts the odd unit at the end; SAME_LOWER and an explicit
            // output_shape (auto_pad NOTSET) at the start, as ONNX Runtime does.
            const bool upper = autoPad == "SAME_UPPER";
            g.padBegin[d] = upper ? total / 2 : total - total / 2;
            g.padEnd[d] = total - g.padBegin[d];
        } else {
            if (autoPad == "VALID")
                g.padBegin[d] = g.padEnd[d] = 0;
            out = full - g.padBegin[d] - g.padEnd[d];
        }
        if (out <= 0)
            return ctx.fail("the output would be empty");
        g.outShape.push_back(out);
    }
    return g;
}

Expected<ConvGeometry> poolGeometry(const KernelContext &ctx, const Shape64 &x)
{
    ConvGeometry g;
    g.kernel = ctx.attrInts("kernel_shape");
    if (g.kernel.empty())
        return ctx.fail("kernel_shape is required");
    OPSCOPE_TRY(fillCommon(ctx, x, g));
    applyAutoPad(ctx.attrString("auto_pad", "NOTSET"), x, g);
    g.outShape = {x[0], x[1]};
    OPSCOPE_TRY(windowOutput(ctx, x, g, ctx.attrInt("ceil_mode", 0) != 0));
    return g;
}

} // namespace opscope::kernels
