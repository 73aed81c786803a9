// The extended fusions on the forms exporters write — global-pool, swish, hardswish, conv-affine, prelu,
// matmul-transpose, eltwise, the tanh GELU and RMSNorm — each with op counts, outputs equal before
// and after on random inputs, negatives, and both export targets (outputs equal again, the ONNX
// target passes onnx::checker).

#include "passtest.h"

#include <QTest>

using namespace opscope;
using namespace opscope::test;

namespace {

// Lowers `optimized` for both targets and checks each still computes the same.
struct Lowered
{
    PassOutcome onnx, ort;
};
Lowered lowerBoth(const Model &optimized)
{
    Lowered l{runAndCompare(optimized, {"lower-to-onnx"}, {2}, {3}),
              runAndCompare(optimized, {"lower-to-ort"}, {2}, {3})};
    const auto findings = checkerFindings(l.onnx.after);
    if (!findings.empty())
        QTest::qFail(("checker: " + findings[0]).c_str(), __FILE__, __LINE__);
    if (opCount(l.onnx.opsAfter, "ai.opscope::Swish") + opCount(l.onnx.opsAfter, "ai.opscope::Eltwise") +
            opCount(l.ort.opsAfter, "ai.opscope::Eltwise") +
            opCount(l.ort.opsAfter, "ai.opscope::HardSwish") !=
        0)
        QTest::qFail("an ai.opscope op survived lowering", __FILE__, __LINE__);
    return l;
}

} // namespace

