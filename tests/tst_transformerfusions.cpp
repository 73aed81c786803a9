// layernorm-fusion and gelu-fusion on the forms exporters write, their lowering for both export
// targets (LayerNormalization below opset 17, com.microsoft Gelu/BiasGelu), and the negatives.

#include "onnx/modelio.h"
#include "passtest.h"
#include "testsupport.h"

#include <QTest>
#include <cmath>

using namespace opscope;
using namespace opscope::test;

class TestTransformerFusions : public QObject
{
    Q_OBJECT

private slots:
    void layerNorm_data()
    {
        QTest::addColumn<int>("opset");
        QTest::addColumn<QString>("square"); // Pow | Mul
        QTest::addColumn<QString>("divide"); // Div | Reciprocal
        QTest::addColumn<bool>("affine");
        QTest::addColumn<int>("axes"); // normalized trailing axes
        for (int opset : {13, 17})
            for (const char *sq : {"Pow", "Mul"})
                for (const char *dv : {"Div", "Reciprocal"})
                    for (bool affine : {true, false})
                        for (int axes : {1, 2})
                            QTest::addRow("opset%d %s %s %s axes%d", opset, sq, dv,
                                          affine ? "affine" : "plain", axes)
                                << opset << QString(sq) << QString(dv) << affine << axes;
    }
    void layerNorm()
    {
        QFETCH(int, opset);
        QFETCH(QString, square);
        QFETCH(QString, divide);
        QFETCH(bool, affine);
        QFETCH(int, axes);
        ModelBuilder b(opset);
        const std::vector<std::int64_t> reduce =
            axes == 1 ? std::vector<std::int64_t>{-1} : std::vector<std::int64_t>{-2, -1};
        b.input("x", {-1, 5, 8}).constant("eps", {}, {1e-5f}).constant("two", {}, {2.0f});
        b.op("ReduceMean", {"x"}, {"mean"}, {intsAttr("axes", reduce)}).op("Sub", {"x", "mean"}, {"d"});
        if (square == "Pow")
            b.op("Pow", {"d", "two"}, {"sq"});
        else
            b.op("Mul", {"d", "d"}, {"sq"});
        b.op("ReduceMean", {"sq"}, {"var"}, {intsAttr("axes", reduce)})
            .op("Add", {"var", "eps"}, {"ve"})
            .op("Sqrt", {"ve"}, {"sd"});
        if (divide == "Div")
            b.op("Div", {"d", "sd"}, {"n"});
        else
            b.op("Reciprocal", {"sd"}, {"r"}).op("Mul", {"d", "r"}, {"n"});
        const std::vector<std::int64_t> normShape =
            axes == 1 ? std::vector<std::int64_t>{8} : std::vector<std::int64_t>{5, 8};
        if (affine)
            b.randomConstant("gamma", normShape, 0.5f, 1.5f)
                .randomConstant("beta", normShape)
                .op("Mul", {"n", "gamma"}, {"s"})
                .op("Add", {"s", "beta"}, {"y"});
        else
            b.op("Relu", {"n"}, {"y"});
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"layernorm-fusion"}, {1, 3}, {1, 2, 7}, 1e-4, 1e-4);
        const std::string ln = opset >= 17 ? "LayerNormalization" : "ai.opscope::LayerNormalization";
        QCOMPARE(opCount(o.opsAfter, ln), 1);
        QCOMPARE(opCount(o.opsAfter, "ReduceMean"), 0);
        QCOMPARE(int(o.after.graph.nodeCount()), affine ? 1 : 2);

        const PassOutcome onnx = runAndCompare(o.after, {"lower-to-onnx"}, {2}, {3}, 1e-4, 1e-4);
        QCOMPARE(opCount(onnx.opsAfter, "ai.opscope::LayerNormalization"), 0);
        QCOMPARE(opCount(onnx.opsAfter, "LayerNormalization"), opset >= 17 ? 1 : 0);
        QCOMPARE(onnx.after.opsetVersion(""), std::int64_t(opset));
        QVERIFY(checkerFindings(onnx.after).empty());
        // ONNX Runtime's target keeps the fused op, raising opset 13 to 17.
        const PassOutcome ort = runAndCompare(o.after, {"lower-to-ort"}, {2}, {3}, 1e-4, 1e-4);
        QCOMPARE(opCount(ort.opsAfter, "LayerNormalization"), 1);
        QCOMPARE(ort.after.opsetVersion(""), std::int64_t(17));
        const auto findings = checkerFindings(ort.after);
        QVERIFY2(findings.empty(), findings.empty() ? "" : findings[0].c_str());
    }

    void layerNormNegative_data()
    {
        QTest::addColumn<QString>("why");
        QTest::newRow("mean over a leading axis") << "leading-axis";
        QTest::newRow("centred value read elsewhere") << "shared";
        QTest::newRow("different axes") << "axes-differ";
    }
    void layerNormNegative()
    {
        QFETCH(QString, why);
        ModelBuilder b(17);
        const std::vector<std::int64_t> first =
            why == "leading-axis" ? std::vector<std::int64_t>{1} : std::vector<std::int64_t>{-1};
        const std::vector<std::int64_t> second =
            why == "axes-differ" ? std::vector<std::int64_t>{-2, -1} : first;
        b.input("x", {-1, 5, 8}).constant("eps", {}, {1e-5f}).constant("two", {}, {2.0f});
        b.op("ReduceMean", {"x"}, {"mean"}, {intsAttr("axes", first)})
            .op("Sub", {"x", "mean"}, {"d"})
            .op("Pow", {"d", "two"}, {"sq"})
            .op("ReduceMean", {"sq"}, {"var"}, {intsAttr("axes", second)})
            .op("Add", {"var", "eps"}, {"ve"})
            .op("Sqrt", {"ve"}, {"sd"})
            .op("Div", {"d", "sd"}, {"y"})
            .output("y");
        if (why == "shared")
            b.op("Neg", {"d"}, {"nd"}).output("nd");
        const PassOutcome o = runAndCompare(b.build(), {"layernorm-fusion"});
        QCOMPARE(opCount(o.opsAfter, "LayerNormalization"), 0);
    }

    void gelu_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<int>("gelus");
        QTest::newRow("(x·(erf(x/√2)+1))·0.5") << "A" << 1;
        QTest::newRow("x·((erf(x/√2)+1)·0.5)") << "B" << 1;
        QTest::newRow("(x·0.5)·(erf(x/√2)+1)") << "C" << 1;
        QTest::newRow("x·(1/√2) form") << "D" << 1;
        QTest::newRow("0.6 instead of 0.5 (no)") << "wrong" << 0;
    }
    void gelu()
    {
        QFETCH(QString, form);
        QFETCH(int, gelus);
        ModelBuilder b;
        b.input("z", {-1, 6})
            .randomConstant("W", {6, 6})
            .randomConstant("bias", {6})
            .op("MatMul", {"z", "W"}, {"m"})
            .op("Add", {"m", "bias"}, {"x"})
            .constant("sqrt2", {}, {1.4142135f})
            .constant("rsqrt2", {}, {0.70710678f})
            .constant("one", {}, {1.0f})
            .constant("half", {}, {form == "wrong" ? 0.6f : 0.5f});
        if (form == "D")
            b.op("Mul", {"x", "rsqrt2"}, {"t"});
        else
            b.op("Div", {"x", "sqrt2"}, {"t"});
        b.op("Erf", {"t"}, {"e"}).op("Add", {"e", "one"}, {"a"});
        if (form == "B")
            b.op("Mul", {"a", "half"}, {"h"}).op("Mul", {"x", "h"}, {"y"});
        else if (form == "C")
            b.op("Mul", {"x", "half"}, {"xh"}).op("Mul", {"xh", "a"}, {"y"});
        else
            b.op("Mul", {"x", "a"}, {"xa"}).op("Mul", {"xa", "half"}, {"y"});
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"gelu-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::Gelu"), gelus);
        if (!gelus)
            return;
        QCOMPARE(opCount(o.opsAfter, "Erf"), 0);
        const PassOutcome onnx = runAndCompare(o.after, {"lower-to-onnx"});
        QCOMPARE(opCount(onnx.opsAfter, "Erf"), 1);
        QVERIFY(checkerFindings(onnx.after).empty());
        // With the bias Add in front, ONNX Runtime's BiasGelu takes both.
        const PassOutcome ort = runAndCompare(o.after, {"lower-to-ort"});
        QCOMPARE(opCount(ort.opsAfter, "com.microsoft::BiasGelu"), 1);
        QCOMPARE(opCount(ort.opsAfter, "Add"), 0);
        QVERIFY(checkerFindings(ort.after).empty());
    }
};

QTEST_GUILESS_MAIN(TestTransformerFusions)
#include "tst_transformerfusions.moc"
