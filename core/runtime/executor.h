#pragma once
// Runs a prepared graph by an execution plan. One thread per queue worker — the calling thread and
// persistent workers of a shared pool (workerpool.h); a step waits for the steps of other queues
// it depends on; workers sharing a queue take its steps as their inputs become ready. Intermediate tensors
// are freed when their last consumer has run. Subgraphs (If/Loop/Scan bodies) run serially on the calling
// thread and read outer-scope values from the enclosing frame.

#include "runtime/memoryplan.h"
#include "runtime/preparedgraph.h"
#include "runtime/runtimetensor.h"
#include "util/status.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <vector>

namespace opscope {

struct StepEvent
{
    const Graph *graph = nullptr; // the graph `node` belongs to (a subgraph for If/Loop/Scan bodies)
    NodeId node;
    std::uint32_t queue = 0;
    int device = 0;
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point end;
    // When the queue began waiting for this step's cross-queue dependencies (== start if it did not).
    std::chrono::steady_clock::time_point waitStart;
    // Bytes of the outputs it computed (main graph; 0 in bodies): a trace's transfer sizes when
    // shapes are symbolic and the declared types say nothing.
    std::uint64_t outputBytes = 0;
    // The tensors it computed, one per node output (null for an unused one): valid during the
    // callback only. What a trace shows as the shapes the run had, where the graph says "batch".
    const RuntimeTensor *const *outputs = nullptr;
    std::size_t outputCount = 0;
};

class Backend;
class KernelContext;
struct PreparedNode;

// Transfers to and from other processes (dist/: MPI ranks). A plan run in one of several
// processes holds only that process's nodes; a Recv whose Send runs elsewhere takes its tensor from
// `receive` (instead of its input, which this process never computes), and a Send whose Recv runs
// elsewhere hands its output to `send` as well. Graph outputs computed elsewhere come back as
// invalid tensors: the caller gathers them.
class RemoteTransfers
{
public:
    virtual ~RemoteTransfers() = default;
    virtual bool receivesRemotely(NodeId recv) const = 0;
    virtual bool sendsRemotely(NodeId send) const = 0;
    // Waits until the Recv's tensor begins to arrive: the trace shows this as waiting, not work.
    virtual Status awaitArrival(const PreparedNode &recv) = 0;
    // Then allocates the Recv's output through `ctx` (so a memory plan holds) and fills it.
    virtual Status receive(const PreparedNode &recv, KernelContext &ctx) = 0;
    // Must not wait for the receiver: both sides' queues may be waiting for each other's later steps.
    virtual Status send(const PreparedNode &send, const RuntimeTensor &tensor) = 0;
};

// What a run from a memory plan did with it.
struct MemoryRunStats
{
    std::uint64_t arenaBytes = 0;  // the arenas allocated, all devices
    std::size_t inArena = 0;       // outputs that landed where the plan put them
    std::size_t elsewhere = 0;     // planned outputs a kernel allocated itself
    std::size_t copiedOut = 0;     // outputs that aliased an arena where the plan had not put them
    std::size_t workspaces = 0;    // kernel calls whose workspace was the plan's range of the arena
};

struct ExecOptions
{
    int threads = 1;                               // intra-op threads per queue (when no backends are given)
    std::vector<Backend *> backends;               // one per plan device; empty: CPU backends made per run
    const std::atomic<bool> *cancel = nullptr;     // checked between steps
    std::function<void(const StepEvent &)> onStep; // called from the queue's thread, subgraphs included
    // Every value a node computes, in the main graph and in If/Loop/Scan bodies (each iteration),
    // before the executor may free it: how a probe sees values that are no graph's output.
    std::function<void(const Graph &, ValueId, const RuntimeTensor &)> onValue;
    // Memory (main graph only; bodies allocate per tensor): run from `memory` (made for this plan
    // and these input shapes), or record every value's size and aliasing into `record` (sized to
    // the graph's value slots) for planning one. An output that lands in an arena where the plan
    // did not put it is copied out, so a plan can waste memory but never corrupt a value.
    const MemoryPlan *memory = nullptr;
    SizeRecord *record = nullptr;
    MemoryRunStats *memoryStats = nullptr;
    RemoteTransfers *remote = nullptr; // main graph only
};

class Frame;

// `inputs` has one entry per graph input, in order; an invalid tensor means "use the initializer
// of the same name" (inputs with defaults, IR < 4). Returns one tensor per graph output.
Expected<std::vector<RuntimeTensor>>
executeGraph(const PreparedGraph &graph, std::vector<RuntimeTensor> inputs, const ExecOptions &options,
             const ExecutionPlan *plan = nullptr, const Frame *parent = nullptr);

} // namespace opscope
