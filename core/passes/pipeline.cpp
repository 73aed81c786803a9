#include "passes/pipeline.h"

#include "ir/fingerprint.h"
#include "ir/verifier.h"
#include "onnx/shaperefresh.h"
#include "passes/passutil.h"
#include "passes/registry.h"

#include <algorithm>
#include <cstdlib>
#include <set>

namespace opscope::passes {

namespace {

bool sameAttributes(const Node &a, const Node &b)
{
    if (a.attributes.size() != b.attributes.size())
        return false;
    for (std::size_t i = 0; i < a.attributes.size(); ++i) {
        const Attribute &x = a.attributes[i], &y = b.attributes[i];
        if (x.name != y.name || x.type != y.type || x.valueText(64) != y.valueText(64))
            return false;
        if (x.type == AttributeType::Graph && x.g && y.g && fingerprint(*x.g) != fingerprint(*y.g))
            return false;
        if (x.type == AttributeType::Tensor && x.t.data != y.t.data)
            return false;
    }
    return true;
}

} // namespace

ChangeRecord diffGraphs(const Graph &before, const Graph &after)
{
    ChangeRecord r;
    std::set<std::pair<std::string, std::string>> replaced;
    for (std::size_t i = 0; i < before.nodeSlots(); ++i) {
        const NodeId id(static_cast<std::uint32_t>(i));
        const Node &b = before.node(id);
        if (!b.alive)
            continue;
        if (i >= after.nodeSlots() || !after.node(id).alive) {
            r.removed.push_back(id);
            continue;
        }
        const Node &a = after.node(id);
        bool modified = a.opType != b.opType || a.domain != b.domain || a.inputs.size() != b.inputs.size() ||
                        a.outputs != b.outputs || !sameAttributes(a, b);
        for (std::size_t k = 0; k < std::min(a.inputs.size(), b.inputs.size()); ++k) {
            if (a.inputs[k] == b.inputs[k])
                continue;
            modified = true;
            if (a.inputs[k].valid() && b.inputs[k].valid())
                replaced.emplace(before.value(b.inputs[k]).name, after.value(a.inputs[k]).name);
        }
        if (modified)
            r.modified.push_back(id);
    }
    for (std::size_t i = before.nodeSlots(); i < after.nodeSlots(); ++i) {
        const NodeId id(static_cast<std::uint32_t>(i));
        if (after.node(id).alive)
            r.added.push_back(id);
    }
    for (std::size_t k = 0; k < std::min(before.outputs().size(), after.outputs().size()); ++k) {
        const std::string &b = before.value(before.outputs()[k]).name;
        const std::string &a = after.value(after.outputs()[k]).name;
        if (before.outputs()[k] != after.outputs()[k] && a != b)
            replaced.emplace(b, a);
    }
    r.valuesReplaced.assign(replaced.begin(), replaced.end());
    std::set<std::string> initBefore, initAfter;
    for (ValueId v : before.initializers())
        initBefore.insert(before.value(v).name);
    for (ValueId v : after.initializers())
        initAfter.insert(after.value(v).name);
    for (const std::string &n : initAfter)
        r.initializersAdded += initBefore.count(n) ? 0 : 1;
    for (const std::string &n : initBefore)
        r.initializersRemoved += initAfter.count(n) ? 0 : 1;
    return r;
}

bool verifyPassesByDefault()
{
#ifndef NDEBUG
    return true;
#else
    const char *env = std::getenv("OPSCOPE_VERIFY_PASSES");
    return env && std::string(env) == "1";
#endif
}

PipelineResult runPipeline(Model &model, const std::vector<std::string> &passNames,
                           const PipelineOptions &options)
{
    std::vector<std::unique_ptr<Pass>> passes;
    for (const std::string &name : passNames) {
        passes.push_back(createPass(name));
        if (!passes.back()) {
            PipelineResult result;
            result.initial = std::make_shared<const Model>(model);
            result.status =
                Status::invalid("unknown pass '" + name + "' (see `opscope-cli optimize --list`)");
            return result;
        }
    }
    return runPasses(model, passes, options);
}

PipelineResult runPasses(Model &model, const std::vector<std::unique_ptr<Pass>> &passes,
                         const PipelineOptions &options)
{
    using Clock = std::chrono::steady_clock;
    PipelineResult result;
    const auto pipelineStart = Clock::now();
    // Ranks ONNX's inference missed (Reshapes to run-time shapes) let rank-checking rules match.
    if (options.refreshShapes)
        propagateRanks(model.graph);
    auto current = std::make_shared<const Model>(model);
    result.initial = current;
    std::uint64_t currentPrint = fingerprint(model);
    if (options.verify) {
        // Otherwise the first pass would be blamed for what the model brought along.
        if (const Status verified = verifyGraph(model.graph); !verified) {
            result.status = Status::invalid("the model is invalid before any pass ran: " + verified.message());
            return result;
        }
    }

    for (const std::unique_ptr<Pass> &pass : passes) {
        if (options.cancel && options.cancel->load()) {
            result.status = Status::error(ErrorKind::Unsupported, "optimization cancelled");
            break;
        }
        const std::string name = pass->name();
        PassRecord record;
        record.name = name;
        record.nodesBefore = model.graph.nodeCountWithSubgraphs();
        PassContext context(options.passOptions, options.cancel);
        const auto start = Clock::now();
        Status failure;
        int iterations = 0;
        std::uint64_t print = currentPrint;
        do {
            ++iterations;
            Expected<bool> ran = false;
            try {
                const ModelNameScope names(model.graph);
                ran = pass->run(model, context);
            } catch (const std::exception &e) {
                ran = Status::internal(std::string("unexpected exception: ") + e.what());
            }
            if (!ran) {
                failure = ran.status();
                break;
            }
            const std::uint64_t next = fingerprint(model);
            const bool changedNow = next != print;
            print = next;
            if (!changedNow || !pass->repeatsToFixedPoint())
                break;
        } while (iterations < options.maxIterations);
        record.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        record.iterations = iterations;

        if (failure.isOk() && options.verify) {
            const Status verified = verifyGraph(model.graph);
            if (!verified)
                failure = Status::internal("the graph it produced is invalid: " + verified.message());
        }
        if (!failure.isOk()) {
            model = *current; // back to the graph as it was before this pass
            record.nodesAfter = record.nodesBefore;
            record.failure = failure.message();
            result.passes.push_back(std::move(record));
            if (options.onPass)
                options.onPass(result.passes.back());
            if (options.onFailure == OnPassFailure::SkipPass) {
                result.warnings.push_back("pass '" + name + "' was skipped (its change rolled back): " +
                                          failure.message());
                continue;
            }
            result.status = Status::error(failure.kind(), "pass '" + name + "' failed: " + failure.message());
            break;
        }
        record.changed = print != currentPrint;
        record.nodesAfter = model.graph.nodeCountWithSubgraphs();
        if (record.changed) {
            record.changes = diffGraphs(current->graph, model.graph);
            // New values (a Reshape that got a constant shape...) get their shapes for later passes.
            if (options.refreshShapes)
                (void)refreshShapes(model); // best effort: unknown shapes only make later rules skip
            current = std::make_shared<const Model>(model);
            currentPrint = fingerprint(model);
            if (options.keepSnapshots)
                record.snapshot = current;
        }
        record.changes.matches = context.takeMatches();
        record.notes = context.takeNotes();
        result.passes.push_back(std::move(record));
        if (options.onPass)
            options.onPass(result.passes.back());
    }
    result.totalMs = std::chrono::duration<double, std::milli>(Clock::now() - pipelineStart).count();
    return result;
}

PipelineResult optimizeForExecution(Model &model, const std::string &level, PipelineOptions options)
{
    PipelineSpec spec;
    spec.level = level;
    spec.target = "none";
    Expected<std::vector<std::string>> list = resolvePipeline(spec);
    if (!list) {
        PipelineResult result;
        result.initial = std::make_shared<const Model>(model);
        result.status = list.status();
        return result;
    }
    options.verify = true;
    options.onFailure = OnPassFailure::SkipPass;
    return runPipeline(model, *list, options);
}

std::map<std::string, std::vector<std::string>> replacementOrigins(const PipelineResult &result)
{
    std::map<std::string, std::vector<std::string>> origin;
    for (const PassRecord &r : result.passes)
        for (const PatternMatch &m : r.changes.matches) {
            if (!m.graphPath.empty() || m.replacementNames.empty())
                continue;
            std::vector<std::string> sources;
            for (const std::string &matched : m.matchedNames) {
                const auto it = origin.find(matched);
                if (it == origin.end())
                    sources.push_back(matched);
                else
                    sources.insert(sources.end(), it->second.begin(), it->second.end());
            }
            std::sort(sources.begin(), sources.end());
            sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
            for (const std::string &replacement : m.replacementNames)
                if (!(sources.size() == 1 && sources.front() == replacement)) // a node standing for itself
                    origin[replacement] = sources;
        }
    return origin;
}

} // namespace opscope::passes
