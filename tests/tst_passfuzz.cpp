// The pass fuzzer: random models built in code from a fixed seed, every pass of the registry alone
// and every level as a pipeline run over each with the verifier on, and the outputs on random
// inputs compared with the unoptimized model's (rtol 1e-4, atol 1e-5; two input seeds).
//
// The models: test::randomModel (support/randommodel.h), valid ONNX with nested If/Loop/Scan.
//
// Budget: OPSCOPE_PASSFUZZ_GRAPHS models (default 300: about 12 s of CPU here) from
// OPSCOPE_PASSFUZZ_SEED (default 1); bench/passfuzz.sh runs the long variant. OPSCOPE_PASSFUZZ_VERBOSE
// names each (model, pipeline) before it runs and prints failures as they happen;
// OPSCOPE_PASSFUZZ_DUMP=DIR writes every model as DIR/seed_N.onnx.

#include "ir/fingerprint.h"
#include "ir/verifier.h"
#include "onnx/modelio.h"
#include "passes/pipeline.h"
#include "passes/registry.h"
#include "runtime/conformance.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "randommodel.h"

#include <QElapsedTimer>
#include <QTest>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <onnx/onnx_pb.h>
#include <optional>
#include <random>

using namespace opscope;

namespace {

using FuzzModelOptions = test::RandomModelOptions;
using test::randomModel;


struct FuzzStats
{
    int graphs = 0;                    // models generated
    int skipped = 0;                   // models that did not load or run before any pass (generator limits)
    int pipelines = 0;                 // (model, pass or level) combinations run
    int changed = 0;                   // of those, how many changed the model
    int outputsCompared = 0;           // output tensors compared with the unoptimized run
    std::vector<std::string> failures; // "seed S, pass P: what went wrong"
};

struct FuzzPipeline
{
    std::string label; // "pass constant-folding", "level all (target none)"
    std::vector<std::string> passes;
};


Expected<Model> loadProto(const onnx::ModelProto &proto)
{
    const std::string bytes = proto.SerializeAsString();
    LoadOptions load;
    load.runChecker = true;
    Expected<ImportResult> loaded =
        loadModelFromBytes(std::span(reinterpret_cast<const std::byte *>(bytes.data()), bytes.size()),
                           std::filesystem::current_path(), load);
    if (!loaded)
        return loaded.status();
    for (const std::string &w : loaded->warnings)
        if (w.find("checker") != std::string::npos)
            return Status::invalid("generated model fails the checker: " + w);
    return std::move(loaded->model);
}

// OPSCOPE_PASSFUZZ_VERBOSE=1: each (model, pipeline) named on stderr before it runs (a crash names it).
bool verbose()
{
    static const bool on = std::getenv("OPSCOPE_PASSFUZZ_VERBOSE") != nullptr;
    return on;
}


std::vector<FuzzPipeline> fuzzPipelines()
{
    std::vector<FuzzPipeline> out;
    for (const passes::PassInfo &p : passes::builtinPasses())
        out.push_back({"pass " + p.name, {p.name}});
    for (const std::string target : {"none", "onnx"})
        for (const char *level : {"basic", "extended", "all"}) {
            if (target == "onnx" && std::string(level) != "all")
                continue;
            passes::PipelineSpec spec;
            spec.level = level;
            spec.target = target;
            out.push_back({std::string("level ") + level + " (target " + target + ")",
                           passes::resolvePipeline(spec).value()});
        }
    return out;
}

void fuzzModel(std::uint64_t seed, const std::vector<FuzzPipeline> &pipelines, FuzzStats &stats,
               const FuzzModelOptions &options, const std::vector<std::uint64_t> &inputSeeds, double rtol,
               double atol);

// fuzzModel, and in verbose mode its failures printed as they happen (a later crash loses none).
void fuzzOneModel(std::uint64_t seed, const std::vector<FuzzPipeline> &pipelines, FuzzStats &stats,
                  const FuzzModelOptions &options = {}, const std::vector<std::uint64_t> &inputSeeds = {1, 2},
                  double rtol = 1e-4, double atol = 1e-5)
{
    const std::size_t before = stats.failures.size();
    fuzzModel(seed, pipelines, stats, options, inputSeeds, rtol, atol);
    if (verbose())
        for (std::size_t i = before; i < stats.failures.size(); ++i)
            std::fprintf(stderr, "passfuzz: FAIL %s\n", stats.failures[i].c_str());
}

void fuzzModel(std::uint64_t seed, const std::vector<FuzzPipeline> &pipelines, FuzzStats &stats,
               const FuzzModelOptions &options, const std::vector<std::uint64_t> &inputSeeds, double rtol,
               double atol)
{
    ++stats.graphs;
    const std::string where = "seed " + std::to_string(seed);
    const onnx::ModelProto proto = randomModel(seed, options);
    if (const char *dir = std::getenv(
            "OPSCOPE_PASSFUZZ_DUMP")) { // OPSCOPE_PASSFUZZ_DUMP=DIR: every model as DIR/seed_N.onnx
        std::ofstream out(std::filesystem::path(dir) / ("seed_" + std::to_string(seed) + ".onnx"),
                          std::ios::binary);
        proto.SerializeToOstream(&out);
    }
    Expected<Model> model = loadProto(proto);
    if (!model) {
        ++stats.skipped;
        stats.failures.push_back(where + ": the generated model does not load: " + model.status().message());
        return;
    }
    model->graph.assignNodeNames();
    if (Status ok = verifyGraph(model->graph); !ok) {
        stats.failures.push_back(where + ": the verifier rejects the generated model: " + ok.message());
        return;
    }
    SessionOptions so;
    so.checkMemory = false;
    auto before = InferenceSession::create(*model, so);
    if (!before) {
        ++stats.skipped;
        stats.failures.push_back(where + ": the generated model does not run: " + before.status().message());
        return;
    }
    std::vector<Feeds> feeds;
    std::vector<std::vector<RuntimeTensor>> want;
    for (std::uint64_t s : inputSeeds) {
        RandomInputOptions ro;
        ro.seed = s;
        Expected<Feeds> f = randomFeeds(**before, {}, ro);
        Expected<std::vector<RuntimeTensor>> w =
            f ? (*before)->run(*f) : Expected<std::vector<RuntimeTensor>>(f.status());
        if (!w) {
            ++stats.skipped;
            stats.failures.push_back(where + ": the generated model does not run: " + w.status().message());
            return;
        }
        feeds.push_back(std::move(*f));
        want.push_back(std::move(*w));
    }
    const std::uint64_t print = fingerprint(*model);
    for (const FuzzPipeline &pipeline : pipelines) {
        ++stats.pipelines;
        const std::string what = where + ", " + pipeline.label;
        if (verbose())
            std::fprintf(stderr, "passfuzz: %s\n", what.c_str());
        Model optimized = *model;
        passes::PipelineOptions po;
        po.verify = true;
        po.keepSnapshots = false;
        const passes::PipelineResult r = passes::runPipeline(optimized, pipeline.passes, po);
        if (!r.status) {
            stats.failures.push_back(what + ": " + r.status.message());
            continue;
        }
        if (fingerprint(optimized) != print)
            ++stats.changed;
        auto after = InferenceSession::create(optimized, so);
        if (!after) {
            stats.failures.push_back(
                what + ": the optimized model does not load into a session: " + after.status().message());
            continue;
        }
        for (std::size_t k = 0; k < feeds.size(); ++k) {
            Expected<std::vector<RuntimeTensor>> got = (*after)->run(feeds[k]);
            if (!got) {
                stats.failures.push_back(what +
                                         ": the optimized model does not run: " + got.status().message());
                break;
            }
            if (got->size() != want[k].size()) {
                stats.failures.push_back(what + ": output count changed");
                break;
            }
            bool same = true;
            for (std::size_t i = 0; i < got->size() && same; ++i) {
                double diff = 0.0;
                ++stats.outputsCompared;
                if (Status ok = compareTensors((*got)[i], want[k][i], rtol, atol, diff); !ok) {
                    stats.failures.push_back(what + ": output " + std::to_string(i) + " (input seed " +
                                             std::to_string(inputSeeds[k]) + "): " + ok.message());
                    same = false;
                }
            }
            if (!same)
                break;
        }
    }
}

std::uint64_t envNumber(const char *name, std::uint64_t fallback)
{
    const char *v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

} // namespace

class TestPassFuzz : public QObject
{
    Q_OBJECT

private slots:
    void generatorIsDeterministic()
    {
        QCOMPARE(randomModel(7).SerializeAsString(), randomModel(7).SerializeAsString());
        QVERIFY(randomModel(7).SerializeAsString() != randomModel(8).SerializeAsString());
    }

