#pragma once
// Execution plans for one graph, four ways, with the timeline the cost model predicts for each:
//   serial      one device, one queue, dependency order, one op at a time
//   parallel    one device, N workers: each op started as soon as its inputs are ready and a
//               worker is free (a pool sharing one queue on CPU; fixed queues for GPU streams)
//   greedy      N devices, HEFT-style: ops by upward rank (critical path first), each on the device
//               where it finishes earliest counting the transfer of its inputs, under a memory cap
//               (placement.h: with insertion into idle gaps and seeded refinement)
//   round-robin N devices in turn (the baseline greedy is compared with)
//   pipeline    N devices, each a contiguous stage of the dependency order, balanced by op time
//               (pipeline.h); across MPI ranks it runs micro-batches GPipe-style
// Cross-device edges of greedy/round-robin get Send/Recv nodes (partition.h) before planning.

#include "runtime/executionplan.h"
#include "schedule/costmodel.h"
#include "schedule/placement.h"
#include "trace/trace.h"

#include <string>
#include <vector>

namespace opscope::schedule {

enum class Strategy
{
    Serial,
    Parallel,
    Greedy,
    RoundRobin,
    Pipeline, // contiguous stages of the dependency order, one per device (pipeline.h)
};

Expected<Strategy> strategyFromName(const std::string &name);
// A --schedule list: each name once ("serial,,greedy" and "greedy,greedy" were run as given).
Expected<std::vector<Strategy>> strategiesFromNames(const std::vector<std::string> &names);
std::string strategyName(Strategy s);

struct PredictedOp
{
    NodeId node;
    std::uint32_t device = 0, queue = 0;
    double start = 0.0, finish = 0.0; // seconds
};

struct Schedule
{
    Strategy strategy = Strategy::Serial;
    ExecutionPlan plan;
    std::vector<int> deviceOf;          // by node slot (-1: not a live node)
    std::vector<PredictedOp> predicted; // per planned node
    double predictedMakespan = 0.0;     // seconds, transfers included
};

struct ScheduleOptions
{
    int workers = 2;                  // parallel: queues; greedy/round-robin: devices (= model devices)
    std::string devicePrefix = "cpu"; // plan device names: cpu:0, cpu:1...
    // parallel: the workers share one queue (CPU worker pool: each op starts when its inputs are
    // ready and a worker is free); false: a fixed queue per worker, as GPU streams need.
    bool sharedQueue = true;
};

// Plans `graph`. Multi-device strategies place nodes themselves unless `placement` (device per
// node slot) is given — as it is after partitioning, so Send/Recv stay where partitioning put them.
// `order` (predicted start per node slot, as Placement::start) sets the order each device runs its
// nodes in; slots past its end or NaN (Send/Recv) are due when their inputs are.
Expected<Schedule> makeSchedule(const Graph &graph, Strategy strategy, const CostModel &model,
                                const ScheduleOptions &options = {},
                                const std::vector<int> *placement = nullptr,
                                const std::vector<double> *order = nullptr);

// The timeline the cost model predicts for a schedule, as a trace (what --simulate shows).
trace::Trace predictedTrace(const Graph &graph, const Schedule &schedule, const std::string &name);

// Device per node chosen by greedy / round-robin (what partitioning needs before planning).
Expected<std::vector<int>> placeNodes(const Graph &graph, Strategy strategy, const CostModel &model);
// The same with each device's predicted order (serial and parallel: everything on device 0).
Expected<Placement> placeFor(const Graph &graph, Strategy strategy, const CostModel &model);

// max(critical path on the fastest device, total work / devices): no schedule beats it.
double makespanLowerBound(const Graph &graph, const CostModel &model);

} // namespace opscope::schedule
