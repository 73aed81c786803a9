#include "runtime/executor.h"

#include "runtime/backend.h"
#include "runtime/workerpool.h"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <omp.h>
#include <optional>
#include <set>

namespace opscope {

class Frame
{
public:
    Frame(const PreparedGraph &pg, const Frame *parent)
        : m_pg(pg), m_parent(parent), m_values(pg.graph->valueSlots())
    {
    }

    const Graph &graph() const { return *m_pg.graph; }

    // A value of this frame or, by name, of an enclosing one.
    const RuntimeTensor *get(ValueId v) const
    {
        const RuntimeTensor &t = m_values[v.index];
        if (t.isValid())
            return &t;
        const Value &value = graph().value(v);
        if (value.outerScope && m_parent)
            return m_parent->lookup(value.name);
        return nullptr;
    }

    const RuntimeTensor *lookup(const std::string &name) const
    {
        const ValueId v = graph().findValue(name);
        if (v.valid()) {
            if (const RuntimeTensor *t = get(v))
                return t;
        }
        return m_parent ? m_parent->lookup(name) : nullptr;
    }

    void set(ValueId v, RuntimeTensor t) { m_values[v.index] = std::move(t); }
    void release(ValueId v) { m_values[v.index] = RuntimeTensor(); }

private:
    const PreparedGraph &m_pg;
    const Frame *m_parent;
    std::vector<RuntimeTensor> m_values;
};

namespace {

class Run
{
public:
    Run(const PreparedGraph &pg, const ExecutionPlan &plan, const ExecOptions &options, Frame &frame)
        : m_pg(pg), m_plan(plan), m_options(options), m_frame(frame),
          m_remaining(new std::atomic<int>[pg.consumers.size()])
    {
        for (std::size_t i = 0; i < pg.consumers.size(); ++i)
            m_remaining[i].store(pg.consumers[i], std::memory_order_relaxed);
        for (const PlanQueue &q : plan.queues) {
            m_done.emplace_back(new std::atomic<bool>[q.steps.size()]);
            for (std::size_t s = 0; s < q.steps.size(); ++s)
                m_done.back()[s].store(false, std::memory_order_relaxed);
        }
    }

    Status run()
    {
        // A backend per plan device: the caller's, or CPU backends made for this run.
        std::vector<std::unique_ptr<Backend>> owned;
        m_backends = m_options.backends;
        if (m_backends.size() < m_plan.devices.size()) {
            m_backends.clear();
            for (const std::string &device : m_plan.devices) {
                Expected<std::unique_ptr<Backend>> b = makeBackend(device, m_options.threads);
                if (!b)
                    return b.status();
                owned.push_back(std::move(*b));
                m_backends.push_back(owned.back().get());
            }
        }
        OPSCOPE_TRY(allocateArenas());
        Status st = runAll();
        // Asynchronous devices: a step is done when its work is queued; the run is done when the
        // devices are (and a failure there surfaces here, not as a wrong output later).
        for (Backend *b : m_backends)
            if (Status synced = b->synchronize(); st.isOk() && !synced.isOk())
                st = synced.withContext(b->name());
        if (m_options.memoryStats) {
            MemoryRunStats &stats = *m_options.memoryStats;
            stats = {};
            for (std::size_t d = 0; d < m_arenas.size(); ++d)
                if (m_arenas[d])
                    stats.arenaBytes += m_options.memory->devices[d].plannedBytes;
            stats.inArena = m_inArena.load();
            stats.elsewhere = m_elsewhere.load();
            stats.copiedOut = m_copiedOut.load();
            stats.workspaces = m_workspaces.load();
        }
        return st;
    }

private:
    // One block per plan device for a memory plan made for this plan (else the run allocates per
    // tensor, as without one).
    Status allocateArenas()
    {
        const MemoryPlan *memory = m_options.memory;
        if (!memory || memory->devices.size() != m_plan.devices.size() ||
            memory->byValue.size() < m_pg.graph->valueSlots())
            return Status::ok();
        m_arenas.resize(memory->devices.size());
        for (std::size_t d = 0; d < memory->devices.size(); ++d) {
            // A device with memory of its own allocates its tensors there (its own pool).
            if (memory->devices[d].plannedBytes == 0 || (d < m_backends.size() && !m_backends[d]->hostMemory()))
                continue;
            Expected<std::shared_ptr<std::byte>> block = RuntimeTensor::allocateBlock(memory->devices[d].plannedBytes);
            if (!block)
                return block.status();
            m_arenas[d] = std::move(*block);
        }
        return Status::ok();
    }

