#include "runtime/probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>

namespace opscope {

Tensor toIrTensor(const RuntimeTensor &t, const std::string &name)
{
    Tensor out;
    if (t.dtype() == DataType::String) {
        out.dtype = DataType::String;
        out.dims = t.shape();
        out.strings = std::make_shared<const std::vector<std::string>>(t.strings());
    } else {
        std::vector<std::byte> bytes(t.byteSize());
        if (!bytes.empty())
            std::memcpy(bytes.data(), t.bytes(), bytes.size());
        out = Tensor::fromBytes(t.dtype(), t.shape(), std::move(bytes));
    }
    out.name = name;
    return out;
}

Expected<ProbedValues> probeValues(const Model &model, const std::vector<std::string> &names,
                                   const ProbeOptions &options)
{
    Model probe = model; // structure only: weights are shared
    Graph &g = probe.graph;
    std::vector<ValueId> outputs = g.outputs();
    // Where each asked-for value comes from: a graph output of the probe (index), or a constant.
    std::vector<std::ptrdiff_t> outputIndex(names.size(), -1);
    std::vector<std::optional<Tensor>> constants(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
        const ValueId v = g.findValue(names[i]);
        if (!v.valid())
            return Status::invalid("'" + names[i] + "' is not a value of the model's main graph (values inside " +
                                   "If/Loop/Scan bodies are not probed yet)");
        const Value &value = g.value(v);
        if (value.isConstant()) {
            constants[i] = *value.initializer;
            continue;
        }
        auto at = std::find(outputs.begin(), outputs.end(), v);
        if (at == outputs.end()) {
            outputs.push_back(v);
            at = outputs.end() - 1;
        }
        outputIndex[i] = at - outputs.begin();
    }
    g.setOutputs(outputs);
    SessionOptions so;
    so.threads = options.threads;
    Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(probe, so);
    if (!session)
        return session.status();
    Expected<Feeds> feeds = randomFeeds(**session, options.given, options.random);
    if (!feeds)
        return feeds.status();
    ExecOptions exec;
    exec.threads = options.threads;
    exec.cancel = options.cancel;
    const auto start = std::chrono::steady_clock::now();
    Expected<std::vector<RuntimeTensor>> results = (*session)->run(*feeds, nullptr, &exec);
    if (!results)
        return results.status();
    ProbedValues out;
    out.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    // A graph input asked for is an output of the probe too (executors pass inputs through).
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (constants[i]) {
            Tensor t = *constants[i];
            t.name = names[i];
            out.values.push_back(std::move(t));
        } else {
            out.values.push_back(toIrTensor((*results)[std::size_t(outputIndex[i])], names[i]));
        }
    }
    return out;
}

} // namespace opscope
