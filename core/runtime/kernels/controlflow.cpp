// If, Loop and Scan: their bodies are prepared subgraphs run through the executor; bodies read
// outer-scope values from the enclosing frame.

#include "runtime/kernels/kernelutil.h"
#include "runtime/preparedgraph.h"
#include "runtime/session.h"

namespace opscope {
namespace kernels {
namespace {

// Stacks equally shaped tensors along a new axis 0.
Expected<RuntimeTensor> stack(const std::vector<RuntimeTensor> &parts,
                              const RuntimeTensor *shapeHint = nullptr)
{
    if (parts.empty()) {
        if (!shapeHint)
            return Status::unsupported("an empty scan output has no known element shape");
        Shape64 shape = shapeHint->shape();
        shape.insert(shape.begin(), 0);
        return RuntimeTensor::allocate(shapeHint->dtype(), shape);
    }
    Shape64 shape = parts[0].shape();
    shape.insert(shape.begin(), std::int64_t(parts.size()));
    Expected<RuntimeTensor> out = RuntimeTensor::allocate(parts[0].dtype(), shape);
    if (!out)
        return out;
    const std::size_t each = parts[0].byteSize();
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (parts[i].shape() != parts[0].shape() || parts[i].dtype() != parts[0].dtype())
            return Status::invalid("scan output changes shape between iterations: " + parts[0].shapeText() +
                                   " then " + parts[i].shapeText());
        if (parts[i].dtype() == DataType::String)
            for (std::int64_t k = 0; k < parts[i].elementCount(); ++k)
                out->mutableStrings()[std::size_t(std::int64_t(i) * parts[i].elementCount() + k)] =
                    parts[i].strings()[std::size_t(k)];
        else
            std::memcpy(out->mutableBytes() + i * each, parts[i].bytes(), each);
    }
    return out;
}

Status ifKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &cond = ctx.in(0);
    OPSCOPE_TRY(requireOneValue(cond, "cond", ctx));
    const bool taken = cond.valueAsDouble(0) != 0.0;
    const PreparedGraph *branch = ctx.subgraph(taken ? "then_branch" : "else_branch");
    if (!branch)
        return ctx.fail("missing branch subgraph");
    Expected<std::vector<RuntimeTensor>> outs = ctx.runSubgraph(*branch, {});
    if (!outs)
        return outs.status();
    if (outs->size() != ctx.outputCount())
        return ctx.fail("the branch yields " + std::to_string(outs->size()) + " values for " +
                        std::to_string(ctx.outputCount()) + " outputs");
    for (std::size_t i = 0; i < outs->size(); ++i)
        ctx.setOutput(i, std::move((*outs)[i]));
    return Status::ok();
}

Status loopKernel(KernelContext &ctx)
{
    const PreparedGraph *body = ctx.subgraph("body");
    if (!body)
        return ctx.fail("missing body subgraph");
    const RuntimeTensor *maxTrip = ctx.input(0);
    const RuntimeTensor *condIn = ctx.input(1);
    std::int64_t limit = maxTrip && maxTrip->elementCount() ? maxTrip->valueAsInt(0)
                                                            : std::numeric_limits<std::int64_t>::max();
    bool cond = condIn && condIn->elementCount() ? condIn->valueAsDouble(0) != 0.0 : true;
    const std::size_t carried = ctx.inputCount() >= 2 ? ctx.inputCount() - 2 : 0;
    std::vector<RuntimeTensor> state;
    for (std::size_t i = 0; i < carried; ++i)
        state.push_back(ctx.in(i + 2));
    const std::size_t scanCount = ctx.outputCount() - carried;
    std::vector<std::vector<RuntimeTensor>> scans(scanCount);
    if (!maxTrip && !condIn)
        return ctx.unsupported("a Loop with neither a trip count nor a condition never ends");
    // A Loop whose condition never turns false runs until cancelled (the executor checks between
    // the body's steps); one that also stacks scan outputs would grow until the process is killed,
    // so its stacked bytes are held against the memory the machine has left.
    std::uint64_t scanBytes = 0;
    for (std::int64_t it = 0; it < limit && cond; ++it) {
        if (scanCount > 0 && (it & 255) == 255 && scanBytes > recentAvailableMemoryBytes() / 2)
            return ctx.fail("after " + std::to_string(it) + " iterations its scan outputs hold " +
                            std::to_string(scanBytes >> 20) +
                            " MiB, over half the memory left; does its condition ever turn false?");
        std::vector<RuntimeTensor> in;
        in.push_back(RuntimeTensor::fromValues(DataType::Int64, {}, std::vector<std::int64_t>{it}));
        in.push_back(
            RuntimeTensor::fromValues(DataType::Bool, {}, std::vector<std::uint8_t>{std::uint8_t(cond)}));
        in.insert(in.end(), state.begin(), state.end());
        Expected<std::vector<RuntimeTensor>> out = ctx.runSubgraph(*body, std::move(in));
        if (!out)
            return out.status();
        if (out->size() != 1 + carried + scanCount)
            return ctx.fail("the body yields " + std::to_string(out->size()) + " values, expected " +
                            std::to_string(1 + carried + scanCount));
        if ((*out)[0].elementCount() != 1)
            return ctx.fail("the body's condition output must hold one value, got " + (*out)[0].shapeText());
        cond = (*out)[0].valueAsDouble(0) != 0.0;
        for (std::size_t i = 0; i < carried; ++i)
            state[i] = std::move((*out)[1 + i]);
        for (std::size_t i = 0; i < scanCount; ++i) {
            scanBytes += (*out)[1 + carried + i].byteSize();
            scans[i].push_back(std::move((*out)[1 + carried + i]));
        }
    }
    for (std::size_t i = 0; i < carried; ++i)
        ctx.setOutput(i, std::move(state[i]));
    for (std::size_t i = 0; i < scanCount; ++i) {
        Expected<RuntimeTensor> stacked = stack(scans[i]);
        if (!stacked)
            return ctx.fail(stacked.status().message());
        ctx.setOutput(carried + i, std::move(*stacked));
    }
    return Status::ok();
}

// Moves `axis` of t to the front (a copy), so iterations are contiguous slices.
Expected<RuntimeTensor> axisToFront(const RuntimeTensor &t, std::int64_t axis)
{
    if (axis == 0)
        return t;
    std::vector<std::int64_t> perm{axis};
    for (std::int64_t d = 0; d < std::int64_t(t.rank()); ++d)
        if (d != axis)
            perm.push_back(d);
    return permuted(t, perm);
}

Status scanKernel(KernelContext &ctx)
{
    const PreparedGraph *body = ctx.subgraph("body");
    if (!body)
        return ctx.fail("missing body subgraph");
    if (ctx.opset() < 9)
        return ctx.unsupported("Scan-8 (with sequence_lens) is not supported");
    const auto m = std::size_t(ctx.attrInt("num_scan_inputs", 0));
    if (m > ctx.inputCount())
        return ctx.fail("num_scan_inputs exceeds the inputs");
    const std::size_t n = ctx.inputCount() - m;
    const Shape64 inAxes = ctx.attrInts("scan_input_axes", Shape64(m, 0));
    const Shape64 inDirs = ctx.attrInts("scan_input_directions", Shape64(m, 0));
    const std::size_t k = ctx.outputCount() - n;
    const Shape64 outAxes = ctx.attrInts("scan_output_axes", Shape64(k, 0));
    const Shape64 outDirs = ctx.attrInts("scan_output_directions", Shape64(k, 0));
    std::vector<RuntimeTensor> state, scanIn;
    for (std::size_t i = 0; i < n; ++i)
        state.push_back(ctx.in(i));
    std::int64_t steps = -1;
    for (std::size_t i = 0; i < m; ++i) {
        const RuntimeTensor &t = ctx.in(n + i);
        const Expected<std::int64_t> axis =
            normalizeAxis(inAxes.empty() ? 0 : inAxes[i], std::int64_t(t.rank()), ctx);
        if (!axis)
            return axis.status();
        Expected<RuntimeTensor> front = axisToFront(t, *axis);
        if (!front)
            return front.status();
        if (steps >= 0 && front->dim(0) != steps)
            return ctx.fail("scan inputs differ in length");
        steps = front->dim(0);
        scanIn.push_back(std::move(*front));
    }
    std::vector<std::vector<RuntimeTensor>> scans(k);
    for (std::int64_t s = 0; s < std::max<std::int64_t>(steps, 0); ++s) {
        std::vector<RuntimeTensor> in = state;
        for (std::size_t i = 0; i < m; ++i) {
            const std::int64_t at = (!inDirs.empty() && inDirs[i]) ? steps - 1 - s : s;
            const RuntimeTensor &src = scanIn[i];
            Shape64 sliceShape(src.shape().begin() + 1, src.shape().end());
            Expected<RuntimeTensor> slice = RuntimeTensor::allocate(src.dtype(), sliceShape);
            if (!slice)
                return slice.status();
            std::memcpy(slice->mutableBytes(), src.bytes() + at * std::int64_t(slice->byteSize()),
                        slice->byteSize());
            in.push_back(std::move(*slice));
        }
        Expected<std::vector<RuntimeTensor>> out = ctx.runSubgraph(*body, std::move(in));
        if (!out)
            return out.status();
        if (out->size() != n + k)
            return ctx.fail("the body yields " + std::to_string(out->size()) + " values, expected " +
                            std::to_string(n + k));
        for (std::size_t i = 0; i < n; ++i)
            state[i] = std::move((*out)[i]);
        for (std::size_t i = 0; i < k; ++i)
            scans[i].push_back(std::move((*out)[n + i]));
    }
    for (std::size_t i = 0; i < n; ++i)
        ctx.setOutput(i, std::move(state[i]));
    for (std::size_t i = 0; i < k; ++i) {
        if (!outDirs.empty() && outDirs[i])
            std::reverse(scans[i].begin(), scans[i].end());
        Expected<RuntimeTensor> stacked = stack(scans[i]);
        if (!stacked)
            return ctx.fail(stacked.status().message());
        const std::int64_t axis = outAxes.empty() ? 0 : outAxes[i];
        if (axis != 0) {
            const auto rank = std::int64_t(stacked->rank());
            const std::int64_t a = axis < 0 ? axis + rank : axis;
            // Move axis 0 to position a.
            std::vector<std::int64_t> perm;
            for (std::int64_t d = 1; d <= a; ++d)
                perm.push_back(d);
            perm.push_back(0);
            for (std::int64_t d = a + 1; d < rank; ++d)
                perm.push_back(d);
            Expected<RuntimeTensor> moved = permuted(*stacked, perm);
            if (!moved)
                return moved.status();
            stacked = std::move(moved);
        }
        ctx.setOutput(n + i, std::move(*stacked));
    }
    return Status::ok();
}

} // namespace
} // namespace kernels

void registerControlFlowKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("If", ifKernel);
    r.add("Loop", loopKernel);
    r.add("Scan", scanKernel);
}

} // namespace opscope
