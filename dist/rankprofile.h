#pragma once
// `opscope-cli profile --ranks` under mpirun: a model's schedules run across MPI ranks, each rank a
// process with its own CPU devices, placed over the union of all ranks' devices.
//
// Rank 0 computes every plan and broadcasts it; the other ranks only check they hold the same
// graph and execute their part. Not every rank for itself: the placement's inputs — op times
// measured by a serial run, a seeded search over them — are timings, which differ between
// processes, so independently computed plans would disagree and the ranks would wait for
// transfers nobody sends. The partitioned graph itself is rebuilt on every rank from the
// broadcast placement (partitioning is deterministic) and checked against rank 0's.
//
// Per schedule: every rank runs its queues with MpiTransfers for the cross-rank edges; the
// warm-up run's outputs are gathered on rank 0 and checked against a serial run there; each timed
// run starts at a barrier; rank 0 takes the median run on its clock (offsets from ping-pongs
// at start and end) and merges every rank's trace of it.

#include "clocksync.h"
#include "mpicontext.h"
#include "rankmemory.h"
#include "runtime/session.h"
#include "schedule/profiler.h"

#include <atomic>
#include <functional>
#include <map>
#include <vector>

namespace opscope::dist {

struct RankProfileOptions
{
    std::vector<schedule::Strategy> strategies{schedule::Strategy::Serial, schedule::Strategy::Greedy};
    int devicesPerRank = 1;
    int threadsPerDevice = 1;
    int iterations = 10;
    std::uint64_t seed = 0;
    Feeds given;
    std::map<std::string, std::int64_t> dims;
    // How long a receive may wait before the job is ended as hung; 0: max(30 s, 50× the serial run).
    double transferTimeoutSeconds = 0.0;
    // Also run each spread plan in rank 0's process alone, every device local (what MPI costs).
    bool inProcess = false;
    // pipeline: each run is this many micro-batches (the inputs split along dim 0), GPipe-style.
    int microbatches = 1;
    // What each rank's share of a spread plan may take; 0: what its host or cgroup has available.
    std::uint64_t memoryPerRank = 0;
    std::function<void(const std::string &)> progress; // rank 0
};

struct RankRunInfo
{
    std::size_t crossRankEdges = 0;  // the plan's Recvs whose Send is on another rank
    std::uint64_t mpiMessages = 0;   // tensors sent over MPI per run, all ranks
    std::uint64_t mpiBytes = 0;      // their bytes per run
    int microbatches = 1;            // runs per iteration (a pipeline's micro-batches)
    std::vector<RankMemory> memory;  // by rank: what its share was predicted to take (spread runs)
};

struct RankProfile
{
    std::vector<schedule::ProfileRun> runs; // rank 0
    std::vector<RankRunInfo> info;          // by run
    int ranks = 1;
    schedule::LinkModel link;                     // measured between rank 0 and rank 1
    std::vector<ClockOffset> clockStart, clockEnd; // rank 0: by rank
    double transferTimeoutSeconds = 0.0;
    std::vector<std::string> notes; // schedules skipped and why, doubtful measurements
    // Schedules refused up front because a rank's share would not fit its memory, and why.
    std::vector<std::string> refused;
    std::vector<std::uint64_t> available; // by rank: the memory each may use (0: unknown)
};

// Collective: every rank calls it with the same model, loaded and optimized alike. Errors before
// the runs are agreed (every rank returns the same status); a rank failing during a run, when the
// others may be waiting for it, ends the job with MPI_Abort after naming itself and the cause.
Expected<RankProfile> profileAcrossRanks(MpiContext &mpi, const Model &model, const RankProfileOptions &options);

} // namespace opscope::dist
