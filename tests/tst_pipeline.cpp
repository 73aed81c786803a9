// The pass engine's instrumentation (records, snapshots, change records, verifier, rollback) and
// the whole pipeline over the ONNX backend suite: every model that runs before optimization runs
// after it with equal outputs.

#include "ir/fingerprint.h"
#include "ir/verifier.h"
#include "onnx/modelio.h"
#include "passes/registry.h"
#include "passtest.h"
#include "runtime/conformance.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <regex>

using namespace opscope;
using namespace opscope::test;

namespace {

// Breaks the graph: removes the producer of the first graph output's input chain.
class BreakingPass final : public passes::Pass
{
public:
    std::string name() const override { return "test-breaker"; }
    Expected<bool> run(Model &model, passes::PassContext &) override
    {
        Graph &g = model.graph;
        for (NodeId id : g.nodeIds())
            if (!g.uses(g.node(id).outputs[0]).empty()) {
                g.removeNode(id); // its readers now read a value nothing produces
                return true;
            }
        return false;
    }
};

class ThrowingPass final : public passes::Pass
{
public:
    std::string name() const override { return "test-thrower"; }
    Expected<bool> run(Model &, passes::PassContext &) override { throw std::runtime_error("boom"); }
};

Model convBnRelu()
{
    ModelBuilder b;
    b.input("x", {-1, 3, 6, 6})
        .randomConstant("W", {4, 3, 3, 3})
        .randomConstant("g", {4}, 0.5f, 1.5f)
        .randomConstant("beta", {4})
        .randomConstant("mean", {4})
        .randomConstant("var", {4}, 0.5f, 1.5f)
        .op("Identity", {"x"}, {"xi"})
        .op("Conv", {"xi", "W"}, {"c"})
        .op("BatchNormalization", {"c", "g", "beta", "mean", "var"}, {"bn"})
        .op("Relu", {"bn"}, {"y"})
        .output("y");
    Model m = b.build();
    m.graph.assignNodeNames();
    return m;
}

} // namespace

class TestPipeline : public QObject
{
    Q_OBJECT

private slots:
    void recordsWhatEachPassDid()
    {
        Model m = convBnRelu();
        const Model original = m;
        passes::PipelineOptions options;
        options.verify = true;
        const passes::PipelineResult r =
            passes::runPipeline(m,
                                {"redundant-node-elimination", "conv-bn-fusion", "dead-code-elimination",
                                 "conv-activation-fusion"},
                                options);
        QVERIFY2(r.status.isOk(), r.status.message().c_str());
        QCOMPARE(r.passes.size(), std::size_t(4));
        QCOMPARE(fingerprint(*r.initial), fingerprint(original));

        const passes::PassRecord &redundant = r.passes[0];
        QVERIFY(redundant.changed);
        QCOMPARE(redundant.nodesBefore, std::size_t(4));
        QCOMPARE(redundant.nodesAfter, std::size_t(3));
        QCOMPARE(redundant.changes.removed.size(), std::size_t(1));
        QCOMPARE(original.graph.node(redundant.changes.removed[0]).opType, std::string("Identity"));
        QCOMPARE(redundant.changes.matches.size(), std::size_t(1));
        QCOMPARE(redundant.changes.matches[0].rule, std::string("identity"));
        QCOMPARE(redundant.changes.valuesReplaced.size(), std::size_t(1));
        QCOMPARE(redundant.changes.valuesReplaced[0], std::make_pair(std::string("xi"), std::string("x")));

        const passes::PassRecord &convBn = r.passes[1];
        QVERIFY(convBn.changed && convBn.snapshot);
        QCOMPARE(convBn.snapshot->graph.nodeCount(), convBn.nodesAfter);
        QCOMPARE(convBn.changes.matches.size(), std::size_t(1));
        const passes::PatternMatch &match = convBn.changes.matches[0];
        QCOMPARE(match.rule, std::string("conv-bn"));
        QCOMPARE(match.matchedNames.size(), std::size_t(2));
        QCOMPARE(match.replacementNames,
                 std::vector<std::string>{match.matchedNames[0]}); // the Conv, rewritten
        // Modified: the Conv (new weights and bias) and the Relu (now reads the Conv directly).
        QCOMPARE(convBn.changes.modified.size(), std::size_t(2));
        QCOMPARE(m.graph.node(convBn.changes.modified[0]).opType, std::string("Conv"));
        QCOMPARE(convBn.changes.removed.size(), std::size_t(1)); // the BatchNormalization
        QCOMPARE(convBn.changes.initializersAdded, std::size_t(2));

        const passes::PassRecord &dce = r.passes[2];
        QVERIFY(!dce.changed);
        QVERIFY(!dce.snapshot); // nothing changed: no snapshot
        QVERIFY(dce.changes.removed.empty() && dce.changes.added.empty());

        const passes::PassRecord &act = r.passes[3];
        QVERIFY(act.changed);
        QCOMPARE(act.changes.added.size(), std::size_t(1));
        QCOMPARE(act.changes.removed.size(), std::size_t(2));
        QCOMPARE(act.changes.matches[0].replacement, act.changes.added);

        // Snapshots share weights with the model they came from: structure only was copied.
        const Graph &first = r.passes[0].snapshot->graph;
        const ValueId w = first.findValue("W");
        QVERIFY(w.valid());
        QCOMPARE(first.value(w).initializer->data.get(),
                 original.graph.value(original.graph.findValue("W")).initializer->data.get());
    }

