#include "runtime/probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
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

namespace {

// The body (at any depth) that defines a value named `name`: computes it or holds it as a
// constant, not one that only reads it from outside.
const Graph *bodyDefining(const Graph &g, const std::string &name)
{
    for (NodeId id : g.nodeIds())
        for (const Attribute &a : g.node(id).attributes) {
            std::vector<const Graph *> bodies;
            if (a.g)
                bodies.push_back(a.g.get());
            for (const auto &b : a.graphs)
                bodies.push_back(b.get());
            for (const Graph *body : bodies) {
                const ValueId v = body->findValue(name);
                if (v.valid() && !body->value(v).outerScope)
                    return body;
                if (const Graph *deeper = bodyDefining(*body, name))
                    return deeper;
            }
        }
    return nullptr;
}

} // namespace

Expected<ProbedValues> probeValues(const Model &model, const std::vector<std::string> &names,
                                   const ProbeOptions &options)
{
    Model probe = model; // structure only: weights are shared
    Graph &g = probe.graph;
    std::vector<ValueId> outputs = g.outputs();
    // Where each asked-for value comes from: a graph output of the probe (index), a constant, or
    // a body, whose values the run reports as it computes them (the last iteration's stays).
    std::vector<std::ptrdiff_t> outputIndex(names.size(), -1);
    std::vector<std::optional<Tensor>> constants(names.size());
    std::map<std::string, std::size_t> inBodies;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const ValueId v = g.findValue(names[i]);
        if (!v.valid()) {
            const Graph *body = bodyDefining(g, names[i]);
            if (!body)
                return Status::invalid("'" + names[i] + "' is not a value of the model");
            const Value &value = body->value(body->findValue(names[i]));
            if (value.isConstant())
                constants[i] = *value.initializer;
            else
                inBodies.emplace(names[i], i);
            continue;
        }
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
    std::mutex seenMutex;
    std::vector<std::optional<Tensor>> seen(names.size());
    if (!inBodies.empty())
        exec.onValue = [&](const Graph &graph, ValueId v, const RuntimeTensor &t) {
            if (&graph == (*session)->prepared().graph || !t.isValid())
                return; // the main graph's values come back as outputs
            const auto it = inBodies.find(graph.value(v).name);
            if (it == inBodies.end())
                return;
            Tensor copy = toIrTensor(t, it->first);
            const std::lock_guard lock(seenMutex);
            seen[it->second] = std::move(copy);
        };
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
        } else if (inBodies.count(names[i])) {
            if (!seen[i])
                return Status::invalid("'" + names[i] + "' was not computed in this run: the body that computes it " +
                                       "did not run (an If took its other branch, or a Loop ran no iteration)");
            out.values.push_back(std::move(*seen[i]));
        } else {
            out.values.push_back(toIrTensor((*results)[std::size_t(outputIndex[i])], names[i]));
        }
    }
    return out;
}

} // namespace opscope
