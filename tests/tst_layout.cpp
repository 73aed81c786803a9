// layout-nhwc: which regions it converts and to which layout (NCHWc when every channel count fills
// the block, NHWC otherwise), conversions only at the borders (graph inputs and outputs keep NCHW),
// the cost decision and its note, cancelling inverse conversions, outputs equal before/after, and
// both export targets turning the model back into standard NCHW ops.

#include "passes/layoutnhwc.h"
#include "passes/passutil.h"
#include "passes/registry.h"
#include "passtest.h"

#include <QTest>

using namespace opscope;
using namespace opscope::test;

namespace {

onnx::AttributeProto pads1()
{
    return intsAttr("pads", {1, 1, 1, 1});
}

// x[N,C,8,8] ─► Conv+Relu ─► Conv ─► Add(x) ─► Relu ─► MaxPool ─► Conv ─┬─► Concat ─► y
//                                                                    └─► Conv ─┘
Model residualModel(std::int64_t c, bool intermediateOutput = false)
{
    ModelBuilder b;
    b.input("x", {-1, c, 8, 8});
    for (const char *w : {"W1", "W2", "W3", "W4"})
        b.randomConstant(w, {c, c, 3, 3}, -0.2f, 0.2f);
    b.randomConstant("B1", {c}, -0.1f, 0.1f);
    b.op("Conv", {"x", "W1", "B1"}, {"c1"}, {pads1()})
        .op("Relu", {"c1"}, {"r1"})
        .op("Conv", {"r1", "W2"}, {"c2"}, {pads1()})
        .op("Add", {"c2", "x"}, {"s"})
        .op("Relu", {"s"}, {"r2"})
        .op("MaxPool", {"r2"}, {"p"}, {intsAttr("kernel_shape", {2, 2}), intsAttr("strides", {2, 2})})
        .op("Conv", {"p", "W3"}, {"c3"}, {pads1()})
        .op("Conv", {"p", "W4"}, {"c4"}, {pads1()})
        .op("Concat", {"c3", "c4"}, {"y"}, {intAttr("axis", 1)})
        .output("y");
    if (intermediateOutput)
        b.output("r2");
    return b.build();
}

int layoutOps(const std::map<std::string, std::size_t> &ops)
{
    int n = 0;
    for (const auto &[op, count] : ops)
        if (op.rfind("ai.opscope::", 0) == 0)
            n += int(count);
    return n;
}

} // namespace