    void brokenPassStopsAtTheLastGoodGraph()
    {
        Model m = convBnRelu();
        std::vector<std::unique_ptr<passes::Pass>> list;
        list.push_back(passes::createPass("redundant-node-elimination"));
        list.push_back(std::make_unique<BreakingPass>());
        list.push_back(passes::createPass("conv-bn-fusion"));
        passes::PipelineOptions options;
        options.verify = true;
        const passes::PipelineResult r = passes::runPasses(m, list, options);
        QVERIFY(!r.status.isOk());
        QVERIFY2(r.status.message().find("test-breaker") != std::string::npos, r.status.message().c_str());
        QVERIFY2(r.status.message().find("invalid") != std::string::npos, r.status.message().c_str());
        QCOMPARE(r.passes.size(), std::size_t(2)); // conv-bn-fusion never ran
        QCOMPARE(fingerprint(m), fingerprint(*r.passes[0].snapshot));
    }

    // What run, profile and the app ask for: the broken pass is rolled back, named in a warning, and
    // the next pass runs on the graph as it was before it.
    void brokenPassIsRolledBackAndSkipped()
    {
        Model m = convBnRelu();
        std::vector<std::unique_ptr<passes::Pass>> list;
        list.push_back(passes::createPass("redundant-node-elimination"));
        list.push_back(std::make_unique<BreakingPass>());
        list.push_back(std::make_unique<ThrowingPass>());
        list.push_back(passes::createPass("conv-bn-fusion"));
        passes::PipelineOptions options;
        options.verify = true;
        options.onFailure = passes::OnPassFailure::SkipPass;
        const passes::PipelineResult r = passes::runPasses(m, list, options);
        QVERIFY2(r.status.isOk(), r.status.message().c_str());
        QCOMPARE(r.passes.size(), std::size_t(4));
        QCOMPARE(r.warnings.size(), std::size_t(2));
        QVERIFY2(r.warnings[0].find("test-breaker") != std::string::npos, r.warnings[0].c_str());
        QVERIFY2(r.warnings[0].find("invalid") != std::string::npos, r.warnings[0].c_str());
        QVERIFY2(r.warnings[1].find("boom") != std::string::npos, r.warnings[1].c_str());
        QVERIFY(!r.passes[1].failure.empty() && !r.passes[1].changed && !r.passes[1].snapshot);
        QVERIFY(r.passes[0].failure.empty());
        QVERIFY(r.passes[3].changed); // conv-bn-fusion ran on the graph as it was before the breaker
        QCOMPARE(opCount(countOps(m), "BatchNormalization"), 0);
        QVERIFY(verifyGraph(m.graph));
        QCOMPARE(fingerprint(m), fingerprint(*r.passes[3].snapshot));
    }

