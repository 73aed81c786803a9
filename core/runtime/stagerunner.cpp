#include "runtime/stagerunner.h"

#include "runtime/kernel.h"

#include <cstring>
#include <memory>
#include <thread>

namespace opscope {

StageTransfers::StageTransfers(const Graph &graph, const std::vector<int> &deviceOf, RemoteTransfers *outer)
    : m_outer(outer)
{
    const auto deviceOfNode = [&](NodeId n) { return n.valid() && n.index < deviceOf.size() ? deviceOf[n.index] : -1; };
    for (NodeId n : graph.nodeIds()) {
        const Node &recv = graph.node(n);
        if (recv.opType != "Recv" || recv.inputs.empty() || deviceOfNode(n) < 0)
            continue;
        const NodeId send = graph.producer(recv.inputs[0]);
        // Both ends here, on different devices: a hand-over between stages of this process.
        if (deviceOfNode(send) < 0 || deviceOfNode(send) == deviceOfNode(n))
            continue;
        m_recvsOfSend[send.index].push_back(n.index);
        m_queues[n.index];
        m_names[n.index] = graph.node(send).inputs.empty() ? recv.name : graph.value(graph.node(send).inputs[0]).name;
    }
}

bool StageTransfers::receivesRemotely(NodeId recv) const
{
    return m_queues.count(recv.index) || (m_outer && m_outer->receivesRemotely(recv));
}

bool StageTransfers::sendsRemotely(NodeId send) const
{
    return m_recvsOfSend.count(send.index) || (m_outer && m_outer->sendsRemotely(send));
}

Status StageTransfers::awaitArrival(const PreparedNode &recv)
{
    const std::uint32_t r = recv.node->id.index;
    if (!m_queues.count(r))
        return m_outer->awaitArrival(recv);
    std::unique_lock lock(m_mutex);
    std::deque<RuntimeTensor> &queue = m_queues.at(r);
    m_arrived.wait(lock, [&] { return !queue.empty() || !m_failed.isOk(); });
    return queue.empty() ? m_failed : Status::ok();
}

Status StageTransfers::receive(const PreparedNode &recv, KernelContext &ctx)
{
    const std::uint32_t r = recv.node->id.index;
    if (!m_queues.count(r))
        return m_outer->receive(recv, ctx);
    RuntimeTensor t;
    {
        std::lock_guard lock(m_mutex);
        std::deque<RuntimeTensor> &queue = m_queues.at(r);
        if (queue.empty())
            return Status::internal("'" + m_names.at(r) + "' was received before it arrived");
        t = std::move(queue.front());
        queue.pop_front();
    }
    // Into memory the receiving stage allocates (its memory plan's range, as any output).
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, t.dtype(), t.shape());
    if (!out)
        return out.status();
    if (t.byteSize())
        std::memcpy((*out)->mutableBytes(), t.bytes(), t.byteSize());
    return Status::ok();
}

Status StageTransfers::send(const PreparedNode &send, const RuntimeTensor &tensor)
{
    const std::uint32_t s = send.node->id.index;
    if (const auto it = m_recvsOfSend.find(s); it != m_recvsOfSend.end()) {
        if (tensor.dtype() == DataType::String)
            return Status::unsupported("string tensors cannot be handed between pipeline stages");
        // A copy: the sender's arena holds its next micro-batch while this one waits to be read.
        Expected<RuntimeTensor> host = tensor.toHost();
        if (!host)
            return host.status();
        for (std::uint32_t r : it->second) {
            Expected<RuntimeTensor> copy = RuntimeTensor::allocate(host->dtype(), host->shape());
            if (!copy)
                return copy.status();
            if (host->byteSize())
                std::memcpy(copy->mutableBytes(), host->bytes(), host->byteSize());
            std::lock_guard lock(m_mutex);
            m_queues.at(r).push_back(std::move(*copy));
        }
        m_arrived.notify_all();
    }
    if (m_outer && m_outer->sendsRemotely(send.node->id))
        return m_outer->send(send, tensor);
    return Status::ok();
}

