// The fusion, replacement and forwarding passes, and the export lowering: op counts, numeric
// equality before/after on random inputs, the negative cases, and the lowered model passing
// onnx::checker.

#include "onnx/modelio.h"
#include "passtest.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>

using namespace opscope;
using namespace opscope::test;

namespace {

// x[N,3,8,8] → Conv(W[4,3,3,3], B) → c
ModelBuilder convModel(bool bias = true)
{
    ModelBuilder b;
    b.input("x", {-1, 3, 8, 8}).randomConstant("W", {4, 3, 3, 3});
    if (bias)
        b.randomConstant("B", {4});
    b.op("Conv", bias ? std::vector<std::string>{"x", "W", "B"} : std::vector<std::string>{"x", "W"}, {"c"},
         {intsAttr("pads", {1, 1, 1, 1})});
    return b;
}

ModelBuilder &batchNorm(ModelBuilder &b, const std::string &in, const std::string &out, std::int64_t c)
{
    return b.randomConstant(out + "_gamma", {c}, 0.5f, 1.5f)
        .randomConstant(out + "_beta", {c})
        .randomConstant(out + "_mean", {c})
        .randomConstant(out + "_var", {c}, 0.5f, 2.0f)
        .op("BatchNormalization", {in, out + "_gamma", out + "_beta", out + "_mean", out + "_var"}, {out},
            {floatAttr("epsilon", 1e-3f)});
}

} // namespace

class TestFusions : public QObject
{
    Q_OBJECT

private slots:
    void convBn_data()
    {
        QTest::addColumn<bool>("bias");
        QTest::newRow("with bias") << true;
        QTest::newRow("without bias") << false;
    }
    void convBn()
    {
        QFETCH(bool, bias);
        ModelBuilder b = convModel(bias);
        batchNorm(b, "c", "y", 4).output("y");
        const PassOutcome o = runAndCompare(b.build(), {"conv-bn-fusion"});
        QCOMPARE(opCount(o.opsAfter, "BatchNormalization"), 0);
        QCOMPARE(opCount(o.opsAfter, "Conv"), 1);
        QCOMPARE(o.result.passes[0].changes.matches.size(), std::size_t(1));
        QCOMPARE(o.result.passes[0].changes.matches[0].matched.size(), std::size_t(2));
    }

    void convBnNegative_data()
    {
        QTest::addColumn<QString>("why");
        QTest::newRow("conv output read twice") << "shared";
        QTest::newRow("weights not constant") << "dynamic-weights";
    }
    void convBnNegative()
    {
        QFETCH(QString, why);
        ModelBuilder b;
        if (why == "shared") {
            b = convModel();
            batchNorm(b, "c", "bn", 4).op("Add", {"bn", "c"}, {"y"}).output("y");
        } else {
            b.input("x", {-1, 3, 8, 8}).input("W", {4, 3, 3, 3}).op("Conv", {"x", "W"}, {"c"});
            batchNorm(b, "c", "y", 4).output("y");
        }
        const PassOutcome o = runAndCompare(b.build(), {"conv-bn-fusion"});
        QCOMPARE(opCount(o.opsAfter, "BatchNormalization"), 1);
        QVERIFY(!o.result.passes[0].changed);
        QVERIFY(!o.result.passes[0].snapshot);
    }

