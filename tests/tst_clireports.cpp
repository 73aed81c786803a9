// What run, optimize and profile tell a user beyond their numbers: an unbound dim that made an
// output the declaration does not describe, an output with no finite value, a prediction priced
// by the bound dims, the lowering that undid the fusions a report lists (from new-user trials).

#include "clirun.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <set>

using namespace opscope;
using namespace opscope::test::clirun;

class TestCliReports : public QObject
{
    Q_OBJECT
private slots:
    // A model written by optimize keeps its nodes' names where a node stands for one original
    // node: every pass that touched a node added a suffix, and the export lowering wrote fused ops
    // back under those names ("/layer1/Add_Add_Add", "…/Conv_Relu_NchwcConv_FusedConv_conv",
    // "…_FusedConv_Relu"), so the app's compare view matched nothing and showed every node
    // removed and added. Conv+BatchNorm+Relu, a residual Add, SiLU (Sigmoid and Mul reading one
    // Conv), GlobalAveragePool and Gemm: every node but the folded BatchNorms is back by name.
    void optimizedModelsKeepTheirNodeNames()
    {
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        *g->add_input() = test::tensorInfo("input", onnx::TensorProto::FLOAT, {1, 8, 8, 8});
        const auto weights = [](int count, float scale) {
            std::vector<float> v(static_cast<std::size_t>(count));
            for (int i = 0; i < count; ++i)
                v[std::size_t(i)] = scale * float((i * 37) % 19 - 9) / 9.0f;
            return v;
        };
        std::string at = "input";
        const auto convBnRelu = [&](const std::string &scope, bool relu) {
            *g->add_initializer() = test::floatTensor(scope + ".conv.weight", {8, 8, 3, 3}, weights(576, 0.2f));
            onnx::NodeProto conv =
                test::node("Conv", {at, scope + ".conv.weight"}, {scope + "/conv/Conv_output_0"}, scope + "/conv/Conv");
            auto *pads = conv.add_attribute();
            pads->set_name("pads");
            pads->set_type(onnx::AttributeProto::INTS);
            for (int k = 0; k < 4; ++k)
                pads->add_ints(1);
            *g->add_node() = conv;
            for (const char *p : {"scale", "bias", "mean", "var"})
                *g->add_initializer() = test::floatTensor(scope + ".bn." + p, {8},
                                                          std::string(p) == "var" ? std::vector<float>(8, 1.5f)
                                                                                  : weights(8, 0.5f));
            *g->add_node() = test::node("BatchNormalization",
                                        {scope + "/conv/Conv_output_0", scope + ".bn.scale", scope + ".bn.bias",
                                         scope + ".bn.mean", scope + ".bn.var"},
                                        {scope + "/bn/BatchNormalization_output_0"}, scope + "/bn/BatchNormalization");
            at = scope + "/bn/BatchNormalization_output_0";
            if (relu) {
                *g->add_node() = test::node("Relu", {at}, {scope + "/relu/Relu_output_0"}, scope + "/relu/Relu");
                at = scope + "/relu/Relu_output_0";
            }
        };
        convBnRelu("/stem", true);
        const std::string skip = at;
        convBnRelu("/block/conv1", true);
        convBnRelu("/block/conv2", false);
        *g->add_node() = test::node("Add", {at, skip}, {"/block/Add_output_0"}, "/block/Add");
        *g->add_node() = test::node("Relu", {"/block/Add_output_0"}, {"/block/relu/Relu_output_0"}, "/block/relu/Relu");
        at = "/block/relu/Relu_output_0";
        convBnRelu("/head", false);
        *g->add_node() = test::node("Sigmoid", {at}, {"/head/act/Sigmoid_output_0"}, "/head/act/Sigmoid");
        *g->add_node() = test::node("Mul", {at, "/head/act/Sigmoid_output_0"}, {"/head/act/Mul_output_0"},
                                    "/head/act/Mul");
        *g->add_node() = test::node("GlobalAveragePool", {"/head/act/Mul_output_0"}, {"/pool/GlobalAveragePool_output_0"},
                                    "/pool/GlobalAveragePool");
        *g->add_node() = test::node("Flatten", {"/pool/GlobalAveragePool_output_0"}, {"/Flatten_output_0"}, "/Flatten");
        *g->add_initializer() = test::floatTensor("fc.weight", {4, 8}, weights(32, 0.3f));
        *g->add_initializer() = test::floatTensor("fc.bias", {4}, weights(4, 0.1f));
        *g->add_node() = test::node("Gemm", {"/Flatten_output_0", "fc.weight", "fc.bias"}, {"logits"}, "/fc/Gemm");
        *g->add_output() = test::tensorInfo("logits", onnx::TensorProto::FLOAT, {1, 4});
        QTemporaryDir dir;
        const QString model = dir.filePath("cnn.onnx"), optimized = dir.filePath("cnn_opt.onnx");
        test::writeProto(model.toStdString(), m);
        const Run r = cli({"optimize", model, "-o", optimized});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("layout-nhwc") || r.out.contains("layout"), qPrintable(r.out)); // the passes ran
        const ImportResult before = test::loadOrFail(model.toStdString()), after = test::loadOrFail(optimized.toStdString());
        std::set<std::string> expected, got;
        for (NodeId id : before.model.graph.nodeIds())
            if (before.model.graph.node(id).opType != "BatchNormalization")
                expected.insert(before.model.graph.node(id).name);
        for (NodeId id : after.model.graph.nodeIds())
            got.insert(after.model.graph.node(id).name);
        QCOMPARE(got, expected);
    }

    void runSaysWhenAnUnboundDimMadeOutputsTheDeclarationDoesNotDescribe()
    {
        // x [1,1,h,w] → Resize to at least 4×4 (sizes = Max(Shape(x), [1,1,4,4]), which shape
        // inference cannot follow) → y declared [1,1,h,w]: a detector that pads up to its stride.
        // Unbound, h and w run as 1 and y comes out 4×4 — only comparing y's 'h' with x's tells
        // the user the run was not what the model is for, and which option mends it.
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        onnx::ValueInfoProto x = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
        auto *xs = x.mutable_type()->mutable_tensor_type()->mutable_shape();
        xs->mutable_dim(2)->set_dim_param("h");
        xs->mutable_dim(3)->set_dim_param("w");
        *g->add_input() = x;
        *g->add_initializer() = test::int64Tensor("least", {4}, {1, 1, 4, 4});
        *g->add_node() = test::node("Shape", {"x"}, {"shape"}, "shape");
        *g->add_node() = test::node("Max", {"shape", "least"}, {"sizes"}, "max");
        *g->add_node() = test::node("Resize", {"x", "", "", "sizes"}, {"y"}, "resize");
        onnx::ValueInfoProto y = x;
        y.set_name("y");
        *g->add_output() = y;
        QTemporaryDir dir;
        const QString model = dir.filePath("stride.onnx");
        test::writeProto(model.toStdString(), m);
        const Run r = cli({"run", model, "--iterations", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("warning: output 'y' is float32[1,1,4,4]; the model declares float32[1,1,h,w] "
                                "('h' is 4 here and 1 in input 'x')") &&
                     r.err.contains("--dim NAME=VALUE"),
                 qPrintable(r.err));
        const Run j = cli({"run", model, "--iterations", "5", "--json"});
        const QJsonObject o = QJsonDocument::fromJson(j.out.toUtf8()).object();
        QCOMPARE(o["warnings"].toArray().size(), 1);
        // 'h' and 'w' unbound (and, on a busy machine, a note on that too).
        QVERIFY(o["notes"].toArray().size() >= 2);
        QVERIFY(o["notes"].toArray()[0].toString().startsWith("dimension 'h' is not bound"));
        QVERIFY(o["notes"].toArray()[1].toString().startsWith("dimension 'w' is not bound"));
        const Run bound = cli({"run", model, "--dim", "h=4", "--dim", "w=4", "--iterations", "5"});
        QCOMPARE(bound.exitCode, 0);
        QVERIFY2(!bound.err.contains("warning") && !bound.err.contains("is not bound"), qPrintable(bound.err));
        // -q: the warning stays, the output lines, latency and notes go.
        const Run quiet = cli({"run", model, "--iterations", "1", "-q"}); // its note on 1 run hidden too
        QCOMPARE(quiet.exitCode, 0);
        QCOMPARE(quiet.out, QString());
        QVERIFY2(quiet.err.contains("warning: output 'y'") && !quiet.err.contains("note:"), qPrintable(quiet.err));
    }

    void runSaysWhenAnOutputHasNoFiniteValue()
    {
        // The square root of −(|x| + 1): every value NaN. The summary said "min 1e+300 max -1e+300".
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {8});
        *g->add_initializer() = test::floatTensor("one", {1}, {1.0f});
        *g->add_node() = test::node("Abs", {"x"}, {"a"}, "abs");
        *g->add_node() = test::node("Add", {"a", "one"}, {"b"}, "add"); // |x| + 1 ≥ 1
        *g->add_node() = test::node("Neg", {"b"}, {"c"}, "neg");        // ≤ −1
        *g->add_node() = test::node("Sqrt", {"c"}, {"y"}, "sqrt");      // NaN everywhere
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {8});
        QTemporaryDir dir;
        const QString model = dir.filePath("nan.onnx");
        test::writeProto(model.toStdString(), m);
        const Run r = cli({"run", model, "--iterations", "0"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("y  float32[8]  no finite value (8 NaN)"), qPrintable(r.out));
        QVERIFY2(!r.out.contains("1e+300"), qPrintable(r.out));
        QVERIFY2(r.err.contains("warning: output 'y' has no finite value (8 NaN)"), qPrintable(r.err));
        QVERIFY2(r.out.contains("latency  not timed (--iterations 0)"), qPrintable(r.out));
        const Run j = cli({"run", model, "--iterations", "0", "--json"});
        const QJsonObject o = QJsonDocument::fromJson(j.out.toUtf8()).object();
        QVERIFY(o["latency_ms"].isNull());
        QCOMPARE(o["warnings"].toArray().size(), 1);
    }

    void profileSimulatesTheShapesTheDimsGive()
    {
        // x [b, s, 256] → MatMul 256×256 → Relu: a prediction for b=64, s=2048 costs far more
        // than for b=s=1 (both were priced as the unbound model, the same 0.024 ms).
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        onnx::ValueInfoProto x = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 1, 256});
        x.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("b");
        x.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("s");
        *g->add_input() = x;
        *g->add_initializer() = test::floatTensor("w", {256, 256}, std::vector<float>(256 * 256, 0.01f));
        *g->add_node() = test::node("MatMul", {"x", "w"}, {"h"}, "mm");
        *g->add_node() = test::node("Relu", {"h"}, {"y"}, "relu");
        onnx::ValueInfoProto y = x;
        y.set_name("y");
        *g->add_output() = y;
        QTemporaryDir dir;
        const QString model = dir.filePath("sym.onnx");
        test::writeProto(model.toStdString(), m);
        const auto predicted = [&](const QStringList &dims) {
            QStringList args{"profile", model, "--simulate", "cpu:2", "--schedule", "serial", "--json"};
            for (const QString &d : dims)
                args << "--dim" << d;
            const Run r = cli(args);
            if (r.exitCode != 0)
                return -1.0;
            return QJsonDocument::fromJson(r.out.toUtf8()).object()["schedules"].toArray()[0].toObject()["predicted_ms"].toDouble();
        };
        const double small = predicted({"b=1", "s=1"}), large = predicted({"b=64", "s=2048"});
        QVERIFY2(small > 0 && large > 1000 * small, qPrintable(QStringLiteral("%1 vs %2").arg(small).arg(large)));
        QCOMPARE(predicted({"nope=3"}), -1.0); // a name the inputs do not have is still refused
    }

    void optimizeSaysWhatTheTableCannotShow()
    {
        // The transformer sample at the default level (all) and target (onnx): its fusions are
        // written back as standard ops, so the op counts barely move — the lowering must say
        // so, with the counts, and CSE's merged weights show in "also" where nodes stay equal.
        const Run r = cli({"optimize", sample("transformer_block.onnx")});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains("layout-nhwc"), qPrintable(r.out)); // level all, not basic
        QVERIFY2(r.out.contains(QRegularExpression("lower-to-onnx: wrote [0-9]+ \\(.*FusedMatMul.*\\) of opscope's "
                                                   "fused ops back as the standard ONNX ops")),
                 qPrintable(r.out));
        QVERIFY2(r.out.contains("  also\n"), qPrintable(r.out));
        const Run ort = cli({"optimize", sample("transformer_block.onnx"), "--target", "ort"});
        QCOMPARE(ort.exitCode, 0);
        QVERIFY2(ort.out.contains(QRegularExpression("lower-to-ort: wrote [0-9]+ .* as ONNX Runtime's com.microsoft ops")),
                 qPrintable(ort.out));
        // --devices sizes only partition-for-devices, which no level runs: said, not ignored.
        const Run devices = cli({"optimize", sample("inception_block.onnx"), "--devices", "cpu:2", "-q"});
        QCOMPARE(devices.exitCode, 0);
        QVERIFY2(devices.err.contains("--devices is for partition-for-devices"), qPrintable(devices.err));
        QVERIFY(!cli({"optimize", sample("inception_block.onnx"), "-q"}).err.contains("--devices"));
    }
};

QTEST_GUILESS_MAIN(TestCliReports)
#include "tst_clireports.moc"
