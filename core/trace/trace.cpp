#include "trace/trace.h"

#include <tuple>

#include "ir/opcategory.h"

#include <algorithm>
#include <limits>
#include <array>
#include <map>

namespace opscope::trace {

double Trace::duration() const
{
    double end = 0.0;
    for (const Lane &l : lanes)
        if (!l.spans.empty())
            end = std::max(end, l.spans.back().end);
    for (const Transfer &t : transfers)
        end = std::max(end, t.end);
    return end;
}

std::uint32_t Trace::intern(const std::string &s)
{
    // Traces hold thousands of distinct names at most: a linear probe from the end is enough
    // for recording; imports use their own map.
    for (std::size_t i = strings.size(); i-- > 0 && i + 64 >= strings.size();)
        if (strings[i] == s)
            return std::uint32_t(i);
    strings.push_back(s);
    return std::uint32_t(strings.size() - 1);
}

std::size_t Trace::laneFor(const std::string &device, std::uint32_t queue)
{
    for (std::size_t i = 0; i < lanes.size(); ++i)
        if (lanes[i].device == device && lanes[i].queue == queue)
            return i;
    lanes.push_back({device, queue, {}});
    return lanes.size() - 1;
}

void Trace::sortLanes()
{
    std::stable_sort(lanes.begin(), lanes.end(), [](const Lane &a, const Lane &b) {
        return a.device != b.device ? a.device < b.device : a.queue < b.queue;
    });
    for (Lane &l : lanes)
        std::stable_sort(l.spans.begin(), l.spans.end(),
                         [](const Span &a, const Span &b) { return a.start < b.start; });
}

Recorder::Recorder(std::vector<std::string> devices) : m_devices(std::move(devices)) {}

void Recorder::begin()
{
    const std::lock_guard lock(m_mutex);
    m_events.clear();
    m_label.clear();
    m_zero = std::chrono::steady_clock::now();
}

void Recorder::onStep(const StepEvent &event) { record(event, nullptr); }

void Recorder::onStep(const StepEvent &event, const std::string &label) { record(event, &label); }

void Recorder::record(const StepEvent &event, const std::string *given)
{
    const Node &n = event.graph->node(event.node);
    std::uint64_t bytes = event.outputBytes;
    if (bytes == 0 && n.opType == "Recv" && !n.outputs.empty() && n.outputs[0].valid()) {
        const Value &v = event.graph->value(n.outputs[0]);
        if (v.type.isTensor() && v.type.shape && v.type.shape->isStatic()) {
            std::uint64_t count = 1;
            for (const Dim &d : v.type.shape->dims)
                count *= std::uint64_t(d.value);
            bytes = count * dataTypeSize(v.type.elemType);
        }
    }
    std::vector<std::optional<std::vector<std::int64_t>>> shapes(event.outputCount);
    for (std::size_t i = 0; i < event.outputCount; ++i)
        if (const RuntimeTensor *t = event.outputs[i])
            shapes[i] = t->shape();
    // One lock per step, as before labels could be given: this runs on every queue's thread.
    const std::lock_guard lock(m_mutex);
    const std::string &label = given ? *given : m_label;
    m_events.push_back(
        {event, label.empty() ? n.name : n.name + label, n.opType, n.domain, bytes, label, std::move(shapes)});
    m_events.back().step.outputs = nullptr; // not valid after the callback
}

void Recorder::setFeeds(const Graph *graph, const std::vector<std::pair<std::string, RuntimeTensor>> &feeds)
{
    const std::lock_guard lock(m_mutex);
    for (const auto &[name, tensor] : feeds)
        if (const ValueId v = graph->findValue(name); v.valid())
            m_feedShapes[{graph, v.index}] = tensor.shape();
}

void Recorder::setLabel(std::string label)
{
    const std::lock_guard lock(m_mutex);
    m_label = std::move(label);
}

namespace {

using RunShapes = std::map<std::pair<const Graph *, std::uint32_t>, std::vector<std::int64_t>>;

// The node's tensor types: the sizes the run had where it knows them (a step's outputs, the feeds),
// else as the graph declares them (symbolic dims by name).
std::string shapesOf(const Graph &graph, const Node &n, const RunShapes &run)
{
    const auto describe = [&](const std::vector<ValueId> &values) {
        std::string out;
        for (ValueId v : values) {
            if (!v.valid())
                continue;
            const TypeInfo &t = graph.value(v).type;
            out += (out.empty() ? "" : ", ") + std::string(dataTypeName(t.elemType));
            if (const auto it = run.find({&graph, v.index}); it != run.end()) {
                out += '[';
                for (std::size_t i = 0; i < it->second.size(); ++i)
                    out += (i ? "," : "") + std::to_string(it->second[i]);
                out += ']';
            } else {
                out += t.shape ? t.shape->toString() : std::string("[?]");
            }
        }
        return out;
    };
    return describe(n.inputs) + " → " + describe(n.outputs);
}

} // namespace

Trace Recorder::finish(const std::string &name)
{
    const std::lock_guard lock(m_mutex);
    Trace t;
    t.name = name;
    auto seconds = [&](std::chrono::steady_clock::time_point p) {
        return std::chrono::duration<double>(p - m_zero).count();
    };
    double firstStart = -1.0;
    // Shapes are formatted here, once per node, not while the run is being timed.
    std::map<std::pair<const Graph *, std::uint32_t>, std::uint32_t> shapes;
    RunShapes runShapes = m_feedShapes;
    for (const Event &e : m_events) {
        const Node &n = e.step.graph->node(e.step.node);
        for (std::size_t i = 0; i < e.outputShapes.size() && i < n.outputs.size(); ++i)
            if (n.outputs[i].valid() && e.outputShapes[i])
                runShapes.emplace(std::pair(e.step.graph, n.outputs[i].index), *e.outputShapes[i]);
    }
    const auto deviceName = [this](int device) {
        return std::size_t(device) < m_devices.size() ? m_devices[std::size_t(device)]
                                                      : "device " + std::to_string(device);
    };
    for (const Event &e : m_events) {
        const std::size_t lane = t.laneFor(deviceName(e.step.device), e.step.queue);
        const double waited = seconds(e.step.start) - seconds(e.step.waitStart);
        if (e.step.waitStart.time_since_epoch().count() != 0 && waited > 1e-6)
            // Waiting for another queue: a span of its own, so idle time shows where it comes from.
            t.lanes[lane].spans.push_back({seconds(e.step.waitStart), seconds(e.step.start),
                                           t.intern("waiting for " + e.name + "'s inputs"),
                                           t.intern("(wait)"), kIdleCategory});
        if (firstStart < 0 || seconds(e.step.start) < firstStart)
            firstStart = seconds(e.step.start);
        Span s{seconds(e.step.start), seconds(e.step.end), t.intern(e.name), t.intern(e.op),
               std::uint8_t(opCategory(e.op, e.domain))};
        const auto key = std::make_pair(e.step.graph, e.step.node.index);
        auto known = shapes.find(key);
        if (known == shapes.end())
            known =
                shapes.emplace(key, t.intern(shapesOf(*e.step.graph, e.step.graph->node(e.step.node), runShapes))).first;
        s.shapes = known->second;
        t.lanes[lane].spans.push_back(s);
    }
    // Host side: from the run's start to the first op (feeds, plan and memory setup).
    if (firstStart > 1e-6) {
        const std::size_t host = t.laneFor("host", 0);
        t.lanes[host].spans.push_back(
            {0.0, firstStart, t.intern("run setup"), t.intern("(host)"), kIdleCategory});
    }
    t.sortLanes();
    // Each Recv is a transfer: from the end of its Send (the producer of its input, on the
    // source device's lane) to the end of the copy.
    std::map<std::tuple<const Graph *, std::uint32_t, std::string>, std::pair<std::uint32_t, double>> sends;
    for (const Event &e : m_events)
        if (e.op == "Send")
            sends[{e.step.graph, e.step.node.index, e.label}] = {
                std::uint32_t(t.laneFor(deviceName(e.step.device), e.step.queue)), seconds(e.step.end)};
    for (const Event &e : m_events) {
        if (e.op != "Recv")
            continue;
        const Node &recv = e.step.graph->node(e.step.node);
        const NodeId send = recv.inputs.empty() ? NodeId() : e.step.graph->producer(recv.inputs[0]);
        const auto lane = std::uint32_t(t.laneFor(deviceName(e.step.device), e.step.queue));
        const auto from = sends.find({e.step.graph, send.index, e.label});
        t.transfers.push_back({from != sends.end() ? from->second.second : seconds(e.step.start),
                               seconds(e.step.end), e.bytes, from != sends.end() ? from->second.first : lane,
                               lane});
    }
    return t;
}

std::vector<DrawItem> levelOfDetail(const Lane &lane, double t0, double t1, double pixelsPerSecond)
{
    std::vector<DrawItem> out;
    const auto &spans = lane.spans;
    // First span that ends after t0: spans are sorted by start and do not overlap, so ends are too.
    auto it =
        std::lower_bound(spans.begin(), spans.end(), t0, [](const Span &s, double t) { return s.end < t; });
    const double minWidth = pixelsPerSecond > 0 ? 1.0 / pixelsPerSecond : 0.0;
    std::array<double, 16> categoryTime{};
    for (; it != spans.end() && it->start <= t1; ++it) {
        const auto index = std::uint32_t(it - spans.begin());
        const double width = it->end - it->start;
        const bool tiny = width < minWidth;
        if (!out.empty()) {
            DrawItem &last = out.back();
            // Merge a tiny span into the previous item when they touch at this resolution.
            const bool lastTiny = last.count > 1 || (last.end - last.start) < minWidth;
            if (tiny && lastTiny && it->start - last.end < minWidth) {
                last.end = std::max(last.end, it->end);
                ++last.count;
                categoryTime[it->category & 15] += width;
                if (categoryTime[it->category & 15] > categoryTime[last.category & 15])
                    last.category = it->category;
                continue;
            }
        }
        categoryTime.fill(0.0);
        categoryTime[it->category & 15] = width;
        out.push_back({it->start, it->end, index, 1, it->category});
    }
    return out;
}

LaneStats laneStats(const Lane &lane, double makespan)
{
    // The union of the spans, not their sum: a Loop's or If's body runs inside the container's own
    // span on the same lane, and summing them reported a device 174 % busy.
    LaneStats s;
    double coveredTo = -std::numeric_limits<double>::infinity();
    for (const Span &sp : lane.spans) { // sorted by start
        if (sp.category == kIdleCategory || sp.end <= coveredTo)
            continue;
        s.busy += sp.end - std::max(sp.start, coveredTo);
        coveredTo = sp.end;
    }
    s.utilization = makespan > 0 ? s.busy / makespan : 0.0;
    return s;
}

std::vector<bool> queuedOnlyLanes(const Trace &trace)
{
    std::vector<bool> out(trace.lanes.size(), false);
    std::vector<std::string_view> recorded;
    for (const Lane &l : trace.lanes)
        if (isStreamLane(l) && !isHostLane(l.device))
            recorded.push_back(l.device);
    if (recorded.empty())
        return out;
    for (std::size_t i = 0; i < trace.lanes.size(); ++i) {
        const Lane &l = trace.lanes[i];
        out[i] = !isStreamLane(l) && !isHostLane(l.device) &&
                 std::find(recorded.begin(), recorded.end(), std::string_view(l.device)) != recorded.end();
    }
    return out;
}

} // namespace opscope::trace