    void convAddAndMul_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QList<qint64>>("shape");
        QTest::addColumn<int>("remaining"); // Add/Mul nodes left
        for (const char *op : {"Add", "Mul"}) {
            QTest::addRow("%s [C,1,1]", op) << QString(op) << QList<qint64>{4, 1, 1} << 0;
            QTest::addRow("%s [1,C,1,1]", op) << QString(op) << QList<qint64>{1, 4, 1, 1} << 0;
            QTest::addRow("%s scalar", op) << QString(op) << QList<qint64>{} << 0;
            QTest::addRow("%s per-pixel (no)", op) << QString(op) << QList<qint64>{4, 8, 8} << 1;
            QTest::addRow("%s broadcasting rank 5 (no)", op)
                << QString(op) << QList<qint64>{2, 1, 4, 1, 1} << 1;
        }
    }
    void convAddAndMul()
    {
        QFETCH(QString, op);
        QFETCH(QList<qint64>, shape);
        QFETCH(int, remaining);
        ModelBuilder b = convModel();
        const std::vector<std::int64_t> dims(shape.begin(), shape.end());
        b.randomConstant("k", dims, 0.5f, 1.5f).op(op.toStdString(), {"c", "k"}, {"y"}).output("y");
        const PassOutcome o = runAndCompare(b.build(), {op == "Add" ? "conv-add-fusion" : "conv-mul-fusion"});
        QCOMPARE(opCount(o.opsAfter, op.toStdString()), remaining);
    }

    void convActivation_data()
    {
        QTest::addColumn<QString>("act");
        for (const char *a : {"Relu", "LeakyRelu", "Clip", "HardSigmoid", "Sigmoid", "Tanh", "HardSwish"})
            QTest::newRow(a) << QString(a);
    }
    void convActivation()
    {
        QFETCH(QString, act);
        ModelBuilder b = convModel();
        const std::string a = act.toStdString();
        if (a == "Clip")
            b.constant("lo", {}, {0.0f}).constant("hi", {}, {0.5f}).op("Clip", {"c", "lo", "hi"}, {"y"});
        else if (a == "LeakyRelu")
            b.op(a, {"c"}, {"y"}, {floatAttr("alpha", 0.2f)});
        else
            b.op(a, {"c"}, {"y"});
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"conv-activation-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::FusedConv"), 1);
        QCOMPARE(o.after.graph.nodeCount(), std::size_t(1));
        // Both export targets run with the same outputs and pass the checker.
        for (const char *target : {"lower-to-onnx", "lower-to-ort"}) {
            const PassOutcome lowered = runAndCompare(o.after, {target}, {2}, {3});
            QCOMPARE(opCount(lowered.opsAfter, "ai.opscope::FusedConv"), 0);
            const bool ortKeeps = std::string(target) == "lower-to-ort" && a != "HardSwish";
            QCOMPARE(opCount(lowered.opsAfter, "com.microsoft::FusedConv"), ortKeeps ? 1 : 0);
            QCOMPARE(opCount(lowered.opsAfter, "Conv"), ortKeeps ? 0 : 1);
            QTemporaryDir dir;
            const auto path = std::filesystem::path(dir.path().toStdString()) / "m.onnx";
            QVERIFY(saveModel(lowered.after, path));
            Expected<ImportResult> back = loadModel(path);
            QVERIFY(back);
            for (const std::string &w : back->warnings)
                QVERIFY2(w.find("checker") == std::string::npos, w.c_str());
        }
    }

    void gemmActivation()
    {
        ModelBuilder b;
        b.input("x", {-1, 6}).randomConstant("W", {5, 6}).randomConstant("B", {5});
        b.op("Gemm", {"x", "W", "B"}, {"g"}, {intAttr("transB", 1)})
            .op("LeakyRelu", {"g"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"gemm-activation-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::FusedGemm"), 1);
        const PassOutcome ort = runAndCompare(o.after, {"lower-to-ort"});
        QCOMPARE(opCount(ort.opsAfter, "com.microsoft::FusedGemm"), 1);
        const PassOutcome onnx = runAndCompare(o.after, {"lower-to-onnx"});
        QCOMPARE(opCount(onnx.opsAfter, "Gemm"), 1);
        QCOMPARE(opCount(onnx.opsAfter, "LeakyRelu"), 1);
    }

    void matMulAdd_data()
    {
        QTest::addColumn<QList<qint64>>("xShape");
        QTest::addColumn<QList<qint64>>("biasShape");
        QTest::addColumn<QString>("expect");
        QTest::newRow("2-D, bias [N]") << QList<qint64>{3, 6} << QList<qint64>{5} << "Gemm";
        QTest::newRow("2-D, bias [M,N]") << QList<qint64>{3, 6} << QList<qint64>{3, 5} << "Gemm";
        QTest::newRow("3-D, bias [N]")
            << QList<qint64>{-1, 3, 6} << QList<qint64>{5} << "ai.opscope::FusedMatMul";
        QTest::newRow("3-D, bias [1,1,N]")
            << QList<qint64>{-1, 3, 6} << QList<qint64>{1, 1, 5} << "ai.opscope::FusedMatMul";
        QTest::newRow("3-D, bias [M,N] (no)") << QList<qint64>{-1, 3, 6} << QList<qint64>{3, 5} << "Add";
    }
    void matMulAdd()
    {
        QFETCH(QList<qint64>, xShape);
        QFETCH(QList<qint64>, biasShape);
        QFETCH(QString, expect);
        ModelBuilder b;
        b.input("x", std::vector<std::int64_t>(xShape.begin(), xShape.end()))
            .randomConstant("W", {6, 5})
            .randomConstant("bias", std::vector<std::int64_t>(biasShape.begin(), biasShape.end()))
            .op("MatMul", {"x", "W"}, {"m"})
            .op("Add", {"m", "bias"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"matmul-add-fusion"});
        QCOMPARE(opCount(o.opsAfter, expect.toStdString()), 1);
        const PassOutcome lowered = runAndCompare(o.after, {"lower-to-ort"});
        QCOMPARE(opCount(lowered.opsAfter, "ai.opscope::FusedMatMul"), 0);
    }

    void matMulScale_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<QString>("expect");
        QTest::newRow("constant weights, scale after") << "weights-after"
                                                       << "MatMul";
        QTest::newRow("constant weights, scale before") << "weights-before"
                                                        << "MatMul";
        QTest::newRow("two inputs, Div after") << "dynamic-div"
                                               << "ai.opscope::FusedMatMul";
        QTest::newRow("two inputs, scale before") << "dynamic-before"
                                                  << "ai.opscope::FusedMatMul";
    }
    void matMulScale()
    {
        QFETCH(QString, form);
        QFETCH(QString, expect);
        ModelBuilder b;
        b.input("q", {-1, 4, 8}).constant("s", {}, {0.125f});
        const std::string f = form.toStdString();
        if (f == "weights-after")
            b.randomConstant("k", {8, 4}).op("MatMul", {"q", "k"}, {"m"}).op("Mul", {"m", "s"}, {"y"});
        else if (f == "weights-before")
            b.randomConstant("k", {8, 4}).op("Mul", {"q", "s"}, {"qs"}).op("MatMul", {"qs", "k"}, {"y"});
        else if (f == "dynamic-div")
            b.input("k", {-1, 8, 4}).op("MatMul", {"q", "k"}, {"m"}).op("Div", {"m", "s"}, {"y"});
        else
            b.input("k", {-1, 8, 4}).op("Mul", {"s", "q"}, {"qs"}).op("MatMul", {"qs", "k"}, {"y"});
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"matmul-scale-fusion"});
        QCOMPARE(opCount(o.opsAfter, "Mul") + opCount(o.opsAfter, "Div"), 0);
        QCOMPARE(opCount(o.opsAfter, expect.toStdString()), 1);
        runAndCompare(o.after, {"lower-to-onnx"});
        runAndCompare(o.after, {"lower-to-ort"});
    }

    void bnScaleAndBnToScale()
    {
        ModelBuilder b;
        b.input("x", {-1, 4, 5, 5});
        batchNorm(b, "x", "bn", 4).randomConstant("k", {4, 1, 1}).op("Mul", {"bn", "k"}, {"y"}).output("y");
        const PassOutcome o = runAndCompare(b.build(), {"bn-scale-fusion"});
        QCOMPARE(opCount(o.opsAfter, "Mul"), 0);
        QCOMPARE(opCount(o.opsAfter, "BatchNormalization"), 1);

        // A BN that only shifts (scale 1, var 1 - eps) becomes an Add; one that does more stays.
        ModelBuilder s;
        s.input("x", {-1, 2, 3})
            .constant("g", {2}, {1.0f, 1.0f})
            .constant("beta", {2}, {0.5f, -1.0f})
            .constant("mean", {2}, {0.0f, 0.0f})
            .constant("var", {2}, {1.0f, 1.0f})
            .op("BatchNormalization", {"x", "g", "beta", "mean", "var"}, {"y"}, {floatAttr("epsilon", 0.0f)})
            .output("y");
        const PassOutcome shift = runAndCompare(s.build(), {"bn-to-scale"});
        QCOMPARE(opCount(shift.opsAfter, "Add"), 1);
        QCOMPARE(opCount(shift.opsAfter, "BatchNormalization"), 0);
        ModelBuilder full;
        full.input("x", {-1, 4, 5, 5});
        batchNorm(full, "x", "y", 4).output("y");
        const PassOutcome kept = runAndCompare(full.build(), {"bn-to-scale"});
        QCOMPARE(opCount(kept.opsAfter, "BatchNormalization"), 1);
    }

    void matMulBn()
    {
        ModelBuilder b;
        b.input("x", {-1, 6}).randomConstant("W", {6, 4}).op("MatMul", {"x", "W"}, {"m"});
        batchNorm(b, "m", "y", 4).output("y");
        const PassOutcome o = runAndCompare(b.build(), {"matmul-bn-fusion"});
        QCOMPARE(opCount(o.opsAfter, "Gemm"), 1);
        QCOMPARE(o.after.graph.nodeCount(), std::size_t(1));
    }

    void preluToLeakyRelu_data()
    {
        QTest::addColumn<QList<qint64>>("slopeShape");
        QTest::addColumn<int>("leaky");
        QTest::newRow("scalar") << QList<qint64>{} << 1;
        QTest::newRow("[1]") << QList<qint64>{1} << 1;
        QTest::newRow("per channel (no)") << QList<qint64>{4, 1, 1} << 0;
    }
    void preluToLeakyRelu()
    {
        QFETCH(QList<qint64>, slopeShape);
        QFETCH(int, leaky);
        ModelBuilder b;
        b.input("x", {-1, 4, 3, 3})
            .randomConstant("slope", std::vector<std::int64_t>(slopeShape.begin(), slopeShape.end()), 0.05f,
                            0.3f)
            .op("PRelu", {"x", "slope"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"prelu-to-leakyrelu"});
        QCOMPARE(opCount(o.opsAfter, "LeakyRelu"), leaky);
    }

    void channelShuffle()
    {
        ModelBuilder b;
        b.input("x", {-1, 6, 4, 5})
            .intConstant("split", {5}, {0, 2, 3, 4, 5})
            .intConstant("merge", {4}, {0, 6, 4, 5})
            .op("Reshape", {"x", "split"}, {"r"})
            .op("Transpose", {"r"}, {"t"}, {intsAttr("perm", {0, 2, 1, 3, 4})})
            .op("Reshape", {"t", "merge"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"channel-shuffle-canonicalization"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::ChannelShuffle"), 1);
        QCOMPARE(o.after.graph.nodeCount(), std::size_t(1));
        const PassOutcome lowered = runAndCompare(o.after, {"lower-to-onnx"});
        QCOMPARE(opCount(lowered.opsAfter, "Transpose"), 1);
        QVERIFY(lowered.after.opsetVersion("ai.opscope") < 0);
    }

    void elementwiseForward_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("reader");
        QTest::addColumn<bool>("moves");
        QTest::newRow("Relu → Slice") << "Relu"
                                      << "Slice" << true;
        QTest::newRow("Mul(scalar) → Gather") << "Mul"
                                              << "Gather" << true;
        QTest::newRow("Relu read twice (no)") << "Relu-shared"
                                              << "Slice" << false;
        // The [1,1] constant would broadcast the rank-1 row back to rank 2 (found by tst_passfuzz).
        QTest::newRow("Mul([1,1]) → scalar-index Gather (no)") << "Mul-rank2"
                                                                << "Gather-scalar" << false;
    }
    void elementwiseForward()
    {
        QFETCH(QString, op);
        QFETCH(QString, reader);
        QFETCH(bool, moves);
        ModelBuilder b;
        b.input("x", {-1, 8}).constant("s", {}, {2.0f}).intConstant("idx", {2}, {1, 5});
        b.intConstant("st", {1}, {2}).intConstant("en", {1}, {6}).intConstant("ax", {1}, {1});
        b.constant("s11", {1, 1}, {2.0f}).intConstant("one", {}, {1});
        if (op == "Mul")
            b.op("Mul", {"x", "s"}, {"e"});
        else if (op == "Mul-rank2")
            b.op("Mul", {"x", "s11"}, {"e"});
        else
            b.op("Relu", {"x"}, {"e"});
        if (reader == "Gather")
            b.op("Gather", {"e", "idx"}, {"y"}, {intAttr("axis", 1)});
        else if (reader == "Gather-scalar")
            b.op("Gather", {"e", "one"}, {"y"}, {intAttr("axis", 1)});
        else
            b.op("Slice", {"e", "st", "en", "ax"}, {"y"});
        b.output("y");
        if (op == "Relu-shared")
            b.output("e");
        const PassOutcome o = runAndCompare(b.build(), {"elementwise-forward"});
        const Graph &g = o.after.graph;
        const NodeId producer = g.producer(g.findValue("y"));
        QVERIFY(producer.valid());
        const std::string last = g.node(producer).opType;
        QCOMPARE(last == (reader.startsWith("Gather") ? "Gather" : "Slice"), !moves);
    }
};

QTEST_GUILESS_MAIN(TestFusions)
#include "tst_fusions.moc"
