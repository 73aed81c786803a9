#include "rankmemory.h"

#include "mpitransfers.h"

#include "ir/dependencies.h"
#include "runtime/backend.h"
#include "runtime/memoryplan.h"
#include "util/systemmemory.h"

#include <map>
#include <memory>
#include <set>

namespace opscope::dist {

std::uint64_t embeddedWeightBytes(const Graph &graph)
{
    std::uint64_t bytes = 0;
    for (ValueId v : graph.initializers())
        if (const Tensor &t = *graph.value(v).initializer; !t.isMapped())
            bytes += t.byteSize();
    return bytes;
}

Expected<std::vector<RankMemory>> predictRankMemory(const Model &partitioned, const std::vector<int> &deviceOf,
                                                    const ExecutionPlan &global,
                                                    const std::vector<int> &rankOfDevice, int ranks, int threads,
                                                    const Feeds &feeds, bool byRunning, std::size_t *unsized)
{
    std::vector<RankMemory> need(static_cast<std::size_t>(ranks));
    const Graph &g = partitioned.graph;
    const auto rankOfNode = [&](NodeId n) {
        const int d = n.index < deviceOf.size() ? deviceOf[n.index] : -1;
        return d >= 0 && std::size_t(d) < rankOfDevice.size() ? rankOfDevice[std::size_t(d)] : -1;
    };

    // Weights: those on the heap (embedded ones not mapped, those the passes made) on every rank;
    // mapped ones — external data, or embedded weights mapped from the model file — where a node
    // reads them.
    std::vector<std::set<int>> readers(g.valueSlots());
    for (NodeId n : g.nodeIds()) {
        const int r = rankOfNode(n);
        for (ValueId v : g.node(n).inputs)
            if (v.valid())
                readers[v.index].insert(r);
        if (g.node(n).hasSubgraphs())
            for (ValueId v : implicitInputs(g, n))
                readers[v.index].insert(r);
    }
    const std::uint64_t embedded = embeddedWeightBytes(g);
    for (int r = 0; r < ranks; ++r)
        need[std::size_t(r)].embeddedBytes = embedded;
    for (ValueId v : g.initializers())
        if (const Tensor &t = *g.value(v).initializer; t.isMapped())
            for (int r : readers[v.index])
                if (r >= 0 && r < ranks)
                    need[std::size_t(r)].mappedBytes += t.byteSize();

    // One run of the whole plan here sizes every tensor; the memory plan then has each device's
    // arena. Where the whole model does not fit this process, the inferred shapes do instead.
    SessionOptions so;
    so.threads = threads;
    so.checkMemory = false; // serial ran here already; this run needs no more than it did
    Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(partitioned, so);
    if (!session)
        return session.status();
    std::shared_ptr<const MemoryPlan> memory;
    if (byRunning) {
        std::vector<std::unique_ptr<Backend>> owned;
        ExecOptions exec;
        exec.threads = threads;
        for (std::size_t d = 0; d < global.devices.size(); ++d) {
            owned.push_back(std::make_unique<CpuBackend>(int(d), threads));
            exec.backends.push_back(owned.back().get());
        }
        if (Expected<std::vector<RuntimeTensor>> out = (*session)->run(feeds, &global, &exec); !out)
            return out.status().withContext("sizing the plan's memory");
        memory = (*session)->memoryPlan(feeds, &global);
        if (!memory)
            return Status::internal("the plan's memory could not be planned from its sizing run");
    } else {
        Expected<MemoryPlan> fromShapes = (*session)->memoryPlanFromShapes(feeds, &global, unsized);
        if (!fromShapes)
            return fromShapes.status().withContext("sizing the plan's memory from its shapes");
        memory = std::make_shared<const MemoryPlan>(std::move(*fromShapes));
    }
    std::map<std::uint32_t, std::uint64_t> bytesOf; // value index → bytes, any placement
    for (std::size_t d = 0; d < memory->devices.size() && d < rankOfDevice.size(); ++d) {
        const DeviceMemory &dm = memory->devices[d];
        RankMemory &r = need[std::size_t(rankOfDevice[d])];
        r.arenaBytes += dm.plannedBytes;
        r.outsideBytes += dm.outsideBytes;
        for (const PlannedTensor &t : dm.tensors)
            if (t.value.valid())
                bytesOf[t.value.index] = t.bytes;
    }
    // A Send to another rank keeps a copy of its tensor, reused run after run.
    for (const CrossRankEdge &e : crossRankEdges(g, deviceOf, rankOfDevice)) {
        const Node &send = g.node(e.send);
        if (send.inputs.empty())
            continue;
        if (const auto b = bytesOf.find(send.inputs[0].index); b != bytesOf.end())
            need[std::size_t(e.fromRank)].sendBytes += b->second;
    }
    return need;
}

Status checkRankMemory(const std::string &schedule, const std::vector<RankMemory> &need,
                       const std::vector<std::uint64_t> &available, bool limitGiven)
{
    for (std::size_t r = 0; r < need.size() && r < available.size(); ++r) {
        const RankMemory &m = need[r];
        if (available[r] == 0 || m.total(limitGiven) <= available[r])
            continue;
        return Status::unsupported(
            schedule + " does not fit rank " + std::to_string(r) + "'s memory: its share needs " +
            bytesText(m.total(limitGiven)) + " (intermediate tensors " + bytesText(m.arenaBytes + m.outsideBytes) +
            ", weights " + bytesText(m.mappedBytes + (limitGiven ? m.embeddedBytes : 0)) + ", send buffers " +
            bytesText(m.sendBytes) + ") but " + bytesText(available[r]) +
            (limitGiven ? " is allowed by --memory-per-rank" : " is free there"));
    }
    return Status::ok();
}

} // namespace opscope::dist
