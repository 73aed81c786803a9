#pragma once
// An execution plan: per device, ordered queues of nodes, plus explicit dependencies between
// queues. The executor runs any plan; the serial plan (one queue, dependency order) is the
// baseline; parallel and multi-device plans come from core/schedule.

#include "ir/graph.h"
#include "util/status.h"

#include <string>
#include <vector>

namespace opscope {

struct StepRef
{
    std::uint32_t queue = 0;
    std::uint32_t step = 0;
    bool operator==(const StepRef &) const = default;
};

struct PlanStep
{
    NodeId node;
    std::vector<StepRef> waitFor; // steps of other queues that must finish first
};

struct PlanQueue
{
    int device = 0; // index into ExecutionPlan::devices
    std::vector<PlanStep> steps;
    // More than one: that many workers share the queue, each taking the first step (in queue
    // order) whose inputs are ready — an op starts as soon as its inputs are and a worker is free
    // (CPU worker pools; a GPU stream is one worker). Each step's waitFor must then name all its
    // dependencies in other queues itself.
    int workers = 1;
};

struct ExecutionPlan
{
    std::string name;
    std::vector<std::string> devices; // "cpu:0"
    std::vector<PlanQueue> queues;
};

Expected<ExecutionPlan> serialPlan(const Graph &graph, const std::string &device = "cpu:0");

// The part of a plan some devices run on their own (an MPI rank's devices, a pipeline stage's
// device): the queues of the devices `keep` selects (by plan device), devices and queues
// renumbered in order. A wait on a queue left out is dropped where the waiting step is a Recv —
// the tensor's arrival carries the dependency; any other such wait has no transfer to wait for
// and is an error naming both steps. `queueOf`, if given, maps each kept queue to the plan's.
Expected<ExecutionPlan> subPlan(const ExecutionPlan &plan, const std::vector<bool> &keep, const Graph &graph,
                                std::vector<std::uint32_t> *queueOf = nullptr);

// Every live node exactly once; every dependency either earlier in the same queue or waited for.
Status validatePlan(const Graph &graph, const ExecutionPlan &plan);

} // namespace opscope