    Status runAll()
    {
        if (m_plan.queues.size() == 1 && m_plan.queues[0].workers <= 1)
            return runQueue(0);
        // Every queue (every worker of a shared one) at once, on the shared pool's persistent
        // workers; the caller runs the first. A worker's lane in the trace: its queue's first lane
        // plus its index.
        std::vector<std::function<void()>> jobs;
        std::vector<Status> results;
        for (const PlanQueue &q : m_plan.queues)
            results.resize(results.size() + std::size_t(std::max(1, q.workers)));
        std::uint32_t lane = 0;
        m_shared.resize(m_plan.queues.size());
        for (std::uint32_t q = 0; q < m_plan.queues.size(); ++q) {
            const int workers = std::max(1, m_plan.queues[q].workers);
            if (workers == 1) {
                jobs.emplace_back([this, q, lane, &results] { results[lane] = runQueue(q, lane); });
                ++lane;
                continue;
            }
            m_shared[q] = sharedQueue(q);
            for (int w = 0; w < workers; ++w, ++lane)
                jobs.emplace_back([this, q, lane, &results] { results[lane] = runShared(q, lane); });
        }
        WorkerPool::shared().runConcurrently(jobs);
        for (const Status &st : results)
            if (!st.isOk() && st.message() != "stopped") // the first real error wins
                return st;
        for (const Status &st : results)
            if (!st.isOk())
                return st;
        return Status::ok();
    }

    // A queue several workers share: per step, how many of its producers in the same queue have
    // not finished, and which steps of the queue it unblocks; the steps ready to take, in order.
    struct SharedQueue
    {
        std::vector<int> pending;
        std::vector<std::vector<std::uint32_t>> unblocks;
        std::set<std::uint32_t> ready;
        std::size_t untaken = 0;
    };

    std::unique_ptr<SharedQueue> sharedQueue(std::uint32_t q) const
    {
        const PlanQueue &queue = m_plan.queues[q];
        const Graph &g = *m_pg.graph;
        auto sq = std::make_unique<SharedQueue>();
        sq->pending.assign(queue.steps.size(), 0);
        sq->unblocks.resize(queue.steps.size());
        sq->untaken = queue.steps.size();
        std::vector<int> stepOf(g.nodeSlots(), -1);
        for (std::uint32_t s = 0; s < queue.steps.size(); ++s)
            stepOf[queue.steps[s].node.index] = int(s);
        for (std::uint32_t s = 0; s < queue.steps.size(); ++s) {
            const NodeId node = queue.steps[s].node;
            std::vector<ValueId> reads = g.node(node).inputs;
            const std::vector<ValueId> &implicit = m_pg.nodes[node.index].implicitInputs;
            reads.insert(reads.end(), implicit.begin(), implicit.end());
            std::vector<int> producers;
            for (ValueId v : reads)
                if (v.valid() && g.value(v).producer.valid()) {
                    const int p = stepOf[g.value(v).producer.index];
                    if (p >= 0 && p != int(s))
                        producers.push_back(p);
                }
            std::sort(producers.begin(), producers.end());
            producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
            for (int p : producers)
                sq->unblocks[std::size_t(p)].push_back(s);
            sq->pending[s] = int(producers.size());
            if (producers.empty())
                sq->ready.insert(s);
        }
        return sq;
    }

