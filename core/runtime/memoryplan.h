#pragma once
// Memory planned ahead of a run: every intermediate tensor of the main graph gets an offset in
// one arena per plan device, so that the run allocates one block per device instead of one
// buffer per tensor, and what it needs can be seen before it happens.
//
//   lifetimes   a tensor occupies its buffer from its producer's step to its last reader's,
//               If/Loop/Scan reads of outer values included. Under a parallel or multi-device
//               plan two buffers may share bytes only if every use of one happens before the
//               other's producer in every possible order of the plan (queue order, waitFor
//               edges, data dependencies), not merely in one linearization.
//   views       an output whose bytes lie inside an input's (Reshape, Squeeze, Identity, … —
//               learnt from the sizing run, not from a list) belongs to that input's buffer.
//   in place    an elementwise output of the size and type of an input whose buffer has no
//               other pending use takes that buffer (inPlaceInput lists the CPU kernels that
//               may write over their input).
//   offsets     greedy by size and greedy by breadth (Pisarchyk & Lee 2020), both best-fit, 64-byte
//               aligned; the smaller arena wins.
//
//   workspaces  the bytes a kernel uses only during its call (oneDNN's reordered source and
//               destination, its scratchpad), as the sizing run saw them: a buffer live at the
//               node's step alone.
//
// Not in an arena: graph inputs, initializers and Constant outputs (the model's own bytes), graph
// outputs and every buffer a graph output aliases (they outlive the run), tensors whose size
// depends on data (NonZero, Unique, If, Loop, …: own allocations), tensors a kernel makes itself
// rather than asking its context for (Shape, Size: the sizing run tells), strings and sequences.

#include "runtime/executionplan.h"
#include "runtime/preparedgraph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opscope {

// What a sizing run saw of each value (by ValueId index).
struct ValueRecord
{
    bool seen = false;
    DataType dtype = DataType::Undefined;
    std::uint64_t bytes = 0;
    ValueId viewOf;                 // the input (explicit or implicit) whose bytes it lies in
    std::uint64_t viewOffset = 0;   // where, from that input's first byte
    // Neither a view nor bytes the kernel asked the context for: a range of the arena planned
    // for it would stay unused while the kernel allocates anyway.
    bool ownAllocation = false;
};
// Per value (by ValueId index) what a sizing run saw, and per node (by NodeId index) the most
// workspace bytes its kernel asked for (KernelContext::workspace: oneDNN's reorders, scratchpad).
struct SizeRecord : std::vector<ValueRecord>
{
    using std::vector<ValueRecord>::vector;
    std::vector<std::uint64_t> workspaceBytes;
};

enum class TensorPlacement : std::uint8_t
{
    Arena,    // its own range of the device arena
    InPlace,  // the range of the input it overwrites (sharesWith)
    View,     // inside the buffer of the value it aliases (sharesWith)
    Output,   // a graph output, or a buffer one aliases: its own allocation, returned to the caller
    Dynamic,  // size depends on data: its own allocation at run time
    External, // graph input, initializer, Constant: the model's or the caller's bytes
    Workspace, // a node's bytes for the length of its kernel call: its own range of the arena
    Own,      // the kernel makes the tensor itself (Shape's dims, a helper's buffer): not the arena's
};
const char *placementName(TensorPlacement p);

struct PlannedTensor
{
    ValueId value; // invalid: the workspace of `producer` (bytes only its kernel call uses)
    NodeId producer;
    int device = 0;
    TensorPlacement placement = TensorPlacement::Arena;
    ValueId sharesWith;
    std::uint64_t bytes = 0;
    std::uint64_t offset = 0;    // in the device arena (Arena, InPlace, View)
    std::uint32_t firstStep = 0; // positions in the device's steps, in the plan's order
    std::uint32_t lastStep = 0;  // its last reader's, or that of a view reading its bytes

    bool isWorkspace() const { return placement == TensorPlacement::Workspace; }
};

struct MemoryPlan;
// A planned tensor's name as users read it: the value's, or "<node> workspace".
std::string plannedName(const Graph &graph, const PlannedTensor &t);
// Whether it has bytes in its device's arena.
bool inArena(const MemoryPlan &plan, const PlannedTensor &t);

struct DeviceMemory
{
    std::string device;
    std::uint32_t steps = 0;
    std::uint64_t naiveBytes = 0;      // every arena tensor its own buffer
    std::uint64_t inPlaceBytes = 0;    // in-place reuse only
    std::uint64_t plannedBytes = 0;    // the arena
    // Most bytes live at one step of the plan's order; for plans that may run ops at once, at
    // least the bytes of the largest set found of buffers that may all be live together.
    std::uint64_t lowerBoundBytes = 0;
    std::uint64_t outsideBytes = 0;    // graph outputs and dynamic tensors (own allocations)
    std::uint32_t peakStep = 0;        // the step of the order with the most bytes live
    std::uint64_t peakStepBytes = 0;   // those bytes (the lower bound of a serial plan)
    std::string strategy;              // "greedy-by-size" or "greedy-by-breadth"
    std::vector<PlannedTensor> tensors; // every computed value on this device, by first step
};

struct MemoryPlan
{
    // Where a value's bytes go at run time (by ValueId index): arena range, or none.
    struct Slot
    {
        int device = -1; // -1: not in an arena
        bool view = false;
        std::uint64_t offset = 0;
        std::uint64_t bytes = 0;
        // Views: the aliased buffer's range, where a kernel's view may point.
        std::uint64_t bufferOffset = 0;
        std::uint64_t bufferBytes = 0;
    };
    std::vector<Slot> byValue;
    std::vector<Slot> workspaceByNode; // by NodeId index: the node's workspace, device -1 if none
    std::vector<DeviceMemory> devices; // by plan device
    bool parallel = false;             // lifetimes from the plan's happens-before relation
    double planningMs = 0.0;
};

enum class OffsetStrategy
{
    Best,     // both greedy orders, the smaller arena (by size alone when it meets the bound)
    BySize,
    ByBreadth,
};

struct MemoryPlanOptions
{
    bool inPlace = true;
    bool share = true; // false: every buffer its own range (in-place only)
    OffsetStrategy strategy = OffsetStrategy::Best;
};

// The inputs (bit k: input k) whose bytes the CPU kernel of `node` may write output 0 over.
int inPlaceInputs(const Node &node);
// Ops whose output sizes depend on input values, not only on input shapes.
bool hasDataDependentSize(const Node &node);

// Plans the main graph of `pg` for `plan` with the sizes `record` saw. Fails only for a plan that
// does not match the graph.
Expected<MemoryPlan> planMemory(const PreparedGraph &pg, const ExecutionPlan &plan, const SizeRecord &record,
                                const MemoryPlanOptions &options = {});

// Checks the plan's invariants: no two buffers whose lifetimes may overlap share a byte, in-place
// and views only over buffers without a pending reader, every range inside its arena, the arena
// between the lower bound and naive. Tests run it on every plan; the error names both tensors.
Status verifyMemoryPlan(const PreparedGraph &pg, const ExecutionPlan &plan, const MemoryPlan &memory);

} // namespace opscope
