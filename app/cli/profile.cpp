// opscope-cli profile: runs a model under several schedules (serial, parallel, greedy,
// round-robin) on N CPU devices, or predicts them for other devices (--simulate), and reports per
// schedule the makespan (median over iterations) next to the cost model's prediction, each
// device's utilization, idle time and communication/compute overlap; --trace writes every run as
// one Chrome trace (a process per schedule and device).

#include "commands.h"
#include "profileformat.h"
#include "onnx/modelio.h"
#include "runtime/randominputs.h"
#include "schedule/profiler.h"
#include "trace/chrometrace.h"
#include "util/numbers.h"
#include "util/systemload.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace opscope::cli {

Expected<int> deviceCount(const std::string &spec, const std::string &option)
{
    // "cpu:N", or N alone: every command that takes CPU devices reads both (optimize wanted N,
    // profile and memory cpu:N, and each refused the other's form).
    const auto colon = spec.find(':');
    if (colon != std::string::npos && spec.substr(0, colon) != "cpu")
        return Status::invalid(option + " must be cpu:N (or N): CPU devices for now (on a GPU: run --device cuda:N "
                               "[--trace F.json]; profile --simulate gpu:N predicts GPU schedules)");
    const std::string_view count = colon == std::string::npos ? std::string_view(spec)
                                                              : std::string_view(spec).substr(colon + 1);
    // One kind of device per run: "cpu:1,cuda:1" was read as cpu:1 and ran without the GPU.
    const std::optional<std::int64_t> n = parseWholeNumber(count, 1, 256);
    if (!n)
        return Status::invalid(option + " cpu:N needs a whole number 1 ≤ N ≤ 256, got '" + spec + "'" +
                               (spec.find(',') != std::string::npos
                                    ? " (one kind of device per run: mixed CPU and GPU plans are not supported yet)"
                                    : ""));
    return int(*n);
}

nlohmann::ordered_json profileJson(const ProfileArgs &args, const std::vector<schedule::ProfileRun> &reports,
                                   const std::vector<std::string> &notes)
{
    nlohmann::ordered_json j;
    j["model"] = args.model;
    j["devices"] = args.simulate.empty() ? args.devices : args.simulate;
    j["simulated"] = !args.simulate.empty();
    j["schedules"] = nlohmann::ordered_json::array();
    for (const schedule::ProfileRun &r : reports) {
        nlohmann::ordered_json s{
            {"name", r.name},        {"makespan_ms", r.makespanMs}, {"predicted_ms", r.predictedMs},
            {"idle_ms", r.idleMs},   {"overlap", r.overlap},        {"transfers", r.transfers},
            {"measured", r.measured}, {"min_ms", r.minMs}, {"max_ms", r.maxMs}};
        s["devices"] = nlohmann::ordered_json::array();
        for (const auto &[d, u] : r.utilization) {
            const auto q = r.queues.find(d);
            nlohmann::ordered_json dev{{"name", d},
                                       {"utilization", u},
                                       {"workers", q == r.queues.end() ? 0 : q->second},
                                       {"arena_bytes", 0}}; // 0 where the run planned none (an unused device)
            for (const auto &[arenaDevice, bytes] : r.arenaBytes)
                if (arenaDevice == d)
                    dev["arena_bytes"] = bytes;
            s["devices"].push_back(dev);
        }
        if (r.pipeline.stages > 0) {
            s["microbatches"] = r.pipeline.microbatches;
            s["stages"] = r.pipeline.stages;
            s["bubble"] = r.pipeline.bubble;
            s["ideal_bubble"] = r.pipeline.idealBubble;
            s["ideal_ms"] = r.pipeline.idealMs;
        }
        j["schedules"].push_back(s);
    }
    j["notes"] = notes;
    return j;
}

