#include "cuptitrace.h"

#include "ir/opcategory.h"

#include <cupti_activity.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>

namespace opscope::gpu {

namespace {

std::string demangled(const char *name)
{
    if (!name)
        return "kernel";
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
    return status == 0 && out ? std::string(out.get()) : std::string(name);
}

const char *copyKindName(std::uint8_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "copy";
    }
}

std::string rate(std::uint64_t bytes, std::uint64_t ns)
{
    if (ns == 0)
        return {};
    char buf[32];
    std::snprintf(buf, sizeof buf, ", %.1f GB/s", double(bytes) / double(ns));
    return buf;
}

} // namespace

std::string byteText(std::uint64_t bytes)
{
    char buf[32];
    if (bytes < 1024)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    else if (bytes < (1u << 20))
        std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
    else if (bytes < (1ull << 30))
        std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1u << 20));
    else
        std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
    return buf;
}

ClockMap fitClock(const std::vector<std::pair<std::uint64_t, double>> &pairs)
{
    ClockMap m;
    if (pairs.empty())
        return m;
    // Centred on the first pair: nanosecond counts near 2^60 lose every digit that matters in a
    // double (and more once squared).
    const std::uint64_t x0 = pairs.front().first;
    const double y0 = pairs.front().second;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto &[ns, s] : pairs) {
        const double x = double(std::int64_t(ns - x0)), y = s - y0;
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    const double n = double(pairs.size()), det = n * sxx - sx * sx;
    // Pairs read within microseconds of each other (or one pair): the slope stays 1 ns per ns.
    if (pairs.size() >= 2 && det > 0 && sxx > 1e12) {
        const double slope = (n * sxy - sx * sy) / det;
        if (slope > 0.5e-9 && slope < 2e-9) // a clock off by more than 2x is a bad pair, not drift
            m.slope = slope;
    }
    m.origin = x0;
    m.offset = y0 + (sy - m.slope * sx) / n; // the line's value at x0
    return m;
}

CuptiTraceBuilder::CuptiTraceBuilder(ApiName apiName) : m_apiName(std::move(apiName)) {}

void CuptiTraceBuilder::add(const void *record)
{
    const auto *r = static_cast<const CUpti_Activity *>(record);
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto *k = static_cast<const CUpti_ActivityKernel10 *>(record);
        char geometry[160];
        std::snprintf(geometry, sizeof geometry, "grid [%d,%d,%d] block [%d,%d,%d], %u registers, %s shared",
                      k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ, unsigned(k->registersPerThread),
                      byteText(std::uint64_t(std::max(0, k->staticSharedMemory)) +
                               std::uint64_t(std::max(0, k->dynamicSharedMemory)))
                          .c_str());
        std::string name = demangled(k->name);
        m_items.push_back({Kind::Kernel, k->start, k->end, k->deviceId, k->streamId, k->correlationId, name,
                           name + "; " + geometry, "kernel"});
        ++m_counts.kernels;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto *c = static_cast<const CUpti_ActivityMemcpy6 *>(record);
        const std::string kind = copyKindName(c->copyKind);
        m_items.push_back({Kind::Copy, c->start, c->end, c->deviceId, c->streamId, c->correlationId,
                           "memcpy " + kind, kind + " " + byteText(c->bytes) + rate(c->bytes, c->end - c->start),
                           "Memcpy " + kind});
        ++m_counts.copies;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const auto *c = static_cast<const CUpti_ActivityMemcpyPtoP4 *>(record);
        m_items.push_back({Kind::Copy, c->start, c->end, c->deviceId, c->streamId, c->correlationId, "memcpy PtoP",
                           "PtoP " + byteText(c->bytes) + " from cuda:" + std::to_string(c->srcDeviceId) +
                               " to cuda:" + std::to_string(c->dstDeviceId) + rate(c->bytes, c->end - c->start),
                           "Memcpy PtoP"});
        ++m_counts.copies;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto *m = static_cast<const CUpti_ActivityMemset4 *>(record);
        m_items.push_back({Kind::Memset, m->start, m->end, m->deviceId, m->streamId, m->correlationId, "memset",
                           byteText(m->bytes) + " set to " + std::to_string(m->value), "Memset"});
        ++m_counts.memsets;
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const auto *a = static_cast<const CUpti_ActivityAPI *>(record);
        const bool driver = r->kind == CUPTI_ACTIVITY_KIND_DRIVER;
        std::string name = m_apiName ? m_apiName(driver, a->cbid) : std::string();
        if (name.empty())
            name = (driver ? "driver call " : "runtime call ") + std::to_string(a->cbid);
        m_items.push_back({driver ? Kind::Driver : Kind::Api, a->start, a->end, 0, a->threadId, a->correlationId,
                           std::move(name), {}, driver ? "CUDA driver" : "CUDA API"});
        ++m_counts.apiCalls;
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const auto *y = static_cast<const CUpti_ActivitySynchronization2 *>(record);
        const char *what = y->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE    ? "event synchronize"
                           : y->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT  ? "stream wait event"
                           : y->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE ? "stream synchronize"
                           : y->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
                               ? "context synchronize"
                               : "synchronize";
        m_items.push_back({Kind::Sync, y->start, y->end, 0, y->streamId, y->correlationId, what,
                           "stream " + std::to_string(y->streamId), "CUDA sync"});
        ++m_counts.syncs;
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto *e = static_cast<const CUpti_ActivityExternalCorrelation *>(record);
        if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
            m_external[e->correlationId] = e->externalId;
        break;
    }
    default: ++m_counts.otherRecords; break;
    }
}