    void invalidModelIsNotBlamedOnThePasses()
    {
        Model m = convBnRelu();
        m.graph.removeNode(m.graph.findNode("Relu_0")); // y is no longer produced
        passes::PipelineOptions options;
        options.verify = true;
        options.onFailure = passes::OnPassFailure::SkipPass;
        const passes::PipelineResult r = passes::runPipeline(m, {"dead-code-elimination"}, options);
        QVERIFY(!r.status.isOk());
        QVERIFY2(r.status.message().find("before any pass") != std::string::npos, r.status.message().c_str());
        QVERIFY(r.passes.empty());
    }

    void optimizeForExecutionVerifiesEveryPass()
    {
        Model m = convBnRelu();
        passes::PipelineResult r = passes::optimizeForExecution(m, "extended");
        QVERIFY2(r.status.isOk(), r.status.message().c_str());
        QVERIFY(r.warnings.empty());
        QVERIFY(verifyGraph(m.graph));
        QVERIFY(opCount(countOps(m), "ai.opscope::FusedConv") == 1); // target none: opscope's own ops stay
        const std::uint64_t before = fingerprint(m);
        r = passes::optimizeForExecution(m, "turbo");
        QVERIFY(!r.status.isOk());
        QCOMPARE(fingerprint(m), before);
    }

    void throwingPassIsReportedNotFatal()
    {
        Model m = convBnRelu();
        const std::uint64_t before = fingerprint(m);
        std::vector<std::unique_ptr<passes::Pass>> list;
        list.push_back(std::make_unique<ThrowingPass>());
        const passes::PipelineResult r = passes::runPasses(m, list);
        QVERIFY(!r.status.isOk());
        QVERIFY(r.status.message().find("test-thrower") != std::string::npos);
        QVERIFY(r.status.message().find("boom") != std::string::npos);
        QCOMPARE(fingerprint(m), before);
    }

    void pipelinesResolve()
    {
        passes::PipelineSpec spec;
        spec.level = "extended";
        spec.disabled = {"conv-bn-fusion"};
        spec.target = "ort";
        Expected<std::vector<std::string>> list = passes::resolvePipeline(spec);
        QVERIFY(list);
        QCOMPARE(list->back(), std::string("lower-to-ort"));
        QVERIFY(std::find(list->begin(), list->end(), "conv-bn-fusion") == list->end());
        QVERIFY(std::find(list->begin(), list->end(), "constant-folding") != list->end());
        for (const std::string &name : *list)
            QVERIFY2(passes::createPass(name), name.c_str());

        spec = {};
        spec.passes = {"dead-code-elimination", "constant-folding"};
        spec.target = "none";
        list = passes::resolvePipeline(spec);
        QVERIFY(list);
        QCOMPARE(*list, (std::vector<std::string>{"dead-code-elimination", "constant-folding"}));

        spec.passes = {"no-such-pass"};
        QVERIFY(!passes::resolvePipeline(spec));
        spec = {};
        spec.level = "turbo";
        QVERIFY(!passes::resolvePipeline(spec));
        for (const passes::PassInfo &p : passes::builtinPasses()) {
            QVERIFY2(std::regex_match(p.name, std::regex("[a-z]+(-[a-z]+)*")), p.name.c_str());
            QCOMPARE(passes::createPass(p.name)->name(), p.name);
        }
    }