    bool crossQueueDone(const PlanStep &step) const
    {
        for (const StepRef &r : step.waitFor)
            if (!m_done[r.queue][r.step].load(std::memory_order_acquire))
                return false;
        return true;
    }

    // One worker of a shared queue: takes the first ready step, runs it, releases what it unblocks.
    Status runShared(std::uint32_t q, std::uint32_t lane)
    {
        const PlanQueue &queue = m_plan.queues[q];
        SharedQueue &sq = *m_shared[q];
        Backend &backend = *m_backends[std::size_t(queue.device)];
        omp_set_num_threads(backend.threads());
        for (;;) {
            std::uint32_t s = 0;
            const auto waitStart = std::chrono::steady_clock::now();
            bool waited = false;
            {
                std::unique_lock lock(m_mutex);
                for (;;) {
                    if (m_failed)
                        return Status::internal("stopped");
                    if (sq.untaken == 0)
                        return Status::ok();
                    auto it = sq.ready.begin();
                    while (it != sq.ready.end() && !crossQueueDone(queue.steps[*it]))
                        ++it;
                    if (it != sq.ready.end()) {
                        s = *it;
                        sq.ready.erase(it);
                        --sq.untaken;
                        break;
                    }
                    waited = true;
                    m_cv.wait(lock);
                }
            }
            OPSCOPE_TRY(runStep(q, s, lane, backend, waited ? std::optional(waitStart) : std::nullopt));
        }
    }

    // Runs step s of queue q on this worker, reports it, marks it done (releasing what it unblocks
    // in a shared queue) and wakes the workers waiting for it.
    Status runStep(std::uint32_t q, std::uint32_t s, std::uint32_t lane, Backend &backend,
                   std::optional<std::chrono::steady_clock::time_point> waitStart)
    {
        const PlanQueue &queue = m_plan.queues[q];
        const PlanStep &step = queue.steps[s];
        if (m_options.cancel && m_options.cancel->load())
            return fail(Status::error(ErrorKind::InvalidInput, "cancelled"));
        if (m_options.remote && m_options.remote->receivesRemotely(step.node)) {
            // Waiting for another process's tensor is waiting, as for another queue's step.
            const auto arrival = std::chrono::steady_clock::now();
            if (Status st = m_options.remote->awaitArrival(m_pg.nodes[step.node.index]); !st)
                return fail(st); // names the edge and both ranks
            if (!waitStart)
                waitStart = arrival;
        }
        const auto start = std::chrono::steady_clock::now();
        const Status st = runNode(m_pg.nodes[step.node.index], backend);
        if (!st.isOk())
            return fail(st);
        if (m_options.onStep) {
            const auto end = std::chrono::steady_clock::now();
            std::uint64_t bytes = 0;
            const std::vector<ValueId> &outs = m_pg.graph->node(step.node).outputs;
            std::array<const RuntimeTensor *, 8> few{};
            std::vector<const RuntimeTensor *> many(outs.size() > few.size() ? outs.size() : 0);
            const RuntimeTensor **tensors = many.empty() ? few.data() : many.data();
            for (std::size_t i = 0; i < outs.size(); ++i) {
                const RuntimeTensor *t = outs[i].valid() ? m_frame.get(outs[i]) : nullptr;
                tensors[i] = t;
                if (t && t->dtype() != DataType::String)
                    bytes += t->byteSize();
            }
            StepEvent e{m_pg.graph, step.node, lane, queue.device, start, end, waitStart.value_or(start), bytes};
            e.outputs = tensors;
            e.outputCount = outs.size();
            m_options.onStep(e);
        }
        {
            std::lock_guard lock(m_mutex);
            m_done[q][s].store(true, std::memory_order_release);
            if (q < m_shared.size() && m_shared[q])
                for (std::uint32_t t : m_shared[q]->unblocks[s])
                    if (--m_shared[q]->pending[t] == 0)
                        m_shared[q]->ready.insert(t);
        }
        m_cv.notify_all();
        return Status::ok();
    }

