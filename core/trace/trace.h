#pragma once
// A recorded (or simulated, or imported) run: per device and queue, a lane of op spans sorted by
// start; transfers between lanes; one clock (seconds from the start of the trace). Lanes are plain
// sorted arrays, so a level-of-detail query for any time range is a binary search plus a merge
// (Tracy style): a view asks for what to draw at its pixel width and only paints.

#include "ir/graph.h"
#include "runtime/executor.h"

#include <chrono>
#include <map>
#include <optional>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::trace {

// Spans that are not work (waiting for another queue, host-side setup) carry this category.
inline constexpr std::uint8_t kIdleCategory = 0xFF;

inline constexpr std::uint32_t kNoString = 0xFFFFFFFFu;

struct Span
{
    double start = 0.0, end = 0.0;    // seconds
    std::uint32_t name = 0;           // index into Trace::strings (node name)
    std::uint32_t op = 0;             // index into Trace::strings (op type)
    std::uint8_t category = 0;        // OpCategory
    std::uint32_t shapes = kNoString; // index into Trace::strings: "float32[1,3,224,224], … → float32[…]"
    // Index into Trace::strings: what the span's source says beyond its name — a GPU kernel's
    // launch ("grid [80,1,1] block [256,1,1], 40 registers, 2.0 KiB shared"), a copy's direction.
    std::uint32_t detail = kNoString;
};

struct Lane
{
    std::string device; // "cpu:0": a process in Chrome's trace format
    std::uint32_t queue = 0;
    std::vector<Span> spans; // sorted by start, non-overlapping within a lane
    std::string label;       // the lane's name where it is not "queue N": "stream 13", "CUDA API"
};

// The host's own lane (run setup, not a device's work): "host" in one process, "rank1:host" in a
// trace merged across MPI ranks, where every rank's host is a process of its own.
inline bool isHostLane(std::string_view device)
{
    return device == "host" || device.ends_with(":host");
}

// A lane a device's own profiler recorded: CUPTI's (gpu/cuptitrace) and PyTorch's (Kineto) GPU
// lanes are named "stream N".
inline bool isStreamLane(const Lane &lane)
{
    return lane.label.starts_with("stream ");
}

struct Transfer
{
    double start = 0.0, end = 0.0;
    std::uint64_t bytes = 0;
    std::uint32_t fromLane = 0, toLane = 0;
};

// A host call that started work on a device: cudaLaunchKernel → its kernel, cudaMemcpyAsync → the
// copy. An arrow in the timeline; a flow in Chrome's format (cat "launch"; Kineto's "ac2g" reads
// as one too).
struct Launch
{
    double start = 0.0, end = 0.0; // the call's start, the work's start
    std::uint32_t fromLane = 0, toLane = 0;
};

// A quantity over time on a device — the bytes its memory plan has live: a step function, each
// sample holding until the next. A counter track in Chrome's format ("ph":"C").
struct Counter
{
    std::string device;
    std::string name;                               // "live bytes"
    std::vector<std::pair<double, double>> samples; // (seconds, value), sorted by time
};

struct Trace
{
    std::string name; // "greedy on 2 devices"
    std::vector<Lane> lanes;
    std::vector<Transfer> transfers;
    std::vector<Launch> launches;
    std::vector<Counter> counters;
    std::vector<std::string> strings;

    double duration() const;
    std::uint32_t intern(const std::string &s);
    std::size_t laneFor(const std::string &device, std::uint32_t queue);
    void sortLanes();
};

// Collects the executor's step events (from every queue thread) into a Trace.
class Recorder
{
public:
    explicit Recorder(std::vector<std::string> devices);
    void begin(); // the clock's zero
    // When begin() was called: what puts traces of several processes on one clock (dist/).
    std::chrono::steady_clock::time_point zero() const { return m_zero; }
    void onStep(const StepEvent &event);
    // With a label of its own instead of setLabel's: runs that overlap (pipeline stages working
    // on different micro-batches at once) each name their own.
    void onStep(const StepEvent &event, const std::string &label);
    // Appended to the names of the spans recorded from now on: several runs in one trace (the
    // micro-batches of a pipeline, " #2") stay apart.
    void setLabel(std::string label);
    // The run's feeds, so that spans reading graph inputs show their sizes, not "batch" (the
    // executor reports what each step computed; the feeds are no step's).
    void setFeeds(const Graph *graph, const std::vector<std::pair<std::string, RuntimeTensor>> &feeds);
    // The trace of what was recorded since begin(); Recv nodes become transfers as well.
    Trace finish(const std::string &name);

private:
    void record(const StepEvent &event, const std::string *label); // null: setLabel's

    struct Event
    {
        StepEvent step;
        std::string name, op, domain;
        std::uint64_t bytes;
        std::string label; // setLabel's at the time: a Recv pairs with the Send of its own run
        std::vector<std::optional<std::vector<std::int64_t>>> outputShapes; // what the step computed
    };
    std::map<std::pair<const Graph *, std::uint32_t>, std::vector<std::int64_t>> m_feedShapes;
    std::vector<std::string> m_devices;
    std::chrono::steady_clock::time_point m_zero;
    std::mutex m_mutex;
    std::vector<Event> m_events;
    std::string m_label;
};

// Drawing at a given resolution: spans narrower than a pixel merge with their neighbours into one
// item (count > 1) coloured by the dominant category.
struct DrawItem
{
    double start = 0.0, end = 0.0;
    std::uint32_t span = 0;  // the span (count == 1) or the first merged one
    std::uint32_t count = 1; // spans drawn as this item
    std::uint8_t category = 0;
};

std::vector<DrawItem> levelOfDetail(const Lane &lane, double t0, double t1, double pixelsPerSecond);

// Per lane: true where it only says when work was queued — the executor's lanes of a device whose
// own record (stream lanes) is in the trace too. A GPU's kernels run after their launches return:
// busy time, op totals and utilization come from the stream lanes there, never from both.
std::vector<bool> queuedOnlyLanes(const Trace &trace);

struct LaneStats
{
    double busy = 0.0; // seconds covered by work spans (not waits or host setup)
    double utilization = 0.0;
};
LaneStats laneStats(const Lane &lane, double makespan);

} // namespace opscope::trace
