#pragma once
// CUPTI activity records → opscope's trace: what a GPU did during a run, as lanes beside the host's.
// Pure conversion, no CUPTI calls: cuptitracer.h collects the records on a GPU, and the tests feed
// records they build themselves (the CUDA 13 structs), so all of this is checked without a device.
//
//   host  CUDA API (thread 12)   [cudaLaunchKernel]   [cudaMemcpyAsync]
//                                      \                     \          launch arrows (correlation id)
//   cuda:0  stream 13                   [conv1 · kernel]      [out · DtoH copy]
//
// Every kernel, copy and memset names the graph node whose launch pushed its external correlation
// id (cuptiActivityPushExternalCorrelationId around each node); one launched outside any node
// keeps its kernel's name and is counted as unattributed.

#include "trace/trace.h"

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace opscope::gpu {

// CUPTI's clock (ns) onto the trace's (seconds from the recorder's zero): a line through clock
// pairs read back to back at the start and end of a run, so the drift between the two clocks over
// the run is corrected, not only their offset.
struct ClockMap
{
    // Relative to an origin in integer ns: CUPTI readings near 2^60 ns keep no nanoseconds in a
    // double (its step there is 256 ns).
    std::uint64_t origin = 0; // a CUPTI time
    double offset = 0.0;      // trace seconds at `origin`
    double slope = 1e-9;      // seconds per CUPTI ns
    double toSeconds(std::uint64_t ns) const
    {
        return offset + slope * double(static_cast<std::int64_t>(ns - origin));
    }
};

// Pairs of (CUPTI ns, trace seconds). One pair fixes the offset at a slope of 1 ns per ns; two or
// more give the least-squares line. No pairs: the identity in ns.
ClockMap fitClock(const std::vector<std::pair<std::uint64_t, double>> &pairs);

// What an external correlation id stands for: the node whose launch pushed it. Ids are indices
// + 1 into the list the tracer keeps (0 is "none").
struct LaunchedNode
{
    std::string name, op, domain;
};

struct CuptiCounts
{
    std::uint64_t kernels = 0, copies = 0, memsets = 0, apiCalls = 0, syncs = 0;
    std::uint64_t unattributed = 0; // kernels, copies and memsets no node launched
    std::uint64_t dropped = 0;      // records CUPTI could not store (reported, never silent)
    std::uint64_t otherRecords = 0; // kinds this conversion does not show
    std::uint64_t untimed = 0;      // records without timestamps (CUPTI's 0) or unfinished: not drawn
    std::uint32_t cuptiVersion = 0; // the library's (cuptiGetVersion), 0 when not asked
};

class CuptiTraceBuilder
{
public:
    // cbid → the runtime (driver: false) or driver API function's name ("cudaLaunchKernel",
    // "cuLaunchKernel"); the tracer asks CUPTI.
    using ApiName = std::function<std::string(bool driver, std::uint32_t cbid)>;
    explicit CuptiTraceBuilder(ApiName apiName);

    // One record as CUPTI hands it over (a CUpti_Activity *: its kind says which struct it is).
    // Strings a record points to (a kernel's name) are copied: CUPTI frees its buffers after.
    void add(const void *record);
    void addDropped(std::uint64_t n) { m_counts.dropped += n; }

    // Appends the recorded lanes to `trace` on its clock: per GPU a lane per stream ("cuda:0",
    // "stream 13") with its kernels, copies and memsets; per host thread a "CUDA API" lane and a
    // "CUDA driver" lane (device "host": the driver calls run inside the runtime's, and libraries
    // such as cuDNN launch through the driver), per stream a "CUDA sync" lane; a launch arrow from
    // each call to the work it started. `nodes` resolves external correlation ids.
    CuptiCounts appendTo(trace::Trace &trace, const ClockMap &clock, const std::vector<LaunchedNode> &nodes) const;

    const CuptiCounts &counts() const { return m_counts; }

private:
    enum class Kind : std::uint8_t { Kernel, Copy, Memset, Api, Driver, Sync };
    struct Item
    {
        Kind kind;
        std::uint64_t start, end;
        std::uint32_t device, stream; // Api/Driver: the thread id in `stream`
        std::uint32_t correlation;
        std::string name;   // kernel (demangled) or API function
        std::string detail; // launch geometry, copy direction and size
        std::string op;     // "Memcpy HtoD", "Memset", "CUDA API"
    };
    ApiName m_apiName;
    std::vector<Item> m_items;
    std::unordered_map<std::uint32_t, std::uint64_t> m_external; // correlation id → external id
    mutable CuptiCounts m_counts;
};

// "1.5 MiB": sizes in details and messages.
std::string byteText(std::uint64_t bytes);

} // namespace opscope::gpu
