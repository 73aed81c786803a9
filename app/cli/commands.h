#pragma once
// opscope-cli subcommands. Each returns the process exit code: 0 ok, 1 user error (bad file or
// arguments), 2 internal error. Messages go to stderr as one line "opscope-cli: error: …".

#include "ir/model.h"
#include "onnx/modelio.h"
#include "runtime/runtimetensor.h"
#include "runtime/session.h"
#include "util/status.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opscope::cli {

enum ExitCode : int
{
    ExitOk = 0,
    ExitUserError = 1,
    ExitInternalError = 2,
};

// Prints "opscope-cli: error: <message>" and returns the exit code for the status' kind.
int reportError(const Status &status);
// The message with control characters (a newline in a tensor name) escaped or blanked.
// Symbolic dims the given input tensors fix (input_embeds [2,7,32] for [batch, seq, 32] binds
// batch=2, seq=7), so the random inputs that share them get the same sizes. A --dim that says
// otherwise is an error naming both.
Status bindDimsFromInputs(const Graph &graph, const Feeds &given, std::map<std::string, std::int64_t> &dims);

// Prints a note per symbolic dim of the graph's random inputs (not in `given`, not an initializer)
// that `dims` leaves unbound, so at 1: a too-small input otherwise fails far from its cause.
// Returns the notes too, for --json.
std::vector<std::string> noteUnboundDims(const Graph &graph, const Feeds &given,
                                         const std::map<std::string, std::int64_t> &dims, bool print = true);

// File names for tensors or passes named by the model: unsafe characters become '_', names longer
// than a file system takes are shortened with a hash of the whole name, and names that end up equal
// ("a/b", "a:b" and "a_b" all become a_b) get -2, -3, … so no file is written twice.
std::vector<std::string> uniqueFileNames(const std::vector<std::string> &names);
// Writes text through AtomicFile: never a half-written file, never a device or FIFO replaced.
Status writeTextFile(const std::filesystem::path &path, const std::string &text);

// A failed write of `path`, said once: the status as it is where its message names the path
// (AtomicFile's "writing 'out.onnx' failed: No space left on device"), else with the path before it.
Status aboutWriting(const Status &status, const std::filesystem::path &path);

std::string oneLine(const std::string &message);
void printWarnings(const std::vector<std::string> &warnings);
// Runs the pass level (target: opscope's own ops) over a model about to run; "none" skips.
// The verifier runs after every pass (passes::optimizeForExecution): a pass that fails or breaks
// the graph is rolled back and named in a warning, the others still apply. Returns the ms spent.
Expected<double> optimizeForRun(Model &model, const std::string &level);

// --input NAME=FILE.npy|FILE.pb and --dim NAME=VALUE, shared by run and profile.
struct GivenInputs
{
    std::vector<std::pair<std::string, RuntimeTensor>> tensors;
    std::map<std::string, std::int64_t> dims;
};
Expected<GivenInputs> parseInputs(const std::vector<std::string> &inputs,
                                  const std::vector<std::string> &dims);
// parseInputs, then the --dim names checked against `graph`'s inputs and the dims the given
// tensors fix bound (bindDimsFromInputs): what every command that runs a model reads first.
Expected<GivenInputs> givenInputsFor(const Graph &graph, const std::vector<std::string> &inputs,
                                     const std::vector<std::string> &dims);
// Refuses (unless `force`) an OUT that is the input model or would overwrite the data file the
// input's weights are mapped from.
Status checkOutputPaths(const std::filesystem::path &in, const std::filesystem::path &out, const Model &model,
                        const SaveOptions &save, bool force);
// Every file a loaded model reads: the model itself (first), then each external-data file of any
// tensor — initializers, Constant and other attribute tensors, subgraphs, functions.
std::vector<std::filesystem::path> modelFiles(const std::filesystem::path &in, const Model &model);
// Refuses (unless `force`) to write `out` over any of `inputFiles` (modelFiles) or of `feedFiles`
// (the --input tensors); `what` names it in the message.
Status checkWritePath(const std::filesystem::path &out, const char *what,
                      const std::vector<std::filesystem::path> &inputFiles, bool force,
                      const std::vector<std::filesystem::path> &feedFiles = {});
// The files of --input NAME=FILE options (those that do not parse are parseInputs' to report).
std::vector<std::filesystem::path> feedFiles(const std::vector<std::string> &inputs);

struct InfoArgs
{
    std::string model;
    bool json = false;
    bool noCheck = false;
    int top = 10;
};
int runInfo(const InfoArgs &args);