void printProfileTable(const ProfileArgs &args, const std::vector<schedule::ProfileRun> &reports,
                       const std::string &devices, int threads)
{
    if (!args.simulate.empty()) // nothing runs: the cost model's prediction
        std::printf("%s on %s, predicted by the cost model (nothing runs)\n\n", args.model.c_str(), devices.c_str());
    else
        std::printf("%s on %s, %d thread%s per device, median of %d runs\n\n", args.model.c_str(), devices.c_str(),
                    threads, threads == 1 ? "" : "s", args.iterations);
    int width = 18; // the longest schedule name ("round-robin, one process") sets the first column
    for (const schedule::ProfileRun &r : reports)
        width = std::max(width, int(r.name.size()));
    std::printf("%-*s %12s %13s %10s %10s %9s  %s\n", width, "schedule", "makespan ms", "predicted ms", "idle ms",
                "transfers", "overlap", "utilization per device");
    const double serial = reports.empty() ? 0.0 : reports.front().makespanMs;
    for (const schedule::ProfileRun &r : reports) {
        std::ostringstream util;
        // "cpu:1 0%" under parallel read as a failure to use it: parallel's workers share cpu:0.
        for (const auto &[d, u] : r.utilization) {
            const auto q = r.queues.find(d);
            if (r.measured && q == r.queues.end() && u == 0.0)
                util << d << " unused  ";
            else if (q != r.queues.end() && q->second > 1)
                util << d << " " << int(u * 100 + 0.5) << "% of " << q->second << " workers  ";
            else
                util << d << " " << int(u * 100 + 0.5) << "%  ";
        }
        std::printf("%-*s %12.3f %13.3f %10.3f %10zu %8.0f%%  %s\n", width, r.name.c_str(), r.makespanMs,
                    r.predictedMs, r.idleMs, r.transfers, r.overlap * 100, util.str().c_str());
    }
    if (reports.size() > 1 && serial > 0) {
        std::printf("\n");
        for (std::size_t i = 1; i < reports.size(); ++i)
            std::printf("%s: %.3gx the speed of %s\n", reports[i].name.c_str(), serial / reports[i].makespanMs,
                        reports.front().name.c_str());
    }
    for (const schedule::ProfileRun &r : reports)
        if (r.pipeline.stages > 0)
            std::printf("%s: %d %s, %.0f%% of their time idle (GPipe's ideal (S-1)/(M+S-1) = %.0f%%), "
                        "makespan %.3f ms against %.3f ms with that bubble\n",
                        r.name.c_str(), r.pipeline.stages, r.pipeline.stages == 1 ? "stage" : "stages",
                        r.pipeline.bubble * 100, r.pipeline.idealBubble * 100,
                        r.makespanMs, r.pipeline.idealMs);
}

