// Fused attention (attention-fusion + the FlashAttention-style kernel) against the unfused graph
// (MatMul, Mul, Softmax, MatMul: the Sq×Sk scores materialized twice), both run by opscope's CPU
// runtime on the same inputs, at sequence lengths 128 … 4096. Per length: median latency of
// each, the ratio, the peak RSS of each (every measurement runs in its own child process, so one
// run's peak cannot hide another's), and the largest output difference.
//
//   attention_bench [--threads N] [--heads H] [--head-size D] [--max-seq S] [--iterations K]
//   (internally: attention_bench --child fused|unfused --seq S ...)

#include "onnx/shaperefresh.h"
#include "passes/pipeline.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace opscope;

namespace {

struct Config
{
    int threads = 1, heads = 8, headSize = 64, maxSeq = 4096, iterations = 5;
};

// q, k, v [1, H, S, D] → Softmax(q·kᵀ / √D) · v, as exporters write it.
Model attentionModel(const Config &c, std::int64_t seq, bool fused)
{
    Model m;
    m.opsets = {{"", 17}};
    Graph &g = m.graph;
    const auto type = [&](std::vector<std::int64_t> dims) {
        return TypeInfo::tensor(DataType::Float, Shape::fromSizes(std::move(dims)));
    };
    const std::int64_t h = c.heads, d = c.headSize;
    const ValueId q = g.addInput("q", type({1, h, seq, d}));
    const ValueId k = g.addInput("k", type({1, h, seq, d}));
    const ValueId v = g.addInput("v", type({1, h, seq, d}));
    const ValueId scale = g.addInitializer(
        "scale", Tensor::fromValues(DataType::Float, {}, std::vector<float>{1.0f / std::sqrt(float(d))}));
    auto value = [&](const char *name) { return *g.createValue(name); };
    const ValueId kt = value("kt"), scores = value("scores"), scaled = value("scaled"),
                  probs = value("probs"), out = value("out");
    Node &t = g.node(*g.addNode("Transpose", {k}, {kt}, {}, "transpose_k"));
    t.attributes.push_back(Attribute::makeInts("perm", {0, 1, 3, 2}));
    (void)g.addNode("MatMul", {q, kt}, {scores}, {}, "qk");
    (void)g.addNode("Mul", {scores, scale}, {scaled}, {}, "scale");
    Node &sm = g.node(*g.addNode("Softmax", {scaled}, {probs}, {}, "softmax"));
    sm.attributes.push_back(Attribute::makeInt("axis", -1));
    (void)g.addNode("MatMul", {probs, v}, {out}, {}, "pv");
    g.addOutput(out);
    if (!refreshShapes(m)) {
        std::fprintf(stderr, "shape inference failed\n");
        std::exit(2);
    }
    if (fused) {
        const passes::PipelineResult r = passes::runPipeline(m, {"attention-fusion"});
        if (!r.status || m.graph.nodeCount() != 1) {
            std::fprintf(stderr, "attention-fusion did not fuse the graph\n");
            std::exit(2);
        }
    }
    return m;
}

struct Run
{
    double medianMs = 0.0;
    std::vector<RuntimeTensor> outputs;
};

Run measure(const Config &c, std::int64_t seq, bool fused, int iterations)
{
    const Model m = attentionModel(c, seq, fused);
    SessionOptions so;
    so.threads = c.threads;
    auto session = InferenceSession::create(m, so);
    if (!session) {
        std::fprintf(stderr, "%s\n", session.status().message().c_str());
        std::exit(2);
    }
    RandomInputOptions ro;
    ro.seed = 42;
    Expected<Feeds> feeds = randomFeeds(**session, {}, ro);
    Run r;
    std::vector<double> ms;
    for (int i = 0; i <= iterations; ++i) { // the first run warms up
        const auto t0 = std::chrono::steady_clock::now();
        auto out = (*session)->run(*feeds);
        const auto t1 = std::chrono::steady_clock::now();
        if (!out) {
            std::fprintf(stderr, "%s\n", out.status().message().c_str());
            std::exit(2);
        }
        if (i > 0)
            ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        r.outputs = std::move(*out);
    }
    std::sort(ms.begin(), ms.end());
    r.medianMs = ms.empty() ? 0.0 : ms[ms.size() / 2];
    return r;
}

double peakRssMiB()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_maxrss) / 1024.0;
}

// Runs one measurement in a child process: "median_ms peak_mib".
bool child(const char *self, const Config &c, std::int64_t seq, bool fused, double &ms, double &mib)
{
    const std::string cmd = std::string(self) + " --child " + (fused ? "fused" : "unfused") + " --seq " +
                            std::to_string(seq) + " --threads " + std::to_string(c.threads) + " --heads " +
                            std::to_string(c.heads) + " --head-size " + std::to_string(c.headSize) +
                            " --iterations " + std::to_string(c.iterations);
    FILE *p = popen(cmd.c_str(), "r");
    if (!p)
        return false;
    const int n = std::fscanf(p, "%lf %lf", &ms, &mib);
    return pclose(p) == 0 && n == 2;
}

} // namespace

int main(int argc, char **argv)
{
    Config c;
    std::string childMode;
    std::int64_t seq = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--threads")
            c.threads = std::atoi(v.c_str());
        else if (a == "--heads")
            c.heads = std::atoi(v.c_str());
        else if (a == "--head-size")
            c.headSize = std::atoi(v.c_str());
        else if (a == "--max-seq")
            c.maxSeq = std::atoi(v.c_str());
        else if (a == "--iterations")
            c.iterations = std::atoi(v.c_str());
        else if (a == "--child")
            childMode = v;
        else if (a == "--seq")
            seq = std::atoll(v.c_str());
    }
    if (!childMode.empty()) {
        const Run r = measure(c, seq, childMode == "fused", c.iterations);
        std::printf("%.4f %.1f\n", r.medianMs, peakRssMiB());
        return 0;
    }
    std::printf("attention, 1 batch × %d heads × head size %d, %d thread(s), median of %d runs\n", c.heads,
                c.headSize, c.threads, c.iterations);
    std::printf("%6s %12s %12s %8s %14s %14s %8s %12s\n", "seq", "unfused ms", "fused ms", "ratio",
                "unfused MiB", "fused MiB", "ratio", "max |diff|");
    for (std::int64_t s = 128; s <= c.maxSeq; s *= 2) {
        double um = 0, ur = 0, fm = 0, fr = 0;
        if (!child(argv[0], c, s, false, um, ur) || !child(argv[0], c, s, true, fm, fr)) {
            std::printf("%6lld failed\n", static_cast<long long>(s));
            continue;
        }
        // Outputs compared in this process (one run each).
        const Run a = measure(c, s, false, 0), b = measure(c, s, true, 0);
        double diff = 0.0;
        const float *pa = a.outputs[0].data<float>(), *pb = b.outputs[0].data<float>();
        for (std::int64_t i = 0; i < a.outputs[0].elementCount(); ++i)
            diff = std::max(diff, double(std::fabs(pa[i] - pb[i])));
        std::printf("%6lld %12.2f %12.2f %8.2f %14.1f %14.1f %8.2f %12.2e\n", static_cast<long long>(s), um,
                    fm, fm / um, ur, fr, fr / ur, diff);
        std::fflush(stdout);
    }
    return 0;
}
