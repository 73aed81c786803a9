#pragma once
// The memory plan of a model as the app shows it: one sizing run with given or random inputs
// under the serial plan, the plan it makes, checked (verifyMemoryPlan). Ids in the plan are the
// model graph's own (the session works on a copy with the same value and node slots).

#include "ir/model.h"
#include "runtime/memoryplan.h"
#include "runtime/randominputs.h"

#include <atomic>
#include <memory>

namespace opscope {

struct MemoryReportOptions
{
    Feeds given;               // inputs the user gave; the others are random
    RandomInputOptions random; // seed and symbolic dims for the random ones
    int threads = 1;
    MemoryPlanOptions plan;
    const std::atomic<bool> *cancel = nullptr;
};

struct MemoryReport
{
    std::shared_ptr<const MemoryPlan> plan;
    double runMilliseconds = 0.0; // the sizing run
};

Expected<MemoryReport> planModelMemory(const Model &model, const MemoryReportOptions &options = {});

} // namespace opscope
