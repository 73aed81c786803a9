#pragma once
// What a kernel sees: its node's inputs, attributes (node values merged with the op schema's
// defaults at prepare time), outputs to allocate, the intra-op thread count, and a way to run
// subgraphs (If/Loop/Scan). Errors name the node.

#include "ir/graph.h"
#include "runtime/runtimetensor.h"
#include "util/status.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace opscope {

class KernelContext;
struct PreparedGraph;
struct InputTypeRules;
using KernelFn = Status (*)(KernelContext &);

// Runs a prepared subgraph with explicit inputs; outer-scope values come from the calling frame.
using SubgraphRunner =
    std::function<Expected<std::vector<RuntimeTensor>>(const PreparedGraph &, std::vector<RuntimeTensor>)>;

// Per-node state a kernel may keep between runs (oneDNN primitives, reordered weights), keyed by
// the kernel itself. Guarded by its mutex: one session may run from several threads.
struct KernelCache
{
    std::mutex mutex;
    std::shared_ptr<void> state;
};

struct PreparedNode
{
    const Node *node = nullptr;
    std::vector<bool> constantInputs; // initializers: their bytes never change between runs
    std::shared_ptr<KernelCache> cache = std::make_shared<KernelCache>();
    KernelFn kernel = nullptr;
    int opset = 0;
    std::vector<Attribute> attributes;                                    // node attributes + schema defaults
    const InputTypeRules *typeRules = nullptr;                            // from the schema; null: none
    std::vector<ValueId> implicitInputs;                                  // outer values its subgraphs read
    std::vector<std::pair<std::string, const PreparedGraph *>> subgraphs; // by attribute name
};

// Where memory planning put an output: `bytes` at `data`, kept alive by `owner` (the arena).
struct PlannedOutput
{
    std::byte *data = nullptr;
    std::uint64_t bytes = 0;
    const std::shared_ptr<std::byte> *owner = nullptr;
};

// A 64-byte aligned buffer of at least `bytes` for this thread, kept and grown across calls so that
// repeated calls do not page-fault a fresh block each time; `slot` 0–1 keeps two alive at once.
// Valid until the same thread asks for the same slot again. nullptr: out of memory.
std::byte *threadScratch(int slot, std::uint64_t bytes);

class KernelContext
{
public:
    KernelContext(const PreparedNode &prepared, std::span<const RuntimeTensor *const> inputs,
                  std::vector<RuntimeTensor> &outputs, int threads, const SubgraphRunner &runSubgraph)
        : m_prepared(prepared), m_inputs(inputs), m_outputs(outputs), m_threads(threads),
          m_runSubgraph(runSubgraph)
    {
    }

    const Node &node() const { return *m_prepared.node; }
    bool isConstantInput(std::size_t i) const
    {
        return i < m_prepared.constantInputs.size() && m_prepared.constantInputs[i];
    }
    KernelCache &cache() const { return *m_prepared.cache; }
    int opset() const { return m_prepared.opset; }
    int threads() const { return m_threads; }

    std::size_t inputCount() const { return m_inputs.size(); }
    // nullptr when the input is omitted (optional) or beyond the node's inputs.
    const RuntimeTensor *input(std::size_t i) const { return i < m_inputs.size() ? m_inputs[i] : nullptr; }
    bool hasInput(std::size_t i) const { return input(i) != nullptr; }
    const RuntimeTensor &in(std::size_t i) const { return *m_inputs[i]; } // checked by requireInputs

    std::size_t outputCount() const { return m_outputs.size(); }
    bool wantsOutput(std::size_t i) const { return i < node().outputs.size() && node().outputs[i].valid(); }
    // Allocates output i (uninitialized); the returned pointer stays valid for this kernel call.
    // Where memory planning gave the output bytes that hold it, they are used (for an in-place op
    // they are an input's: write element i only after reading element i).
    Expected<RuntimeTensor *> allocateOutput(std::size_t i, DataType dtype, std::vector<std::int64_t> shape);
    // The same tensor, not yet set as output i (for helpers that return their result).
    Expected<RuntimeTensor> newOutputTensor(std::size_t i, DataType dtype, std::vector<std::int64_t> shape) const;
    // The executor's: planned places of the outputs (by output index), for this call.
    void setPlannedOutputs(std::span<const PlannedOutput> planned) { m_planned = planned; }