class TestExtendedFusions : public QObject
{
    Q_OBJECT

private slots:
    void globalPool_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("keepdims");
        QTest::addColumn<QString>("axes");
        QTest::addColumn<int>("opset");
        QTest::addColumn<int>("fused");
        for (const char *op : {"ReduceMean", "ReduceMax"})
            for (int keep : {0, 1})
                for (const char *axes : {"2,3", "-1,-2"})
                    for (int opset : {13, 18})
                        QTest::addRow("%s keepdims=%d axes=%s opset%d", op, keep, axes, opset)
                            << QString(op) << keep << QString(axes) << opset << 1;
        QTest::newRow("channel axis too (no)") << "ReduceMean" << 1 << "1,2,3" << 13 << 0;
        QTest::newRow("one spatial axis (no)") << "ReduceMean" << 1 << "3" << 13 << 0;
    }
    void globalPool()
    {
        QFETCH(QString, op);
        QFETCH(int, keepdims);
        QFETCH(QString, axes);
        QFETCH(int, opset);
        QFETCH(int, fused);
        std::vector<std::int64_t> a;
        for (const QString &s : axes.split(','))
            a.push_back(s.toLongLong());
        ModelBuilder b(opset);
        b.input("x", {-1, 4, 5, 6});
        if (opset >= 18) {
            b.intConstant("axes", {std::int64_t(a.size())}, a);
            b.op(op.toStdString(), {"x", "axes"}, {"r"}, {intAttr("keepdims", keepdims)});
        } else {
            b.op(op.toStdString(), {"x"}, {"r"}, {intsAttr("axes", a), intAttr("keepdims", keepdims)});
        }
        b.op("Relu", {"r"}, {"y"}).output("y");
        const PassOutcome o = runAndCompare(b.build(), {"global-pool-fusion"});
        const std::string pool = op == "ReduceMean" ? "GlobalAveragePool" : "GlobalMaxPool";
        QCOMPARE(opCount(o.opsAfter, pool), fused);
        QCOMPARE(opCount(o.opsAfter, op.toStdString()), 1 - fused);
        QCOMPARE(opCount(o.opsAfter, "Flatten"), fused && !keepdims ? 1 : 0);
        if (fused)
            QVERIFY(checkerFindings(o.after).empty());
    }

    void padFusion_data()
    {
        // pads as [N,C,H,W begins, N,C,H,W ends]; `fused` 1 when the Pad becomes the op's pads.
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("pads");
        QTest::addColumn<int>("opset");
        QTest::addColumn<float>("value");
        QTest::addColumn<int>("fused");
        for (int opset : {10, 13}) // pads as an attribute (Pad-2), as an input (Pad-11+)
            for (const char *op : {"Conv", "DepthwiseConv", "AveragePool"}) {
                QTest::addRow("%s tf2onnx SAME stride 2, opset %d", op, opset) << op << "0,0,0,0,0,0,1,1" << opset << 0.0f << 1;
                QTest::addRow("%s symmetric, opset %d", op, opset) << op << "0,0,2,1,0,0,2,1" << opset << 0.0f << 1;
            }
        QTest::newRow("Conv, pad value 1 (no)") << "Conv" << "0,0,1,1,0,0,1,1" << 13 << 1.0f << 0;
        QTest::newRow("Conv, batch padding (no)") << "Conv" << "1,0,1,1,0,0,1,1" << 13 << 0.0f << 0;
        QTest::newRow("Conv, a crop (no)") << "Conv" << "0,0,-1,0,0,0,1,1" << 13 << 0.0f << 0;
        QTest::newRow("MaxPool pads with -inf (no)") << "MaxPool" << "0,0,1,1,0,0,1,1" << 13 << 0.0f << 0;
    }

    void padFusion()
    {
        QFETCH(QString, op);
        QFETCH(QString, pads);
        QFETCH(int, opset);
        QFETCH(float, value);
        QFETCH(int, fused);
        std::vector<std::int64_t> p;
        for (const QString &v : pads.split(','))
            p.push_back(v.toLongLong());
        ModelBuilder b(opset);
        b.input("x", {-1, 4, 9, 9});
        if (opset >= 11) {
            b.intConstant("pads", {8}, p);
            b.constant("value", {}, {value});
            b.op("Pad", {"x", "pads", "value"}, {"padded"});
        } else {
            b.op("Pad", {"x"}, {"padded"}, {intsAttr("pads", p), floatAttr("value", value)});
        }
        const std::string type = op == "DepthwiseConv" ? "Conv" : op.toStdString();
        if (type == "Conv") {
            const bool depthwise = op == "DepthwiseConv";
            b.randomConstant("w", {4, depthwise ? 1 : 4, 3, 3}).randomConstant("bias", {4});
            b.op("Conv", {"padded", "w", "bias"}, {"y"},
                 {intsAttr("strides", {2, 2}), intsAttr("pads", {1, 0, 0, 1}), intAttr("group", depthwise ? 4 : 1)});
        } else if (type == "AveragePool") {
            b.op("AveragePool", {"padded"}, {"y"},
                 {intsAttr("kernel_shape", {3, 3}), intsAttr("strides", {2, 2}), intAttr("count_include_pad", 1)});
        } else {
            b.op(type, {"padded"}, {"y"}, {intsAttr("kernel_shape", {3, 3})});
        }
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"pad-fusion"});
        QCOMPARE(opCount(o.opsAfter, "Pad"), 1 - fused);
        QCOMPARE(opCount(o.opsAfter, type), 1);
        if (fused)
            QVERIFY(checkerFindings(o.after).empty());
    }

    void swish_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<int>("fused");
        QTest::newRow("x·Sigmoid(x)") << "silu" << 1;
        QTest::newRow("Sigmoid(x)·x") << "silu-swapped" << 1;
        QTest::newRow("x·Sigmoid(1.702·x)") << "beta" << 1;
        QTest::newRow("Sigmoid read elsewhere (no)") << "shared" << 0;
        QTest::newRow("y·Sigmoid(x) (no)") << "other" << 0;
    }
    void swish()
    {
        QFETCH(QString, form);
        QFETCH(int, fused);
        ModelBuilder b;
        b.input("x", {-1, 8}).input("z", {-1, 8}).constant("beta", {}, {1.702f});
        if (form == "beta")
            b.op("Mul", {"x", "beta"}, {"bx"}).op("Sigmoid", {"bx"}, {"s"});
        else
            b.op("Sigmoid", {"x"}, {"s"});
        if (form == "silu-swapped")
            b.op("Mul", {"s", "x"}, {"y"});
        else
            b.op("Mul", {form == "other" ? "z" : "x", "s"}, {"y"});
        b.output("y");
        if (form == "shared")
            b.output("s");
        const PassOutcome o = runAndCompare(b.build(), {"swish-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::Swish"), fused);
        if (!fused)
            return;
        QCOMPARE(opCount(o.opsAfter, "Sigmoid"), 0);
        const Lowered l = lowerBoth(o.after);
        QCOMPARE(opCount(l.onnx.opsAfter, "Sigmoid"), 1);
        QCOMPARE(opCount(l.ort.opsAfter, "com.microsoft::QuickGelu"), 1);
    }

    void hardSwish_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<int>("opset");
        QTest::addColumn<int>("fused");
        for (int opset : {11, 14}) {
            QTest::addRow("x·HardSigmoid(x) opset%d", opset) << "hardsigmoid" << opset << 1;
            QTest::addRow("x·Clip(x+3)/6 opset%d", opset) << "mul-div" << opset << 1;
            QTest::addRow("x·Clip(x+3)·(1/6) opset%d", opset) << "mul-mul" << opset << 1;
            QTest::addRow("Clip(x+3)/6·x opset%d", opset) << "div-mul" << opset << 1;
        }
        QTest::newRow("Clip attributes, opset 10") << "mul-div" << 10 << 1;
        QTest::newRow("Clip(0, 5) (no)") << "clip5" << 14 << 0;
        QTest::newRow("HardSigmoid α=0.2 (no)") << "hardsigmoid-default" << 14 << 0;
    }
    void hardSwish()
    {
        QFETCH(QString, form);
        QFETCH(int, opset);
        QFETCH(int, fused);
        ModelBuilder b(opset);
        b.input("x", {-1, 3, 4, 4})
            .constant("three", {}, {3.0f})
            .constant("zero", {}, {0.0f})
            .constant("six", {}, {form == "clip5" ? 5.0f : 6.0f})
            .constant("sixth", {}, {1.0f / 6.0f})
            .constant("d6", {}, {6.0f});
        if (form.startsWith("hardsigmoid")) {
            std::vector<onnx::AttributeProto> attrs;
            if (form == "hardsigmoid")
                attrs = {floatAttr("alpha", 1.0f / 6.0f), floatAttr("beta", 0.5f)};
            b.op("HardSigmoid", {"x"}, {"h"}, attrs).op("Mul", {"x", "h"}, {"y"});
        } else {
            b.op("Add", {"x", "three"}, {"a"});
            if (opset < 11)
                b.op("Clip", {"a"}, {"c"}, {floatAttr("min", 0.0f), floatAttr("max", 6.0f)});
            else
                b.op("Clip", {"a", "zero", "six"}, {"c"});
            if (form == "mul-div" || form == "clip5")
                b.op("Mul", {"x", "c"}, {"m"}).op("Div", {"m", "d6"}, {"y"});
            else if (form == "mul-mul")
                b.op("Mul", {"c", "x"}, {"m"}).op("Mul", {"m", "sixth"}, {"y"});
            else
                b.op("Div", {"c", "d6"}, {"m"}).op("Mul", {"m", "x"}, {"y"});
        }
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"hardswish-fusion"});
        const std::string op = opset >= 14 ? "HardSwish" : "ai.opscope::HardSwish";
        QCOMPARE(opCount(o.opsAfter, op), fused);
        if (!fused)
            return;
        QCOMPARE(int(o.after.graph.nodeCount()), 1);
        const Lowered l = lowerBoth(o.after);
        QCOMPARE(opCount(l.onnx.opsAfter, "HardSwish"), opset >= 14 ? 1 : 0);
        QCOMPARE(opCount(l.onnx.opsAfter, "HardSigmoid"), opset >= 14 ? 0 : 1);
        QCOMPARE(int(l.ort.after.graph.nodeCount()), opset >= 14 ? 1 : 2);
    }

    // Below opset 14 the fused HardSwish is opscope's; a Conv in front still absorbs it, and both
    // targets write it back in that opset's ops.
    void hardSwishAfterConv_data()
    {
        QTest::addColumn<int>("opset");
        QTest::newRow("opset 11") << 11;
        QTest::newRow("opset 14") << 14;
    }
    void hardSwishAfterConv()
    {
        QFETCH(int, opset);
        ModelBuilder b(opset);
        b.input("x", {-1, 3, 6, 6})
            .randomConstant("W", {4, 3, 3, 3})
            .constant("three", {}, {3.0f})
            .constant("zero", {}, {0.0f})
            .constant("six", {}, {6.0f})
            .op("Conv", {"x", "W"}, {"c"})
            .op("Add", {"c", "three"}, {"a"})
            .op("Clip", {"a", "zero", "six"}, {"r"})
            .op("Mul", {"c", "r"}, {"m"})
            .op("Div", {"m", "six"}, {"y"})
            .output("y");
        const PassOutcome o = runAndCompare(b.build(), {"hardswish-fusion", "conv-activation-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::FusedConv"), 1);
        QCOMPARE(int(o.after.graph.nodeCount()), 1);
        const Lowered l = lowerBoth(o.after);
        QCOMPARE(opCount(l.ort.opsAfter, "HardSwish"), opset >= 14 ? 1 : 0);
        QCOMPARE(opCount(l.ort.opsAfter, "HardSigmoid"), opset >= 14 ? 0 : 1);
        const auto findings = checkerFindings(l.ort.after);
        QVERIFY2(findings.empty(), findings.empty() ? "" : findings[0].c_str());
    }

    void convAffine_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<QString>("activation");
        QTest::addColumn<int>("absorbed"); // scalar ops that became FusedConv's post-op
        for (const char *act : {"HardSwish", "Relu", "Sigmoid"}) {
            QTest::addRow("%s ·s +b", act) << "mul-add" << QString(act) << 2;
            QTest::addRow("%s s· then b+", act) << "mul-add-swapped" << QString(act) << 2;
        }
        QTest::newRow("+b then ·s") << "add-mul"
                                    << "HardSwish" << 2;
        QTest::newRow("x − b") << "sub-right"
                               << "Relu" << 1;
        QTest::newRow("b − x") << "sub-left"
                               << "Relu" << 1;
        QTest::newRow("x / s") << "div"
                               << "HardSwish" << 1;
        QTest::newRow("[1,1,1,1] constants") << "rank4"
                                             << "HardSwish" << 2;
        QTest::newRow("s / x (no)") << "div-left"
                                    << "Sigmoid" << 0; // Relu: ±0 → ±inf
        QTest::newRow("per-channel scale (no)") << "per-channel"
                                                << "Relu" << 0;
        QTest::newRow("activation read twice (no)") << "shared"
                                                    << "Relu" << 0;
    }
    void convAffine()
    {
        QFETCH(QString, form);
        QFETCH(QString, activation);
        QFETCH(int, absorbed);
        ModelBuilder b(14);
        b.input("x", {-1, 3, 6, 6})
            .randomConstant("W", {4, 3, 3, 3})
            .randomConstant("B", {4})
            .constant("s", {}, {0.37f})
            .constant("t", {1}, {-0.8f})
            .constant("s4", {1, 1, 1, 1}, {1.7f})
            .constant("t4", {1, 1, 1, 1}, {0.25f})
            .randomConstant("pc", {4, 1, 1})
            .op("Conv", {"x", "W", "B"}, {"c"}, {intsAttr("pads", {1, 1, 1, 1})})
            .op(activation.toStdString(), {"c"}, {"a"});
        std::vector<std::string> outputs{"y"};
        if (form == "mul-add")
            b.op("Mul", {"a", "s"}, {"m"}).op("Add", {"m", "t"}, {"y"});
        else if (form == "mul-add-swapped")
            b.op("Mul", {"s", "a"}, {"m"}).op("Add", {"t", "m"}, {"y"});
        else if (form == "add-mul")
            b.op("Add", {"a", "t"}, {"m"}).op("Mul", {"m", "s"}, {"y"});
        else if (form == "sub-right")
            b.op("Sub", {"a", "t"}, {"y"});
        else if (form == "sub-left")
            b.op("Sub", {"t", "a"}, {"y"});
        else if (form == "div")
            b.op("Div", {"a", "s"}, {"y"});
        else if (form == "rank4")
            b.op("Mul", {"a", "s4"}, {"m"}).op("Add", {"m", "t4"}, {"y"});
        else if (form == "div-left")
            b.op("Div", {"s", "a"}, {"y"});
        else if (form == "per-channel")
            b.op("Mul", {"a", "pc"}, {"y"});
        else if (form == "shared") {
            b.op("Mul", {"a", "s"}, {"y"});
            outputs.push_back("a");
        }
        for (const std::string &o : outputs)
            b.output(o);
        const Model m = b.build();
        const int before = int(m.graph.nodeCount());
        const PassOutcome o = runAndCompare(m, {"conv-activation-fusion", "conv-affine-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::FusedConv"), 1);
        QCOMPARE(int(o.after.graph.nodeCount()), before - 1 - absorbed);
        const Lowered l = lowerBoth(o.after);
        // Written out again: the same scalar ops as before, after the activation.
        QCOMPARE(opCount(l.onnx.opsAfter, activation.toStdString()), 1);
        for (NodeId n : l.ort.after.graph.nodeIds())
            QVERIFY(!l.ort.after.graph.node(n).attribute("activation_post"));
    }

    void prelu_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<bool>("perChannel");
        QTest::addColumn<int>("fused");
        for (bool pc : {false, true})
            for (const char *form : {"relu+a*neg(relu(neg))", "relu-a*relu(neg)", "relu+(-a)*relu(neg)",
                                     "max+a*min", "relu+min*a", "where-less", "where-greater"})
                QTest::addRow("%s %s", form, pc ? "per-channel" : "scalar") << QString(form) << pc << 1;
        QTest::newRow("different x (no)") << "other-x" << false << 0;
        QTest::newRow("relu-a*min (no: that is not PRelu)") << "relu-a*min" << false << 0;
    }
    void prelu()
    {
        QFETCH(QString, form);
        QFETCH(bool, perChannel);
        QFETCH(int, fused);
        ModelBuilder b;
        b.input("x", {-1, 3, 4, 4}).input("z", {-1, 3, 4, 4}).constant("zero", {}, {0.0f});
        if (perChannel)
            b.constant("alpha", {3, 1, 1}, {0.1f, 0.25f, -0.3f})
                .constant("nalpha", {3, 1, 1}, {-0.1f, -0.25f, 0.3f});
        else
            b.constant("alpha", {}, {0.2f}).constant("nalpha", {}, {-0.2f});
        const std::string x2 = form == "other-x" ? "z" : "x";
        if (form == "relu+a*neg(relu(neg))" || form == "other-x") {
            b.op("Relu", {"x"}, {"p"})
                .op("Neg", {x2}, {"nx"})
                .op("Relu", {"nx"}, {"rn"})
                .op("Neg", {"rn"}, {"mn"});
            b.op("Mul", {"alpha", "mn"}, {"t"}).op("Add", {"p", "t"}, {"y"});
        } else if (form == "relu-a*relu(neg)") {
            b.op("Relu", {"x"}, {"p"}).op("Neg", {"x"}, {"nx"}).op("Relu", {"nx"}, {"rn"});
            b.op("Mul", {"rn", "alpha"}, {"t"}).op("Sub", {"p", "t"}, {"y"});
        } else if (form == "relu+(-a)*relu(neg)") {
            b.op("Relu", {"x"}, {"p"}).op("Neg", {"x"}, {"nx"}).op("Relu", {"nx"}, {"rn"});
            b.op("Mul", {"nalpha", "rn"}, {"t"}).op("Add", {"t", "p"}, {"y"});
        } else if (form == "max+a*min") {
            b.op("Max", {"x", "zero"}, {"p"}).op("Min", {"x", "zero"}, {"m"});
            b.op("Mul", {"m", "alpha"}, {"t"}).op("Add", {"p", "t"}, {"y"});
        } else if (form == "relu+min*a" || form == "relu-a*min") {
            b.op("Relu", {"x"}, {"p"}).op("Min", {"x", "zero"}, {"m"});
            b.op("Mul", {"m", "alpha"}, {"t"}).op(form == "relu+min*a" ? "Add" : "Mul", {"p", "t"}, {"y"});
        } else if (form == "where-less") {
            b.op("Less", {"x", "zero"}, {"c"})
                .op("Mul", {"x", "alpha"}, {"ax"})
                .op("Where", {"c", "ax", "x"}, {"y"});
        } else {
            b.op("Greater", {"x", "zero"}, {"c"})
                .op("Mul", {"alpha", "x"}, {"ax"})
                .op("Where", {"c", "x", "ax"}, {"y"});
        }
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"prelu-fusion"});
        QCOMPARE(opCount(o.opsAfter, "PRelu"), fused);
        if (!fused)
            return;
        QCOMPARE(int(o.after.graph.nodeCount()), 1);
        QVERIFY(checkerFindings(o.after).empty());
        // With one slope value, prelu-to-leakyrelu finishes the job.
        const PassOutcome leaky = runAndCompare(o.after, {"prelu-to-leakyrelu"});
        QCOMPARE(opCount(leaky.opsAfter, "LeakyRelu"), perChannel ? 0 : 1);
    }

    void matmulTranspose_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<int>("fusedMatMuls");
        QTest::addColumn<int>("transposesLeft");
        QTest::newRow("Aᵀ·B") << "A" << 1 << 0;
        QTest::newRow("A·Bᵀ") << "B" << 1 << 0;
        QTest::newRow("Aᵀ·Bᵀ") << "AB" << 1 << 0;
        QTest::newRow("(A·B)ᵀ") << "out" << 1 << 0;
        QTest::newRow("(Aᵀ·Bᵀ)ᵀ = B·A") << "pairs" << 0 << 0;
        QTest::newRow("Transpose read twice stays") << "shared" << 1 << 1;
        QTest::newRow("Gemm(Aᵀ, B)") << "gemm" << 0 << 0;
        QTest::newRow("batch axis moved (no)") << "batch-perm" << 0 << 1;
    }
    void matmulTranspose()
    {
        QFETCH(QString, form);
        QFETCH(int, fusedMatMuls);
        QFETCH(int, transposesLeft);
        const auto swap = intsAttr("perm", {0, 2, 1});
        ModelBuilder b;
        if (form == "gemm") {
            b.input("a", {6, 4}).randomConstant("W", {6, 5}).randomConstant("c", {5});
            b.op("Transpose", {"a"}, {"at"}).op("Gemm", {"at", "W", "c"}, {"y"});
        } else {
            b.input("a", {-1, 6, 4}).input("bt", {-1, 5, 6}).input("b", {-1, 4, 5});
            if (form == "A")
                b.op("Transpose", {"a"}, {"at"}, {swap})
                    .randomConstant("W", {6, 5})
                    .op("MatMul", {"at", "W"}, {"y"});
            else if (form == "B" || form == "shared")
                b.input("a2", {-1, 4, 6})
                    .op("Transpose", {"bt"}, {"btt"}, {swap})
                    .op("MatMul", {"a2", "btt"}, {"y"});
            else if (form == "AB")
                b.op("Transpose", {"a"}, {"at"}, {swap})
                    .input("b2", {-1, 5, 6})
                    .op("Transpose", {"b2"}, {"b2t"}, {swap})
                    .op("MatMul", {"at", "b2t"}, {"y"});
            else if (form == "out")
                b.op("MatMul", {"a", "b"}, {"m"}).op("Transpose", {"m"}, {"y"}, {swap});
            else if (form == "pairs")
                b.input("p", {-1, 4, 6})
                    .input("q", {-1, 5, 4})
                    .op("Transpose", {"p"}, {"pt"}, {swap})
                    .op("Transpose", {"q"}, {"qt"}, {swap})
                    .op("MatMul", {"pt", "qt"}, {"m"})
                    .op("Transpose", {"m"}, {"y"}, {swap});
            else
                b.input("s", {4, -1, 6})
                    .op("Transpose", {"s"}, {"st"}, {intsAttr("perm", {1, 0, 2})})
                    .randomConstant("W", {6, 5})
                    .op("MatMul", {"st", "W"}, {"y"});
            if (form == "shared")
                b.op("Relu", {"btt"}, {"r"}).output("r");
        }
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"matmul-transpose-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::FusedMatMul"), fusedMatMuls);
        QCOMPARE(opCount(o.opsAfter, "Transpose"), transposesLeft);
        if (form == "pairs")
            QCOMPARE(opCount(o.opsAfter, "MatMul"), 1);
        if (form == "gemm") {
            QCOMPARE(opCount(o.opsAfter, "Gemm"), 1);
            QVERIFY(checkerFindings(o.after).empty());
        }
        if (!fusedMatMuls)
            return;
        const Lowered l = lowerBoth(o.after);
        QCOMPARE(opCount(l.onnx.opsAfter, "ai.opscope::FusedMatMul"), 0);
        QCOMPARE(opCount(l.ort.opsAfter, "com.microsoft::FusedMatMul"), 1);
    }

    void eltwise_data()
    {
        QTest::addColumn<QString>("form");
        QTest::addColumn<int>("inputs"); // of the Eltwise; 0: no fusion
        QTest::newRow("a·c1 + b·c2") << "two" << 2;
        QTest::newRow("a·c1 + b·c2 − d") << "three" << 3;
        QTest::newRow("a/c − (−b)") << "div-neg" << 2;
        QTest::newRow("broadcast a[N,6] + b[6]·c") << "broadcast" << 2;
        QTest::newRow("x·2 + x·3 (one term)") << "same" << 1;
        QTest::newRow("a + b (no: nothing scaled)") << "plain" << 0;
        QTest::newRow("a·B (no: B not a scalar)") << "tensor-coef" << 0;
        // The [1,1] factor makes v·c [1,6]; absorbed, the sum would stay [6] (found by tst_passfuzz).
        QTest::newRow("v[6]·c[1,1] + v (no: the factor raises the rank)") << "rank-raising" << 0;
    }
    void eltwise()
    {
        QFETCH(QString, form);
        QFETCH(int, inputs);
        ModelBuilder b;
        b.input("a", {-1, 6}).input("b", {-1, 6}).input("d", {-1, 6}).input("v", {6});
        b.constant("c1", {}, {0.7f}).constant("c2", {}, {-1.3f}).constant("c3", {}, {4.0f});
        b.randomConstant("B", {6});
        if (form == "two" || form == "three") {
            b.op("Mul", {"a", "c1"}, {"t1"}).op("Mul", {"c2", "b"}, {"t2"}).op("Add", {"t1", "t2"}, {"s"});
            if (form == "three")
                b.op("Sub", {"s", "d"}, {"y"});
            else
                b.op("Relu", {"s"}, {"y"});
        } else if (form == "div-neg") {
            b.op("Div", {"a", "c3"}, {"t1"}).op("Neg", {"b"}, {"t2"}).op("Sub", {"t1", "t2"}, {"y"});
        } else if (form == "broadcast") {
            b.op("Mul", {"v", "c1"}, {"t1"}).op("Add", {"a", "t1"}, {"y"});
        } else if (form == "same") {
            b.constant("two", {}, {2.0f}).constant("three", {}, {3.0f});
            b.op("Mul", {"a", "two"}, {"t1"})
                .op("Mul", {"a", "three"}, {"t2"})
                .op("Add", {"t1", "t2"}, {"y"});
        } else if (form == "rank-raising") {
            b.constant("c11", {1, 1}, {0.5f});
            b.op("Mul", {"v", "c11"}, {"t1"}).op("Add", {"t1", "v"}, {"y"});
        } else if (form == "plain") {
            b.op("Add", {"a", "b"}, {"y"});
        } else {
            b.op("Mul", {"a", "B"}, {"t1"}).op("Add", {"t1", "b"}, {"y"});
        }
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"eltwise-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::Eltwise"), inputs ? 1 : 0);
        if (!inputs)
            return;
        for (NodeId id : o.after.graph.nodeIds())
            if (o.after.graph.node(id).opType == "Eltwise")
                QCOMPARE(int(o.after.graph.node(id).inputs.size()), inputs);
        QCOMPARE(opCount(o.opsAfter, "Mul") + opCount(o.opsAfter, "Div") + opCount(o.opsAfter, "Neg"), 0);
        lowerBoth(o.after);
    }

    void geluTanh_data()
    {
        QTest::addColumn<QString>("cube");
        QTest::addColumn<QString>("tail");
        QTest::addColumn<int>("fused");
        for (const char *cube : {"Pow", "x·(x·x)", "(x·x)·x"})
            for (const char *tail : {"A", "B", "C"})
                QTest::addRow("%s tail %s", cube, tail) << QString(cube) << QString(tail) << 1;
        QTest::newRow("0.045 instead of 0.044715 (no)") << "wrong"
                                                        << "A" << 0;
    }
    void geluTanh()
    {
        QFETCH(QString, cube);
        QFETCH(QString, tail);
        QFETCH(int, fused);
        ModelBuilder b;
        b.input("x", {-1, 16})
            .constant("three", {}, {3.0f})
            .constant("k", {}, {cube == "wrong" ? 0.045f : 0.044715f})
            .constant("c", {}, {0.7978845608f})
            .constant("one", {}, {1.0f})
            .constant("half", {}, {0.5f});
        if (cube == "x·(x·x)")
            b.op("Mul", {"x", "x"}, {"x2"}).op("Mul", {"x", "x2"}, {"x3"});
        else if (cube == "(x·x)·x")
            b.op("Mul", {"x", "x"}, {"x2"}).op("Mul", {"x2", "x"}, {"x3"});
        else
            b.op("Pow", {"x", "three"}, {"x3"});
        b.op("Mul", {"x3", "k"}, {"kx3"})
            .op("Add", {"x", "kx3"}, {"inner"})
            .op("Mul", {"c", "inner"}, {"z"})
            .op("Tanh", {"z"}, {"t"})
            .op("Add", {"t", "one"}, {"a"});
        if (tail == "A")
            b.op("Mul", {"x", "a"}, {"xa"}).op("Mul", {"xa", "half"}, {"y"});
        else if (tail == "B")
            b.op("Mul", {"a", "half"}, {"h"}).op("Mul", {"x", "h"}, {"y"});
        else
            b.op("Mul", {"x", "half"}, {"xh"}).op("Mul", {"xh", "a"}, {"y"});
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"gelu-fusion"});
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::Gelu"), fused);
        if (!fused)
            return;
        QCOMPARE(int(o.after.graph.nodeCount()), 1);
        const Lowered l = lowerBoth(o.after);
        QCOMPARE(opCount(l.onnx.opsAfter, "Tanh"), 1);
        QCOMPARE(opCount(l.ort.opsAfter, "com.microsoft::FastGelu"), 1);
    }

    // --target ort: LayerNormalization(a + b) → SkipLayerNormalization, the sum as output 3 when the
    // residual is read again.
    void skipLayerNorm_data()
    {
        QTest::addColumn<bool>("residualReused");
        QTest::addColumn<bool>("beta");
        QTest::newRow("sum read only by the norm") << false << true;
        QTest::newRow("residual read again") << true << true;
        QTest::newRow("no β") << true << false;
    }
    void skipLayerNorm()
    {
        QFETCH(bool, residualReused);
        QFETCH(bool, beta);
        ModelBuilder b(17);
        b.input("a", {-1, 5, 8})
            .input("h", {-1, 5, 8})
            .randomConstant("g", {8}, 0.5f, 1.5f)
            .randomConstant("bt", {8});
        b.op("Add", {"a", "h"}, {"s"});
        std::vector<std::string> lnInputs{"s", "g"};
        if (beta)
            lnInputs.push_back("bt");
        b.op("LayerNormalization", lnInputs, {"n"}, {intAttr("axis", -1), floatAttr("epsilon", 1e-5f)});
        if (residualReused)
            b.op("Add", {"n", "s"}, {"y"});
        else
            b.op("Relu", {"n"}, {"y"});
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"lower-to-ort"}, {1, 3}, {1, 2}, 1e-4, 1e-4);
        QCOMPARE(opCount(o.opsAfter, "com.microsoft::SkipLayerNormalization"), 1);
        QCOMPARE(opCount(o.opsAfter, "LayerNormalization"), 0);
        QCOMPARE(opCount(o.opsAfter, "Add"), residualReused ? 1 : 0);
        for (NodeId id : o.after.graph.nodeIds())
            if (o.after.graph.node(id).opType == "SkipLayerNormalization")
                QCOMPARE(o.after.graph.node(id).outputs.size(), std::size_t(residualReused ? 4 : 1));
        // The ONNX target keeps the standard op.
        const PassOutcome onnx = runAndCompare(b.build(), {"lower-to-onnx"}, {2}, {3});
        QCOMPARE(opCount(onnx.opsAfter, "LayerNormalization"), 1);
    }

    void rmsNorm_data()
    {
        QTest::addColumn<QString>("square");
        QTest::addColumn<QString>("divide");
        QTest::addColumn<bool>("gamma");
        QTest::addColumn<int>("opset");
        QTest::addColumn<int>("fused");
        for (int opset : {17, 18})
            for (const char *sq : {"Pow", "Mul"})
                for (const char *dv : {"Div", "Reciprocal", "1/"})
                    for (bool g : {true, false})
                        QTest::addRow("opset%d %s %s %s", opset, sq, dv, g ? "γ" : "no γ")
                            << QString(sq) << QString(dv) << g << opset << 1;
        QTest::newRow("mean over the batch axis (no)") << "leading"
                                                       << "Div" << true << 17 << 0;
    }
    void rmsNorm()
    {
        QFETCH(QString, square);
        QFETCH(QString, divide);
        QFETCH(bool, gamma);
        QFETCH(int, opset);
        QFETCH(int, fused);
        ModelBuilder b(opset);
        b.input("x", {-1, 5, 8}).constant("eps", {}, {1e-6f}).constant("two", {}, {2.0f});
        b.randomConstant("g", {8}, 0.5f, 1.5f);
        if (square == "Mul")
            b.op("Mul", {"x", "x"}, {"sq"});
        else
            b.op("Pow", {"x", "two"}, {"sq"});
        const std::vector<std::int64_t> axes{square == "leading" ? 0 : -1};
        if (opset >= 18)
            b.intConstant("axes", {1}, axes).op("ReduceMean", {"sq", "axes"}, {"ms"});
        else
            b.op("ReduceMean", {"sq"}, {"ms"}, {intsAttr("axes", axes)});
        b.op("Add", {"ms", "eps"}, {"v"}).op("Sqrt", {"v"}, {"r"});
        if (divide == "Div")
            b.op("Div", {"x", "r"}, {"n"});
        else if (divide == "1/") // torch.rsqrt
            b.constant("one", {}, {1.0f}).op("Div", {"one", "r"}, {"ir"}).op("Mul", {"x", "ir"}, {"n"});
        else
            b.op("Reciprocal", {"r"}, {"ir"}).op("Mul", {"x", "ir"}, {"n"});
        if (gamma)
            b.op("Mul", {"g", "n"}, {"y"});
        else
            b.op("Relu", {"n"}, {"y"});
        b.output("y");
        const PassOutcome o = runAndCompare(b.build(), {"layernorm-fusion"}, {1, 3}, {1, 2, 7}, 1e-4, 1e-4);
        QCOMPARE(opCount(o.opsAfter, "ai.opscope::RMSNormalization"), fused);
        QCOMPARE(opCount(o.opsAfter, "LayerNormalization"), 0);
        if (!fused)
            return;
        QCOMPARE(int(o.after.graph.nodeCount()), gamma ? 1 : 2);
        const PassOutcome onnx = runAndCompare(o.after, {"lower-to-onnx"}, {2}, {3}, 1e-4, 1e-4);
        QCOMPARE(opCount(onnx.opsAfter, "ReduceMean"), 1);
        // Debian's ONNX 1.12 checker knows opsets up to 17 (it reads opset 18's ReduceMean as 13's).
        const auto findings = opset < 18 ? checkerFindings(onnx.after) : std::vector<std::string>{};
        QVERIFY2(findings.empty(), findings.empty() ? "" : findings[0].c_str());
        // ONNX Runtime's own op (registered in the ONNX domain; Debian's checker does not know it).
        const PassOutcome ort = runAndCompare(o.after, {"lower-to-ort"}, {2}, {3}, 1e-4, 1e-4);
        QCOMPARE(opCount(ort.opsAfter, "SimplifiedLayerNormalization"), 1);
    }
};

QTEST_GUILESS_MAIN(TestExtendedFusions)
#include "tst_extendedfusions.moc"
