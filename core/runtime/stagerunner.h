#pragma once
// Pipelined runs of a plan over several devices of one process (GPipe). Each device's queues run
// as a stage in a thread of its own, micro-batch after micro-batch: stage k starts micro-batch
// m+1 as soon as it has handed on micro-batch m's tensors, while stage k+1 still works on m —
//
//     dev0  m0 m1 m2 m3
//     dev1     m0 m1 m2 m3          fill, steady state, drain
//
// — instead of every stage waiting for the whole micro-batch to leave the last one. A stage is a
// run of its own (its own frame and memory plan), so the Send/Recv pairs between stages cannot
// share a buffer: StageTransfers hands each tensor over through a FIFO per edge, copied (the
// sender's arena holds its next micro-batch soon after). Edges to other processes (MPI ranks) go
// to the `outer` transport. Any valid plan runs this way, not only the pipeline schedule's: each
// stage takes the micro-batches in order and no hand-over waits for its receiver, so a stage that
// waits for another's tensor of micro-batch m waits for a step that needs nothing of m+1.

#include "runtime/executor.h"
#include "runtime/session.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

namespace opscope {

// The executor's RemoteTransfers for stage runs: in-process FIFOs between the stages' Send/Recv,
// the rest passed to `outer` (may be null).
class StageTransfers : public RemoteTransfers
{
public:
    // `deviceOf`: the device of each node slot this process runs, -1 elsewhere.
    StageTransfers(const Graph &graph, const std::vector<int> &deviceOf, RemoteTransfers *outer);

    bool receivesRemotely(NodeId recv) const override;
    bool sendsRemotely(NodeId send) const override;
    Status awaitArrival(const PreparedNode &recv) override;
    Status receive(const PreparedNode &recv, KernelContext &ctx) override;
    Status send(const PreparedNode &send, const RuntimeTensor &tensor) override;

    // Wakes every stage waiting for a tensor with `why` (another stage failed): no stage hangs.
    void fail(const Status &why);
    Status failure(); // the first fail()'s status; ok if none
    std::size_t edges() const { return m_queues.size(); }

private:
    RemoteTransfers *m_outer;
    std::map<std::uint32_t, std::vector<std::uint32_t>> m_recvsOfSend; // Send slot → Recv slots
    std::map<std::uint32_t, std::deque<RuntimeTensor>> m_queues;        // Recv slot → arrived tensors
    std::map<std::uint32_t, std::string> m_names;                       // Recv slot → what it carries
    std::mutex m_mutex;
    std::condition_variable m_arrived;
    Status m_failed;
};

struct PipelineOptions
{
    int threads = 1;                       // intra-op threads per stage
    std::vector<Backend *> backends;       // by plan device
    RemoteTransfers *outer = nullptr;      // Send/Recv with other processes
    const std::atomic<bool> *cancel = nullptr;
    // Each step, numbered as in the plan (device, queue), with the micro-batch it belongs to.
    std::function<void(const StepEvent &, int microbatch)> onStep;
};

// Runs the micro-batches through the plan's devices as pipeline stages. Returns each micro-batch's
// outputs (invalid where another process computes them). The first error of any stage ends all.
Expected<std::vector<std::vector<RuntimeTensor>>> runPipelined(const InferenceSession &session,
                                                               const ExecutionPlan &plan,
                                                               const std::vector<Feeds> &microbatches,
                                                               const PipelineOptions &options);

} // namespace opscope
