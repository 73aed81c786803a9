// opscope-cli optimize: runs a pass pipeline over a model, prints what every pass did, and writes
// the optimized model (atomically; never over the input unless --force).

#include "commands.h"
#include "profileformat.h"
#include "ir/summary.h"
#include "onnx/modelio.h"
#include "passes/restorenames.h"
#include "passes/pipeline.h"
#include "passes/registry.h"

#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace opscope::cli {

namespace {

using passes::PassRecord;

std::vector<std::string> nodeNames(const Graph &graph, const std::vector<NodeId> &ids)
{
    std::vector<std::string> out;
    for (NodeId id : ids)
        out.push_back(id.index < graph.nodeSlots() ? graph.node(id).name : "#" + std::to_string(id.index));
    return out;
}

nlohmann::json passJson(const PassRecord &r, const Graph &before, const Graph &after)
{
    nlohmann::json j{{"name", r.name},
                     {"changed", r.changed},
                     {"nodes_before", r.nodesBefore},
                     {"nodes_after", r.nodesAfter},
                     {"ms", r.ms},
                     {"iterations", r.iterations}};
    nlohmann::json matches = nlohmann::json::array();
    for (const passes::PatternMatch &m : r.changes.matches)
        matches.push_back({{"rule", m.rule},
                           {"graph", m.graphPath},
                           {"matched", m.matchedNames},
                           {"replacement", m.replacementNames}});
    j["matches"] = matches;
    j["notes"] = r.notes;
    j["nodes_removed"] = nodeNames(before, r.changes.removed);
    j["nodes_added"] = nodeNames(after, r.changes.added);
    j["nodes_modified"] = nodeNames(after, r.changes.modified);
    nlohmann::json replaced = nlohmann::json::array();
    for (const auto &[from, to] : r.changes.valuesReplaced)
        replaced.push_back({from, to});
    j["values_replaced"] = replaced;
    j["initializers_added"] = r.changes.initializersAdded;
    j["initializers_removed"] = r.changes.initializersRemoved;
    return j;
}

void printList()
{
    std::cout << "Passes (opscope-cli optimize --passes a,b,…):\n";
    std::size_t width = 0;
    for (const passes::PassInfo &p : passes::builtinPasses())
        width = std::max(width, p.name.size());
    for (const passes::PassInfo &p : passes::builtinPasses())
        std::cout << "  " << std::left << std::setw(static_cast<int>(width + 2)) << p.name << std::setw(10)
                  << p.level << p.summary << '\n';
    std::cout
        << "\nLevels (--level): basic, extended (basic + operator replacement and fusions), layout\n"
           "(extended + layout-nhwc: data layout regions for this CPU), all (every pass). --target onnx|ort\n"
           "appends the lowering of opscope's fused ops to standard ONNX or to ONNX Runtime's com.microsoft\n"
           "ops; --target none keeps them (a model only opscope runs).\n";
}

// What a changing pass did beyond the node count: merging duplicate weights or rewiring inputs
// leaves "nodes 368 → 368", which reads as no change at all.
std::string alsoChanged(const PassRecord &r)
{
    std::vector<std::string> parts;
    if (r.changes.initializersRemoved)
        parts.push_back("−" + std::to_string(r.changes.initializersRemoved) + " initializers");
    if (r.changes.initializersAdded)
        parts.push_back("+" + std::to_string(r.changes.initializersAdded) + " initializers");
    if (!r.changes.modified.empty())
        parts.push_back(std::to_string(r.changes.modified.size()) +
                        (r.changes.modified.size() == 1 ? " node modified" : " nodes modified"));
    std::string text;
    for (const std::string &p : parts)
        text += (text.empty() ? "" : ", ") + p;
    return text;
}

void printTables(const passes::PipelineResult &result, const Model &before, const Model &after)
{
    std::size_t width = 4;
    for (const PassRecord &r : result.passes)
        width = std::max(width, r.name.size());
    std::cout << std::left << std::setw(static_cast<int>(width + 2)) << "pass" << std::setw(9) << "changed"
              << std::setw(18) << "nodes" << std::right << std::setw(9) << "ms"
              << "  matches  also\n";
    for (const PassRecord &r : result.passes) {
        std::ostringstream nodes;
        nodes << r.nodesBefore << " → " << r.nodesAfter;
        char ms[32];
        std::snprintf(ms, sizeof ms, "%.2f", r.ms);
        // "→" is 3 bytes but one column.
        std::cout << std::left << std::setw(static_cast<int>(width + 2)) << r.name << std::setw(9)
                  << (r.changed ? "yes" : "no") << std::setw(20) << nodes.str() << std::right << std::setw(9)
                  << ms << "  " << std::left << std::setw(7) << r.changes.matches.size() << "  " << alsoChanged(r)
                  << std::right << '\n';
    }
    for (const PassRecord &r : result.passes)
        for (const std::string &note : r.notes)
            std::cout << r.name << ": " << note << '\n';
    char total[32];
    std::snprintf(total, sizeof total, "%.2f", result.totalMs);
    std::cout << "total " << before.graph.nodeCountWithSubgraphs() << " → "
              << after.graph.nodeCountWithSubgraphs() << " nodes in " << total << " ms\n\n";

    const auto a = opHistogram(before.graph), b = opHistogram(after.graph);
    std::map<std::string, std::pair<std::size_t, std::size_t>> rows;
    for (const auto &[op, n] : a)
        rows[op].first = n;
    for (const auto &[op, n] : b)
        rows[op].second = n;
    std::size_t opWidth = 2;
    for (const auto &[op, n] : rows)
        opWidth = std::max(opWidth, op.size());
    std::cout << std::left << std::setw(static_cast<int>(opWidth + 2)) << "op" << std::right << std::setw(8)
              << "before" << std::setw(8) << "after" << '\n';
    for (const auto &[op, n] : rows)
        std::cout << std::left << std::setw(static_cast<int>(opWidth + 2)) << op << std::right << std::setw(8)
                  << n.first << std::setw(8) << n.second << '\n';
}


} // namespace