    // Bytes only this call uses, gone when it returns (oneDNN's reorders and scratchpad): where
    // memory planning gave the node a workspace, its range of the arena, else a buffer of this
    // thread's. 64-byte aligned. A later request invalidates the earlier one; ask once for the
    // sum and carve it. nullptr: out of memory.
    // `planned` false: bytes for a trial call (timing a kernel variant) that the plan must not
    // reserve; never the arena's.
    std::byte *workspace(std::uint64_t bytes, bool planned = true);
    // The executor's: the node's planned workspace, and the most bytes this call asked for (what a
    // sizing run records, and the plan reserves).
    void setPlannedWorkspace(const PlannedOutput &w) { m_plannedWorkspace = w; }
    std::uint64_t workspaceAsked() const { return m_workspaceAsked; }
    bool workspaceFromPlan() const { return m_workspaceFromPlan; }
    // A sizing run's: unplanned workspaces are this call's own, freed when it ends, so that the
    // run that measures memory does not leave per-thread buffers behind for the planned ones.
    void setWorkspacePerCall(bool on) { m_workspacePerCall = on; }
    bool workspacePerCall() const { return m_workspacePerCall; }
    // A sizing run's: whether `bytes` were handed out by newOutputTensor in this call. An output
    // that was not (Shape's, a Constant's, a helper's own buffer) is the kernel's allocation: a
    // plan that gave it arena bytes would leave them unused. Tracked only in sizing runs.
    void setTrackAllocations(bool on) { m_trackAllocations = on; }
    bool handedOut(const std::byte *bytes) const;
    // Output i after it was allocated or set (nullptr before): for kernels that post-process.
    RuntimeTensor *output(std::size_t i)
    {
        return i < m_outputs.size() && m_outputs[i].isValid() ? &m_outputs[i] : nullptr;
    }
    void setOutput(std::size_t i, RuntimeTensor t)
    {
        if (i < m_outputs.size())
            m_outputs[i] = std::move(t);
    }

    const Attribute *attr(std::string_view name) const;
    std::int64_t attrInt(std::string_view name, std::int64_t fallback = 0) const;
    float attrFloat(std::string_view name, float fallback = 0.0f) const;
    std::string attrString(std::string_view name, std::string fallback = {}) const;
    std::vector<std::int64_t> attrInts(std::string_view name, std::vector<std::int64_t> fallback = {}) const;
    std::vector<float> attrFloats(std::string_view name) const;
    std::vector<std::string> attrStrings(std::string_view name) const;
    bool hasAttr(std::string_view name) const { return attr(name) != nullptr; }

    // At least `count` present inputs, else an error naming the node.
    Status requireInputs(std::size_t count) const;

    Status fail(const std::string &message) const;        // invalid input (e.g. an index out of range)
    Status unsupported(const std::string &message) const; // valid, but this kernel can't do it

    const PreparedGraph *subgraph(std::string_view attrName) const;
    Expected<std::vector<RuntimeTensor>> runSubgraph(const PreparedGraph &graph,
                                                     std::vector<RuntimeTensor> inputs) const
    {
        return m_runSubgraph(graph, std::move(inputs));
    }

private:
    std::string where() const;
    const PreparedNode &m_prepared;
    std::span<const RuntimeTensor *const> m_inputs;
    std::vector<RuntimeTensor> &m_outputs;
    int m_threads;
    const SubgraphRunner &m_runSubgraph;
    std::span<const PlannedOutput> m_planned;
    PlannedOutput m_plannedWorkspace;
    std::uint64_t m_workspaceAsked = 0;
    bool m_workspacePerCall = false;
    bool m_workspaceFromPlan = false;
    bool m_trackAllocations = false;
    mutable std::vector<const std::byte *> m_handedOut;
    std::unique_ptr<std::byte, void (*)(void *)> m_ownWorkspace{nullptr, &std::free};
};

// Kernels by (domain, op type), each valid from an opset version on.
class KernelRegistry
{
public:
    static const KernelRegistry &cpu();

    void add(const std::string &domain, const std::string &opType, int sinceVersion, KernelFn fn);
    void add(const std::string &opType, KernelFn fn) { add("", opType, 1, fn); }
    KernelFn find(const std::string &domain, const std::string &opType, int opset) const;
    std::vector<std::string> opTypes() const; // "Conv", "com.microsoft::FusedConv"...

private:
    struct Entry
    {
        int sinceVersion;
        KernelFn fn;
    };
    std::map<std::pair<std::string, std::string>, std::vector<Entry>> m_entries;
};

// Each kernel file registers its kernels here (explicit calls: static-init registration gets
// dropped by the linker from static libraries).
void registerElementwiseKernels(KernelRegistry &r);
void registerActivationKernels(KernelRegistry &r);
void registerReduceKernels(KernelRegistry &r);
void registerShapeKernels(KernelRegistry &r);
void registerIndexingKernels(KernelRegistry &r);
void registerMatMulKernels(KernelRegistry &r);
void registerConvKernels(KernelRegistry &r);
void registerNormKernels(KernelRegistry &r);
void registerMiscKernels(KernelRegistry &r);
void registerControlFlowKernels(KernelRegistry &r);
void registerFusedKernels(KernelRegistry &r);
void registerAttentionKernels(KernelRegistry &r);
void registerLayoutKernels(KernelRegistry &r);

} // namespace opscope
