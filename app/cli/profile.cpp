// opscope-cli profile: runs a model under several schedules (serial, parallel, greedy,
// round-robin) on N CPU devices, or predicts them for other devices (--simulate), and reports per
// schedule the makespan (median over iterations) next to the cost model's prediction, each
// device's utilization, idle time and communication/compute overlap; --trace writes every run as
// one Chrome trace (a process per schedule and device).

#include "commands.h"

#include "onnx/modelio.h"
#include "runtime/conformance.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "schedule/partition.h"
#include "schedule/scheduler.h"
#include "trace/chrometrace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

namespace opscope::cli {

namespace {

struct ScheduleReport
{
    std::string name;
    double makespanMs = 0.0, predictedMs = 0.0, idleMs = 0.0, overlap = 0.0;
    std::vector<std::pair<std::string, double>> utilization; // device → busy / makespan
    std::size_t transfers = 0;
    bool measured = false;
    trace::Trace trace;
};

Expected<int> deviceCount(const std::string &spec)
{
    const auto colon = spec.find(':');
    if (colon == std::string::npos || spec.substr(0, colon) != "cpu")
        return Status::invalid("--devices must be cpu:N (GPU devices arrive with the CUDA backend; --simulate gpu:N predicts them)");
    const int n = std::atoi(spec.substr(colon + 1).c_str());
    if (n < 1 || n > 256)
        return Status::invalid("--devices cpu:N needs 1 ≤ N ≤ 256");
    return n;
}

// Per device: busy time / makespan; idle = Σ(makespan − busy); overlap = share of transfer time
// during which some other lane computes.
void summarize(ScheduleReport &r)
{
    const trace::Trace &t = r.trace;
    const double makespan = t.duration();
    std::map<std::string, std::pair<double, int>> busy; // device → (busy seconds, queues)
    for (const trace::Lane &l : t.lanes) {
        busy[l.device].first += trace::laneStats(l, makespan).busy;
        ++busy[l.device].second;
    }
    r.idleMs = 0.0;
    for (const auto &[device, b] : busy) {
        const double capacity = makespan * b.second; // each queue could have been busy throughout
        r.utilization.emplace_back(device, capacity > 0 ? b.first / capacity : 0.0);
        r.idleMs += std::max(0.0, capacity - b.first) * 1e3;
    }
    double transferTime = 0.0, overlapped = 0.0;
    for (const trace::Transfer &x : t.transfers) {
        transferTime += x.end - x.start;
        // Compute on lanes other than the two ends during the transfer.
        double covered = 0.0;
        for (std::uint32_t li = 0; li < t.lanes.size(); ++li) {
            if (li == x.fromLane || li == x.toLane)
                continue;
            for (const trace::Span &s : t.lanes[li].spans)
                covered = std::max(covered, std::max(0.0, std::min(s.end, x.end) - std::max(s.start, x.start)));
        }
        overlapped += covered;
    }
    r.overlap = transferTime > 0 ? overlapped / transferTime : 0.0;
    r.transfers = t.transfers.size();
}

void prefixDevices(trace::Trace &t, const std::string &schedule)
{
    for (trace::Lane &l : t.lanes)
        l.device = schedule + "/" + l.device;
}

} // namespace

int runProfile(const ProfileArgs &args)
{
    Expected<int> devices = deviceCount(args.devices);
    if (!devices)
        return reportError(devices.status());
    std::vector<schedule::Strategy> strategies;
    for (const std::string &s : args.schedules) {
        Expected<schedule::Strategy> st = schedule::strategyFromName(s);
        if (!st)
            return reportError(st.status());
        strategies.push_back(*st);
    }
    Expected<ImportResult> loaded = loadModel(args.model);
    if (!loaded)
        return reportError(loaded.status());
    Model model = loaded->model;
    model.graph.assignNodeNames();
    if (Expected<double> opt = optimizeForRun(model, args.optimize); !opt)
        return reportError(opt.status());

    const int threads = std::max(1, args.threadsPerDevice);
    schedule::CostModel cost = schedule::calibratedCpuModel(*devices, threads);
    if (!args.simulate.empty()) {
        Expected<schedule::CostModel> sim = schedule::simulatedModel(args.simulate, cost);
        if (!sim)
            return reportError(sim.status());
        cost = *sim;
    }
    schedule::ScheduleOptions so;
    so.workers = int(cost.devices.size());

    std::vector<ScheduleReport> reports;
    std::vector<RuntimeTensor> reference;
    Feeds feeds;
    for (schedule::Strategy strategy : strategies) {
        ScheduleReport r;
        r.name = schedule::strategyName(strategy);
        // Multi-device strategies: place, partition (Send/Recv), plan with that placement.
        Model runModel = model;
        std::vector<int> placement;
        if (strategy == schedule::Strategy::Greedy || strategy == schedule::Strategy::RoundRobin) {
            Expected<std::vector<int>> place = schedule::placeNodes(model.graph, strategy, cost);
            if (!place)
                return reportError(place.status());
            Expected<schedule::Partition> part = schedule::partitionForDevices(model, *place);
            if (!part)
                return reportError(part.status());
            runModel = std::move(part->model);
            placement = std::move(part->deviceOf);
        }
        Expected<schedule::Schedule> plan = schedule::makeSchedule(runModel.graph, strategy, cost, so,
                                                                   placement.empty() ? nullptr : &placement);
        if (!plan)
            return reportError(plan.status());
        r.predictedMs = plan->predictedMakespan * 1e3;
        if (!args.simulate.empty()) {
            r.trace = schedule::predictedTrace(runModel.graph, *plan, r.name);
            summarize(r);
            r.makespanMs = r.predictedMs;
            reports.push_back(std::move(r));
            continue;
        }
        if (Status valid = validatePlan(runModel.graph, plan->plan); !valid)
            return reportError(Status::internal("the " + r.name + " plan is invalid: " + valid.message()));
        SessionOptions sessionOptions;
        sessionOptions.threads = threads;
        Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(runModel, sessionOptions);
        if (!session)
            return reportError(session.status());
        if (feeds.empty()) {
            RandomInputOptions ro;
            ro.seed = args.seed;
            Expected<Feeds> f = randomFeeds(**session, {}, ro);
            if (!f)
                return reportError(f.status());
            feeds = std::move(*f);
        }
        trace::Recorder recorder(plan->plan.devices);
        ExecOptions exec;
        exec.threads = threads;
        exec.onStep = [&recorder](const StepEvent &e) { recorder.onStep(e); };
        std::vector<std::pair<double, trace::Trace>> runs;
        Expected<std::vector<RuntimeTensor>> outputs = (*session)->run(feeds, &plan->plan, &exec); // warm-up
        if (!outputs)
            return reportError(outputs.status().withContext(r.name));
        for (int i = 0; i < std::max(1, args.iterations); ++i) {
            recorder.begin();
            outputs = (*session)->run(feeds, &plan->plan, &exec);
            if (!outputs)
                return reportError(outputs.status().withContext(r.name));
            trace::Trace t = recorder.finish(r.name);
            runs.emplace_back(t.duration(), std::move(t));
        }
        std::sort(runs.begin(), runs.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
        auto &median = runs[runs.size() / 2];
        r.makespanMs = median.first * 1e3;
        r.trace = std::move(median.second);
        r.measured = true;
        // Every schedule computes what the serial run computes.
        if (reference.empty()) {
            reference = *outputs;
        } else {
            for (std::size_t i = 0; i < reference.size() && i < outputs->size(); ++i) {
                double diff = 0.0;
                if (Status same = compareTensors((*outputs)[i], reference[i], 1e-5, 1e-6, diff); !same)
                    return reportError(Status::internal(r.name + " computes a different output " + std::to_string(i) +
                                                        ": " + same.message()));
            }
        }
        summarize(r);
        reports.push_back(std::move(r));
    }

    if (!args.trace.empty()) {
        trace::Trace all;
        all.name = args.model;
        for (ScheduleReport &r : reports) {
            trace::Trace t = r.trace;
            prefixDevices(t, r.name);
            const auto laneBase = std::uint32_t(all.lanes.size());
            for (trace::Lane &l : t.lanes) {
                for (trace::Span &s : l.spans) {
                    s.name = all.intern(t.strings[s.name]);
                    s.op = all.intern(t.strings[s.op]);
                }
                all.lanes.push_back(std::move(l));
            }
            for (trace::Transfer x : t.transfers) {
                x.fromLane += laneBase;
                x.toLane += laneBase;
                all.transfers.push_back(x);
            }
        }
        if (Status written = trace::writeChromeTrace(all, args.trace); !written)
            return reportError(written);
    }

    if (args.json) {
        nlohmann::ordered_json j;
        j["model"] = args.model;
        j["devices"] = args.simulate.empty() ? args.devices : args.simulate;
        j["simulated"] = !args.simulate.empty();
        j["schedules"] = nlohmann::ordered_json::array();
        for (const ScheduleReport &r : reports) {
            nlohmann::ordered_json s{{"name", r.name},          {"makespan_ms", r.makespanMs}, {"predicted_ms", r.predictedMs},
                                     {"idle_ms", r.idleMs},      {"overlap", r.overlap},        {"transfers", r.transfers},
                                     {"measured", r.measured}};
            s["devices"] = nlohmann::ordered_json::array();
            for (const auto &[d, u] : r.utilization)
                s["devices"].push_back({{"name", d}, {"utilization", u}});
            j["schedules"].push_back(s);
        }
        std::cout << j.dump(2) << '\n';
        return ExitOk;
    }
    std::printf("%s on %s%s, %d thread%s per device, median of %d runs\n\n", args.model.c_str(),
                (args.simulate.empty() ? args.devices : args.simulate).c_str(),
                args.simulate.empty() ? "" : " (simulated)", threads, threads == 1 ? "" : "s", args.iterations);
    std::printf("%-12s %12s %13s %10s %10s %9s  %s\n", "schedule", "makespan ms", "predicted ms", "idle ms",
                "transfers", "overlap", "utilization per device");
    const double serial = reports.empty() ? 0.0 : reports.front().makespanMs;
    for (const ScheduleReport &r : reports) {
        std::ostringstream util;
        for (const auto &[d, u] : r.utilization)
            util << d << " " << int(u * 100 + 0.5) << "%  ";
        std::printf("%-12s %12.3f %13.3f %10.3f %10zu %8.0f%%  %s\n", r.name.c_str(), r.makespanMs, r.predictedMs,
                    r.idleMs, r.transfers, r.overlap * 100, util.str().c_str());
    }
    if (reports.size() > 1 && serial > 0) {
        std::printf("\n");
        for (std::size_t i = 1; i < reports.size(); ++i)
            std::printf("%s: %.2fx the speed of %s\n", reports[i].name.c_str(), serial / reports[i].makespanMs,
                        reports.front().name.c_str());
    }
    return ExitOk;
}

} // namespace opscope::cli