    Status runQueue(std::uint32_t q, std::uint32_t lane = 0)
    {
        const PlanQueue &queue = m_plan.queues[q];
        Backend &backend = *m_backends[std::size_t(queue.device)];
        omp_set_num_threads(backend.threads());
        for (std::uint32_t s = 0; s < queue.steps.size(); ++s) {
            const PlanStep &step = queue.steps[s];
            const auto waitStart = std::chrono::steady_clock::now();
            if (!waitFor(step))
                return Status::internal("stopped");
            OPSCOPE_TRY(
                runStep(q, s, lane, backend, step.waitFor.empty() ? std::nullopt : std::optional(waitStart)));
        }
        return Status::ok();
    }

    bool waitFor(const PlanStep &step)
    {
        if (step.waitFor.empty())
            return true;
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] { return m_failed || crossQueueDone(step); });
        return !m_failed;
    }

    Status fail(Status st)
    {
        {
            std::lock_guard lock(m_mutex);
            m_failed = true;
        }
        m_cv.notify_all();
        return st;
    }

    Status runNode(const PreparedNode &pn, Backend &backend)
    {
        const Node &n = *pn.node;
        struct Scope
        {
            Backend &backend;
            Scope(Backend &b, const Node &node) : backend(b) { backend.enterNode(node); }
            ~Scope() { backend.leaveNode(); }
        } scope(backend, n);
        RemoteTransfers *remote = m_options.remote;
        if (remote && remote->receivesRemotely(n.id))
            return receiveRemotely(pn);
        std::vector<const RuntimeTensor *> inputs(n.inputs.size(), nullptr);
        for (std::size_t i = 0; i < n.inputs.size(); ++i) {
            if (!n.inputs[i].valid())
                continue;
            inputs[i] = m_frame.get(n.inputs[i]);
            if (!inputs[i])
                return Status::internal("node '" + n.name + "' (" + n.opType + "): input '" +
                                        m_frame.graph().value(n.inputs[i]).name + "' was not computed");
        }
        std::vector<RuntimeTensor> outputs(n.outputs.size());
        const SubgraphRunner runner = [this, &backend](const PreparedGraph &g,
                                                       std::vector<RuntimeTensor> in) {
            ExecOptions sub; // bodies run on the device of their If/Loop/Scan node
            sub.threads = backend.threads();
            sub.backends = {&backend};
            sub.cancel = m_options.cancel;
            sub.onStep = m_options.onStep;
            sub.onValue = m_options.onValue;
            return executeGraph(g, std::move(in), sub, nullptr, &m_frame);
        };
        OPSCOPE_TRY(checkInputTypes(m_frame.graph(), pn, inputs));
        KernelContext ctx(pn, inputs, outputs, backend.threads(), runner);
        // A host kernel never reads a device's memory: a tensor an accelerator made comes over
        // first (a plan that places nodes well has Recv nodes for these instead). ctx sees
        // `inputs` through a span, so it sees the swapped pointers.
        std::vector<RuntimeTensor> hostCopies;
        if (const Backend::HostInputs need = backend.hostInputs(ctx); need != Backend::HostInputs::None) {
            for (std::size_t i = need == Backend::HostInputs::All ? 0 : 1; i < inputs.size(); ++i)
                if (inputs[i] && !inputs[i]->onHost()) {
                    if (hostCopies.empty())
                        hostCopies.reserve(inputs.size());
                    Expected<RuntimeTensor> host = inputs[i]->toHost();
                    if (!host)
                        return host.status().withContext("node '" + n.name + "' (" + n.opType + ")");
                    hostCopies.push_back(std::move(*host));
                    inputs[i] = &hostCopies.back();
                }
        }
        std::vector<PlannedOutput> planned;
        if (!m_arenas.empty()) {
            planned = plannedOutputs(n);
            ctx.setPlannedOutputs(planned);
            const auto &workspaces = m_options.memory->workspaceByNode;
            if (n.id.index < workspaces.size() && workspaces[n.id.index].device >= 0) {
                const MemoryPlan::Slot &w = workspaces[n.id.index];
                if (m_arenas[std::size_t(w.device)])
                    ctx.setPlannedWorkspace(
                        {m_arenas[std::size_t(w.device)].get() + w.offset, w.bytes, &m_arenas[std::size_t(w.device)]});
            }
        }
        const bool recording = m_options.record && m_options.record->size() >= m_pg.graph->valueSlots();
        ctx.setWorkspacePerCall(recording);
        ctx.setTrackAllocations(recording);
        // A kernel's own scratch (Einsum's accumulator over a 2^32-element output, found by
        // fuzzing) can exceed memory where its output did not: that is the model's size, said as
        // such, not an internal error.
        try {
            OPSCOPE_TRY(backend.run(pn, ctx));
        } catch (const std::bad_alloc &) {
            return Status::unsupported("node '" + n.name + "' (" + n.opType +
                                       ") needs more memory than this machine can give it");
        }
        if (ctx.workspaceFromPlan())
            m_workspaces.fetch_add(1, std::memory_order_relaxed);
        if (recording && n.id.index < m_options.record->workspaceBytes.size())
            m_options.record->workspaceBytes[n.id.index] =
                std::max(m_options.record->workspaceBytes[n.id.index], ctx.workspaceAsked());
        for (std::size_t i = 0; i < n.outputs.size(); ++i) {
            if (!n.outputs[i].valid())
                continue;
            if (!outputs[i].isValid())
                return Status::internal("node '" + n.name + "' (" + n.opType + ") did not produce output " +
                                        std::to_string(i));
            if (!m_arenas.empty())
                OPSCOPE_TRY(settle(n.outputs[i], outputs[i]));
            if (recording)
                record(pn, ctx, inputs, n.outputs[i], outputs[i]);
            if (m_options.onValue) {
                // Observers read values on the host (a probe's statistics).
                if (!outputs[i].onHost()) {
                    Expected<RuntimeTensor> host = outputs[i].toHost();
                    if (!host)
                        return host.status().withContext("node '" + n.name + "'");
                    m_options.onValue(m_frame.graph(), n.outputs[i], *host);
                } else {
                    m_options.onValue(m_frame.graph(), n.outputs[i], outputs[i]);
                }
            }
            m_frame.set(n.outputs[i], std::move(outputs[i]));
        }
        if (remote && remote->sendsRemotely(n.id))
            OPSCOPE_TRY(remote->send(pn, *m_frame.get(n.outputs[0])).withContext("node '" + n.name + "'"));
        // Free what nobody reads any more.
        const auto consumed = [this](ValueId v) {
            if (v.valid() && m_remaining[v.index].fetch_sub(1) == 1 && !m_pg.keep[v.index] &&
                m_frame.graph().value(v).producer.valid())
                m_frame.release(v);
        };
        for (ValueId v : n.inputs)
            consumed(v);
        for (ValueId v : pn.implicitInputs)
            consumed(v);
        return Status::ok();
    }

