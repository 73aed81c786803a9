#pragma once
// What `profile` prints, shared by the one-process and the --ranks runs.

#include "commands.h"
#include "schedule/profiler.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace opscope::cli {

nlohmann::ordered_json profileJson(const ProfileArgs &args, const std::vector<schedule::ProfileRun> &reports,
                                   const std::vector<std::string> &notes);
void printProfileTable(const ProfileArgs &args, const std::vector<schedule::ProfileRun> &reports,
                       const std::string &devices, int threads);

// --devices cpu:N (1 ≤ N ≤ 256).
Expected<int> deviceCount(const std::string &spec, const std::string &option = "--devices");

} // namespace opscope::cli
