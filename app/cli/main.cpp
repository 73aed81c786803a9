// opscope-cli: the command-line face of opscope. Commands share core/ with the desktop app.

#include "commands.h"

#ifdef OPSCOPE_HAVE_CUDA
#include "cudabackend.h"
#endif

#include <CLI/CLI.hpp>
#include <charconv>
#include <limits>
#include <cstdlib>
#include <exception>
#include <algorithm>
#include <iostream>

#ifndef OPSCOPE_VERSION
#define OPSCOPE_VERSION "0.0.0"
#endif

namespace {

// A whole number from `least` to `most`. CLI11's PositiveNumber, NonNegativeNumber and Range
// print their bounds as doubles ("--iterations: Value 0 not in range 0.000000 to 17976931348…",
// 300 digits of DBL_MAX) and call "abc" a value out of range.
CLI::Validator wholeNumber(long long least, long long most = std::numeric_limits<int>::max())
{
    const std::string range = most == std::numeric_limits<int>::max()
                                  ? std::to_string(least) + " or more"
                                  : "from " + std::to_string(least) + " to " + std::to_string(most);
    return CLI::Validator(
        [least, most, range](std::string &text) -> std::string {
            long long v = 0;
            const char *end = text.data() + text.size();
            const auto [at, ec] = std::from_chars(text.data(), end, v);
            if (ec != std::errc() || at != end)
                return "'" + text + "' is not a whole number: give one " + range;
            if (v < least || v > most)
                return "give a whole number " + range + ", not " + text;
            return {};
        },
        ""); // the help's own text gives the range where it matters
}

} // namespace