    // Where the memory plan puts each output of `n` in the arenas (empty entries: not planned).
    std::vector<PlannedOutput> plannedOutputs(const Node &n) const
    {
        std::vector<PlannedOutput> planned(n.outputs.size());
        for (std::size_t i = 0; i < n.outputs.size(); ++i) {
            if (!n.outputs[i].valid())
                continue;
            const MemoryPlan::Slot &s = m_options.memory->byValue[n.outputs[i].index];
            if (s.device >= 0 && !s.view && m_arenas[std::size_t(s.device)])
                planned[i] = {m_arenas[std::size_t(s.device)].get() + s.offset, s.bytes,
                              &m_arenas[std::size_t(s.device)]};
        }
        return planned;
    }

    // A Recv whose Send ran in another process: its tensor arrives through the transport, into
    // memory allocated like any output (the plan's range of the arena when there is a plan).
    Status receiveRemotely(const PreparedNode &pn)
    {
        const Node &n = *pn.node;
        std::vector<const RuntimeTensor *> inputs(n.inputs.size(), nullptr);
        std::vector<RuntimeTensor> outputs(n.outputs.size());
        const SubgraphRunner none;
        KernelContext ctx(pn, inputs, outputs, 1, none);
        std::vector<PlannedOutput> planned;
        if (!m_arenas.empty()) {
            planned = plannedOutputs(n);
            ctx.setPlannedOutputs(planned);
        }
        const bool recording = m_options.record && m_options.record->size() >= m_pg.graph->valueSlots();
        ctx.setTrackAllocations(recording);
        OPSCOPE_TRY(m_options.remote->receive(pn, ctx)); // names the edge and both ranks
        if (n.outputs.empty() || !n.outputs[0].valid() || !outputs[0].isValid())
            return Status::internal("node '" + n.name + "' (Recv) received nothing");
        if (!m_arenas.empty())
            OPSCOPE_TRY(settle(n.outputs[0], outputs[0]));
        if (recording)
            record(pn, ctx, inputs, n.outputs[0], outputs[0]);
        if (m_options.onValue)
            m_options.onValue(m_frame.graph(), n.outputs[0], outputs[0]);
        m_frame.set(n.outputs[0], std::move(outputs[0]));
        return Status::ok();
    }