class TestLayout : public QObject
{
    Q_OBJECT

private slots:
    void regions_data()
    {
        QTest::addColumn<int>("channels");
        QTest::addColumn<QString>("prefix");
        QTest::newRow("32 channels: blocked") << 32 << "Nchwc";
        QTest::newRow("12 channels: channels last") << 12 << "Nhwc";
    }
    void regions()
    {
        QFETCH(int, channels);
        QFETCH(QString, prefix);
        const std::string p = "ai.opscope::" + prefix.toStdString();
        // Batch 1 converts with our loops, batch 8 (over 4,096 elements) with oneDNN's reorder.
        const PassOutcome o = runAndCompare(residualModel(channels), {"layout-nhwc"}, {1, 8});
        QCOMPARE(opCount(o.opsAfter, p + "Conv"), 4);
        QCOMPARE(opCount(o.opsAfter, p + "MaxPool"), 1);
        QCOMPARE(opCount(o.opsAfter, "Conv"), 0);
        // One conversion in (x, read by the first Conv and the residual Add), one out (y).
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderInput"), 1);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderOutput"), 1);
        QCOMPARE(opCount(o.opsAfter, "Add"), 1);
        QCOMPARE(opCount(o.opsAfter, "Concat"), 1);
        // The interface keeps its layout and names.
        const Graph &g = o.after.graph;
        QCOMPARE(g.value(g.outputs()[0]).name, std::string("y"));
        QCOMPARE(passes::knownRank(g, g.inputs()[0]).value_or(0), std::size_t(4));
        QCOMPARE(passes::knownDim(g, g.outputs()[0], 1).value_or(0),
                 std::int64_t(2 * channels)); // NCHW, concatenated
        const auto &notes = o.result.passes.back().notes;
        QCOMPARE(notes.size(), std::size_t(1));
        QVERIFY2(notes[0].find(prefix == "Nchwc" ? "NCHWc" : "NHWC") != std::string::npos, notes[0].c_str());

        // Both export targets: standard NCHW ops again, same outputs, checker clean.
        for (const char *target : {"lower-to-onnx", "lower-to-ort"}) {
            const PassOutcome l = runAndCompare(o.after, {target}, {2}, {3});
            QCOMPARE(layoutOps(l.opsAfter), 0);
            QCOMPARE(opCount(l.opsAfter, "Conv"), 4);
            QCOMPARE(opCount(l.opsAfter, "MaxPool"), 1);
            QCOMPARE(int(l.after.graph.nodeCount()), 9); // the model's own nodes, nothing added
            const auto findings = checkerFindings(l.after);
            QVERIFY2(findings.empty(), findings.empty() ? "" : findings[0].c_str());
        }
    }

    // BatchNormalization runs in the region's layout (its channel is the block lane or the last axis).
    void batchNorm_data() { regions_data(); }
    void batchNorm()
    {
        QFETCH(int, channels);
        QFETCH(QString, prefix);
        const std::int64_t c = channels;
        ModelBuilder b;
        b.input("x", {-1, c, 8, 8});
        for (const char *w : {"W1", "W2", "W3"})
            b.randomConstant(w, {c, c, 3, 3}, -0.2f, 0.2f);
        for (int i = 1; i <= 2; ++i) {
            const std::string n = std::to_string(i);
            b.randomConstant("g" + n, {c}, 0.5f, 1.5f)
                .randomConstant("b" + n, {c})
                .randomConstant("m" + n, {c})
                .randomConstant("v" + n, {c}, 0.5f, 2.0f);
        }
        b.op("Conv", {"x", "W1"}, {"c1"}, {pads1()})
            .op("BatchNormalization", {"c1", "g1", "b1", "m1", "v1"}, {"n1"})
            .op("Relu", {"n1"}, {"r1"})
            .op("Conv", {"r1", "W2"}, {"c2"}, {pads1()})
            .op("BatchNormalization", {"c2", "g2", "b2", "m2", "v2"}, {"n2"})
            .op("Conv", {"n2", "W3"}, {"y"}, {pads1()})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"layout-nhwc"});
        const std::string p = "ai.opscope::" + prefix.toStdString();
        QCOMPARE(opCount(o.opsAfter, p + "BatchNormalization"), 2);
        QCOMPARE(opCount(o.opsAfter, p + "Conv"), 3);
        QCOMPARE(opCount(o.opsAfter, "BatchNormalization"), 0);
        const PassOutcome l = runAndCompare(o.after, {"lower-to-onnx"}, {2}, {3});
        QCOMPARE(opCount(l.opsAfter, "BatchNormalization"), 2);
        QCOMPARE(layoutOps(l.opsAfter), 0);
    }

    // A squeeze-excitation block stays in the region: global pooling in the layout, the 1×1 convs
    // on [N,C,1,1], and the per-channel Mul broadcasting the same way in every layout.
    void squeezeExcitation_data() { regions_data(); }
    void squeezeExcitation()
    {
        QFETCH(int, channels);
        QFETCH(QString, prefix);
        const std::int64_t c = channels, r = channels / 2;
        ModelBuilder b;
        b.input("x", {-1, c, 8, 8})
            .randomConstant("W1", {c, c, 3, 3}, -0.2f, 0.2f)
            .randomConstant("Wr", {r, c, 1, 1}, -0.3f, 0.3f)
            .randomConstant("We", {c, r, 1, 1}, -0.3f, 0.3f)
            .randomConstant("W2", {c, c, 3, 3}, -0.2f, 0.2f)
            .op("Conv", {"x", "W1"}, {"c1"}, {pads1()})
            .op("Relu", {"c1"}, {"r1"})
            .op("GlobalAveragePool", {"r1"}, {"g"})
            .op("Conv", {"g", "Wr"}, {"sq"})
            .op("Relu", {"sq"}, {"sqr"})
            .op("Conv", {"sqr", "We"}, {"ex"})
            .op("HardSigmoid", {"ex"}, {"gate"})
            .op("Mul", {"r1", "gate"}, {"scaled"})
            .op("Conv", {"scaled", "W2"}, {"y"}, {pads1()})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"layout-nhwc"});
        const std::string p = "ai.opscope::" + prefix.toStdString();
        // The squeeze to C/2 channels does not fill a block of 16: only NHWC keeps the whole block.
        if (prefix == "Nchwc" && r % passes::nativeChannelBlock() != 0)
            QSKIP("C/2 does not fill this CPU's block: the region is NHWC (the other row)");
        QCOMPARE(opCount(o.opsAfter, p + "GlobalAveragePool"), 1);
        QCOMPARE(opCount(o.opsAfter, p + "Conv"), 4);
        QCOMPARE(opCount(o.opsAfter, "Mul"), 1);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderInput"), 1);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderOutput"), 1);
        const PassOutcome l = runAndCompare(o.after, {"lower-to-onnx"}, {2}, {3});
        QCOMPARE(opCount(l.opsAfter, "GlobalAveragePool"), 1);
        QCOMPARE(layoutOps(l.opsAfter), 0);
    }

    // A value the region computes is also a graph output: converted back there, name kept.
    void intermediateOutput()
    {
        const PassOutcome o = runAndCompare(residualModel(32, true), {"layout-nhwc"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderOutput"), 2);
        const Graph &g = o.after.graph;
        QCOMPARE(g.value(g.outputs()[1]).name, std::string("r2"));
    }

    // The first convolution of a blocked region reads 3-channel NCHW itself (no conversion).
    void firstConvReadsPlain()
    {
        ModelBuilder b;
        b.input("x", {-1, 3, 16, 16})
            .randomConstant("W1", {32, 3, 3, 3}, -0.3f, 0.3f)
            .randomConstant("W2", {32, 32, 3, 3}, -0.2f, 0.2f)
            .randomConstant("W3", {32, 32, 1, 1}, -0.2f, 0.2f)
            .op("Conv", {"x", "W1"}, {"c1"}, {pads1()})
            .op("Relu", {"c1"}, {"r1"})
            .op("Conv", {"r1", "W2"}, {"c2"}, {pads1()})
            .op("Sigmoid", {"c2"}, {"s2"})
            .op("Conv", {"s2", "W3"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"layout-nhwc"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::NchwcConv"), 3);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderInput"), 0);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderOutput"), 1);
        const PassOutcome l = runAndCompare(o.after, {"lower-to-onnx"}, {2}, {3});
        QCOMPARE(opCount(l.opsAfter, "Conv"), 3);
        QCOMPARE(layoutOps(l.opsAfter), 0);
    }

    // Fused convolutions keep their activation in the layout and back.
    void fusedConv()
    {
        const PassOutcome fused = runAndCompare(residualModel(16), {"conv-activation-fusion"});
        QCOMPARE(opCount(fused.opsAfter, "ai.opscope::FusedConv"), 1);
        const PassOutcome o = runAndCompare(fused.after, {"layout-nhwc"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::FusedConv"), 0);
        const PassOutcome l = runAndCompare(o.after, {"lower-to-ort"}, {2}, {3});
        QCOMPARE(opCount(l.opsAfter, "com.microsoft::FusedConv"), 1);
    }

    // PP-LCNet's learnable affine after every activation: once it is the convolution's post-op,
    // the chain is one region (not one region per convolution, too small to convert).
    void affinePostOpsJoinRegions_data() { regions_data(); }
    void affinePostOpsJoinRegions()
    {
        QFETCH(int, channels);
        QFETCH(QString, prefix);
        ModelBuilder b;
        b.input("x", {-1, channels, 8, 8}).constant("s", {1}, {0.6f}).constant("t", {1}, {0.1f});
        std::string v = "x";
        for (int i = 0; i < 4; ++i) {
            const std::string k = std::to_string(i);
            b.randomConstant("W" + k, {channels, channels, 3, 3}, -0.2f, 0.2f)
                .op("Conv", {v, "W" + k}, {"c" + k}, {pads1()})
                .op("HardSwish", {"c" + k}, {"h" + k})
                .op("Mul", {"h" + k, "s"}, {"m" + k})
                .op("Add", {"m" + k, "t"}, {"a" + k});
            v = "a" + k;
        }
        b.output(v);
        const PassOutcome o =
            runAndCompare(b.build(), {"conv-activation-fusion", "conv-affine-fusion", "layout-nhwc"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::" + prefix.toStdString() + "Conv"), 4);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderInput") +
                     opCount(o.opsAfter, "ai.opscope::ReorderOutput"),
                 2); // in and out, nothing between
        QCOMPARE(o.result.passes.back().notes.size(), std::size_t(1));
        for (const char *target : {"lower-to-onnx", "lower-to-ort"}) {
            const PassOutcome l = runAndCompare(o.after, {target}, {2}, {3});
            QCOMPARE(layoutOps(l.opsAfter) - opCount(l.opsAfter, "ai.opscope::FusedConv"), 0);
            QCOMPARE(opCount(l.opsAfter, "Mul"), 4);
        }
    }

    // A residual Add whose operands' H and W are symbols shape inference cannot prove equal (after
    // a strided convolution on a dynamic-size input) still joins the region: both operands are
    // converted alike, so their broadcasting is the same as in NCHW.
    void residualAddWithSymbolicSpatialDims_data() { regions_data(); }
    void residualAddWithSymbolicSpatialDims()
    {
        QFETCH(int, channels);
        QFETCH(QString, prefix);
        ModelBuilder b;
        b.input("x", {-1, channels, -1, -1});
        for (const char *w : {"W1", "W2", "W3", "W4"})
            b.randomConstant(w, {channels, channels, 3, 3}, -0.2f, 0.2f);
        b.op("Conv", {"x", "W1"}, {"a"}, {pads1(), intsAttr("strides", {2, 2})})
            .op("Relu", {"a"}, {"ar"})
            .op("Conv", {"ar", "W2"}, {"c"}, {pads1()})
            .op("Relu", {"c"}, {"cr"})
            .op("Conv", {"cr", "W3"}, {"d"}, {pads1()})
            .op("Add", {"ar", "d"}, {"s"})
            .op("Conv", {"s", "W4"}, {"y"}, {pads1()})
            .output("y");
        // Every -1 is the symbol N: batch and spatial size bound together (5 and 8).
        const PassOutcome o = runAndCompare(b.build(), {"layout-nhwc"}, {5, 8}, {1, 2});
        QCOMPARE(o.result.passes.back().notes.size(), std::size_t(1));
        QCOMPARE(opCount(o.opsAfter, "Add"), 1);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderOutput"), 1);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::" + prefix.toStdString() + "Conv"), 4);
    }

    // One convolution alone: its conversions would cost what they save.
    void loneConvStays()
    {
        ModelBuilder b;
        b.input("x", {-1, 16, 8, 8})
            .randomConstant("W", {16, 16, 3, 3})
            .op("Conv", {"x", "W"}, {"y"}, {pads1()})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"layout-nhwc"});
        QVERIFY(!o.result.passes.back().changed);
        QCOMPARE(opCount(o.opsAfter, "Conv"), 1);
        const std::string &note = o.result.passes.back().notes.at(0);
        QVERIFY2(note.find("stays NCHW (") != std::string::npos, note.c_str()); // and says why
        QVERIFY2(note.find("needs 3 convolutions") != std::string::npos ||
                     note.find("does not exceed the conversions") != std::string::npos,
                 note.c_str());
    }

    // Pads that pad-fusion leaves (reflect before a Conv, a non-zero value before a MaxPool, the
    // opset-2 attribute form) run inside the region with their pads permuted or blocked: no
    // conversion out and back in around them; the export targets put the NCHW pads back.
    void padsJoinRegions_data()
    {
        QTest::addColumn<int>("channels");
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<int>("opset");
        for (int opset : {17, 10})
            for (const auto &[c, prefix] : {std::pair{32, "Nchwc"}, std::pair{12, "Nhwc"}})
                QTest::addRow("%d channels, opset %d", c, opset) << c << QString(prefix) << opset;
    }
    void padsJoinRegions()
    {
        QFETCH(int, channels);
        QFETCH(QString, prefix);
        QFETCH(int, opset);
        const std::string p = "ai.opscope::" + prefix.toStdString();
        const auto pad = [&](ModelBuilder &b, const char *in, const char *out, std::vector<std::int64_t> pads,
                             const char *mode, float value) {
            if (opset >= 11) {
                b.intConstant(std::string(out) + "_p", {8}, pads)
                    .constant(std::string(out) + "_v", {}, {value})
                    .op("Pad", {in, std::string(out) + "_p", std::string(out) + "_v"}, {out}, {stringAttr("mode", mode)});
            } else {
                b.op("Pad", {in}, {out}, {stringAttr("mode", mode), intsAttr("pads", pads), floatAttr("value", value)});
            }
        };
        ModelBuilder b(opset);
        const std::int64_t c = channels;
        b.input("x", {-1, c, 9, 7});
        for (const char *w : {"W1", "W2", "W3"})
            b.randomConstant(w, {c, c, 3, 3}, -0.2f, 0.2f);
        b.op("Conv", {"x", "W1"}, {"c1"}, {pads1()}).op("Relu", {"c1"}, {"r1"});
        pad(b, "r1", "p1", {0, 0, 1, 1, 0, 0, 1, 1}, "reflect", 0.0f);
        b.op("Conv", {"p1", "W2"}, {"c2"});
        pad(b, "c2", "p2", {0, 0, 0, 1, 0, 0, 2, 0}, "constant", 0.5f);
        b.op("MaxPool", {"p2"}, {"m"}, {intsAttr("kernel_shape", {2, 2}), intsAttr("strides", {2, 2})});
        pad(b, "m", "p3", {0, 0, 1, 0, 0, 0, 0, 1}, "edge", 0.0f);
        b.op("Conv", {"p3", "W3"}, {"y"}, {pads1()}).output("y");
        const PassOutcome o = runAndCompare(b.build(), {"layout-nhwc"}, {1, 3});
        QCOMPARE(opCount(o.opsAfter, p + "Conv"), 3);
        QCOMPARE(opCount(o.opsAfter, "Pad"), 3);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderInput"), 1);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ReorderOutput"), 1);
        for (const char *target : {"lower-to-onnx", "lower-to-ort"}) {
            const PassOutcome l = runAndCompare(o.after, {target}, {2}, {3});
            QCOMPARE(layoutOps(l.opsAfter), 0);
            QCOMPARE(opCount(l.opsAfter, "Pad"), 3);
            const auto findings = checkerFindings(l.after);
            QVERIFY2(findings.empty(), findings.empty() ? "" : findings[0].c_str());
        }
    }

    // ReorderInput(ReorderOutput(v)) is v.
    void inverseConversionsCancel()
    {
        ModelBuilder b;
        auto *o = b.proto().add_opset_import();
        o->set_domain("ai.opscope");
        o->set_version(1);
        const auto blocked =
            std::vector<onnx::AttributeProto>{stringAttr("layout", "nchwc"), intAttr("block", 8)};
        b.input("x", {-1, 16, 4, 4})
            .op("ReorderInput", {"x"}, {"a"}, blocked, "ai.opscope")
            .op("ReorderOutput", {"a"}, {"b"}, {stringAttr("layout", "nchwc")}, "ai.opscope")
            .op("ReorderInput", {"b"}, {"c"}, blocked, "ai.opscope")
            .op("ReorderOutput", {"c"}, {"y"}, {stringAttr("layout", "nchwc")}, "ai.opscope")
            .output("y");
        Model m = b.build();
        // The builder's model has no types for the ai.opscope outputs; give them the layout's.
        for (const char *v : {"a", "c"})
            m.graph.value(m.graph.findValue(v)).type =
                TypeInfo::tensor(DataType::Float, Shape::fromSizes({1, 2, 4, 4, 8}));
        const PassOutcome r = runAndCompare(m, {"layout-nhwc"}, {1}, {1});
        QCOMPARE(opCount(r.opsAfter, "ai.opscope::ReorderInput"), 1);
        QCOMPARE(opCount(r.opsAfter, "ai.opscope::ReorderOutput"), 1);
    }

    // The whole `layout` level on the residual model, then both targets.
    void layoutLevel()
    {
        Expected<std::vector<std::string>> list =
            passes::resolvePipeline({.level = "layout", .target = "none"});
        QVERIFY(list);
        QVERIFY(std::find(list->begin(), list->end(), "layout-nhwc") != list->end());
        const PassOutcome o = runAndCompare(residualModel(32), *list);
        QVERIFY(opCount(o.opsAfter, "ai.opscope::NchwcConv") > 0);
        QVERIFY(passes::nativeChannelBlock() == 8 || passes::nativeChannelBlock() == 16);
    }
};

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_layout.moc"