int runProfile(const ProfileArgs &args)
{
    if (args.ranks)
        return runProfileRanks(args);
    // Options of --ranks alone would be ignored: said, not silently dropped.
    for (const auto &[given, option] : {std::pair{!args.memoryPerRank.empty(), "--memory-per-rank"},
                                        std::pair{args.devicesPerRank != "cpu:1", "--devices-per-rank"},
                                        std::pair{args.inProcess, "--in-process"},
                                        std::pair{args.transferTimeout > 0, "--transfer-timeout"}})
        if (given)
            return reportError(Status::invalid(std::string(option) + " applies to runs across MPI ranks: add --ranks "
                                               "and start it with mpirun, or leave it out"));
    // Under mpirun without --ranks every rank would profile alone, all at once on the same cores,
    // each printing its own table: said once, by rank 0.
    if (const char *size = std::getenv("OMPI_COMM_WORLD_SIZE"); size && std::atoi(size) > 1) {
        const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
        if (!rank || std::string(rank) == "0")
            return reportError(Status::invalid(std::string("profile runs as one of ") + size +
                                               " MPI ranks without --ranks: every rank would profile alone; add "
                                               "--ranks to run the schedules across them"));
        return ExitUserError;
    }
    if (args.microbatches > 1 &&
        std::find(args.schedules.begin(), args.schedules.end(), "pipeline") == args.schedules.end())
        return reportError(Status::invalid("--microbatches splits the batch for the pipeline schedule: add "
                                           "--schedule pipeline"));
    Expected<int> devices = deviceCount(args.devices);
    if (!devices)
        return reportError(devices.status());
    Expected<std::vector<schedule::Strategy>> listed = schedule::strategiesFromNames(args.schedules);
    if (!listed)
        return reportError(listed.status());
    const std::vector<schedule::Strategy> strategies = std::move(*listed);
    Expected<ImportResult> loaded = loadModel(args.model);
    if (!loaded)
        return reportError(loaded.status());
    if (!args.trace.empty())
        if (Status ok = checkWritePath(args.trace, "--trace", modelFiles(args.model, loaded->model), args.force,
                                       feedFiles(args.inputs)); !ok)
            return reportError(ok);
    // More workers than cores: parallel and greedy then measure the OS time-slicing the workers,
    // not parallelism (cpu:64 on a 2-core machine ran and reported as if it were 64 devices).
    if (args.simulate.empty()) {
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        const long wanted = long(*devices) * std::max(1, args.threadsPerDevice);
        if (wanted > long(cores))
            printWarnings({args.devices + " with " + std::to_string(std::max(1, args.threadsPerDevice)) +
                           " thread(s) each needs " + std::to_string(wanted) + " cores, but this machine has " +
                           std::to_string(cores) + ": the workers share cores, so parallel and greedy times "
                           "measure time-slicing, not parallelism (--simulate " + args.devices +
                           " predicts them instead)"});
    }
    Model model = loaded->model;
    model.graph.assignNodeNames();
    // Read against the model as loaded (the passes keep its inputs).
    Expected<GivenInputs> given = givenInputsFor(model.graph, args.inputs, args.dims);
    if (!given)
        return reportError(given.status());
    // A prediction prices the shapes it can infer: the dims are bound before the passes run, so
    // that they and the cost model see [64, 2048] rather than the unbound model's [1, 1].
    if (!args.simulate.empty()) {
        schedule::ProfileOptions binding;
        binding.given = given->tensors;
        binding.dims = given->dims;
        Expected<Model> bound = schedule::withBoundInputDims(model, binding);
        if (!bound)
            return reportError(bound.status());
        model = std::move(*bound);
    }
    if (Expected<double> opt = optimizeForRun(model, args.optimize); !opt)
        return reportError(opt.status());

    schedule::ProfileOptions options;
    options.strategies = strategies;
    options.devices = *devices;
    options.threadsPerDevice = std::max(1, args.threadsPerDevice);
    options.iterations = args.iterations;
    options.simulate = args.simulate;
    options.measuredCosts = !args.estimatedCosts;
    options.sharedQueue = !args.fixedQueues;
    options.seed = args.seed;
    options.microbatches = args.microbatches;
    noteUnboundDims(model.graph, given->tensors, given->dims);
    options.given = std::move(given->tensors);
    options.dims = given->dims;
    const CpuSample before = sampleCpu();
    Expected<std::vector<schedule::ProfileRun>> runs = schedule::profileModel(model, options);
    if (!runs)
        return reportError(runs.status());
    const CpuSample after = sampleCpu();
    const std::vector<schedule::ProfileRun> &reports = *runs;
    // The most cores one of the schedules wanted at once: every device's threads.
    const int wanted = std::max(1, options.threadsPerDevice) * std::max(1, *devices);
    const std::vector<std::string> notes =
        schedule::timingNotes(reports, args.iterations, loadAverage(), after.valid ? after.machineCores : usableCores(),
                              othersBusyCores(before, after), wanted);
    const int threads = options.threadsPerDevice;
    if (!args.trace.empty())
        if (Status written =
                trace::writeChromeTrace(schedule::combinedTrace(reports, args.model), args.trace);
            !written)
            return reportError(written);

    if (args.json) {
        nlohmann::ordered_json j = profileJson(args, reports, notes);
        std::cout << j.dump(2) << '\n';
        for (const std::string &n : notes) // in the JSON and, as without it, on stderr
            std::cerr << "opscope-cli: note: " << n << '\n';
        return ExitOk;
    }
    // "cpu:2" also when given as "2" (both forms are read alike).
    printProfileTable(args, reports,
                      args.simulate.empty() ? "cpu:" + std::to_string(*devices) : args.simulate + " (simulated)",
                      threads);
    for (const std::string &n : notes)
        std::cerr << "opscope-cli: note: " << n << '\n';
    return ExitOk;
}

} // namespace opscope::cli
