#include "runtime/session.h"

#include "util/systemmemory.h"

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

namespace opscope {

std::uint64_t availableMemoryBytes()
{
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    std::uint64_t bytes = 0;
    while (in >> key >> kib >> unit)
        if (key == "MemAvailable:") {
            bytes = kib * 1024;
            break;
        }
    // A container's or a batch job's limit may be far below what the machine has free.
    const std::uint64_t cgroup = cgroupAvailableBytes();
    return cgroup && (bytes == 0 || cgroup < bytes) ? cgroup : bytes;
}

std::uint64_t recentAvailableMemoryBytes()
{
    static std::mutex mutex;
    static std::chrono::steady_clock::time_point readAt;
    static std::uint64_t bytes = 0;
    const std::lock_guard lock(mutex);
    const auto now = std::chrono::steady_clock::now();
    if (bytes == 0 || now - readAt > std::chrono::milliseconds(200)) {
        bytes = availableMemoryBytes();
        readAt = now;
    }
    return bytes;
}

Expected<std::unique_ptr<InferenceSession>> InferenceSession::create(const Model &model,
                                                                     const SessionOptions &options)
{
    std::unique_ptr<InferenceSession> s(new InferenceSession);
    s->m_model = model;
    s->m_options = options;
    std::map<std::string, int> opsets;
    for (const OpsetImport &o : model.opsets)
        opsets[o.domain == "ai.onnx" ? std::string() : o.domain] = static_cast<int>(o.version);
    std::set<UnsupportedOp> unsupported;
    s->m_backend = std::make_unique<CpuBackend>(0, options.threads);
    s->m_prepared = prepareGraph(s->m_model.graph, opsets, *s->m_backend, unsupported);
    if (!unsupported.empty())
        return Status::unsupported("the CPU runtime does not implement " + describeUnsupported(unsupported));
    if (s->m_prepared->plan.queues.empty())
        return Status::invalid("graph '" + model.graph.name() + "' cannot be ordered (cycle)");

    const Graph &g = s->m_model.graph;
    for (ValueId v : g.inputs())
        s->m_inputs.push_back({g.value(v).name, g.value(v).type, g.value(v).initializer.has_value()});
    for (ValueId v : g.outputs())
        s->m_outputs.push_back({g.value(v).name, g.value(v).type, false});
    return s;
}

Status InferenceSession::checkFeeds(const Feeds &feeds) const
{
    std::map<std::string, std::int64_t> symbols;
    std::map<std::string, const RuntimeTensor *> byName;
    for (const auto &feed : feeds) {
        const std::string &name = feed.first; // not a binding: clang 14 lambdas cannot capture those
        const RuntimeTensor &tensor = feed.second;
        const auto it =
            std::find_if(m_inputs.begin(), m_inputs.end(), [&](const IoInfo &i) { return i.name == name; });
        if (it == m_inputs.end()) {
            std::string known;
            for (const IoInfo &i : m_inputs)
                known += (known.empty() ? "" : ", ") + i.name;
            return Status::invalid("the model has no input '" + name + "' (its inputs: " + known + ")");
        }
        if (byName.count(name))
            return Status::invalid("input '" + name + "' is given twice");
        byName[name] = &tensor;
        const TypeInfo &type = it->type;
        if (type.kind != TypeInfo::Kind::Tensor)
            return Status::unsupported("input '" + name + "' is a " + type.toString() +
                                       ", which opscope cannot feed");
        if (type.elemType != tensor.dtype())
            return Status::invalid("input '" + name + "' must be " +
                                   std::string(dataTypeName(type.elemType)) + ", got " +
                                   std::string(dataTypeName(tensor.dtype())));
        if (!type.shape)
            continue;
        if (type.shape->rank() != tensor.rank())
            return Status::invalid("input '" + name + "' must have rank " +
                                   std::to_string(type.shape->rank()) + " " + type.shape->toString() +
                                   ", got " + tensor.shapeText());
        for (std::size_t d = 0; d < tensor.rank(); ++d) {
            const Dim &dim = type.shape->dims[d];
            if (dim.isKnown() && dim.value != tensor.dim(d))
                return Status::invalid("input '" + name + "' dimension " + std::to_string(d) + " must be " +
                                       std::to_string(dim.value) + " (model shape " + type.shape->toString() +
                                       "), got " + tensor.shapeText());
            if (dim.isSymbolic()) {
                const auto [pos, inserted] = symbols.emplace(dim.symbol, tensor.dim(d));
                if (!inserted && pos->second != tensor.dim(d))
                    return Status::invalid("dimension '" + dim.symbol + "' is " +
                                           std::to_string(pos->second) + " in one input and " +
                                           std::to_string(tensor.dim(d)) + " in input '" + name + "'");
            }
        }
    }
    for (const IoInfo &i : m_inputs)
        if (!i.hasDefault && !byName.count(i.name))
            return Status::invalid("input '" + i.name + "' (" + i.type.toString() + ") is missing");
    return Status::ok();
}

namespace {

// A value's bytes from its inferred type, the inputs' symbolic dims bound to the feeds' sizes;
// nullopt where the shape is not known (data-dependent) or the type has no fixed size.
class StaticBytes
{
public:
    StaticBytes(const Graph &g, const Feeds &feeds) : m_g(g)
    {
        for (const auto &[name, tensor] : feeds) {
            const ValueId v = g.findValue(name);
            if (!v.valid())
                continue;
            const TypeInfo &t = g.value(v).type;
            if (t.shape && t.shape->rank() == tensor.rank())
                for (std::size_t d = 0; d < tensor.rank(); ++d)
                    if (t.shape->dims[d].isSymbolic())
                        m_symbols[t.shape->dims[d].symbol] = tensor.dim(d);
        }
    }
    std::optional<std::uint64_t> operator()(ValueId v) const
    {
        const TypeInfo &t = m_g.value(v).type;
        if (t.kind != TypeInfo::Kind::Tensor || !t.shape || dataTypeSize(t.elemType) == 0)
            return std::nullopt;
        std::uint64_t n = dataTypeSize(t.elemType);
        for (const Dim &d : t.shape->dims) {
            std::int64_t size = d.value;
            if (!d.isKnown()) {
                const auto it = m_symbols.find(d.symbol);
                if (!d.isSymbolic() || it == m_symbols.end())
                    return std::nullopt;
                size = it->second;
            }
            if (size > 0 && n > (std::uint64_t(1) << 62) / static_cast<std::uint64_t>(size))
                return std::uint64_t(1) << 62;
            n *= static_cast<std::uint64_t>(std::max<std::int64_t>(size, 0));
        }
        return n;
    }

private:
    const Graph &m_g;
    std::map<std::string, std::int64_t> m_symbols;
};

} // namespace

Expected<MemoryPlan> InferenceSession::memoryPlanFromShapes(const Feeds &feeds, const ExecutionPlan *plan,
                                                             std::size_t *unsized) const
{
    OPSCOPE_TRY(checkFeeds(feeds));
    const Graph &g = m_model.graph;
    const StaticBytes bytesOf(g, feeds);
    SizeRecord record(g.valueSlots());
    record.workspaceBytes.assign(g.nodeSlots(), 0);
    std::size_t unknown = 0;
    for (NodeId id : g.nodeIds()) {
        const Node &n = g.node(id);
        // The CPU runtime's views (shapeops.cpp), and Send, which hands its input on: their output
        // shares their input's bytes.
        const bool view = !n.inputs.empty() && n.inputs[0].valid() &&
                          ((n.domain.empty() && (n.opType == "Reshape" || n.opType == "Flatten" ||
                                                 n.opType == "Squeeze" || n.opType == "Unsqueeze" ||
                                                 n.opType == "Identity")) ||
                           (n.domain == "ai.opscope" && n.opType == "Send"));
        // Kernels that make their (small) output themselves, as a sizing run would record.
        const bool own = n.domain.empty() && (n.opType == "Shape" || n.opType == "Size");
        for (ValueId out : n.outputs) {
            if (!out.valid())
                continue;
            const std::optional<std::uint64_t> b = bytesOf(out);
            if (!b) {
                ++unknown;
                continue;
            }
            ValueRecord &r = record[out.index];
            r.seen = true;
            r.dtype = g.value(out).type.elemType;
            r.bytes = *b;
            if (view && out == n.outputs[0])
                r.viewOf = n.inputs[0];
            r.ownAllocation = own;
        }
    }
    if (unsized)
        *unsized = unknown;
    return planMemory(*m_prepared, plan ? *plan : m_prepared->plan, record, m_options.memory);
}

std::optional<std::uint64_t> InferenceSession::estimatePeakBytes(const Feeds &feeds) const
{
    const Graph &g = m_model.graph;
    const StaticBytes bytesOf(g, feeds);
    std::vector<int> remaining = m_prepared->consumers;
    std::uint64_t live = 0;
    std::uint64_t peak = 0;
    for (const PlanStep &step : m_prepared->plan.queues[0].steps) {
        const Node &n = g.node(step.node);
        for (ValueId out : n.outputs) {
            if (!out.valid())
                continue;
            const auto b = bytesOf(out);
            if (!b)
                return std::nullopt;
            live += *b;
        }
        peak = std::max(peak, live);
        for (ValueId in : n.inputs)
            if (in.valid() && g.value(in).producer.valid() && --remaining[in.index] == 0 &&
                !m_prepared->keep[in.index])
                live -= *bytesOf(in);
    }
    return peak;
}

Expected<std::vector<RuntimeTensor>> InferenceSession::run(const Feeds &feeds, const ExecutionPlan *plan,
                                                           const ExecOptions *exec) const
{
    OPSCOPE_TRY(checkFeeds(feeds));
    if (m_options.checkMemory) {
        std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes;
        shapes.reserve(feeds.size());
        for (const auto &[name, tensor] : feeds)
            shapes.emplace_back(name, tensor.shape());
        std::optional<std::uint64_t> need;
        {
            const std::lock_guard lock(m_peakMutex);
            if (shapes != m_peakShapes || m_peakShapes.empty()) {
                m_peakBytes = estimatePeakBytes(feeds);
                m_peakShapes = std::move(shapes);
            }
            need = m_peakBytes;
        }
        const std::uint64_t have = recentAvailableMemoryBytes();
        if (need && have && *need > have) {
            std::ostringstream os;
            os.precision(1);
            os << std::fixed << "the run needs about " << double(*need) / double(1ULL << 30)
               << " GiB for intermediate tensors, but only " << double(have) / double(1ULL << 30)
               << " GiB of memory is available";
            return Status::unsupported(os.str());
        }
    }
    std::vector<RuntimeTensor> inputs = orderedInputs(feeds);
    ExecOptions options;
    if (exec)
        options = *exec;
    else
        options.threads = m_options.threads;
    if (options.backends.empty() && (!plan || plan->devices.size() <= 1))
        options.backends = {m_backend.get()};

    const ExecutionPlan &executed = plan ? *plan : m_prepared->plan;
    SizeRecord sizes;
    std::uint64_t key = 0;
    if (m_options.planMemory && !options.memory && !options.record) {
        key = memoryKey(inputs, executed);
        std::shared_ptr<const MemoryPlan> memory;
        {
            const std::lock_guard lock(m_memoryMutex);
            for (const auto &[k, p] : m_memoryPlans)
                if (k == key)
                    memory = p;
        }
        if (memory) {
            // `memory` keeps the plan alive through this run even if the cache drops it meanwhile.
            options.memory = memory.get();
            return executeGraph(*m_prepared, std::move(inputs), options, plan);
        }
        sizes.resize(m_model.graph.valueSlots());
        sizes.workspaceBytes.assign(m_model.graph.nodeSlots(), 0);
        options.record = &sizes;
    }
    std::optional<PoolBypass> bypass;
    if (options.record == &sizes)
        bypass.emplace();
    Expected<std::vector<RuntimeTensor>> outputs = executeGraph(*m_prepared, std::move(inputs), options, plan);
    bypass.reset();
    if (outputs && options.record == &sizes) {
        Expected<MemoryPlan> planned = planMemory(*m_prepared, executed, sizes, m_options.memory);
        if (planned) {
            const std::lock_guard lock(m_memoryMutex);
            if (m_memoryPlans.size() >= 8)
                m_memoryPlans.erase(m_memoryPlans.begin());
            m_memoryPlans.emplace_back(key, std::make_shared<const MemoryPlan>(std::move(*planned)));
        }
    }
    return outputs;
}

std::vector<RuntimeTensor> InferenceSession::orderedInputs(const Feeds &feeds) const
{
    const Graph &g = m_model.graph;
    std::vector<RuntimeTensor> inputs(g.inputs().size());
    for (std::size_t i = 0; i < g.inputs().size(); ++i)
        for (const auto &[name, tensor] : feeds)
            if (name == g.value(g.inputs()[i]).name)
                inputs[i] = tensor;
    return inputs;
}

std::uint64_t InferenceSession::memoryKey(const std::vector<RuntimeTensor> &inputs, const ExecutionPlan &plan) const
{
    // FNV-1a over the plan's structure and the inputs' types and shapes.
    std::uint64_t h = 1469598103934665603ull;
    const auto mix = [&h](std::uint64_t v) {
        for (int i = 0; i < 8; ++i, v >>= 8)
            h = (h ^ (v & 0xff)) * 1099511628211ull;
    };
    for (const std::string &d : plan.devices)
        for (char c : d)
            mix(std::uint64_t(std::uint8_t(c)));
    for (const PlanQueue &q : plan.queues) {
        mix(0xA11CE);
        mix(std::uint64_t(q.device));
        mix(std::uint64_t(q.workers));
        for (const PlanStep &s : q.steps) {
            mix(s.node.index);
            for (const StepRef &w : s.waitFor)
                mix((std::uint64_t(w.queue) << 32) | w.step);
        }
    }
    for (const RuntimeTensor &t : inputs) {
        mix(0xF00D);
        mix(std::uint64_t(t.dtype()));
        for (std::int64_t d : t.shape())
            mix(std::uint64_t(d));
    }
    return h;
}

std::shared_ptr<const MemoryPlan> InferenceSession::memoryPlan(const Feeds &feeds, const ExecutionPlan *plan) const
{
    const std::uint64_t key = memoryKey(orderedInputs(feeds), plan ? *plan : m_prepared->plan);
    const std::lock_guard lock(m_memoryMutex);
    for (const auto &[k, p] : m_memoryPlans)
        if (k == key)
            return p;
    return nullptr;
}

std::vector<std::string> declarationMismatches(const std::vector<ComputedValue> &values, const std::string &kind,
                                               const std::vector<ComputedValue> &bound)
{
    std::vector<std::string> out;
    std::map<std::string, std::pair<std::int64_t, std::string>> symbols; // symbol → size, "kind 'value'"
    // What the inputs bound a symbol to comes first: an output whose 'h' differs from its input's
    // 'h' says the run did not compute what the declaration describes (often: a dim left unbound
    // ran as 1, too small for the model, and something sized it up again).
    for (const ComputedValue &v : bound) {
        if (!v.declared || !v.declared->isTensor() || !v.declared->shape ||
            v.declared->shape->dims.size() != v.shape.size())
            continue;
        const std::vector<Dim> &dims = v.declared->shape->dims;
        for (std::size_t d = 0; d < dims.size(); ++d)
            if (dims[d].isSymbolic() && !dims[d].isInvented())
                symbols.emplace(dims[d].symbol, std::pair(v.shape[d], "input '" + v.name + "'"));
    }
    for (const ComputedValue &v : values) {
        if (!v.declared || !v.declared->isTensor() || v.dtype == DataType::Undefined)
            continue;
        const TypeInfo &type = *v.declared;
        const std::string lead = kind + " '" + v.name + "' is " + std::string(dataTypeName(v.dtype)) +
                                 shapeText(v.shape) + "; the model declares " + type.toString();
        if (type.elemType != DataType::Undefined && type.elemType != v.dtype) {
            out.push_back(lead);
            continue;
        }
        if (!type.shape)
            continue;
        const std::vector<Dim> &dims = type.shape->dims;
        if (dims.size() != v.shape.size()) {
            out.push_back(lead);
            continue;
        }
        std::string symbolClash;
        bool fixedClash = false;
        for (std::size_t d = 0; d < dims.size(); ++d) {
            if (dims[d].isKnown() && dims[d].value != v.shape[d])
                fixedClash = true;
            if (!dims[d].isSymbolic() || dims[d].isInvented())
                continue;
            const auto [it, first] = symbols.emplace(dims[d].symbol, std::pair(v.shape[d], kind + " '" + v.name + "'"));
            if (!first && it->second.first != v.shape[d] && symbolClash.empty())
                symbolClash = " ('" + dims[d].symbol + "' is " + std::to_string(v.shape[d]) + " here and " +
                              std::to_string(it->second.first) + " in " + it->second.second + ")";
        }
        if (fixedClash || !symbolClash.empty())
            out.push_back(lead + symbolClash);
    }
    return out;
}

std::vector<std::string> declaredOutputMismatches(const std::vector<IoInfo> &declared,
                                                  const std::vector<RuntimeTensor> &outputs,
                                                  const std::vector<IoInfo> &declaredInputs, const Feeds &feeds)
{
    std::vector<ComputedValue> values;
    for (std::size_t i = 0; i < declared.size() && i < outputs.size(); ++i)
        if (outputs[i].isValid())
            values.push_back({declared[i].name, &declared[i].type, outputs[i].dtype(), outputs[i].shape()});
    std::vector<ComputedValue> bound;
    for (const IoInfo &input : declaredInputs)
        for (const auto &[name, tensor] : feeds)
            if (name == input.name && tensor.isValid())
                bound.push_back({input.name, &input.type, tensor.dtype(), tensor.shape()});
    return declarationMismatches(values, "output", bound);
}

} // namespace opscope