    // An output in an arena must be where the plan put it (its range, or inside the buffer it is
    // planned to view); anywhere else in an arena its bytes would be overwritten by the tensors
    // the plan put there, so it is copied out.
    Status settle(ValueId v, RuntimeTensor &t)
    {
        if (!t.bytes())
            return Status::ok();
        const MemoryPlan &memory = *m_options.memory;
        const MemoryPlan::Slot &s = memory.byValue[v.index];
        const auto p = reinterpret_cast<std::uintptr_t>(t.bytes());
        for (std::size_t d = 0; d < m_arenas.size(); ++d) {
            if (!m_arenas[d])
                continue;
            const auto base = reinterpret_cast<std::uintptr_t>(m_arenas[d].get());
            if (p < base || p >= base + memory.devices[d].plannedBytes)
                continue;
            const bool asPlanned =
                s.device == int(d) &&
                (s.view ? p >= base + s.bufferOffset && p + t.byteSize() <= base + s.bufferOffset + s.bufferBytes
                        : p == base + s.offset && t.byteSize() <= s.bytes);
            if (asPlanned) {
                m_inArena.fetch_add(1, std::memory_order_relaxed);
                return Status::ok();
            }
            Expected<RuntimeTensor> copy = RuntimeTensor::allocate(t.dtype(), t.shape());
            if (!copy)
                return copy.status();
            std::memcpy(copy->mutableBytes(), t.bytes(), t.byteSize());
            t = std::move(*copy);
            m_copiedOut.fetch_add(1, std::memory_order_relaxed);
            return Status::ok();
        }
        if (s.device >= 0)
            m_elsewhere.fetch_add(1, std::memory_order_relaxed);
        return Status::ok();
    }