    // Every backend-suite model that runs before optimization (level all, target onnx) runs after it,
    // with outputs equal within ONNX's tolerances, and the optimized graph passes the verifier.
    void wholePipelineOverBackendSuite()
    {
        const std::filesystem::path root(OPSCOPE_ONNX_TESTDATA);
        if (!std::filesystem::exists(root))
            QSKIP("libonnx-testdata is not installed");
        passes::PipelineSpec spec;
        spec.level = "all";
        Expected<std::vector<std::string>> pipeline = passes::resolvePipeline(spec);
        QVERIFY(pipeline);
        QTemporaryDir tmp;
        int compared = 0, changed = 0, skipped = 0;
        std::vector<std::string> failures;
        for (const std::filesystem::path &dir : findConformanceTests(root)) {
            LoadOptions load;
            load.runChecker = false;
            Expected<ImportResult> loaded = loadModel(dir / "model.onnx", load);
            SessionOptions so;
            so.checkMemory = false;
            auto before = loaded ? InferenceSession::create(loaded->model, so)
                                 : Expected<std::unique_ptr<InferenceSession>>(loaded.status());
            const auto set = dir / "test_data_set_0";
            if (!before || !std::filesystem::exists(set)) {
                ++skipped;
                continue;
            }
            Feeds feeds;
            std::vector<const IoInfo *> infos;
            for (const IoInfo &i : (*before)->inputs())
                if (!i.hasDefault)
                    infos.push_back(&i);
            bool usable = true;
            const auto files = numberedTensorFiles(set, "input");
            for (std::size_t i = 0; i < files.size() && usable; ++i) {
                Expected<RuntimeTensor> t = readTensorFile(files[i]);
                usable = t && i < infos.size();
                if (usable)
                    feeds.emplace_back(infos[i]->name, std::move(*t));
            }
            Expected<std::vector<RuntimeTensor>> want =
                usable && (*before)->checkFeeds(feeds)
                    ? (*before)->run(feeds)
                    : Expected<std::vector<RuntimeTensor>>(Status::invalid("unusable"));
            if (!want) {
                ++skipped;
                continue;
            }
            const std::string name = dir.filename().string();
            Model optimized = loaded->model;
            passes::PipelineOptions options;
            options.verify = true;
            options.keepSnapshots = false;
            const passes::PipelineResult r = passes::runPipeline(optimized, *pipeline, options);
            if (!r.status) {
                failures.push_back(name + ": " + r.status.message());
                continue;
            }
            if (fingerprint(optimized) != fingerprint(loaded->model)) {
                ++changed;
                // What optimize writes must pass onnx::checker (it runs on load).
                const auto path = std::filesystem::path(tmp.path().toStdString()) / (name + ".onnx");
                Expected<SaveResult> saved = saveModel(optimized, path);
                Expected<ImportResult> back =
                    saved ? loadModel(path) : Expected<ImportResult>(saved.status());
                if (!back) {
                    failures.push_back(name +
                                       ": optimized model does not reload: " + back.status().message());
                    continue;
                }
                for (const std::string &w : back->warnings)
                    if (w.find("checker") != std::string::npos)
                        failures.push_back(name + ": " + w);
            }
            auto after = InferenceSession::create(optimized, so);
            Expected<std::vector<RuntimeTensor>> got =
                after ? (*after)->run(feeds) : Expected<std::vector<RuntimeTensor>>(after.status());
            if (!got) {
                failures.push_back(name + ": optimized model does not run: " + got.status().message());
                continue;
            }
            for (std::size_t i = 0; i < want->size(); ++i) {
                double diff = 0.0;
                const Status same = compareTensors((*got)[i], (*want)[i], 1e-3, 1e-5, diff);
                if (!same) {
                    failures.push_back(name + ": output " + std::to_string(i) + ": " + same.message());
                    break;
                }
            }
            ++compared;
        }
        qInfo("%d models compared before/after (%d changed by the pipeline), %d not runnable before",
              compared, changed, skipped);
        for (const std::string &f : failures)
            qWarning("%s", f.c_str());
        QVERIFY2(failures.empty(),
                 (std::to_string(failures.size()) + " models differ after optimization").c_str());
        QVERIFY(compared > 900);
    }
};

QTEST_GUILESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