Status StageTransfers::failure()
{
    std::lock_guard lock(m_mutex);
    return m_failed;
}

void StageTransfers::fail(const Status &why)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_failed.isOk())
            m_failed = why;
    }
    m_arrived.notify_all();
}

Expected<std::vector<std::vector<RuntimeTensor>>> runPipelined(const InferenceSession &session,
                                                               const ExecutionPlan &plan,
                                                               const std::vector<Feeds> &microbatches,
                                                               const PipelineOptions &options)
{
    const Graph &graph = *session.prepared().graph;
    if (options.backends.size() != plan.devices.size())
        return Status::internal("a pipelined run needs a backend per plan device");
    // Each device's queues are one stage: a plan of their own, the waits on other devices' steps
    // dropped where the step is a Recv (the hand-over carries the dependency).
    std::vector<int> deviceOf(graph.nodeSlots(), -1);
    for (const PlanQueue &q : plan.queues)
        for (const PlanStep &st : q.steps)
            deviceOf[st.node.index] = q.device;
    std::vector<ExecutionPlan> stages;
    std::vector<std::vector<std::uint32_t>> stageQueues; // stage queue → plan queue
    std::vector<int> stageDevice;
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        std::vector<bool> keep(plan.devices.size(), false);
        keep[d] = true;
        std::vector<std::uint32_t> queues;
        Expected<ExecutionPlan> stage = subPlan(plan, keep, graph, &queues);
        if (!stage)
            return stage.status();
        if (stage->queues.empty())
            continue;
        stages.push_back(std::move(*stage));
        stageQueues.push_back(std::move(queues));
        stageDevice.push_back(int(d));
    }
    StageTransfers transfers(graph, deviceOf, options.outer);

    std::vector<std::vector<std::vector<RuntimeTensor>>> outputs(stages.size()); // stage, micro-batch
    const auto runStage = [&](std::size_t k) {
        ExecOptions exec;
        exec.threads = options.threads;
        exec.backends = {options.backends[std::size_t(stageDevice[k])]};
        exec.cancel = options.cancel;
        exec.remote = &transfers;
        auto current = std::make_shared<std::atomic<int>>(0); // read by the stage's queue threads
        if (options.onStep)
            exec.onStep = [&, k, current](const StepEvent &e) {
                StepEvent global = e;
                global.device = stageDevice[k];
                if (e.graph == &graph && e.queue < stageQueues[k].size())
                    global.queue = stageQueues[k][e.queue];
                options.onStep(global, current->load(std::memory_order_relaxed));
            };
        for (std::size_t m = 0; m < microbatches.size(); ++m) {
            current->store(int(m), std::memory_order_relaxed);
            Expected<std::vector<RuntimeTensor>> out = session.run(microbatches[m], &stages[k], &exec);
            if (!out) {
                transfers.fail(out.status().withContext(plan.devices[std::size_t(stageDevice[k])] +
                                                        ", micro-batch " + std::to_string(m)));
                return;
            }
            outputs[k].push_back(std::move(*out));
        }
    };
    std::vector<std::thread> threads;
    for (std::size_t k = 1; k < stages.size(); ++k)
        threads.emplace_back(runStage, k);
    if (!stages.empty())
        runStage(0);
    for (std::thread &t : threads)
        t.join();
    // The failure that ended the run, not the stages it woke.
    if (Status first = transfers.failure(); !first)
        return first;

    // Each output from the stage that computed it.
    std::vector<std::vector<RuntimeTensor>> joined(microbatches.size());
    for (std::size_t m = 0; m < microbatches.size(); ++m) {
        joined[m].resize(graph.outputs().size());
        for (std::size_t k = 0; k < stages.size(); ++k)
            for (std::size_t i = 0; i < outputs[k][m].size() && i < joined[m].size(); ++i)
                if (!joined[m][i].isValid() && outputs[k][m][i].isValid())
                    joined[m][i] = std::move(outputs[k][m][i]);
    }
    return joined;
}

} // namespace opscope
