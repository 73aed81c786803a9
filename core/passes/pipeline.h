#pragma once
// Runs passes in order and instruments each one, MLIR-style: the pass only rewrites; around it the
// pipeline times it, decides whether it changed the model (structural fingerprint), diffs the graph
// before/after into a change record, keeps a snapshot of the model after every changing pass
// (structure only: weights are shared buffers), and verifies the IR. A pass that fails or breaks the
// graph is rolled back: the model is left as it was before that pass. Then, by PipelineOptions::
// onFailure, the pipeline stops (optimize: a broken graph is never written) or goes on with the
// next pass and says which pass it skipped (a model about to run: run, profile, the app).

#include "passes/pass.h"

#include <chrono>
#include <functional>
#include <memory>
#include <map>
#include <string>
#include <vector>

namespace opscope::passes {

// What one pass did to the main graph, by node id (ids are stable across a pass: removed nodes
// leave tombstones, new nodes get new ids).
struct ChangeRecord
{
    std::vector<NodeId> removed;  // ids in the graph before
    std::vector<NodeId> added;    // ids in the graph after
    std::vector<NodeId> modified; // same id, different op, wiring or attributes
    std::vector<std::pair<std::string, std::string>> valuesReplaced; // old tensor → new tensor
    std::size_t initializersAdded = 0, initializersRemoved = 0;
    std::vector<PatternMatch> matches;
};

ChangeRecord diffGraphs(const Graph &before, const Graph &after);

struct PassRecord
{
    std::string name;
    bool changed = false;
    int iterations = 1; // > 1 for passes run to a fixed point
    std::size_t nodesBefore = 0, nodesAfter = 0;
    double ms = 0.0;
    ChangeRecord changes;
    std::vector<std::string> notes;        // decisions the pass reported (PassContext::note)
    std::shared_ptr<const Model> snapshot; // the model after this pass; null when it changed nothing
    std::string failure; // why its change was rolled back (it failed or broke the graph); "" when it did not
};

// What a pass that fails (an error, an exception) or leaves an invalid graph does to the pipeline.
// Either way its change is rolled back first.
enum class OnPassFailure
{
    Stop,     // result.status names the pass; later passes do not run
    SkipPass, // result.warnings names the pass; the next pass runs on the graph as it was before it
};

struct PipelineOptions
{
    PassOptions passOptions;
    bool verify = false; // run the verifier after every pass (optimize, run, the app and tests turn it on)
    OnPassFailure onFailure = OnPassFailure::Stop;
    bool keepSnapshots = true;
    bool refreshShapes = true; // re-run ONNX shape inference after every changing pass
    int maxIterations = 8;     // fixed-point passes stop after this many runs
    const std::atomic<bool> *cancel = nullptr;
    std::function<void(const PassRecord &)> onPass; // after each pass (from the running thread)
};

struct PipelineResult
{
    std::shared_ptr<const Model> initial; // the model before the first pass
    std::vector<PassRecord> passes;
    Status status; // a pass that failed or broke the graph, by name (OnPassFailure::Stop); cancellation
    std::vector<std::string> warnings; // a pass rolled back and skipped, by name (OnPassFailure::SkipPass)
    double totalMs = 0.0;
};

// Runs `passNames` (registry names, see registry.h) over `model` in place.
PipelineResult runPipeline(Model &model, const std::vector<std::string> &passNames,
                           const PipelineOptions &options = {});
// The same for pass objects (tests inject their own).
PipelineResult runPasses(Model &model, const std::vector<std::unique_ptr<Pass>> &passes,
                         const PipelineOptions &options = {});

// Whether verification is on by default (debug builds, or OPSCOPE_VERIFY_PASSES=1).
bool verifyPassesByDefault();

// The pipeline for a model about to run or be profiled (opscope-cli run and profile, the app's
// profile panel): the passes of `level` without an export lowering (opscope runs its own fused
// ops), the verifier after every pass, a pass that breaks the graph rolled back and skipped with a
// warning. `options` supplies the rest (cancel, pass options); verify and onFailure are set here.
// An unknown level is an error in result.status and leaves the model as it was.
PipelineResult optimizeForExecution(Model &model, const std::string &level, PipelineOptions options = {});

// For each node a pass created, the nodes of the original graph it stands for, followed through
// every pass (FusedConv ← Conv, Relu; a lowered Conv ← that FusedConv ← …). What the graph's heat
// overlay uses to put a fused op's measured time back on the nodes it replaced.
std::map<std::string, std::vector<std::string>> replacementOrigins(const PipelineResult &result);

} // namespace opscope::passes