CuptiCounts CuptiTraceBuilder::appendTo(trace::Trace &trace, const ClockMap &clock,
                                        const std::vector<LaunchedNode> &nodes) const
{
    CuptiCounts counts = m_counts;
    counts.unattributed = 0;
    // Lanes in a fixed order: devices, then streams by id; host threads after the devices.
    std::map<std::tuple<bool, std::uint32_t, std::uint32_t>, std::vector<const Item *>> byLane;
    for (const Item &i : m_items) {
        // CUPTI says "no timing" with 0 (CUPTI_TIMESTAMP_UNKNOWN) and "unfinished" with end 0; on
        // its epoch-based clock either would be a span decades before the run.
        if (i.start == 0 || i.end == 0 || i.end < i.start) {
            ++counts.untimed;
            continue;
        }
        const bool host = i.kind == Kind::Api || i.kind == Kind::Driver || i.kind == Kind::Sync;
        // Host lanes: runtime calls per thread (0), synchronizations per stream they waited on (1),
        // driver calls per thread (2).
        const std::uint32_t hostKind = i.kind == Kind::Sync ? 1u : i.kind == Kind::Driver ? 2u : 0u;
        byLane[{host, host ? hostKind : i.device, i.stream}].push_back(&i);
    }
    // Queue numbers: after the recorder's plan queues on the same device name, counted per device
    // (ids are in the labels: thread ids and CUPTI's "no stream" value would wrap any arithmetic).
    constexpr std::uint32_t kLaneBase = 1000;
    std::map<std::string, std::uint32_t> nextQueue;
    std::unordered_map<std::uint32_t, std::pair<std::uint32_t, double>> apiAt;       // correlation → lane, start
    std::unordered_multimap<std::uint32_t, std::pair<std::uint32_t, double>> workAt; // one call, several copies
    for (auto &[key, items] : byLane) {
        const auto &[host, device, stream] = key;
        std::sort(items.begin(), items.end(),
                  [](const Item *a, const Item *b) { return a->start != b->start ? a->start < b->start : a->end < b->end; });
        const std::string deviceName = host ? "host" : "cuda:" + std::to_string(device);
        const std::string id = std::to_string(stream);
        const std::string label = !host        ? "stream " + id
                                  : device == 0 ? "CUDA API (thread " + id + ")"
                                  : device == 1 ? (stream == 0xFFFFFFFFu ? std::string("CUDA sync (context, events)")
                                                                         : "CUDA sync (stream " + id + ")")
                                                : "CUDA driver (thread " + id + ")";
        // Kernels of one stream can truly overlap (Hopper's programmatic dependent launch starts the
        // next before the last ends): such a span goes to a further lane of the stream with its real
        // times; overlaps of a few ns (CUPTI's rounding) are clamped instead.
        std::vector<std::size_t> lanes; // indices into trace.lanes for this stream
        for (const Item *i : items) {
            trace::Span s;
            s.start = clock.toSeconds(i->start);
            s.end = std::max(s.start, clock.toSeconds(i->end));
            std::size_t at = lanes.size();
            for (std::size_t k = 0; k < lanes.size(); ++k) {
                const std::vector<trace::Span> &spans = trace.lanes[lanes[k]].spans;
                if (spans.empty() || spans.back().end <= s.start + 5e-9) {
                    at = k;
                    break;
                }
            }
            if (at == lanes.size()) {
                trace::Lane lane;
                lane.device = deviceName;
                lane.queue = kLaneBase + nextQueue[deviceName]++;
                lane.label = lanes.empty() ? label : label + " (overlapping " + std::to_string(lanes.size()) + ")";
                lanes.push_back(trace.lanes.size());
                trace.lanes.push_back(std::move(lane));
            }
            trace::Lane &lane = trace.lanes[lanes[at]];
            if (!lane.spans.empty() && s.start < lane.spans.back().end) {
                s.start = lane.spans.back().end;
                s.end = std::max(s.end, s.start);
            }
            std::string name = i->name, op = i->op;
            std::uint8_t category = host ? trace::kIdleCategory
                                         : std::uint8_t(i->kind == Kind::Kernel ? OpCategory::Other : OpCategory::Communication);
            if (!host) {
                const auto ext = m_external.find(i->correlation);
                const std::uint64_t nodeId = ext != m_external.end() ? ext->second : 0;
                if (nodeId >= 1 && nodeId <= nodes.size()) {
                    const LaunchedNode &n = nodes[std::size_t(nodeId - 1)];
                    name = n.name;
                    if (i->kind == Kind::Kernel) {
                        op = n.op;
                        category = std::uint8_t(opCategory(n.op, n.domain));
                    }
                } else {
                    ++counts.unattributed;
                }
            }
            s.name = trace.intern(name);
            s.op = trace.intern(op);
            s.category = category;
            if (!i->detail.empty())
                s.detail = trace.intern(i->detail);
            if (host)
                apiAt.emplace(i->correlation, std::pair(std::uint32_t(lanes[at]), s.start));
            else
                workAt.emplace(i->correlation, std::pair(std::uint32_t(lanes[at]), s.start));
            lane.spans.push_back(s);
        }
    }
    for (const auto &[correlation, work] : workAt)
        if (const auto api = apiAt.find(correlation); api != apiAt.end())
            trace.launches.push_back({api->second.second, work.second, api->second.first, work.first});
    std::sort(trace.launches.begin(), trace.launches.end(),
              [](const trace::Launch &a, const trace::Launch &b) { return a.start < b.start; });
    return counts;
}

} // namespace opscope::gpu