struct ConvertArgs
{
    std::string input;
    std::string output;
    std::optional<std::uint64_t> externalThreshold; // --external-data[=BYTES]
    bool embed = false;
    bool force = false;
    bool quiet = false;
};
int runConvert(const ConvertArgs &args);

int runDevices(bool json);

struct ConformanceArgs
{
    std::vector<std::string> dirs;
    int threads = 1;
    double rtol = 1e-3;
    double atol = 1e-7;
    bool quiet = false;
    std::string device = "cpu:0"; // cuda:N: the GPU backend against the expected outputs
};
int runConformance(const ConformanceArgs &args);

struct RunArgs
{
    std::string model;
    std::vector<std::string> inputs; // NAME=FILE.npy|FILE.pb
    std::vector<std::string> dims;   // NAME=VALUE
    std::uint64_t seed = 0;
    int threads = 1;
    int iterations = 10;
    std::string saveDir;
    bool json = false;
    bool quiet = false; // print only warnings and errors (scripts that want --save-outputs)
    bool force = false; // allow writing over the input model or its weights
    bool profile = false;         // time per operator type over the timed runs
    std::string optimize;         // pass level run first, or "none"; empty: "all" (like ORT's default,
                                  // layout included) on the CPU, "basic" on a GPU (the fusions and
                                  // layouts are CPU kernels)
    bool noMemoryPlan = false;    // allocate per tensor instead of running from a memory plan
    std::string device = "cpu:0"; // cpu:0 or cuda:N
    std::string trace;            // Chrome trace of one more run (on a GPU with CUPTI's lanes)
};
int runModel(const RunArgs &args);

struct OptimizeArgs
{
    std::string input;
    std::string output; // empty: report only
    std::string level = "all"; // as run, profile and memory optimize
    std::vector<std::string> passes;
    std::vector<std::string> disabled;
    std::string target = "onnx";
    std::string report;  // JSON file
    std::string dumpDir; // model after each changing pass
    std::string devices = "cpu:2"; // partition-for-devices: cpu:N or N
    bool devicesGiven = false; // --devices on the command line (it only sizes partition-for-devices)
    bool force = false;
    bool list = false;
    bool quiet = false;
};
int runOptimize(const OptimizeArgs &args);

struct ProfileArgs
{
    std::string model;
    std::vector<std::string> schedules{"serial", "parallel", "greedy"};
    std::string devices = "cpu:2";
    int threadsPerDevice = 1;
    int iterations = 10;
    std::string trace;    // Chrome trace JSON of every schedule's median run (or prediction)
    std::string simulate; // predict for these devices instead of running ("gpu:4", "cpu:8")
    std::string optimize = "all"; // as run: what is profiled is what run executes
    std::uint64_t seed = 0;
    std::vector<std::string> inputs; // NAME=FILE.npy|FILE.pb; other inputs are random
    std::vector<std::string> dims;   // NAME=VALUE for symbolic dims of random inputs
    bool estimatedCosts = false;     // plan from the cost model's estimates, not serial's times
    bool fixedQueues = false;        // parallel: a queue per worker instead of one shared queue
    bool json = false;
    bool force = false; // allow writing over the input model or its weights
    // Under mpirun: each rank one process with these devices; greedy/round-robin place over all.
    bool ranks = false;
    std::string devicesPerRank = "cpu:1";
    double transferTimeout = 0.0; // seconds a receive may wait before the job is ended; 0: automatic
    bool inProcess = false;       // also each spread plan in rank 0's process alone
    int microbatches = 1;         // pipeline across ranks: micro-batches per run
    std::string memoryPerRank;    // what each rank's share may take ("2G"); empty: what it has free
    bool devicesGiven = false;    // --devices on the command line (meaningless with --ranks)
};
int runProfile(const ProfileArgs &args);
int runProfileRanks(const ProfileArgs &args); // profileranks.cpp

struct MemoryArgs
{
    std::string model;
    std::string schedule = "serial";
    std::string devices = "cpu:2"; // parallel: workers; greedy/round-robin: devices
    std::string optimize = "all"; // as run: the plan is of what run executes
    std::uint64_t seed = 0;
    std::vector<std::string> inputs; // NAME=FILE.npy|FILE.pb; other inputs are random
    std::vector<std::string> dims;   // NAME=VALUE for symbolic dims of random inputs
    bool fixedQueues = false;
    bool noInPlace = false;
    bool noShare = false;
    std::string offsets = "best"; // best, size, breadth
    int top = 10;
    bool json = false;
};
int runMemory(const MemoryArgs &args);

} // namespace opscope::cli
