#pragma once
// An inference session over a model: everything checked up front (unsupported ops — all of them,
// before any work —, feeds against the declared inputs, memory need against what is available),
// then runs by the serial plan or any plan the caller gives.

#include "ir/model.h"
#include "runtime/executor.h"
#include "runtime/preparedgraph.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace opscope {

struct SessionOptions
{
    int threads = 1;         // intra-op threads
    bool checkMemory = true; // refuse runs whose tensors would not fit in available memory
    // Run from a memory plan (memoryplan.h): the first run of a plan and input shapes records
    // every tensor's size, later runs with the same allocate one arena per device.
    bool planMemory = true;
    MemoryPlanOptions memory;
};

struct IoInfo
{
    std::string name;
    TypeInfo type;
    bool hasDefault = false; // an initializer of the same name supplies it when not fed
};

using Feeds = std::vector<std::pair<std::string, RuntimeTensor>>;

class InferenceSession
{
public:
    static Expected<std::unique_ptr<InferenceSession>> create(const Model &model,
                                                              const SessionOptions &options = {});

    const std::vector<IoInfo> &inputs() const { return m_inputs; }
    const std::vector<IoInfo> &outputs() const { return m_outputs; }
    const Model &model() const { return m_model; }
    const PreparedGraph &prepared() const { return *m_prepared; }
    const SessionOptions &options() const { return m_options; }

    // Missing or extra inputs, wrong dtype or rank, dims that contradict the model or each other.
    Status checkFeeds(const Feeds &feeds) const;
    // Peak bytes of intermediate tensors for these feeds, when every shape is known after binding
    // the inputs' symbolic dims (else nullopt).
    std::optional<std::uint64_t> estimatePeakBytes(const Feeds &feeds) const;

    Expected<std::vector<RuntimeTensor>> run(const Feeds &feeds, const ExecutionPlan *plan = nullptr,
                                             const ExecOptions *exec = nullptr) const;

    // The memory plan runs with these feeds' shapes and this plan (null: the serial one) use, once
    // one run has sized them; null before, or with planMemory off.
    std::shared_ptr<const MemoryPlan> memoryPlan(const Feeds &feeds, const ExecutionPlan *plan = nullptr) const;
    // A memory plan for these feeds' shapes and this plan without running: every value sized
    // from the graph's inferred shapes (the inputs' symbols bound from the feeds), the CPU
    // runtime's views (Reshape, Flatten, Squeeze, Unsqueeze, Identity) sharing their input.
    // Values whose shape is not inferred (data-dependent) are left to run-time allocations and
    // counted in `unsized`; kernel workspaces are not known. For sizing a plan where a run
    // cannot happen: rank 0 of an MPI job whose whole model does not fit it.
    Expected<MemoryPlan> memoryPlanFromShapes(const Feeds &feeds, const ExecutionPlan *plan = nullptr,
                                              std::size_t *unsized = nullptr) const;

private:
    InferenceSession() = default;
    std::vector<RuntimeTensor> orderedInputs(const Feeds &feeds) const;
    std::uint64_t memoryKey(const std::vector<RuntimeTensor> &inputs, const ExecutionPlan &plan) const;
    Model m_model;                      // a copy: structure only, weights are shared
    std::unique_ptr<Backend> m_backend; // the device kernels are prepared for
    SessionOptions m_options;
    std::unique_ptr<PreparedGraph> m_prepared;
    std::vector<IoInfo> m_inputs;
    std::vector<IoInfo> m_outputs;
    // The peak estimate of the last feed shapes: repeated runs with the same shapes skip the walk.
    mutable std::mutex m_peakMutex;
    mutable std::vector<std::pair<std::string, std::vector<std::int64_t>>> m_peakShapes;
    mutable std::optional<std::uint64_t> m_peakBytes;
    // Memory plans by (plan, input shapes), the most recent last; a few, as a session usually
    // runs one shape under one to four schedules.
    mutable std::mutex m_memoryMutex;
    mutable std::vector<std::pair<std::uint64_t, std::shared_ptr<const MemoryPlan>>> m_memoryPlans;
};

// A computed value beside the model's declaration of it.
struct ComputedValue
{
    std::string name;
    const TypeInfo *declared = nullptr;
    DataType dtype = DataType::Undefined;
    std::vector<std::int64_t> shape;
};

// What computed values contradict in the model's declaration of them, one line each: an element
// type, a rank, a fixed dim, or one symbolic dim with two sizes ("output 'y' is float32[1,10]; the
// model declares float32[1,1000]", `kind` being "output"). Other tools allocate or check by the
// declaration, so a wrong one is worth telling a user; it is not an error of the run.
// `bound`: values whose symbolic dims were fixed first (a run's inputs): a computed value whose
// symbol differs from theirs is a mismatch too.
std::vector<std::string> declarationMismatches(const std::vector<ComputedValue> &values, const std::string &kind,
                                               const std::vector<ComputedValue> &bound = {});
// The same for a run's outputs, against what its inputs bound the symbols to.
std::vector<std::string> declaredOutputMismatches(const std::vector<IoInfo> &declared,
                                                  const std::vector<RuntimeTensor> &outputs,
                                                  const std::vector<IoInfo> &declaredInputs = {},
                                                  const Feeds &feeds = {});

// Bytes of memory available to a new allocation now: MemAvailable, or less where this process's
// cgroup (a container, a batch job) allows less; 0 when unknown.
std::uint64_t availableMemoryBytes();
// The same, read at most every 200 ms (a read of /proc/meminfo costs ~10 µs: a small model's run).
std::uint64_t recentAvailableMemoryBytes();

} // namespace opscope