int main(int argc, char **argv)
{
    using namespace opscope::cli;
#ifdef OPSCOPE_HAVE_CUDA
    opscope::gpu::registerCudaBackend(); // makeBackend("cuda:N") from here on
#endif
    // Thread counts far above any core count crash oneDNN/libgomp or stall the machine.
    constexpr int maxThreads = 256;
    CLI::App app{"opscope-cli: inspect, convert, run and optimize ONNX models", "opscope-cli"};
    app.set_version_flag("--version", "opscope-cli " OPSCOPE_VERSION);
    app.require_subcommand(1);
    app.footer("Exit codes: 0 ok, 1 bad input or arguments, 2 internal error.");

    InfoArgs info;
    CLI::App *infoCmd =
        app.add_subcommand("info", "Summarize a model: producer, opsets, inputs/outputs, ops, parameters");
    infoCmd->add_option("MODEL", info.model, "ONNX model file")->required();
    infoCmd->add_flag("--json", info.json, "Print stable JSON for scripts");
    infoCmd->add_flag("--no-check", info.noCheck,
                      "Skip onnx::checker (its findings are printed as warnings)");
    infoCmd->add_option("--top", info.top, "How many of the largest initializers to list")
        ->default_val(10)
        ->check(wholeNumber(0));

    ConvertArgs convert;
    CLI::App *convertCmd =
        app.add_subcommand("convert", "Read a model and write it back through opscope's IR");
    convertCmd->add_option("IN", convert.input, "ONNX model to read")->required();
    convertCmd->add_option("OUT", convert.output, "ONNX model to write (atomically)")->required();
    std::uint64_t threshold = 0;
    CLI::Option *ext =
        convertCmd->add_flag("--external-data{1024}", threshold,
                             "Store tensors of at least BYTES (--external-data=BYTES or --external-data BYTES; "
                             "default 1024) in OUT.data next to OUT");
    convertCmd->add_flag("--embed", convert.embed,
                         "Store every tensor inside OUT (fails above Protobuf's 2 GiB)");
    convertCmd->add_flag("--force", convert.force, "Allow OUT to replace the input model");
    convertCmd->add_flag("-q,--quiet", convert.quiet, "Print nothing on success");

    RunArgs run;
    CLI::App *runCmd =
        app.add_subcommand("run", "Run a model on the CPU runtime with given or seeded random inputs");
    runCmd->add_option("MODEL", run.model, "ONNX model file")->required();
    runCmd->add_option("--input", run.inputs,
                       "NAME=FILE.npy or NAME=FILE.pb (repeatable); other inputs are random");
    runCmd->add_option("--dim", run.dims,
                       "NAME=VALUE binds a symbolic dimension (repeatable; unbound ones are 1; ?=VALUE sizes the unnamed ones)");
    runCmd->add_option("--seed", run.seed, "Seed of the random inputs")->default_val(0);
    runCmd->add_option("--threads", run.threads, "Intra-op threads (1-256)")
        ->default_val(1)
        ->check(wholeNumber(1, maxThreads));
    runCmd->add_option("--iterations", run.iterations, "Timed runs after one warm-up")
        ->default_val(10)
        ->check(wholeNumber(0));
    runCmd->add_option("--save-outputs", run.saveDir, "Write every output as DIR/NAME.npy");
    runCmd->add_flag("--json", run.json, "Print JSON");
    runCmd->add_flag("-q,--quiet", run.quiet, "Print only warnings and errors (with --save-outputs, in scripts)");
    runCmd->add_flag("--force", run.force, "Allow --save-outputs and --trace files to replace the input model, its weights or --input files");
    runCmd->add_flag("--profile", run.profile, "Print time per operator type over the timed runs");
    runCmd->add_option("--trace", run.trace,
                       "Write a Chrome trace of one more run after the timed ones (on cuda:N with every "
                       "kernel, copy and CUDA call CUPTI records, each tied to its node)")
        ->check(CLI::Validator([](std::string &path) { return path.empty() ? std::string("needs a file name") : std::string(); },
                               "FILE.json"));
    runCmd->add_flag("--no-memory-plan", run.noMemoryPlan,
                     "Allocate each tensor on its own instead of from the memory plan the first run sizes");
    runCmd
        ->add_option("--optimize", run.optimize,
                     "Optimize first (like ONNX Runtime): basic, extended, layout, all, or none "
                     "(default: all on cpu, basic on cuda)")
        ->check(CLI::IsMember({"basic", "extended", "layout", "all", "none"}));
    runCmd->add_option("--device", run.device, "Device to run on: cpu:0 or cuda:N (a build with CUDA)")
        ->default_val("cpu:0");

    ConformanceArgs conformance;
    CLI::App *conformanceCmd = app.add_subcommand(
        "conformance", "Run ONNX backend test folders (model.onnx + test_data_set_*) and compare outputs");
    conformanceCmd->add_option("DIR", conformance.dirs, "Test folders, or folders holding them")->required();
    conformanceCmd->add_option("--threads", conformance.threads, "Intra-op threads (1-256)")
        ->default_val(1)
        ->check(wholeNumber(1, maxThreads));
    conformanceCmd->add_option("--rtol", conformance.rtol, "Relative tolerance")->default_val(1e-3);
    conformanceCmd->add_option("--atol", conformance.atol, "Absolute tolerance")->default_val(1e-7);
    conformanceCmd->add_flag("-q,--quiet", conformance.quiet, "Print only failures and the summary");
    conformanceCmd->add_option("--device", conformance.device, "cpu:0, or cuda:N to check the GPU backend")
        ->default_val("cpu:0");

    OptimizeArgs optimize;
    CLI::App *optimizeCmd = app.add_subcommand(
        "optimize", "Run optimization passes, print what each changed, and write the optimized model");
    optimizeCmd->add_option("IN", optimize.input, "ONNX model to optimize");
    optimizeCmd->add_option("-o,--output", optimize.output,
                            "Optimized model to write (atomically); omit to only report");
    optimizeCmd->add_option("--level", optimize.level, "basic, extended, layout or all (as run, profile and memory do)")
        ->default_val("all");
    optimizeCmd->add_option("--passes", optimize.passes, "Exact passes to run, in order (overrides --level)")
        ->delimiter(',');
    optimizeCmd->add_option("--disable", optimize.disabled, "Passes to leave out")->delimiter(',');
    optimizeCmd
        ->add_option("--target", optimize.target,
                     "onnx: standard ONNX only; ort: also ONNX Runtime's com.microsoft fused ops")
        ->default_val("onnx")
        ->check(CLI::IsMember({"onnx", "ort", "none"}));
    optimizeCmd->add_option("--report", optimize.report, "Write the per-pass records and op counts as JSON");
    optimizeCmd->add_option("--dump-dir", optimize.dumpDir,
                            "Write the model after each changing pass (NN-name.onnx)");
    optimizeCmd->add_option("--devices", optimize.devices, "Devices for partition-for-devices: cpu:N (or N)")
        ->default_val("cpu:2");
    optimizeCmd->add_flag("--force", optimize.force, "Allow OUT to replace the input model");
    optimizeCmd->add_flag("--list", optimize.list, "List the passes and levels");
    optimizeCmd->add_flag("-q,--quiet", optimize.quiet, "Print nothing on success");

    ProfileArgs profile;
    CLI::App *profileCmd = app.add_subcommand(
        "profile", "Run a model under serial/parallel/greedy schedules on N CPU devices and compare them");
    profileCmd->add_option("MODEL", profile.model, "ONNX model")->required();
    profileCmd
        ->add_option("--schedule", profile.schedules,
                     "serial, parallel, greedy, round-robin, pipeline (comma-separated)")
        ->delimiter(',');
    profileCmd
        ->add_option("--devices", profile.devices, "cpu:N (or N): N CPU devices, each its own worker and memory")
        ->default_val("cpu:2");
    profileCmd->add_option("--threads-per-device", profile.threadsPerDevice, "Intra-op threads per device (1-256)")
        ->default_val(1)
        ->check(wholeNumber(1, maxThreads));
    profileCmd->add_option("--iterations", profile.iterations, "Timed runs per schedule (median reported)")
        ->default_val(10)
        ->check(wholeNumber(1));
    profileCmd->add_option("--trace", profile.trace, "Write the median runs as one Chrome trace (Perfetto)");
    profileCmd->add_option("--simulate", profile.simulate,
                           "Predict instead of running, for devices like gpu:4 or cpu:8");
    profileCmd->add_option("--optimize", profile.optimize, "Pass level run first (as run does), or none")
        ->default_val("all")
        ->check(CLI::IsMember({"basic", "extended", "layout", "all", "none"}));
    profileCmd->add_option("--seed", profile.seed, "Seed of the random inputs")->default_val(0);
    profileCmd->add_option("--input", profile.inputs,
                           "NAME=FILE.npy or NAME=FILE.pb (repeatable); other inputs are random");
    profileCmd->add_option("--dim", profile.dims,
                           "NAME=VALUE for a symbolic dimension of random inputs (repeatable; ?=VALUE sizes the unnamed ones)");
    profileCmd->add_flag("--fixed-queues", profile.fixedQueues,
                         "parallel: a fixed queue per worker (as GPU streams) instead of one shared queue");
    profileCmd->add_flag("--estimated-costs", profile.estimatedCosts,
                         "Plan parallel/greedy from FLOP/byte estimates, not the op times serial measured");
    profileCmd->add_flag("--json", profile.json, "Print JSON");
    profileCmd->add_flag("--force", profile.force, "Allow --trace to replace the input model or its weights");
    profileCmd->add_flag("--ranks", profile.ranks,
                         "Under mpirun: a process per rank; greedy/round-robin place over every rank's devices");
    profileCmd->add_option("--devices-per-rank", profile.devicesPerRank, "With --ranks: cpu:K devices in each rank")
        ->default_val("cpu:1");
    profileCmd->add_option("--transfer-timeout", profile.transferTimeout,
                           "With --ranks: seconds a transfer may wait before the job ends (0: 50x the serial run, "
                           "at least 30)")
        ->default_val(0.0)
        // NaN passed a range check and 1e10 overflowed the wait; "abc" was "not in range 0 to 1.8e308".
        ->check([](const std::string &text) -> std::string {
            char *end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (text.empty() || *end != '\0' || !(v >= 0.0 && v <= 1e6))
                return "--transfer-timeout takes seconds from 0 (automatic) to 1000000, got '" + text + "'";
            return {};
        });
    profileCmd->add_option("--microbatches", profile.microbatches,
                           "pipeline: the batch (dim 0) as M micro-batches, GPipe-style: each device (or rank) a stage "
                           "working on one micro-batch while the next works on the one before")
        ->default_val(1)
        ->check(wholeNumber(1, 4096));
    profileCmd->add_option("--memory-per-rank", profile.memoryPerRank,
                           "With --ranks: what each rank's share may take (e.g. 2G, 512MiB: K/M/G/T and KiB… are "
                           "powers of 1024, KB/MB/GB of 1000; default: the memory free on its host or in its cgroup); "
                           "a schedule whose share does not fit is refused");
    profileCmd->add_flag("--in-process", profile.inProcess,
                         "With --ranks: also run each spread plan in rank 0's process alone (what MPI costs)");

    MemoryArgs memory;
    CLI::App *memoryCmd = app.add_subcommand(
        "memory", "Plan a model's memory (in place, views, shared buffers) per device and check a run from the plan");
    memoryCmd->add_option("MODEL", memory.model, "ONNX model")->required();
    memoryCmd->add_option("--schedule", memory.schedule, "serial, parallel, greedy, round-robin or pipeline")
        ->default_val("serial");
    memoryCmd->add_option("--devices", memory.devices, "cpu:N (or N): parallel workers, or devices for greedy/round-robin")
        ->default_val("cpu:2");
    memoryCmd->add_option("--optimize", memory.optimize, "Pass level run first (as run does), or none")
        ->default_val("all")
        ->check(CLI::IsMember({"basic", "extended", "layout", "all", "none"}));
    memoryCmd->add_option("--seed", memory.seed, "Seed of the random inputs")->default_val(0);
    memoryCmd->add_option("--input", memory.inputs, "NAME=FILE.npy or NAME=FILE.pb (repeatable); other inputs are random");
    memoryCmd->add_option("--dim", memory.dims, "NAME=VALUE for a symbolic dimension of random inputs (repeatable; ?=VALUE sizes the unnamed ones)");
    memoryCmd->add_flag("--fixed-queues", memory.fixedQueues, "parallel: a fixed queue per worker instead of a shared one");
    memoryCmd->add_flag("--no-inplace", memory.noInPlace, "Plan without in-place reuse");
    memoryCmd->add_flag("--no-share", memory.noShare, "Plan without sharing buffers between tensors");
    memoryCmd->add_option("--offsets", memory.offsets, "Offset strategy: best (both greedy orders), size or breadth")
        ->default_val("best")
        ->check(CLI::IsMember({"best", "size", "breadth"}));
    memoryCmd->add_option("--top", memory.top, "Tensors listed at the peak")->default_val(10)->check(wholeNumber(0, 100000));
    memoryCmd->add_flag("--json", memory.json, "Print JSON (every tensor with offset, bytes, steps)");

    bool devicesJson = false;
    CLI::App *devicesCmd = app.add_subcommand("devices", "List the CPU and CUDA devices opscope can run on");
    devicesCmd->add_flag("--json", devicesJson, "Print JSON");

    // An unknown first word is a mistyped command: say so (CLI11 says "A subcommand is required").
    if (argc > 1 && argv[1][0] != '-') {
        std::vector<std::string> names;
        for (const CLI::App *sub : app.get_subcommands({}))
            names.push_back(sub->get_name());
        if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
            std::string list;
            for (const std::string &n : names)
                list += (list.empty() ? "" : ", ") + n;
            std::cerr << "opscope-cli: error: unknown command '" << oneLine(argv[1]) << "' (commands: " << list
                      << "; opscope-cli --help)\n";
            return ExitUserError;
        }
    }
    // "--external-data 4096" as the help reads, besides "--external-data=4096": a flag with a value
    // takes only the second form in CLI11, and the number was then an unexpected third file.
    std::vector<std::string> words(argv, argv + argc);
    for (std::size_t i = 1; i + 1 < words.size(); ++i)
        if (words[i] == "--external-data" && !words[i + 1].empty() &&
            std::all_of(words[i + 1].begin(), words[i + 1].end(), [](char c) { return c >= '0' && c <= '9'; })) {
            words[i] += "=" + words[i + 1];
            words.erase(words.begin() + std::ptrdiff_t(i) + 1);
        }
    std::vector<char *> wordPointers;
    for (std::string &w : words)
        wordPointers.push_back(w.data());
    try {
        app.parse(int(wordPointers.size()), wordPointers.data());
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        app.exit(e);
        return ExitUserError;
    }

    try {
        if (*infoCmd)
            return runInfo(info);
        if (*convertCmd) {
            if (ext->count() > 0)
                convert.externalThreshold = threshold;
            return runConvert(convert);
        }
        if (*runCmd)
            return runModel(run);
        if (*conformanceCmd)
            return runConformance(conformance);
        if (*optimizeCmd) {
            optimize.devicesGiven = optimizeCmd->get_option("--devices")->count() > 0;
            return runOptimize(optimize);
        }
        if (*profileCmd) {
            // parallel is one device's workers: across ranks the default is serial against greedy.
            if (profile.ranks && profileCmd->get_option("--schedule")->count() == 0)
                profile.schedules = {"serial", "greedy"};
            profile.devicesGiven = profileCmd->get_option("--devices")->count() > 0;
            return runProfile(profile);
        }
        if (*devicesCmd)
            return runDevices(devicesJson);
        if (*memoryCmd)
            return runMemory(memory);
    } catch (const std::exception &e) {
        std::cerr << "opscope-cli: internal error: " << e.what() << '\n';
        return ExitInternalError;
    }
    return ExitUserError;
}
