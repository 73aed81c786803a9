#pragma once
// The runs of a profile across ranks that are not the ranks' own: the same plan in rank 0's
// process alone (what the MPI transport costs), and a spread run's merged timeline and summary.

#include "clocksync.h"
#include "mpitransfers.h"
#include "rankprofile.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace opscope::dist {

// The global plan run with every device in this process (`devices` CPU backends), one warm-up
// then `iterations` timed runs; the median run's trace, named `name`, host lane "rank0:host".
Expected<schedule::ProfileRun> runInOneProcess(const Model &partitioned, const ExecutionPlan &global,
                                               const Feeds &feeds, int devices, int threads, int iterations,
                                               const std::string &name, double predictedSeconds);

// Rank 0: each timed run's makespan from the first rank's start to the last rank's end on rank 0's
// clock, from every rank's [starts, durations, messages, bytes] (`times`, by rank); the median's,
// the fastest and slowest into `run`, MPI messages and bytes per run into `info`. Returns the
// median run's index.
int timeAcrossRanks(const std::vector<nlohmann::json> &times, const std::vector<ClockOffset> &clockStart,
                    int iterations, schedule::ProfileRun &run, RankRunInfo &info);

// Rank 0, once the clocks are measured again: every rank's trace of the median run (`zero`: each
// rank's clock at its start) shifted onto rank 0's clock (offsets interpolated between the start
// and end measurements) and merged, summarized with the makespan measured across ranks kept; a
// pipeline's bubble; a lane and a utilization row for every device in `deviceNames`, idle ones too.
void finishSpreadRun(schedule::ProfileRun &run, const RankRunInfo &info, const std::vector<trace::Trace> &traces,
                     const std::vector<double> &zero, const std::vector<ClockOffset> &clockStart,
                     const std::vector<ClockOffset> &clockEnd, const std::vector<CrossRankEdge> &edges,
                     const std::vector<std::string> &labels, const std::vector<std::string> &deviceNames);

} // namespace opscope::dist
