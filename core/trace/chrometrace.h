#pragma once
// Chrome Trace Event JSON, the format Perfetto and chrome://tracing open: export (a process per
// device, a thread per queue, complete events with the node name and op, flow arrows Send → Recv)
// and import (complete and begin/end events, process/thread names; PyTorch profiler traces
// included). Nested spans of one thread import as stacked lanes (depth 1, 2, …).

#include "trace/trace.h"
#include "util/status.h"

#include <filesystem>
#include <string>

namespace opscope::trace {

std::string toChromeJson(const Trace &trace);
Status writeChromeTrace(const Trace &trace, const std::filesystem::path &path); // atomic
Expected<Trace> fromChromeJson(const std::string &text, const std::string &name = {});
Expected<Trace> readChromeTrace(const std::filesystem::path &path);

} // namespace opscope::trace
