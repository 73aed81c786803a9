#pragma once
// What an op costs and how fast devices and links are: the scheduler's and the simulator's input.
// Per op: FLOPs and bytes moved, from the shapes shape inference knows (symbolic dims count as 1).
// Per device: sustained FLOP/s and memory bandwidth, calibrated by micro-benchmarks (cached);
// per link: latency and bandwidth.

#include "ir/graph.h"
#include "util/status.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace opscope::schedule {

struct OpCost
{
    double flops = 0.0;
    double bytes = 0.0;       // inputs read + outputs written
    double outputBytes = 0.0; // what a transfer of its results moves
};

OpCost estimateCost(const Graph &graph, NodeId node);

struct DeviceModel
{
    std::string name; // "cpu:0", "gpu:H100" (simulated)
    double flopsPerSecond = 1e10;
    double bytesPerSecond = 1e10;
    double overheadSeconds = 2e-6; // per op: dispatch, kernel launch
    std::uint64_t memoryBytes = 0; // 0: unlimited
    // Copies into the device run beside its compute (a GPU's copy engines): a Recv takes a copy
    // queue of its own. On a CPU device the worker itself copies, so a Recv occupies the device.
    bool copiesOverlap = false;
    // Parallel queues on this device are streams of one processor (a GPU): their launch overheads
    // overlap but their work does not. Off for CPU devices, where each worker is its own core.
    bool queuesShareDevice = false;
};

struct LinkModel
{
    double latencySeconds = 5e-6;
    double bytesPerSecond = 1e10;
};

struct CostModel
{
    std::vector<DeviceModel> devices;
    LinkModel link;
    // Devices in several processes (MPI ranks): the process of each device (empty: all in one),
    // and the link between two processes — measured at start (dist/), slower than `link`.
    std::vector<int> processOf;
    LinkModel remoteLink;
    // Node name → seconds measured on a device like these (a serial run's trace): replaces the
    // estimate for those nodes. Estimates from FLOPs and bytes are off by 2–3× per op kind on a
    // real machine, enough to unbalance a placement; measured times are not.
    std::unordered_map<std::string, double> measuredSeconds;
    // Weights on the heap are held by every process, whichever devices read them (each MPI rank
    // optimizes the whole model; weights under 64 KiB stay on its heap, and those the passes
    // made where spilling them to a scratch file failed): a memory cap then counts only the mapped ones a device reads (external data, and
    // embedded ones ranks map from the file), and the heap ones come off the budget before it is
    // split into caps.
    bool embeddedWeightsEverywhere = false;

    // Roofline: the slower of compute and memory, plus the per-op overhead.
    double seconds(const OpCost &cost, std::size_t device) const;
    double transferSeconds(double bytes, std::size_t from, std::size_t to) const;
};

// N CPU devices of `threadsPerDevice` cores each, measured on this machine (sgemm FLOP/s and
// memcpy bandwidth on one worker); the measurement is cached per machine in `cacheFile` (empty:
// $XDG_CACHE_HOME or ~/.cache/opscope/calibration.json).
CostModel calibratedCpuModel(int devices, int threadsPerDevice, const std::string &cacheFile = {});

// Named devices for --simulate: "cpu:4", "gpu:4" (H100-class), "gpu:8:pcie" (PCIe links);
// "4xgpu:8" is 4 hosts of 8 each, the hosts linked by InfiniBand (HDR: 8 µs, 25 GB/s),
// "4xgpu:8@eth" by 100 Gb Ethernet (25 µs, 12.5 GB/s) — a cluster of such machines.
Expected<CostModel> simulatedModel(const std::string &spec, const CostModel &cpuBaseline);

} // namespace opscope::schedule
