#include "runtime/memoryplan.h"

#include "runtime/memoryplacement.h"
#include "runtime/planorder.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace opscope {

const char *placementName(TensorPlacement p)
{
    switch (p) {
    case TensorPlacement::Arena: return "arena";
    case TensorPlacement::InPlace: return "in-place";
    case TensorPlacement::View: return "view";
    case TensorPlacement::Output: return "output";
    case TensorPlacement::Dynamic: return "dynamic";
    case TensorPlacement::Own: return "own";
    case TensorPlacement::External: return "external";
    case TensorPlacement::Workspace: return "workspace";
    }
    return "?";
}

std::string plannedName(const Graph &graph, const PlannedTensor &t)
{
    return t.isWorkspace() ? graph.node(t.producer).name + " workspace" : graph.value(t.value).name;
}

bool inArena(const MemoryPlan &plan, const PlannedTensor &t)
{
    return t.isWorkspace() || plan.byValue[t.value.index].device >= 0;
}

int inPlaceInputs(const Node &node)
{
    // The CPU kernels that write output 0 element by element at the index they read (unaryKernel,
    // binaryApply, oneDNN eltwise, which allows src == dst) and read nothing else of that input
    // after writing: each is checked by tst_memoryplan's in-place rows against a run without.
    static const std::set<std::string> unary = {
        "Relu",  "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",  "Elu",   "Selu",  "Celu",
        "Softplus", "Softsign", "ThresholdedRelu", "Gelu", "Shrink", "Clip", "Abs", "Neg", "Sign",
        "Sqrt",  "Exp",       "Log",     "Reciprocal",  "Sin",       "Cos",   "Erf",   "Ceil",  "Floor",
        "Round"};
    static const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div"};
    if (node.domain.empty() || node.domain == "ai.onnx") {
        if (unary.count(node.opType))
            return 1;
        if (binary.count(node.opType))
            return 3;
        return 0;
    }
    if (node.domain == "ai.opscope" && (node.opType == "HardSwish" || node.opType == "Swish" || node.opType == "Gelu"))
        return 1;
    if (node.domain == "com.microsoft" && (node.opType == "QuickGelu" || node.opType == "Gelu"))
        return 1;
    return 0;
}

bool hasDataDependentSize(const Node &node)
{
    static const std::set<std::string> ops = {"NonZero", "Unique",  "Compress", "NonMaxSuppression",
                                              "If",      "Loop",    "Scan",     "TopK",
                                              "StringSplit", "RegexFullMatch", "StringNormalizer"};
    return (node.domain.empty() || node.domain == "ai.onnx") && ops.count(node.opType);
}

namespace {

bool isConstantNode(const Node &n)
{
    return (n.domain.empty() || n.domain == "ai.onnx") && n.opType == "Constant";
}

} // namespace

