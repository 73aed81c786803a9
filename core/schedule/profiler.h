#pragma once
// Runs a model under several schedules and records each run as a trace: what `opscope-cli
// profile` prints and the app's profiling sessions show. Multi-device schedules are placed,
// partitioned (Send/Recv) and planned; every schedule's outputs are checked against the first's.

#include "ir/model.h"
#include "runtime/session.h"
#include "schedule/scheduler.h"
#include "trace/trace.h"

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace opscope::schedule {

struct ProfileOptions
{
    std::vector<Strategy> strategies{Strategy::Serial, Strategy::Parallel, Strategy::Greedy};
    int devices = 2;                          // CPU devices (each its own worker and memory)
    int threadsPerDevice = 1;                 // intra-op threads per device
    int iterations = 10;                      // timed runs per schedule; the median run is kept
    std::string simulate;                     // predict for these devices ("gpu:4") instead of running
    std::uint64_t seed = 0;                   // random inputs
    Feeds given;                              // inputs given by the caller (the others are random)
    std::map<std::string, std::int64_t> dims; // symbolic dims of random inputs (unbound: 1)
    // With several devices and a schedule that spreads over them, also serial on one device with
    // every core as an intra-op thread (what the spread schedules compete with).
    bool allCoresSerial = true;
    // Plan parallel and multi-device schedules with per-op times a serial run measured (the
    // serial schedule's own run when it comes first, else three extra serial runs) instead of
    // the FLOP/byte estimates. Only when running, not when simulating.
    bool measuredCosts = true;
    // parallel: workers share one queue (false: a fixed queue per worker, as GPU streams run).
    bool sharedQueue = true;
    // pipeline: the batch as this many micro-batches, GPipe-style — each device a stage running in
    // a thread of its own (runtime/stagerunner.h), or predicted when simulating.
    int microbatches = 1;
    const std::atomic<bool> *cancel = nullptr;
    std::function<void(const std::string &)> progress; // "greedy 3/10"
};

struct ProfileRun
{
    std::string name;
    bool measured = false;
    double makespanMs = 0.0, predictedMs = 0.0, idleMs = 0.0;
    double minMs = 0.0, maxMs = 0.0; // the fastest and slowest timed iteration (makespanMs: median)
    double overlap = 0.0; // share of transfer time during which another lane computes
    std::size_t transfers = 0;
    std::vector<std::pair<std::string, double>> utilization; // device → busy / capacity
    std::map<std::string, int> queues; // device → queues (workers) that ran on it; absent: unused
    // device → bytes of the arena this run's memory plan gave it. Plans differ between sessions
    // (a kernel's workspace follows the variant its trial runs picked), so this is the run's own.
    std::vector<std::pair<std::string, std::uint64_t>> arenaBytes;
    trace::Trace trace;
    std::unordered_map<std::string, double> opSeconds; // serial runs: each node's median seconds
    // A pipeline of micro-batches (stages 0: not one): over how many stages, the share of their
    // time idle — measured, or GPipe's when predicted — GPipe's ideal (S−1)/(M+S−1), and the
    // makespan with that ideal bubble.
    struct Pipeline
    {
        int microbatches = 0, stages = 0;
        double bubble = 0.0, idealBubble = 0.0, idealMs = 0.0;
    } pipeline;
};

// One schedule's output against another's: float outputs within 1e-3 of the output's own scale
// (max |a - b| / max |b|: schedules change the order of float sums), others exactly.
Status sameWithinScale(const RuntimeTensor &got, const RuntimeTensor &want);

// `model` should already be optimized the way it will run.
Expected<std::vector<ProfileRun>> profileModel(const Model &model, const ProfileOptions &options);

// The model with its inputs' symbolic dims fixed to what options.dims and options.given say, and
// shapes inferred again. A prediction prices ops by their shapes: one from the unbound model
// priced a [64, 2048] batch as [1, 1]. Bind before optimizing too, so the passes see the shapes.
Expected<Model> withBoundInputDims(const Model &model, const ProfileOptions &options);

// What makes a profile's times doubtful, one sentence each: a median of fewer than 3 timed runs;
// a schedule whose median is far above its fastest run (the machine was busy, or something warmed
// up during the timed runs); other processes wanting the cores while profiling — `othersBusy`
// (cores they kept busy, measured around the runs) against the `ourThreads` the profile ran, else
// a load average above `cores` (`load`, if known).
std::vector<std::string> timingNotes(const std::vector<ProfileRun> &runs, int iterations,
                                     std::optional<double> load, unsigned cores,
                                     std::optional<double> othersBusy = {}, int ourThreads = 1);

// Seconds per node name in a trace (its spans summed; waits and host spans left out).
std::unordered_map<std::string, double> opSeconds(const trace::Trace &trace);

// Makespan, utilization, idle time and overlap of a trace (fills those fields of `run`).
void summarizeRun(ProfileRun &run);
// Keeps the median of timed runs (duration, trace) as the run's makespan and trace, with the
// fastest and slowest beside it. `timed` is sorted and its median trace moved out.
void keepMedianRun(std::vector<std::pair<double, trace::Trace>> &timed, ProfileRun &run);
// A pipeline run's bubble from its trace: the share of its stages' (devices with work) time spent
// not computing, beside GPipe's ideal (S−1)/(M+S−1), and the makespan that ideal would give.
void summarizePipeline(ProfileRun &run, int microbatches);

// Every run in one trace, devices prefixed with the run's name ("greedy/cpu:1").
trace::Trace combinedTrace(const std::vector<ProfileRun> &runs, const std::string &name);
// The inverse, for a saved session read back: one run per name prefix, in the order saved, each
// on its own clock, summarized. A trace whose devices carry no prefix (another tool's) is one run.
std::vector<ProfileRun> splitSession(const trace::Trace &combined);

} // namespace opscope::schedule
