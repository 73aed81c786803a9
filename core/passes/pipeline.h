#pragma once
// Runs passes in order and instruments each one, MLIR-style: the pass only rewrites; around it the
// pipeline times it, decides whether it changed the model (structural fingerprint), diffs the graph
// before/after into a change record, keeps a snapshot of the model after every changing pass
// (structure only: weights are shared buffers), and verifies the IR. A pass that breaks the graph
// stops the pipeline; the model is left as it was after the last good pass.

#include "passes/pass.h"

#include <chrono>
#include <functional>
#include <memory>
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
};

struct PipelineOptions
{
    PassOptions passOptions;
    bool verify = false; // run the verifier after every pass (tests and debug builds turn it on)
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
    Status status; // a pass that failed or broke the graph, by name; cancellation
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

} // namespace opscope::passes