    // What the sizing run learns of an output: type, bytes, which input's bytes it lies in, or
    // that the kernel made it itself.
    void record(const PreparedNode &pn, const KernelContext &ctx, const std::vector<const RuntimeTensor *> &inputs,
                ValueId v, const RuntimeTensor &t)
    {
        ValueRecord &r = (*m_options.record)[v.index];
        r = {};
        r.seen = true;
        r.dtype = t.dtype();
        r.bytes = t.dtype() == DataType::String ? 0 : t.byteSize();
        const auto p = reinterpret_cast<std::uintptr_t>(t.bytes());
        if (!p || r.bytes == 0)
            return;
        const auto inside = [&](ValueId in, const RuntimeTensor *it) {
            if (!it || !it->bytes() || it->dtype() == DataType::String)
                return false;
            const auto base = reinterpret_cast<std::uintptr_t>(it->bytes());
            if (p < base || p + r.bytes > base + it->byteSize())
                return false;
            r.viewOf = in;
            r.viewOffset = p - base;
            return true;
        };
        const Node &n = *pn.node;
        for (std::size_t j = 0; j < n.inputs.size(); ++j)
            if (n.inputs[j].valid() && inside(n.inputs[j], inputs[j]))
                return;
        for (ValueId in : pn.implicitInputs)
            if (inside(in, m_frame.get(in)))
                return;
        r.ownAllocation = !ctx.handedOut(t.bytes());
    }

    const PreparedGraph &m_pg;
    const ExecutionPlan &m_plan;
    const ExecOptions &m_options;
    Frame &m_frame;
    std::vector<std::shared_ptr<std::byte>> m_arenas; // by plan device; empty: no memory plan
    std::atomic<std::size_t> m_inArena{0}, m_elsewhere{0}, m_copiedOut{0}, m_workspaces{0};
    std::unique_ptr<std::atomic<int>[]> m_remaining;
    std::vector<std::unique_ptr<std::atomic<bool>[]>> m_done;
    std::vector<Backend *> m_backends;
    std::vector<std::unique_ptr<SharedQueue>> m_shared; // by queue; null unless workers share it
    std::mutex m_mutex;
    std::condition_variable m_cv;
    bool m_failed = false;
};

} // namespace

Expected<std::vector<RuntimeTensor>> executeGraph(const PreparedGraph &pg, std::vector<RuntimeTensor> inputs,
                                                  const ExecOptions &options, const ExecutionPlan *plan,
                                                  const Frame *parent)
{
    // Checked here as well as before every step: a Loop body without nodes (its outputs are its
    // inputs) has no steps, and a Loop of it that never ends could not be cancelled otherwise.
    if (options.cancel && options.cancel->load())
        return Status::error(ErrorKind::InvalidInput, "cancelled");
    const Graph &g = *pg.graph;
    Frame frame(pg, parent);
    for (ValueId v : g.initializers())
        frame.set(v, RuntimeTensor::fromConstant(*g.value(v).initializer));
    for (const auto &[v, dense] : pg.sparseConstants)
        frame.set(v, RuntimeTensor::fromConstant(dense));
    const std::vector<ValueId> &graphInputs = g.inputs();
    for (std::size_t i = 0; i < graphInputs.size(); ++i) {
        if (i < inputs.size() && inputs[i].isValid())
            frame.set(graphInputs[i], std::move(inputs[i]));
        else if (!g.value(graphInputs[i]).initializer && i < inputs.size())
            return Status::invalid("graph '" + g.name() + "': input '" + g.value(graphInputs[i]).name +
                                   "' was not given");
    }

    Run run(pg, plan ? *plan : pg.plan, options, frame);
    OPSCOPE_TRY(run.run());

    std::vector<RuntimeTensor> outputs;
    for (ValueId v : g.outputs()) {
        const RuntimeTensor *t = frame.get(v);
        if (!t && options.remote) { // computed by another process
            outputs.emplace_back();
            continue;
        }
        if (!t)
            return Status::internal("graph output '" + g.value(v).name + "' was not computed");
        // Outputs are host tensors, of the main graph and of bodies alike: callers (and the host
        // kernels of If/Loop/Scan) read them.
        Expected<RuntimeTensor> host = t->toHost();
        if (!host)
            return host.status().withContext("graph output '" + g.value(v).name + "'");
        outputs.push_back(std::move(*host));
    }
    return outputs;
}

} // namespace opscope
