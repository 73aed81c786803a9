// Traces at scale: a 1M-span trace written as Chrome JSON and read back (goal: load < 3 s), the
// memory the read takes (peak RSS of the read alone: streamed, ~40 bytes per span plus the text,
// where a DOM took ~10 GB for 10M), and the level-of-detail query a timeline paint makes (whole
// range and a zoomed window, 1,600 px).    trace_bench [--spans N]   (default 1,000,000)

#include "trace/chrometrace.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

using namespace opscope;

namespace {

double since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Peak resident memory since the last reset (VmHWM), in MB; resetting needs Linux's clear_refs.
double peakMb()
{
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmHWM:", 0) == 0)
            return std::stod(line.substr(6)) / 1024.0;
    return 0.0;
}

double residentMb()
{
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stod(line.substr(6)) / 1024.0;
    return 0.0;
}

void resetPeak()
{
    std::ofstream("/proc/self/clear_refs") << "5";
}

} // namespace

int main(int argc, char **argv)
{
    long spansWanted = 1000000;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--spans") == 0)
            spansWanted = std::max(8L, std::atol(argv[i + 1]));
    trace::Trace t;
    t.name = std::to_string(spansWanted) + " spans";
    const int lanes = 8, perLane = int(spansWanted / lanes);
    for (int l = 0; l < lanes; ++l) {
        const std::size_t lane = t.laneFor("cpu:" + std::to_string(l), 0);
        for (int i = 0; i < perLane; ++i) {
            const double start = i * 2e-6 + l * 1e-7;
            t.lanes[lane].spans.push_back({start, start + 1.5e-6, t.intern("node" + std::to_string(i % 4000)),
                                           t.intern("Conv"), std::uint8_t(i % 9)});
        }
    }
    const auto path = std::filesystem::temp_directory_path() / "opscope_trace_bench.json";
    auto t0 = std::chrono::steady_clock::now();
    if (!trace::writeChromeTrace(t, path))
        return 1;
    const double writeS = since(t0);
    const auto bytes = std::filesystem::file_size(path);
    const double before = residentMb();
    resetPeak();
    t0 = std::chrono::steady_clock::now();
    Expected<trace::Trace> back = trace::readChromeTrace(path);
    const double readS = since(t0);
    const double readPeak = peakMb() - before;
    std::filesystem::remove(path);
    if (!back)
        return 1;
    std::size_t spans = 0;
    for (const trace::Lane &l : back->lanes)
        spans += l.spans.size();
    std::printf("write %.2f s, read %.2f s (%zu spans, %.0f MB of JSON; goal: read < 3 s per 1M)\n", writeS, readS,
                spans, double(bytes) / 1e6);
    std::printf("read peak memory %.0f MB: %.2f x the JSON, %.0f bytes per span\n", readPeak,
                readPeak * 1e6 / double(bytes), readPeak * 1e6 / double(spans));
    for (const auto &[label, t1, t2] : {std::tuple("whole run", 0.0, t.duration()), std::tuple("1 ms window", 0.1, 0.101)}) {
        t0 = std::chrono::steady_clock::now();
        std::size_t items = 0;
        for (const trace::Lane &l : t.lanes)
            items += trace::levelOfDetail(l, t1, t2, 1600.0 / (t2 - t1)).size();
        std::printf("LOD query, %s, 1,600 px, %d lanes: %.3f ms, %zu draw items\n", label, lanes, since(t0) * 1e3, items);
    }
    return 0;
}
