#include "trace/devicegroups.h"

#include <algorithm>

namespace opscope::trace {

namespace {

bool isCopy(const Trace &trace, const Span &s)
{
    const std::string &op = trace.strings[s.op];
    return op.starts_with("Memcpy") || op.starts_with("Memset");
}

struct Segment
{
    Span span;
    NodeWork work;
};

} // namespace

std::vector<DeviceGroup> deviceGroups(const Trace &trace)
{
    std::vector<DeviceGroup> groups;
    for (std::uint32_t i = 0; i < trace.lanes.size(); ++i) {
        const Lane &lane = trace.lanes[i];
        if (!isStreamLane(lane) || isHostLane(lane.device))
            continue;
        if (std::none_of(groups.begin(), groups.end(), [&](const DeviceGroup &g) { return g.device == lane.device; }))
            groups.push_back({lane.device, {}, {}, {}});
    }
    for (DeviceGroup &g : groups) {
        // A node's consecutive records on one stream are one segment: its kernels (a cuDNN
        // convolution is several) and the copies it made. The executor's launch lanes say when
        // work was queued, not run: they are members of the group but not in its row.
        std::vector<Segment> segments;
        for (std::uint32_t i = 0; i < trace.lanes.size(); ++i) {
            const Lane &lane = trace.lanes[i];
            if (lane.device != g.device)
                continue;
            g.lanes.push_back(i);
            if (!isStreamLane(lane))
                continue;
            const std::size_t first = segments.size();
            for (const Span &s : lane.spans) {
                if (s.category == kIdleCategory)
                    continue;
                if (segments.size() == first || segments.back().span.name != s.name) {
                    segments.push_back({s, {}});
                    segments.back().span.shapes = kNoString;
                    segments.back().span.detail = kNoString;
                }
                Segment &seg = segments.back();
                seg.span.end = std::max(seg.span.end, s.end);
                (isCopy(trace, s) ? seg.work.copies : seg.work.kernels) += 1;
                seg.work.busy += s.end - s.start;
                // Named and coloured by its kernels: a node's first record may be the copy of
                // an input (op "Memcpy HtoD", category Communication).
                if (!isCopy(trace, s) && seg.work.kernels == 1) {
                    seg.span.op = s.op;
                    seg.span.category = s.category;
                }
            }
        }
        std::stable_sort(segments.begin(), segments.end(),
                         [](const Segment &a, const Segment &b) { return a.span.start < b.span.start; });
        for (const Segment &seg : segments) {
            std::size_t row = 0;
            while (row < g.rows.size() && g.rows[row].spans.back().end > seg.span.start)
                ++row;
            if (row == g.rows.size()) {
                g.rows.push_back({g.device, 0, {}, row == 0 ? std::string("nodes") : "nodes (overlapping " + std::to_string(row) + ")"});
                g.work.emplace_back();
            }
            g.rows[row].spans.push_back(seg.span);
            g.work[row].push_back(seg.work);
        }
        if (g.rows.empty()) { // a device whose streams only waited: the row is there, empty
            g.rows.push_back({g.device, 0, {}, "nodes"});
            g.work.emplace_back();
        }
    }
    return groups;
}

const Span *nodeWorkSpan(const Trace &trace, const DeviceGroup &group, const std::string &node, double from)
{
    const Span *after = nullptr, *before = nullptr;
    for (const Lane &row : group.rows)
        for (const Span &s : row.spans) {
            if (trace.strings[s.name] != node)
                continue;
            if (s.start >= from) {
                if (!after || s.start < after->start)
                    after = &s;
            } else if (!before || s.start > before->start) {
                before = &s;
            }
        }
    return after ? after : before;
}

} // namespace opscope::trace
