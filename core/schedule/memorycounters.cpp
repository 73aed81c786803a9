#include "schedule/memorycounters.h"

#include "ir/dependencies.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace opscope::schedule {

void addMemoryCounters(const Graph &graph, const MemoryPlan &memory, trace::Trace &trace)
{
    std::unordered_map<std::string, std::pair<double, double>> spanOf; // node name → first span
    for (const trace::Lane &l : trace.lanes)
        for (const trace::Span &s : l.spans)
            spanOf.emplace(trace.strings[s.name], std::pair(s.start, s.end));
    const auto span = [&](NodeId n) -> const std::pair<double, double> * {
        const auto it = spanOf.find(graph.node(n).name);
        return it == spanOf.end() ? nullptr : &it->second;
    };
    // Readers of a value, explicit and through If/Loop/Scan bodies.
    std::vector<std::vector<NodeId>> readers(graph.valueSlots());
    for (NodeId id : graph.nodeIds()) {
        for (ValueId v : graph.node(id).inputs)
            if (v.valid())
                readers[v.index].push_back(id);
        if (graph.node(id).hasSubgraphs())
            for (ValueId v : implicitInputs(graph, id))
                readers[v.index].push_back(id);
    }
    for (const DeviceMemory &dm : memory.devices) {
        std::unordered_map<std::uint32_t, const PlannedTensor *> byValue;
        for (const PlannedTensor &t : dm.tensors)
            if (!t.isWorkspace())
                byValue[t.value.index] = &t;
        // Buffers by their root value: [start, end] on this run's clock, and bytes.
        struct Live
        {
            double start = 1e300, end = -1e300;
            std::uint64_t bytes = 0;
        };
        std::map<std::uint32_t, Live> buffers;
        std::vector<Live> workspaces; // each its own buffer, for its node's span
        for (const PlannedTensor &t : dm.tensors) {
            if (t.isWorkspace()) {
                if (const auto *during = span(t.producer))
                    workspaces.push_back({during->first, during->second, t.bytes});
                continue;
            }
            if (memory.byValue[t.value.index].device < 0)
                continue;
            const PlannedTensor *root = &t;
            for (int guard = 0; guard < 1 << 16 && root->sharesWith.valid(); ++guard) {
                const auto it = byValue.find(root->sharesWith.index);
                if (it == byValue.end() || memory.byValue[it->first].device < 0)
                    break;
                root = it->second;
            }
            const auto *produced = span(t.producer);
            if (!produced)
                continue;
            Live &b = buffers[root->value.index];
            b.bytes = std::max(b.bytes, root->bytes);
            b.start = std::min(b.start, produced->first);
            b.end = std::max(b.end, produced->second);
            for (NodeId r : readers[t.value.index])
                if (const auto *read = span(r))
                    b.end = std::max(b.end, read->second);
        }
        // Ends before starts at one instant: a reader finishing as the next op starts is not a peak.
        std::vector<std::pair<double, double>> events;
        const auto addBuffer = [&](const Live &b) {
            if (b.start <= b.end) {
                events.emplace_back(b.start, double(b.bytes));
                events.emplace_back(b.end, -double(b.bytes));
            }
        };
        for (const auto &[root, b] : buffers)
            addBuffer(b);
        for (const Live &b : workspaces)
            addBuffer(b);
        std::sort(events.begin(), events.end());
        trace::Counter c{dm.device, "live bytes", {}};
        double live = 0.0;
        c.samples.emplace_back(0.0, 0.0);
        for (std::size_t i = 0; i < events.size(); ++i) {
            live += events[i].second;
            if (i + 1 == events.size() || events[i + 1].first != events[i].first)
                c.samples.emplace_back(events[i].first, std::max(0.0, live));
        }
        if (c.samples.size() > 1)
            trace.counters.push_back(std::move(c));
    }
}

} // namespace opscope::schedule
