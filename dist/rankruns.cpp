#include "rankruns.h"

#include "tracewire.h"
#include "runtime/backend.h"

#include <algorithm>
#include <cmath>

namespace opscope::dist {

using schedule::ProfileRun;

Expected<ProfileRun> runInOneProcess(const Model &partitioned, const ExecutionPlan &global, const Feeds &feeds,
                                     int devices, int threads, int iterations, const std::string &name,
                                     double predictedSeconds)
{
    SessionOptions one;
    one.threads = threads;
    Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(partitioned, one);
    if (!s)
        return s.status();
    std::vector<std::unique_ptr<Backend>> all;
    ExecOptions e;
    e.threads = threads;
    for (int d = 0; d < devices; ++d) {
        all.push_back(std::make_unique<CpuBackend>(d, threads));
        e.backends.push_back(all.back().get());
    }
    trace::Recorder rec(global.devices);
    e.onStep = [&rec](const StepEvent &ev) { rec.onStep(ev); };
    std::vector<std::pair<double, trace::Trace>> timed;
    for (int i = 0; i <= iterations; ++i) {
        rec.begin();
        Expected<std::vector<RuntimeTensor>> out = (*s)->run(feeds, &global, &e);
        if (!out)
            return out.status();
        if (i > 0) { // the first sizes the memory plan: a warm-up
            trace::Trace t = rec.finish(name);
            timed.emplace_back(t.duration(), std::move(t));
        }
    }
    ProfileRun r;
    r.name = name;
    r.measured = true;
    r.predictedMs = predictedSeconds * 1e3;
    schedule::keepMedianRun(timed, r);
    for (trace::Lane &l : r.trace.lanes)
        if (l.device == "host")
            l.device = "rank0:host"; // it ran in rank 0's process
    schedule::summarizeRun(r);
    return r;
}

int timeAcrossRanks(const std::vector<nlohmann::json> &times, const std::vector<ClockOffset> &clockStart,
                    int iterations, ProfileRun &run, RankRunInfo &info)
{
    std::vector<std::pair<double, int>> makespans;
    for (int i = 0; i < iterations; ++i) {
        double first = INFINITY, last = -INFINITY;
        for (std::size_t q = 0; q < times.size(); ++q) {
            const double z = times[q][0][std::size_t(i)].get<double>() - clockStart[q].offset;
            first = std::min(first, z);
            last = std::max(last, z + times[q][1][std::size_t(i)].get<double>());
        }
        makespans.emplace_back(last - first, i);
    }
    for (const nlohmann::json &p : times) {
        info.mpiMessages += p[2].get<std::uint64_t>();
        info.mpiBytes += p[3].get<std::uint64_t>();
    }
    info.mpiMessages /= std::uint64_t(iterations);
    info.mpiBytes /= std::uint64_t(iterations);
    std::sort(makespans.begin(), makespans.end());
    run.makespanMs = makespans[makespans.size() / 2].first * 1e3;
    run.minMs = makespans.front().first * 1e3;
    run.maxMs = makespans.back().first * 1e3;
    return makespans[makespans.size() / 2].second;
}

void finishSpreadRun(ProfileRun &run, const RankRunInfo &info, const std::vector<trace::Trace> &traces,
                     const std::vector<double> &zero, const std::vector<ClockOffset> &clockStart,
                     const std::vector<ClockOffset> &clockEnd, const std::vector<CrossRankEdge> &edges,
                     const std::vector<std::string> &labels, const std::vector<std::string> &deviceNames)
{
    std::vector<double> shift;
    for (std::size_t q = 0; q < traces.size(); ++q)
        shift.push_back(zero[q] - offsetAt(clockStart[q], clockEnd[q], zero[q]) - zero[0]);
    run.trace = mergeRankTraces(traces, shift, edges, run.name, labels);
    const double makespan = run.makespanMs;
    schedule::summarizeRun(run);
    run.makespanMs = makespan; // from the first start to the last end, as measured across ranks
    // A pipeline's bubble: the share of its stages' time spent not computing, beside GPipe's
    // (S−1)/(M+S−1), and the makespan with that ideal bubble.
    if (labels.size() > 1)
        schedule::summarizePipeline(run, info.microbatches);
    for (const std::string &dn : deviceNames) {
        // A device the plan left idle still has its lane: a rank with nothing to do is what the
        // timeline should show, not a rank missing from it.
        if (std::none_of(run.trace.lanes.begin(), run.trace.lanes.end(),
                         [&](const trace::Lane &l) { return l.device == dn; }))
            run.trace.lanes.push_back({dn, 0, {}});
        if (std::none_of(run.utilization.begin(), run.utilization.end(),
                         [&](const auto &u) { return u.first == dn; }))
            run.utilization.emplace_back(dn, 0.0);
    }
}

} // namespace opscope::dist