int runOptimize(const OptimizeArgs &args)
{
    namespace fs = std::filesystem;
    if (args.list) {
        printList();
        return ExitOk;
    }
    if (args.input.empty())
        return reportError(Status::invalid("optimize needs a model (or --list)"));

    passes::PipelineSpec spec;
    spec.level = args.level;
    spec.passes = args.passes;
    spec.disabled = args.disabled;
    spec.target = args.target;
    Expected<std::vector<std::string>> pipeline = passes::resolvePipeline(spec);
    if (!pipeline)
        return reportError(pipeline.status());

    Expected<ImportResult> loaded = loadModel(args.input);
    if (!loaded)
        return reportError(loaded.status());
    printWarnings(loaded->warnings);
    const SaveOptions save;
    if (!args.output.empty())
        if (Status ok = checkOutputPaths(args.input, args.output, loaded->model, save, args.force); !ok)
            return reportError(ok);
    const std::vector<fs::path> inputFiles = modelFiles(args.input, loaded->model);
    if (!args.report.empty())
        if (Status ok = checkWritePath(args.report, "--report", inputFiles, args.force); !ok)
            return reportError(ok);
    // Compared as the files they will be: "./o.onnx", an absolute path or a link to -o's file too.
    const auto resolved = [](const std::string &p) {
        std::error_code e;
        fs::path absolute = fs::absolute(p, e);
        // A link to a file not written yet: weakly_canonical leaves a dangling link as it is.
        for (int hops = 0; hops < 40 && fs::is_symlink(absolute, e); ++hops) {
            const fs::path target = fs::read_symlink(absolute, e);
            if (e)
                break;
            absolute = target.is_absolute() ? target : absolute.parent_path() / target;
        }
        const fs::path canonical = fs::weakly_canonical(absolute, e);
        return (e ? absolute : canonical).lexically_normal();
    };
    if (!args.report.empty() && !args.output.empty() && resolved(args.report) == resolved(args.output))
        return reportError(Status::invalid("--report and -o both name '" + args.report +
                                           "'; the report would replace the model"));
    if (!args.dumpDir.empty()) {
        std::error_code ec;
        fs::create_directories(args.dumpDir, ec);
        if (ec || !fs::is_directory(args.dumpDir))
            return reportError(Status::io("cannot create the dump folder '" + args.dumpDir + "'"));
    }

    const Expected<int> devices = deviceCount(args.devices);
    if (!devices)
        return reportError(devices.status());
    // --devices only sizes partition-for-devices, which no level runs: alone it changed nothing,
    // silently.
    if (args.devicesGiven && std::find(pipeline->begin(), pipeline->end(), "partition-for-devices") == pipeline->end())
        printWarnings({"--devices is for partition-for-devices, which this pipeline does not run: add --passes "
                       "…,partition-for-devices (no level runs it)"});
    Model model = loaded->model;
    model.graph.assignNodeNames();
    passes::PipelineOptions options;
    options.passOptions.devices = *devices;
    options.verify = true; // cheap next to the passes, and a broken graph must never be written
    options.keepSnapshots = !args.dumpDir.empty() || !args.report.empty();
    const passes::PipelineResult result = passes::runPipeline(model, *pipeline, options);

    if (!args.quiet)
        printTables(result, *result.initial, model);
    if (!result.status)
        return reportError(result.status);
    // The written model keeps the names of what it was optimized from, where a node stands for one
    // original node of its op type (not the "_Add_Add" suffixes of each pass that touched it).
    passes::restoreOriginalNames(model.graph, result.initial->graph, result);

    // Every path is checked before anything is written, and the model comes first: a report or a
    // dump must never describe an output that then failed to be written.
    std::vector<std::pair<fs::path, const Model *>> dumps;
    if (!args.dumpDir.empty()) {
        int index = 0;
        for (const PassRecord &r : result.passes) {
            ++index;
            if (!r.snapshot)
                continue;
            char prefix[16];
            std::snprintf(prefix, sizeof prefix, "%02d-", index);
            const fs::path path = fs::path(args.dumpDir) / (prefix + uniqueFileNames({r.name}).front() + ".onnx");
            if (Status ok = checkWritePath(path, "--dump-dir file", inputFiles, args.force); !ok)
                return reportError(ok);
            dumps.emplace_back(path, r.snapshot.get());
        }
    }
    if (!args.output.empty()) {
        Expected<SaveResult> saved = saveModel(model, args.output, save);
        if (!saved)
            return reportError(aboutWriting(saved.status(), args.output));
        if (!args.quiet)
            std::cout << "\nwrote " << saved->modelPath.string() << '\n';
    }
    for (const auto &[path, snapshot] : dumps) {
        Expected<SaveResult> saved = saveModel(*snapshot, path, save);
        if (!saved)
            return reportError(aboutWriting(saved.status(), path));
    }
    if (!args.report.empty()) {
        nlohmann::json report;
        report["input"] = args.input;
        report["output"] = args.output;
        report["pipeline"] = *pipeline;
        report["total_ms"] = result.totalMs;
        nlohmann::json list = nlohmann::json::array();
        const Model *before = result.initial.get();
        for (const PassRecord &r : result.passes) {
            const Model *after = r.snapshot ? r.snapshot.get() : before;
            list.push_back(passJson(r, before->graph, after->graph));
            before = after;
        }
        report["passes"] = list;
        report["ops_before"] = opHistogram(result.initial->graph);
        report["ops_after"] = opHistogram(model.graph);
        if (Status ok = writeTextFile(args.report, report.dump(2) + "\n"); !ok)
            return reportError(ok);
    }
    return ExitOk;
}

} // namespace opscope::cli
