#include "commands.h"
#include "infoformat.h"
#include "onnx/modelio.h"
#include "runtime/backend.h"
#include "runtime/conformance.h"
#include "runtime/executionplan.h"
#include "runtime/npy.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "schedule/profiler.h"
#include "trace/chrometrace.h"
#include "util/systemload.h"

#ifdef OPSCOPE_HAVE_CUDA
#include "cuptitracer.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/resource.h>

namespace opscope::cli {
namespace {

// NaN, +inf and −inf among a tensor's values (float16/bfloat16 are not read).
struct NonFinite
{
    std::int64_t nan = 0, posInf = 0, negInf = 0;
    std::int64_t total() const { return nan + posInf + negInf; }
    std::string text() const
    {
        std::string out;
        const auto part = [&](std::int64_t n, const char *what) {
            if (n)
                out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
        };
        part(nan, "NaN");
        part(posInf, "+inf");
        part(negInf, "-inf");
        return out;
    }
};

std::string summary(const RuntimeTensor &t, NonFinite *counted = nullptr)
{
    if (t.dtype() == DataType::String || t.elementCount() == 0)
        return "";
    const bool half = t.dtype() == DataType::Float16 || t.dtype() == DataType::BFloat16;
    if (half)
        return "";
    double lo = 0, hi = 0, sum = 0;
    bool any = false;
    NonFinite bad;
    for (std::int64_t i = 0; i < t.elementCount(); ++i) {
        const double v = t.valueAsDouble(i);
        if (!std::isfinite(v)) {
            ++(std::isnan(v) ? bad.nan : v > 0 ? bad.posInf : bad.negInf);
            continue;
        }
        lo = any ? std::min(lo, v) : v;
        hi = any ? std::max(hi, v) : v;
        any = true;
        sum += v;
    }
    if (counted)
        *counted = bad;
    std::ostringstream os;
    os.precision(5);
    if (!any) // every value NaN or infinite: no min, max or mean to print (was "min 1e+300 max -1e+300")
        return "no finite value (" + bad.text() + ")";
    os << "min " << lo << "  max " << hi << "  mean " << sum / double(t.elementCount() - bad.total());
    if (bad.total())
        os << "  (" << bad.text() << ")";
    return os.str();
}

struct TraceSummary
{
    std::size_t spans = 0;
    double runMs = 0.0; // the traced run's wall time: against the timed runs' median, tracing's cost
#ifdef OPSCOPE_HAVE_CUDA
    gpu::CuptiCounts gpu;
#else
    struct
    {
        std::uint64_t kernels = 0, copies = 0, unattributed = 0, dropped = 0, untimed = 0;
        std::uint32_t cuptiVersion = 0;
    } gpu;
#endif
    std::string note; // why the trace has no GPU lanes, where it should
    std::vector<std::pair<std::string, double>> utilization; // device → busy share of the run
    double overlap = 0.0;                                    // copy time a kernel overlapped
};

// The run as a Chrome trace: the executor's steps (each node on its device's queue), and on a GPU
// what CUPTI recorded of it, on the same clock. CUPTI that cannot start is a note, not a failure.
Expected<TraceSummary> traceOneRun(const InferenceSession &session, const Feeds &feeds, const ExecutionPlan *plan,
                                   ExecOptions exec, const RunArgs &args)
{
    TraceSummary summary;
    trace::Recorder recorder(plan ? plan->devices : std::vector<std::string>{args.device});
    recorder.setFeeds(&session.model().graph, feeds);
    exec.onStep = [&recorder](const StepEvent &e) { recorder.onStep(e); };
#ifdef OPSCOPE_HAVE_CUDA
    std::unique_ptr<gpu::CuptiTracer> cupti;
    if (args.device.rfind("cuda", 0) == 0) {
        Expected<std::unique_ptr<gpu::CuptiTracer>> started = gpu::CuptiTracer::start();
        if (started)
            cupti = std::move(*started);
        else
            summary.note = started.status().message();
    }
#endif
    recorder.begin();
    Expected<std::vector<RuntimeTensor>> out = session.run(feeds, plan, &exec);
    summary.runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - recorder.zero()).count();
    if (!out)
        return out.status().withContext("the traced run");
    trace::Trace t = recorder.finish("run on " + args.device);
#ifdef OPSCOPE_HAVE_CUDA
    if (cupti) {
        Expected<gpu::CuptiCounts> counts = cupti->finish(t, recorder.zero());
        if (counts)
            summary.gpu = *counts;
        else
            summary.note = counts.status().message();
    }
#endif
    if (!summary.note.empty())
        std::cerr << "opscope-cli: note: the trace has no GPU lanes: " << oneLine(summary.note) << '\n';
    if (summary.gpu.dropped)
        std::cerr << "opscope-cli: warning: CUPTI dropped " << summary.gpu.dropped
                  << " records (its buffers were full): the GPU lanes miss them\n";
    for (const trace::Lane &l : t.lanes)
        summary.spans += l.spans.size();
    OPSCOPE_TRY(trace::writeChromeTrace(t, args.trace));
    // A GPU's busy share and copy/compute overlap come from its stream lanes (schedule::summarizeRun).
    schedule::ProfileRun r;
    r.trace = std::move(t);
    schedule::summarizeRun(r);
    summary.utilization = r.utilization;
    summary.overlap = r.overlap;
    return summary;
}

double peakRssMb()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_maxrss) / 1024.0;
}

} // namespace