Expected<MemoryPlan> planMemory(const PreparedGraph &pg, const ExecutionPlan &plan, const SizeRecord &record,
                                const MemoryPlanOptions &options)
{
    const auto started = std::chrono::steady_clock::now();
    const Graph &g = *pg.graph;
    if (record.size() < g.valueSlots())
        return Status::internal("memory planning: the size record is of another graph");
    Expected<PlanOrder> ordered = PlanOrder::of(pg, plan);
    if (!ordered)
        return ordered.status();
    const PlanOrder &order = *ordered;
    const int steps = int(order.order().size());

    // Reads of each value by position, explicit and through subgraphs.
    std::vector<std::vector<int>> readers(g.valueSlots());
    for (int pos = 0; pos < steps; ++pos) {
        const NodeId id = order.order()[std::size_t(pos)];
        for (ValueId v : g.node(id).inputs)
            if (v.valid())
                readers[v.index].push_back(pos);
        if (id.index < pg.nodes.size())
            for (ValueId v : pg.nodes[id.index].implicitInputs)
                readers[v.index].push_back(pos);
    }

    std::vector<TensorPlacement> placement(g.valueSlots(), TensorPlacement::External);
    std::vector<ValueId> sharesWith(g.valueSlots());
    std::vector<int> bufferOf(g.valueSlots(), -1);
    std::vector<std::uint64_t> within(g.valueSlots(), 0); // offset inside its buffer
    std::vector<ArenaBuffer> buffers;
    const auto join = [&](int b, ValueId v, int pos) {
        ArenaBuffer &buf = buffers[std::size_t(b)];
        buf.members.push_back(v);
        buf.uses.push_back(pos);
        for (int r : readers[v.index])
            buf.uses.push_back(r);
        buf.last = std::max(buf.last, *std::max_element(buf.uses.begin(), buf.uses.end()));
        bufferOf[v.index] = b;
    };
    // Every use of buffer b so far, other than at `pos`, happens before `pos`.
    const auto noPendingUse = [&](int b, int pos) {
        for (int u : buffers[std::size_t(b)].uses)
            if (u != pos && !order.precedes(u, pos))
                return false;
        return true;
    };

    for (int pos = 0; pos < steps; ++pos) {
        const NodeId id = order.order()[std::size_t(pos)];
        const Node &n = g.node(id);
        const int inPlaceMask = options.inPlace ? inPlaceInputs(n) : 0;
        for (std::size_t o = 0; o < n.outputs.size(); ++o) {
            const ValueId v = n.outputs[o];
            if (!v.valid())
                continue;
            const ValueRecord &r = record[v.index];
            TensorPlacement p = TensorPlacement::Arena;
            if (isConstantNode(n)) {
                p = TensorPlacement::External;
            } else if (!r.seen || r.bytes == 0 || r.dtype == DataType::String || r.dtype == DataType::Undefined ||
                       hasDataDependentSize(n)) {
                p = TensorPlacement::Dynamic;
            } else if (r.ownAllocation) {
                p = TensorPlacement::Own;
            } else if (r.viewOf.valid()) {
                sharesWith[v.index] = r.viewOf;
                const int b = bufferOf[r.viewOf.index];
                const std::uint64_t at = within[r.viewOf.index] + r.viewOffset;
                if (b >= 0 && at + r.bytes <= buffers[std::size_t(b)].bytes) {
                    p = TensorPlacement::View;
                    within[v.index] = at;
                    join(b, v, pos);
                } else {
                    // A view of the model's or the caller's bytes, or one this plan cannot place
                    // (the run copies a view it did not plan out of the arena).
                    p = b < 0 && placement[r.viewOf.index] == TensorPlacement::External ? TensorPlacement::External
                                                                                 : TensorPlacement::Dynamic;
                }
            } else {
                // A graph output is never written in place: its buffer would leave the arena and
                // take the whole chain it overwrote with it.
                const bool leaves = v.index < pg.keep.size() && pg.keep[v.index];
                for (std::size_t k = 0; o == 0 && !leaves && k < n.inputs.size() && k < 2; ++k) {
                    const ValueId x = n.inputs[k];
                    if (!(inPlaceMask >> k & 1) || !x.valid() || bufferOf[x.index] < 0)
                        continue;
                    const ValueRecord &rx = record[x.index];
                    const bool readOnce = std::count(n.inputs.begin(), n.inputs.end(), x) == 1 &&
                                          std::count(pg.nodes[id.index].implicitInputs.begin(),
                                                     pg.nodes[id.index].implicitInputs.end(), x) == 0;
                    if (rx.dtype != r.dtype || rx.bytes != r.bytes || !readOnce ||
                        !noPendingUse(bufferOf[x.index], pos))
                        continue;
                    p = TensorPlacement::InPlace;
                    sharesWith[v.index] = x;
                    within[v.index] = within[x.index];
                    join(bufferOf[x.index], v, pos);
                    break;
                }
                if (p != TensorPlacement::InPlace) {
                    ArenaBuffer buf;
                    buf.root = v;
                    buf.device = order.deviceAt(pos);
                    buf.bytes = alignedBytes(r.bytes);
                    buf.first = buf.last = pos;
                    buffers.push_back(std::move(buf));
                    join(int(buffers.size()) - 1, v, pos);
                }
            }
            placement[v.index] = p;
        }
    }
    // Workspaces: a buffer per node whose kernel asked for one, live at that step alone.
    for (int pos = 0; pos < steps; ++pos) {
        const NodeId id = order.order()[std::size_t(pos)];
        const std::uint64_t bytes = id.index < record.workspaceBytes.size() ? record.workspaceBytes[id.index] : 0;
        if (bytes == 0)
            continue;
        ArenaBuffer buf;
        buf.workspaceOf = id;
        buf.device = order.deviceAt(pos);
        buf.bytes = alignedBytes(bytes);
        buf.first = buf.last = pos;
        buf.uses = {pos};
        buffers.push_back(std::move(buf));
    }
    // Graph outputs (and what else is kept) leave the run: their buffers are their own.
    for (std::size_t v = 0; v < g.valueSlots(); ++v)
        if (bufferOf[v] >= 0 && v < pg.keep.size() && pg.keep[v])
            buffers[std::size_t(bufferOf[v])].output = true;
    for (const ValueId v : g.outputs())
        if (bufferOf[v.index] >= 0)
            buffers[std::size_t(bufferOf[v.index])].output = true;
    for (const ArenaBuffer &b : buffers)
        if (b.output)
            for (ValueId m : b.members)
                placement[m.index] = TensorPlacement::Output;

    // Where each value's bytes are last needed: its last reader's step, or a later one of a view
    // that reads them (a Reshape's output keeps its input's bytes alive). Views come after their
    // bases, so one pass from the end carries every chain.
    std::vector<int> lastNeeded(g.valueSlots(), 0);
    for (int pos = 0; pos < steps; ++pos)
        for (ValueId v : g.node(order.order()[std::size_t(pos)]).outputs)
            if (v.valid()) {
                lastNeeded[v.index] = pos;
                for (int r : readers[v.index])
                    lastNeeded[v.index] = std::max(lastNeeded[v.index], r);
            }
    for (int pos = steps - 1; pos >= 0; --pos)
        for (ValueId v : g.node(order.order()[std::size_t(pos)]).outputs)
            if (v.valid() && placement[v.index] == TensorPlacement::View && sharesWith[v.index].valid())
                lastNeeded[sharesWith[v.index].index] =
                    std::max(lastNeeded[sharesWith[v.index].index], lastNeeded[v.index]);

    MemoryPlan mp;
    mp.parallel = !order.serial();
    mp.byValue.assign(g.valueSlots(), {});
    mp.workspaceByNode.assign(g.nodeSlots(), {});
    mp.devices.resize(plan.devices.size());
    for (std::size_t d = 0; d < plan.devices.size(); ++d) {
        DeviceMemory &dm = mp.devices[d];
        dm.device = plan.devices[d];
        std::vector<int> ids;
        for (int b = 0; b < int(buffers.size()); ++b)
            if (buffers[std::size_t(b)].device == int(d) && !buffers[std::size_t(b)].output)
                ids.push_back(b);
        PlacementResult placed = placeBuffers(buffers, ids, order, steps, options.share, options.strategy);
        dm.plannedBytes = placed.arenaBytes;
        dm.lowerBoundBytes = placed.lowerBoundBytes;
        dm.peakStepBytes = placed.peakBytes;
        dm.strategy = placed.strategy;
        for (int b : ids) {
            dm.inPlaceBytes += buffers[std::size_t(b)].bytes;
            if (buffers[std::size_t(b)].workspaceOf.valid())
                dm.naiveBytes += buffers[std::size_t(b)].bytes;
            for (ValueId m : buffers[std::size_t(b)].members)
                if (placement[m.index] != TensorPlacement::View)
                    dm.naiveBytes += alignedBytes(record[m.index].bytes);
        }
        std::vector<int> workspaceAt(std::size_t(steps), -1); // buffer of the workspace of each step
        for (int b : ids)
            if (buffers[std::size_t(b)].workspaceOf.valid())
                workspaceAt[std::size_t(buffers[std::size_t(b)].first)] = b;
        // Steps as positions among this device's steps.
        std::vector<std::uint32_t> local(std::size_t(steps), 0);
        std::uint32_t count = 0;
        for (int pos = 0; pos < steps; ++pos) {
            if (order.deviceAt(pos) == int(d))
                ++count;
            local[std::size_t(pos)] = count == 0 ? 0 : count - 1;
        }
        dm.steps = count;
        dm.peakStep = placed.peakPosition >= 0 ? local[std::size_t(placed.peakPosition)] : 0;
        for (int pos = 0; pos < steps; ++pos) {
            if (order.deviceAt(pos) != int(d))
                continue;
            const Node &n = g.node(order.order()[std::size_t(pos)]);
            for (ValueId v : n.outputs) {
                if (!v.valid())
                    continue;
                PlannedTensor t;
                t.value = v;
                t.producer = n.id;
                t.device = int(d);
                t.placement = placement[v.index];
                t.sharesWith = sharesWith[v.index];
                t.bytes = record[v.index].bytes;
                t.firstStep = local[std::size_t(pos)];
                t.lastStep = local[std::size_t(lastNeeded[v.index])];
                if (bufferOf[v.index] >= 0 && !buffers[std::size_t(bufferOf[v.index])].output) {
                    const ArenaBuffer &b = buffers[std::size_t(bufferOf[v.index])];
                    t.offset = b.offset + within[v.index];
                    MemoryPlan::Slot &s = mp.byValue[v.index];
                    s.device = int(d);
                    s.view = t.placement == TensorPlacement::View;
                    s.offset = t.offset;
                    s.bytes = s.view ? t.bytes : b.bytes - within[v.index];
                    s.bufferOffset = b.offset;
                    s.bufferBytes = b.bytes;
                } else if (t.placement == TensorPlacement::Output || t.placement == TensorPlacement::Dynamic ||
                           t.placement == TensorPlacement::Own) {
                    dm.outsideBytes += t.placement == TensorPlacement::Output && record[v.index].viewOf.valid() ? 0 : t.bytes;
                }
                dm.tensors.push_back(t);
            }
            if (const int b = workspaceAt[std::size_t(pos)]; b >= 0) {
                const ArenaBuffer &buf = buffers[std::size_t(b)];
                PlannedTensor t;
                t.producer = n.id;
                t.device = int(d);
                t.placement = TensorPlacement::Workspace;
                t.bytes = buf.bytes;
                t.offset = buf.offset;
                t.firstStep = t.lastStep = local[std::size_t(pos)];
                dm.tensors.push_back(t);
                mp.workspaceByNode[n.id.index] = {int(d), false, buf.offset, buf.bytes, buf.offset, buf.bytes};
            }
        }
    }
    mp.planningMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return mp;
}

