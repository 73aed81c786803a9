// Graph view layout at 1k, 5k and 10k nodes: time to the first frame (group by name scope, lay
// out what is visible — what the app does on open) against laying out every node flat with dot
// (what a viewer without hierarchy does). Models are generated in memory: a transformer-like stack
// with exporter-style scoped names, and a CNN whose names have no scopes (topological blocks).
//
//   layout_bench [--full-max N]   (flat layouts above N nodes are skipped; default 5000)

#include "ir/graph.h"
#include "layout/graphlayout.h"
#include "layout/presentation.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace opscope;

namespace {

// Adds `op` reading `inputs`, producing a fresh value; returns the value.
ValueId add(Graph &g, const std::string &name, const std::string &op, std::vector<ValueId> inputs)
{
    const ValueId out = *g.createValue(name + "_out");
    (void)g.addNode(op, std::move(inputs), {out}, {}, name);
    return out;
}

Graph transformer(int targetNodes)
{
    Graph g("transformer");
    ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 128, 256})));
    for (int layer = 0; g.nodeCount() < std::size_t(targetNodes); ++layer) {
        const std::string p = "/encoder/layer." + std::to_string(layer);
        const ValueId ln = add(g, p + "/attention/layer_norm/LayerNormalization", "LayerNormalization", {x});
        ValueId heads[3];
        const char *names[] = {"query", "key", "value"};
        for (int i = 0; i < 3; ++i) {
            const std::string q = p + "/attention/" + names[i];
            const ValueId mm = add(g, q + "/MatMul", "MatMul", {ln});
            const ValueId b = add(g, q + "/Add", "Add", {mm});
            const ValueId r = add(g, q + "/Reshape", "Reshape", {b});
            heads[i] = add(g, q + "/Transpose", "Transpose", {r});
        }
        const ValueId s = add(g, p + "/attention/scores/MatMul", "MatMul", {heads[0], heads[1]});
        const ValueId d = add(g, p + "/attention/scores/Div", "Div", {s});
        const ValueId sm = add(g, p + "/attention/Softmax", "Softmax", {d});
        const ValueId c = add(g, p + "/attention/context/MatMul", "MatMul", {sm, heads[2]});
        const ValueId t = add(g, p + "/attention/context/Transpose", "Transpose", {c});
        const ValueId r = add(g, p + "/attention/context/Reshape", "Reshape", {t});
        const ValueId o = add(g, p + "/attention/output/MatMul", "MatMul", {r});
        const ValueId res = add(g, p + "/attention/residual/Add", "Add", {o, x});
        const ValueId ln2 = add(g, p + "/mlp/layer_norm/LayerNormalization", "LayerNormalization", {res});
        const ValueId f1 = add(g, p + "/mlp/fc1/MatMul", "MatMul", {ln2});
        const ValueId ge = add(g, p + "/mlp/gelu/Gelu", "Gelu", {f1});
        const ValueId f2 = add(g, p + "/mlp/fc2/MatMul", "MatMul", {ge});
        x = add(g, p + "/mlp/residual/Add", "Add", {f2, res});
    }
    g.setOutputs({x});
    return g;
}

Graph cnn(int targetNodes)
{
    Graph g("cnn");
    ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 8, 16, 16})));
    for (int b = 0; g.nodeCount() < std::size_t(targetNodes); ++b) {
        const std::string p = "block" + std::to_string(b) + "_";
        const ValueId c1 = add(g, p + "conv1", "Conv", {x});
        const ValueId r1 = add(g, p + "relu1", "Relu", {c1});
        const ValueId c2 = add(g, p + "conv2", "Conv", {r1});
        const ValueId s = add(g, p + "add", "Add", {c2, x});
        x = add(g, p + "relu2", "Relu", {s});
    }
    g.setOutputs({x});
    return g;
}

double ms(std::chrono::steady_clock::time_point since)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

layout::Point boxSize(const layout::VisualItem &item)
{
    // What the app measures with its fonts, approximately: 7 pt per character, 2 lines.
    const std::size_t chars = std::max(item.title.size(), std::min<std::size_t>(item.subtitle.size(), 48));
    return {std::max(70.0, 7.0 * double(chars) + 20.0), 40.0};
}

} // namespace

int main(int argc, char **argv)
{
    int fullMax = 5000;
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], "--full-max"))
            fullMax = std::atoi(argv[i + 1]);
    std::printf("%-12s %7s %14s %16s %14s %10s\n", "model", "nodes", "visible items", "first frame ms",
                "flat dot ms", "ratio");
    for (const char *kind : {"transformer", "cnn"})
        for (int n : {1000, 5000, 10000}) {
            const Graph g = std::string(kind) == "transformer" ? transformer(n) : cnn(n);
            // First frame: grouping, the initial expansion, presentation, dot on what is visible.
            auto t0 = std::chrono::steady_clock::now();
            const layout::Grouping grouping = layout::Grouping::build({&g});
            const layout::Presentation p = layout::present({&g}, grouping, grouping.initialExpansion(250));
            Expected<layout::LayoutResult> first =
                layout::layoutWithGraphviz(layout::layoutRequest(p, boxSize));
            const double firstMs = ms(t0);
            if (!first) {
                std::printf("layout failed: %s\n", first.status().message().c_str());
                return 1;
            }
            // Flat: every node at once (the fast dot settings the app would use).
            std::string flat = "skipped";
            double ratio = 0;
            if (int(g.nodeCount()) <= fullMax) {
                std::set<std::string> all{""};
                const layout::Grouping none = layout::Grouping::build({&g}, 1u << 30, 1u << 30);
                const layout::Presentation fp = layout::present({&g}, none, all);
                t0 = std::chrono::steady_clock::now();
                Expected<layout::LayoutResult> full =
                    layout::layoutWithGraphviz(layout::layoutRequest(fp, boxSize));
                const double fullMs = ms(t0);
                flat = full ? std::to_string(int(fullMs)) : "failed";
                ratio = fullMs / firstMs;
            }
            std::printf("%-12s %7zu %14zu %16.0f %14s %10s\n", kind, g.nodeCount(), p.items.size(), firstMs,
                        flat.c_str(), ratio > 0 ? (std::to_string(int(ratio)) + "x").c_str() : "");
            std::fflush(stdout);
        }
    return 0;
}
