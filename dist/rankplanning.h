#pragma once
// Rank 0's plan of one schedule over every rank's devices, refused up front where a rank's share
// would not fit its memory.
//
// greedy and pipeline place within the ranks' memory: a device's cap bounds what it is given (the
// weights its nodes read, their outputs and the copies it receives — not a run's bytes: buffers
// are reused, send copies and workspaces are not counted); greedy fills devices by finish time
// under the caps, pipeline ends a stage where its device's cap runs out. The real share of each
// rank is then predicted by running the partitioned plan once (predictRankMemory); where a rank's
// share is still over its budget, every device's cap is converted to counted bytes at the worst
// rate of real to counted bytes seen (never raised), and the schedule places again — a few times
// at most. round-robin deals nodes out by turn and is only checked.

#include "rankmemory.h"
#include "schedule/costmodel.h"
#include "schedule/scheduler.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace opscope::dist {

struct RankPlanRequest
{
    schedule::Strategy strategy = schedule::Strategy::Greedy;
    std::string name;           // as reported: "greedy", "pipeline, 4 micro-batches"
    schedule::CostModel cost;   // every rank's devices, named, capped, with processOf and links
    std::vector<int> rankOfDevice;
    int ranks = 1;
    int threads = 1;
    int microbatches = 1;       // a pipeline's, for its predicted makespan
    std::vector<std::uint64_t> available; // by rank (0: unknown)
    bool limitGiven = false;    // `available` is --memory-per-rank's whole budget
    // Size each placement by one run of it in rank 0's process; false where the whole model does
    // not fit rank 0: from the inferred shapes (predictRankMemory).
    bool sizeByRunning = true;
};

struct RankPlanOutcome
{
    // encodePlan's plan with "memory" (each rank's predicted share), or {"refused": why}.
    nlohmann::json encoded;
    int placements = 1; // greedy: how many placements it took to fit
    std::size_t unsized = 0; // sized from shapes: tensors of data-dependent size left out
};

// Each device's cap from its rank's budget (`available`, `rankOfDevice`), as greedy starts from:
// a rank's devices share its memory equally. Embedded weights are on every rank whatever it runs:
// a --memory-per-rank budget (`limitGiven`) loses them first — free memory measured after loading
// has lost them already — and greedy (planAcrossRanks) charges a device only the external weights
// it maps.
void capDevicesByRank(RankPlanRequest &request, const Model &model);

// Rank 0 only. `sizing`: the feeds one run of the plan takes (a micro-batch's for a pipeline).
// Errors are faults of the model or of opscope; a plan that does not fit is an outcome.
Expected<RankPlanOutcome> planAcrossRanks(const Model &model, RankPlanRequest request, const Feeds &sizing);

} // namespace opscope::dist
