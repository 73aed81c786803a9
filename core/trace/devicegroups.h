#pragma once
// A GPU's lanes under one row, as Nsight Systems and Perfetto group a device's tracks. The
// device's own record (stream lanes: CUPTI's, Kineto's) says what ran; the executor's lanes of the
// same device say when it was queued. Collapsed, the group is one row where each node's work on
// the device is one span — its kernels and copies from the first start to the last end — so a
// model's nodes read at a glance; expanded, the lanes it stands for, kernel by kernel.
//
//   cuda:0 ▸      [ conv1 ][ relu ][   gemm   ]            ← one span per node's work
//   cuda:0 ▾      [ conv1 ][ relu ][   gemm   ]
//     queue 0     [c][r][g]                                ← launches (executor)
//     stream 13    [k1][k2][k3][relu_k][sgemm][bias]       ← kernels and copies (CUPTI)

#include "trace/trace.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::trace {

// What one span of a group's row stands for.
struct NodeWork
{
    std::uint32_t kernels = 0, copies = 0; // copies: memcpy and memset records
    double busy = 0.0;                     // seconds of those, summed (streams may overlap)
};

struct DeviceGroup
{
    std::string device;                    // "cuda:0"
    std::vector<std::uint32_t> lanes;      // every lane of the device, in the trace's order
    // The row's spans: a node's consecutive work on one stream is one span; where nodes on
    // different streams overlap, the later one goes to a further lane (a lane never overlaps).
    std::vector<Lane> rows;
    std::vector<std::vector<NodeWork>> work; // per row, per span
};

// One group per device that has stream lanes (host lanes never group), in the order the
// device's first lane has in the trace. Spans of a row name the trace's own strings.
std::vector<DeviceGroup> deviceGroups(const Trace &trace);

// The span of a group's rows where `node`'s work on the device is, the first starting at or
// after `from` (a node runs once per run; a pipeline's micro-batches name theirs apart), or the
// last one before it; nullptr when the node did nothing on the device.
const Span *nodeWorkSpan(const Trace &trace, const DeviceGroup &group, const std::string &node, double from);

} // namespace opscope::trace