Status verifyMemoryPlan(const PreparedGraph &pg, const ExecutionPlan &plan, const MemoryPlan &memory)
{
    const Graph &g = *pg.graph;
    Expected<PlanOrder> ordered = PlanOrder::of(pg, plan);
    if (!ordered)
        return ordered.status();
    const PlanOrder &order = *ordered;
    const int steps = int(order.order().size());
    std::vector<std::vector<int>> readers(g.valueSlots());
    for (int pos = 0; pos < steps; ++pos) {
        const NodeId id = order.order()[std::size_t(pos)];
        for (ValueId v : g.node(id).inputs)
            if (v.valid())
                readers[v.index].push_back(pos);
        for (ValueId v : pg.nodes[id.index].implicitInputs)
            readers[v.index].push_back(pos);
    }
    for (const DeviceMemory &dm : memory.devices) {
        // Each arena tensor with its uses by position: its producer and its readers.
        struct Use
        {
            const PlannedTensor *t;
            int producer;
            std::vector<int> uses;
            std::size_t root; // the first value of its alias chain (views, in-place outputs)
        };
        std::vector<Use> arena;
        std::vector<int> useOf(g.valueSlots(), -1);
        for (const PlannedTensor &t : dm.tensors) {
            const int producer = order.position(t.producer);
            if (t.isWorkspace()) { // used at its node's step alone
                if (t.offset + t.bytes > dm.plannedBytes)
                    return Status::internal("memory plan: the workspace of '" + g.node(t.producer).name +
                                            "' ends past the arena");
                arena.push_back(Use{&t, producer, {producer}, arena.size()});
                continue;
            }
            if (memory.byValue[t.value.index].device < 0)
                continue;
            Use u{&t, producer, readers[t.value.index], arena.size()};
            u.uses.push_back(producer);
            if (t.sharesWith.valid() && useOf[t.sharesWith.index] >= 0)
                u.root = arena[std::size_t(useOf[t.sharesWith.index])].root;
            if (t.offset + t.bytes > dm.plannedBytes)
                return Status::internal("memory plan: '" + g.value(t.value).name + "' ends past the arena");
            useOf[t.value.index] = int(arena.size());
            arena.push_back(std::move(u));
        }
        const auto name = [&](const Use &u) {
            return u.t->value.valid() ? "'" + g.value(u.t->value).name + "'"
                                      : "the workspace of '" + g.node(u.t->producer).name + "'";
        };
        const auto allBefore = [&](const Use &x, const Use &y, bool orAt) {
            for (int p : x.uses)
                if (!(order.precedes(p, y.producer) || (orAt && p == y.producer)))
                    return false;
            return true;
        };
        for (std::size_t i = 0; i < arena.size(); ++i)
            for (std::size_t j = i + 1; j < arena.size(); ++j) {
                const Use &a = arena[i], &b = arena[j];
                if (a.t->bytes == 0 || b.t->bytes == 0 || a.t->offset >= b.t->offset + b.t->bytes ||
                    b.t->offset >= a.t->offset + a.t->bytes)
                    continue;
                if (a.root == b.root) {
                    // In place: the overwritten value, and every value read through its bytes, is
                    // done by the step that overwrites it. Views share with their base by design.
                    const bool bLater = order.precedes(a.producer, b.producer);
                    const Use &later = bLater ? b : a, &earlier = bLater ? a : b;
                    if (later.t->placement == TensorPlacement::InPlace && !allBefore(earlier, later, true))
                        return Status::internal("memory plan: in-place " + name(later) + " overwrites " +
                                                name(earlier) + ", which is still read");
                    continue;
                }
                if (!allBefore(a, b, false) && !allBefore(b, a, false))
                    return Status::internal("memory plan: " + name(a) + " and " + name(b) + " (" + dm.device +
                                            ") share bytes while both may be live");
            }
        if (dm.plannedBytes < dm.lowerBoundBytes || dm.plannedBytes > dm.inPlaceBytes ||
            dm.inPlaceBytes > dm.naiveBytes)
            return Status::internal("memory plan (" + dm.device + "): arena " + std::to_string(dm.plannedBytes) +
                                    " B outside [lower bound " + std::to_string(dm.lowerBoundBytes) +
                                    ", in-place " + std::to_string(dm.inPlaceBytes) + " <= naive " +
                                    std::to_string(dm.naiveBytes) + "]");
    }
    return Status::ok();
}

} // namespace opscope
