#pragma once
// Partitioning for several devices: after placement, every tensor that crosses from one device to
// another gets a Send on the producer's device and a Recv on the consumer's (opscope ops
// ai.opscope::Send / Recv, attributes `from` and `to`); consumers on the other device read the
// Recv's output. One Recv per (tensor, destination device), shared by its consumers there.
//
//     a(dev0) ──► t ──► b(dev1)      →      a ──► t ──► Send(0→1) ──► Recv(0→1) ──► b
//
// An If/Loop/Scan body that reads t from outside (by name, at any depth) is a consumer too: its
// node's device gets the Recv, and the body reads the Recv's output, renamed to it:
//
//     If(dev1) { … t … }             →      t ──► Send ──► Recv ──► r;  If(dev1) { … r … }
//
// On CPU devices Recv copies the tensor into memory the destination device allocated; on GPUs
// (later) the pair is a device-to-device copy.

#include "ir/model.h"
#include "schedule/placement.h"
#include "schedule/scheduler.h"

#include <vector>

namespace opscope::schedule {

struct Partition
{
    Model model;               // the graph with Send/Recv
    std::vector<int> deviceOf; // by node slot of the new graph: the model's nodes keep their slots,
                               // Send/Recv take new ones after them
    std::size_t transfers = 0; // Send/Recv pairs
    // With a Placement: the predicted start per node slot of the new graph (Placement::start, a
    // Recv at its copy's start, a Send with its producer) — the order makeSchedule replays.
    std::vector<double> start;
};

Expected<Partition> partitionForDevices(const Model &model, const std::vector<int> &deviceOf);
Expected<Partition> partitionForDevices(const Model &model, const Placement &placement);

// What a run of `strategy` executes: for greedy and round-robin the model placed, partitioned and
// planned in the placement's order; for serial and parallel the model as it is, planned.
struct DevicePlan
{
    Partition partition; // model, deviceOf (empty for serial/parallel), transfers, start
    Placement placement; // greedy / round-robin only
    Schedule schedule;
};
Expected<DevicePlan> planForDevices(const Model &model, Strategy strategy, const CostModel &cost,
                                    const ScheduleOptions &options);

} // namespace opscope::schedule
