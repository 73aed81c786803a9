#pragma once
// The memory lane of a profiled run: per device, the bytes its memory plan has live over the
// run's time, as a trace counter ("live bytes"). Each arena buffer — a value with the views and
// in-place outputs that live in its bytes — counts from the start of its producer's span to the
// end of its last reader's span in this run's trace, so the lane shows what the plan meant on the
// real clock (parallel branches overlapping, a long skip tensor holding its bytes).

#include "runtime/memoryplan.h"
#include "trace/trace.h"

namespace opscope::schedule {

void addMemoryCounters(const Graph &graph, const MemoryPlan &memory, trace::Trace &trace);

} // namespace opscope::schedule
