#include "runtime/microbatches.h"
#include "runtime/randominputs.h"

#include <algorithm>
#include <cstring>

namespace opscope {

Expected<RuntimeTensor> concatDim0(const std::vector<RuntimeTensor> &parts)
{
    if (parts.size() == 1)
        return parts[0];
    std::vector<std::int64_t> shape = parts[0].shape();
    if (shape.empty())
        return Status::internal("a scalar output cannot be joined from micro-batches");
    shape[0] = 0;
    for (const RuntimeTensor &p : parts) {
        if (p.dtype() != parts[0].dtype() || p.shape().size() != shape.size() ||
            !std::equal(p.shape().begin() + 1, p.shape().end(), parts[0].shape().begin() + 1))
            return Status::internal("micro-batch outputs " + parts[0].shapeText() + " and " + p.shapeText() +
                                    " do not join along dim 0");
        shape[0] += p.shape()[0];
    }
    Expected<RuntimeTensor> out = RuntimeTensor::allocate(parts[0].dtype(), shape);
    if (!out)
        return out;
    std::size_t at = 0;
    for (const RuntimeTensor &p : parts) {
        if (p.byteSize())
            std::memcpy(out->mutableBytes() + at, p.bytes(), p.byteSize());
        at += p.byteSize();
    }
    return out;
}

Expected<std::vector<RuntimeTensor>> joinMicrobatches(const std::vector<std::vector<RuntimeTensor>> &perBatch)
{
    std::vector<RuntimeTensor> joined;
    const std::size_t outputs = perBatch.empty() ? 0 : perBatch.front().size();
    for (std::size_t i = 0; i < outputs; ++i) {
        std::vector<RuntimeTensor> parts;
        for (const std::vector<RuntimeTensor> &batch : perBatch) {
            if (i >= batch.size() || !batch[i].isValid())
                return Status::internal("no run computed output " + std::to_string(i));
            parts.push_back(batch[i]);
        }
        Expected<RuntimeTensor> whole = concatDim0(parts);
        if (!whole)
            return Status::invalid("output " + std::to_string(i) + ": " + whole.status().message() + kMixesSamples);
        joined.push_back(std::move(*whole));
    }
    return joined;
}

Status microbatchRunFailed(const Status &failure, int microbatches)
{
    // Only what a kernel says of its inputs: a cancel, an I/O or transfer failure is not the batch's.
    if ((failure.kind() != ErrorKind::InvalidInput && failure.kind() != ErrorKind::Unsupported) ||
        failure.message() == "cancelled")
        return failure;
    return Status::invalid(failure.message() + " (the whole batch ran, but not a micro-batch of 1/" +
                           std::to_string(microbatches) +
                           " of it: the model fixes its batch size inside the graph, e.g. a Reshape to a "
                           "constant shape; re-export it with a symbolic batch or profile it without "
                           "--microbatches)");
}

Expected<std::vector<Feeds>> splitFeeds(const Feeds &feeds, int m, const InferenceSession &session)
{
    if (feeds.empty() || feeds[0].second.shape().empty())
        return Status::invalid("--microbatches splits the inputs along dim 0 (the batch), but the first input "
                               "has none");
    const std::int64_t batch = feeds[0].second.shape()[0];
    const auto declaredDim0 = [&](const std::string &name) -> const Dim * {
        for (const IoInfo &in : session.inputs())
            if (in.name == name && in.type.shape && !in.type.shape->dims.empty())
                return &in.type.shape->dims[0];
        return nullptr;
    };
    // The batch is the first input's dim 0; an input is split when its dim 0 is that same
    // dimension: the same symbol where the model names it, not merely the same size (a second
    // input [K, …] with K = N is not a batch), and the size only where the model declares nothing.
    const Dim *batchDim = declaredDim0(feeds[0].first);
    if (batchDim && batchDim->isKnown() && m > 1)
        return Status::invalid("--microbatches splits dim 0 of input '" + feeds[0].first +
                               "', which the model fixes at " + std::to_string(batch) +
                               ": export it with a symbolic batch dimension");
    const std::string symbol = batchDim ? batchDim->symbol : std::string();
    if (batch % m != 0) {
        const std::string example = std::to_string(m * std::max<std::int64_t>(1, batch / m + 1));
        // The batch's name where the model gives one; an unnamed one is "?" to --dim.
        const std::string name = !symbol.empty() ? symbol : batchDim ? std::string(kUnnamedDim) : std::string();
        return Status::invalid("--microbatches " + std::to_string(m) + " does not divide the batch of " +
                               std::to_string(batch) +
                               (name.empty() ? " (feed a larger batch with --input " + feeds[0].first + "=FILE.npy)"
                                             : " (set it with --dim, e.g. --dim " + name + "=" + example +
                                                   (symbol.empty() ? ", or feed it with --input " + feeds[0].first +
                                                                         "=FILE.npy)"
                                                                   : ")")));
    }
    const auto isBatch = [&](const std::string &name, const RuntimeTensor &t) {
        if (t.shape().empty() || t.shape()[0] != batch)
            return false;
        const Dim *d = declaredDim0(name);
        if (!d || (d->symbol.empty() && !d->isKnown()))
            return true; // nothing declared: the size is all there is to go by
        return !symbol.empty() && d->symbol == symbol;
    };
    std::vector<Feeds> out(static_cast<std::size_t>(m));
    for (const auto &[name, t] : feeds) {
        const bool split = isBatch(name, t);
        for (int k = 0; k < m; ++k) {
            if (!split) {
                out[std::size_t(k)].emplace_back(name, t);
                continue;
            }
            std::vector<std::int64_t> shape = t.shape();
            shape[0] = batch / m;
            Expected<RuntimeTensor> part = RuntimeTensor::allocate(t.dtype(), shape);
            if (!part)
                return part.status();
            const std::size_t bytes = part->byteSize();
            if (bytes)
                std::memcpy(part->mutableBytes(), t.bytes() + std::size_t(k) * bytes, bytes);
            out[std::size_t(k)].emplace_back(name, std::move(*part));
        }
    }
    return out;
}

} // namespace opscope