    void everyPassKeepsRandomModelsValidAndEqual()
    {
        const std::uint64_t graphs = envNumber("OPSCOPE_PASSFUZZ_GRAPHS", 300);
        const std::uint64_t first = envNumber("OPSCOPE_PASSFUZZ_SEED", 1);
        const std::vector<FuzzPipeline> pipelines = fuzzPipelines();
        FuzzStats stats;
        QElapsedTimer timer;
        timer.start();
        for (std::uint64_t seed = first; seed < first + graphs; ++seed)
            fuzzOneModel(seed, pipelines, stats);
        qInfo("passfuzz: %d graphs (%d skipped) x %zu pipelines (%zu passes alone + 4 levels): %d runs, %d "
              "changed "
              "the model, %d outputs compared, %zu failures, %.1f s",
              stats.graphs, stats.skipped, pipelines.size(), pipelines.size() - 4, stats.pipelines,
              stats.changed, stats.outputsCompared, stats.failures.size(), double(timer.elapsed()) / 1000.0);
        std::string report;
        for (std::size_t i = 0; i < stats.failures.size() && i < 12; ++i)
            report += "\n  " + stats.failures[i];
        QVERIFY2(stats.failures.empty(), report.c_str());
        QVERIFY(stats.pipelines > 0 && stats.outputsCompared > 0);
    }
};

QTEST_GUILESS_MAIN(TestPassFuzz)
#include "tst_passfuzz.moc"
