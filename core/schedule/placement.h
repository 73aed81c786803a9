#pragma once
// Multi-device placement: which device runs each node, and in which order each device runs them.
//
// greedy is HEFT with insertion: nodes by upward rank (critical path first), each on the device
// where it finishes earliest — counting the transfers of its inputs and fitting into an idle gap
// of that device when one is long enough — under a per-device memory cap (the weights its nodes
// read, each once, their outputs and the copies it receives; a node no device has room for goes
// where it overflows the cap least). Transfers are modelled
// as the partitioned plan runs them: one copy per (tensor, destination device), shared by the
// consumers there, occupying the destination device (a CPU worker copies) or its copy queue (a
// GPU's copy engine, DeviceModel::copiesOverlap). One HEFT pass commits
// early to choices a later node would have wanted otherwise, so the placement then re-runs HEFT
// with the ranks perturbed at random (seeded: the same graph always gets the same placement) and
// keeps the shortest predicted makespan; the unperturbed pass is always a candidate, so the
// result is never worse than plain HEFT — nor than everything on the fastest device.
//
// round-robin deals the nodes to the devices in turn: the baseline greedy is compared with.

#include "schedule/costmodel.h"

#include <cstdint>
#include <map>
#include <vector>

namespace opscope::schedule {

struct Placement
{
    std::vector<int> device;   // by node slot (-1: not a live node)
    std::vector<double> start; // predicted start by node slot: each device runs its nodes in this order
    // Predicted start of the copy of a node's outputs to another device: (node slot, device) →
    // seconds. Partitioning turns each into a Recv, ordered on its device by this time.
    std::map<std::pair<std::uint32_t, int>, double> recvStart;
    double makespan = 0.0; // predicted, seconds
    // By device: the bytes counted against its cap (DeviceModel::memoryBytes) — each weight its
    // nodes read once, their outputs and the copies it receives, never freed. Not what a run
    // holds (buffers are reused; send copies and kernel workspaces are not counted): a measure a
    // caller scales against what a real run took.
    std::vector<double> memory;
    bool overflows = false; // a node went over every device's cap (where it overflowed least)
};

struct PlacementOptions
{
    int refinements = -1;   // perturbed HEFT passes after the first; -1: as many as fit a small budget
    std::uint32_t seed = 1; // of the perturbations
};

Expected<Placement> placeGreedy(const Graph &graph, const CostModel &model,
                                const PlacementOptions &options = {});
// Over the first `devices` of the model's devices (0: all of them); 1 is the serial placement.
Expected<Placement> placeRoundRobin(const Graph &graph, const CostModel &model, std::size_t devices = 0);

} // namespace opscope::schedule