int runModel(const RunArgs &args)
{
    Expected<ImportResult> loaded = loadModel(args.model);
    if (!loaded)
        return reportError(loaded.status());
    // Like ONNX Runtime, run the optimized graph unless told otherwise; the fused ops stay opscope's.
    Model &model = loaded->model;
    const std::vector<std::filesystem::path> inputFiles = modelFiles(args.model, model); // before optimizing
    const std::size_t nodesBefore = model.graph.nodeCountWithSubgraphs();
    // The device first: a missing GPU is reported before any work.
    const bool onHost = args.device.rfind("cpu", 0) == 0;
    std::unique_ptr<Backend> device;
    if (!onHost) {
        Expected<std::unique_ptr<Backend>> made = makeBackend(args.device, args.threads);
        if (!made)
            return reportError(made.status());
        device = std::move(*made);
    } else if (args.device != "cpu:0" && args.device != "cpu") {
        return reportError(Status::invalid("--device '" + args.device + "': run takes cpu:0 or cuda:N "
                                           "(several CPU devices are profile --devices)"));
    }
    const std::string level = !args.optimize.empty() ? args.optimize : onHost ? "all" : "basic";
    Expected<double> optimizeMs = optimizeForRun(model, level);
    if (!optimizeMs)
        return reportError(optimizeMs.status());
    SessionOptions options;
    options.threads = args.threads;
    // A GPU allocates from its own pool; host memory plans are for host tensors.
    options.planMemory = !args.noMemoryPlan && onHost;
    Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(model, options);
    if (!session)
        return reportError(session.status());
    // Where each output goes, every path checked before the run: a refusal after the first file
    // was written left some outputs saved and others not.
    std::vector<std::string> outputFiles((*session)->outputs().size());
    const std::vector<std::filesystem::path> inputTensorFiles = feedFiles(args.inputs);
    if (!args.saveDir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(args.saveDir, ec);
        if (ec)
            return reportError(Status::io("cannot create '" + args.saveDir + "': " + ec.message()));
        std::vector<std::string> names;
        for (const auto &info : (*session)->outputs())
            names.push_back(info.name);
        const std::vector<std::string> fileNames = uniqueFileNames(names);
        for (std::size_t i = 0; i < names.size(); ++i) {
            outputFiles[i] = (std::filesystem::path(args.saveDir) / (fileNames[i] + ".npy")).string();
            if (Status ok = checkWritePath(outputFiles[i], "--save-outputs file", inputFiles, args.force,
                                           inputTensorFiles);
                !ok)
                return reportError(ok);
        }
    }
    if (!args.trace.empty())
        if (Status ok = checkWritePath(args.trace, "--trace", inputFiles, args.force, inputTensorFiles); !ok)
            return reportError(ok);
    std::optional<ExecutionPlan> plan;
    if (device) {
        Expected<ExecutionPlan> p = serialPlan((*session)->model().graph, args.device);
        if (!p)
            return reportError(p.status());
        plan = std::move(*p);
    }
    const ExecutionPlan *planPtr = plan ? &*plan : nullptr;

    Expected<GivenInputs> parsed = givenInputsFor(model.graph, args.inputs, args.dims);
    if (!parsed)
        return reportError(parsed.status());
    Feeds given = std::move(parsed->tensors);
    RandomInputOptions random;
    random.seed = args.seed;
    random.dims = parsed->dims;
    const std::vector<std::string> unboundNotes = noteUnboundDims(model.graph, given, random.dims, !args.quiet);
    Expected<Feeds> feeds = randomFeeds(**session, given, random);
    if (!feeds)
        return reportError(feeds.status());

    // Warm-up, then timed iterations.
    ExecOptions warm;
    warm.threads = args.threads;
    if (device)
        warm.backends = {device.get()};
    Expected<std::vector<RuntimeTensor>> outputs = (*session)->run(*feeds, planPtr, &warm);
    if (!outputs)
        return reportError(outputs.status());
    // A declaration the run contradicts: ONNX Runtime and other tools allocate by it.
    std::vector<std::string> mismatches =
        declaredOutputMismatches((*session)->outputs(), *outputs, (*session)->inputs(), *feeds);
    // An unbound dim ran as 1: a detector or U-Net then pads or resizes it up to its stride and
    // returns an output the declaration does not describe. That is the cause a user can act on.
    if (!mismatches.empty() && !unboundNotes.empty())
        mismatches.back() += " — unbound dimensions ran as 1, which may be too small for this model: bind them "
                             "with --dim NAME=VALUE";
    for (const std::string &m : mismatches)
        std::cerr << "opscope-cli: warning: " << m << '\n';
    // Per-op profile: the executor reports every step (node, start, end).
    std::map<std::string, std::pair<std::int64_t, double>> perOp; // op → calls, ms
    ExecOptions exec;
    exec.threads = args.threads;
    if (device)
        exec.backends = {device.get()};
    if (args.profile)
        exec.onStep = [&](const StepEvent &e) {
            const Node &node = e.graph->node(e.node);
            // Control flow is timed with its body inside; it is listed but not added to the total.
            auto &slot = perOp[node.hasSubgraphs() ? node.opType + " (incl. body)" : node.opType];
            ++slot.first;
            slot.second += std::chrono::duration<double, std::milli>(e.end - e.start).count();
        };
    std::vector<double> ms;
    const CpuSample cpuBefore = sampleCpu();
    for (int i = 0; i < args.iterations; ++i) {
        const auto start = std::chrono::steady_clock::now();
        outputs = (*session)->run(*feeds, planPtr, &exec);
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        if (!outputs)
            return reportError(outputs.status());
    }
    const CpuSample cpuAfter = sampleCpu();
    // One more run for the trace, so that tracing costs none of the timed runs.
    std::optional<TraceSummary> traced;
    if (!args.trace.empty()) {
        Expected<TraceSummary> t = traceOneRun(**session, *feeds, planPtr, exec, args);
        if (!t)
            return reportError(t.status());
        traced = *t;
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms.empty() ? 0.0 : (ms[(ms.size() - 1) / 2] + ms[ms.size() / 2]) / 2.0;

    nlohmann::ordered_json j;
    j["outputs"] = nlohmann::ordered_json::array();
    const auto &infos = (*session)->outputs();
    for (std::size_t i = 0; i < outputs->size(); ++i) {
        const RuntimeTensor &t = (*outputs)[i];
        const std::string &file = outputFiles[i];
        if (!file.empty())
            if (const Status st = writeNpy(file, t); !st)
                return reportError(st);
        j["outputs"].push_back(
            {{"name", infos[i].name},
             {"dtype", std::string(dataTypeName(t.dtype()))},
             {"shape", t.shape()},
             {"file", file.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(file)}});
        NonFinite bad;
        const std::string text = summary(t, &bad);
        if (!args.json && !args.quiet)
            std::cout << infos[i].name << "  " << dataTypeName(t.dtype()) << t.shapeText() << "  " << text
                      << (file.empty() ? "" : "  → " + file) << '\n';
        // Not an error of the run (log(0) is −inf), but rarely what a user meant to compute: say so.
        if (bad.total() == t.elementCount() && t.elementCount() > 0) {
            mismatches.push_back("output '" + infos[i].name + "' has no finite value (" + bad.text() +
                                 "): check the inputs (random ones may not suit the model: give real ones "
                                 "with --input) and the weights");
            std::cerr << "opscope-cli: warning: " << mismatches.back() << '\n';
        }
    }
    // What a device ran on the host instead, and why (no kernel there for those ops or types, or
    // a library it needs that did not load: that reason names the library and what to install).
    std::vector<HostFallback> fallbacks;
    if (device)
        fallbacks = device->hostFallbacks();
    j["device"] = args.device;
    j["host_fallbacks"] = nlohmann::ordered_json::object();
    for (const HostFallback &f : fallbacks)
        j["host_fallbacks"][f.op] = {{"calls", f.calls}, {"reason", f.reason}};
    if (!fallbacks.empty() && !args.json) {
        std::cerr << "opscope-cli: note: on the host CPU instead of " << args.device << ":\n";
        for (const HostFallback &f : fallbacks)
            std::cerr << "  " << f.op << " ×" << f.calls << ": " << f.reason << '\n';
    }
    j["optimize"] = {{"level", level},
                     {"ms", *optimizeMs},
                     {"nodes_before", nodesBefore},
                     {"nodes_after", model.graph.nodeCountWithSubgraphs()}};
    // --iterations 0 (outputs only, e.g. with --save-outputs): no latency, not a latency of 0.
    if (ms.empty())
        j["latency_ms"] = nullptr;
    else
        j["latency_ms"] = {{"median", median}, {"min", ms.front()}, {"max", ms.back()}};
    j["peak_rss_mb"] = peakRssMb();
    if (traced)
        j["trace"] = {{"file", args.trace},        {"spans", traced->spans}, {"run_ms", traced->runMs},
                      {"gpu_kernels", traced->gpu.kernels}, {"gpu_copies", traced->gpu.copies},
                      {"gpu_unattributed", traced->gpu.unattributed}, {"gpu_dropped", traced->gpu.dropped},
                      {"gpu_note", traced->note}, {"overlap", traced->overlap},
                      {"gpu_untimed", traced->gpu.untimed}, {"cupti_version", traced->gpu.cuptiVersion},
                      {"utilization", nlohmann::ordered_json(traced->utilization)}};
    // Times taken while other processes hold the cores measure waiting for one; with several
    // threads, OpenMP's spin-waiting for a descheduled peer made a 2.6 ms model take 540 ms at
    // --threads 2 (1.7 ms at 1 thread, 3 ms with passive waiting) — a user must hear why.
    std::vector<std::string> notes = unboundNotes;
    if (args.iterations > 0 && args.iterations < 5) {
        notes.push_back("the latency is the median of " + std::to_string(args.iterations) +
                        (args.iterations == 1 ? " run" : " runs") +
                        ", which one slow run can move; use --iterations 10 or more to compare");
        if (!args.json && !args.quiet)
            std::cerr << "opscope-cli: note: " << notes.back() << '\n';
    }
    const auto note = [&](std::string text) {
        if (!args.json && !args.quiet)
            std::cerr << "opscope-cli: note: " << text << '\n';
        notes.push_back(std::move(text));
    };
    // Other processes on the cores while timing, measured over the timed runs themselves (the load
    // average lags a minute: a build started beside a run went unnoticed while --threads 2 took
    // 28x as long as --threads 1). Too short to measure: the load average.
    if (const std::optional<double> others = othersBusyCores(cpuBefore, cpuAfter); others && !ms.empty()) {
        if (std::string text = contentionNote(*others, cpuAfter.machineCores, args.threads, "timing"); !text.empty())
            note(text);
    } else if (const std::optional<double> load = loadAverage(); load && !ms.empty() && *load > usableCores() + 0.5) {
        char text[400];
        std::snprintf(text, sizeof text,
                      "the machine was busy while timing (load average %.1f on %u cores): times include waiting "
                      "for a core%s",
                      *load, usableCores(),
                      args.threads > 1 ? "; with several threads, far more (each parallel step waits for its "
                                         "slowest thread: time on an idle machine, or with fewer threads)"
                                       : "");
        note(text);
    }
    // A median far above the fastest run: something slowed most runs (profile says the same).
    if (ms.size() >= 3 && ms.front() > 0.0 && median > 1.5 * ms.front() && median - ms.front() > 0.05) {
        char text[400];
        std::snprintf(text, sizeof text,
                      "the median %.3g ms is %.1fx the fastest run (%.3g ms): the runs were slowed by something "
                      "else, most often other processes wanting the CPUs%s",
                      median, median / ms.front(), ms.front(), args.threads > 1 ? ", which several threads feel most" : "");
        note(text);
    }
    j["notes"] = notes;
    j["warnings"] = mismatches;
    std::vector<std::pair<std::string, std::pair<std::int64_t, double>>> ops(perOp.begin(), perOp.end());
    std::sort(ops.begin(), ops.end(),
              [](const auto &a, const auto &b) { return a.second.second > b.second.second; });
    double opTotal = 0;
    for (const auto &o : ops)
        if (o.first.find(" (incl. body)") == std::string::npos)
            opTotal += o.second.second;
    if (args.profile) {
        j["profile"] = nlohmann::ordered_json::array();
        for (const auto &[op, v] : ops)
            j["profile"].push_back({{"op", op}, {"calls", v.first}, {"ms", v.second}});
    }
    if (args.json) {
        std::cout << j.dump(2) << '\n';
    } else if (!args.quiet) {
        std::ostringstream os;
        os.precision(3);
        if (ms.empty())
            os << std::fixed << "latency  not timed (--iterations 0), peak RSS " << peakRssMb() << " MiB";
        else
            os << std::fixed << "latency  median " << median << " ms, min " << ms.front() << " ms, max "
               << ms.back() << " ms over " << ms.size() << (ms.size() == 1 ? " iteration (" : " iterations (")
               << args.threads << (args.threads == 1 ? " thread" : " threads")
               << (device ? ", " + args.device : "") << "), peak RSS " << peakRssMb() << " MiB";
        std::cout << os.str() << '\n';
        if (traced) {
            std::cout << "trace    " << args.trace << " (" << traced->spans << " spans"
                      << (traced->gpu.kernels + traced->gpu.copies
                              ? ", " + std::to_string(traced->gpu.kernels) + " GPU kernels and " +
                                    std::to_string(traced->gpu.copies) + " copies, copy/compute overlap " +
                                    std::to_string(int(std::lround(traced->overlap * 100))) + " %"
                              : std::string());
            for (const auto &[name, u] : traced->utilization)
                std::cout << ", " << name << " busy " << std::lround(u * 100) << " %";
            std::cout << ")\n";
        }
        if (args.profile && args.iterations > 0) {
            // Means over the timed runs: they add up to the mean run, not to the median above.
            std::printf("%-28s %8s %12s %7s\n", "op", "calls/run", "mean ms/run", "share");
            for (const auto &[op, v] : ops)
                std::printf("%-28s %8lld %12.4f %7s\n", op.c_str(),
                            static_cast<long long>(v.first / args.iterations), v.second / args.iterations,
                            op.find(" (incl. body)") != std::string::npos || opTotal <= 0
                                ? "-"
                                : (std::to_string(int(std::lround(1000.0 * v.second / opTotal)) / 10) + "." +
                                   std::to_string(int(std::lround(1000.0 * v.second / opTotal)) % 10) + "%")
                                      .c_str());
        }
    }
    return ExitOk;
}

} // namespace opscope::cli
