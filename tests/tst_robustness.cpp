// Structure-valid but semantically bad models, as a hostile user (or a broken exporter) writes
// them. Each row is one class of problem that once crashed libonnx's shape inference, a kernel or
// a pass, hung, or ended in an internal error. Every command a user would try on such a file —
// info, run, optimize — must answer within seconds with exit 1 and one line that names the problem.

#include "onnx/modelio.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QProcess>
#include <sys/stat.h>
#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <cstring>
#include <functional>

using namespace opscope;
namespace fs = std::filesystem;

namespace {

using Tp = onnx::TensorProto;

struct Run
{
    int exitCode = -1; // -2: crashed, -3: timed out
    QString err;
};

Run cli(const QStringList &args, int timeoutMs = 60000)
{
    QProcess p;
    p.start(test::cliPath(), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {-3, {}};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardError())};
}

void addInts(onnx::NodeProto &n, const std::string &name, const std::vector<std::int64_t> &v)
{
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t x : v)
        a->add_ints(x);
}

void addInt(onnx::NodeProto &n, const std::string &name, std::int64_t v)
{
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}

void addString(onnx::NodeProto &n, const std::string &name, const std::string &v)
{
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
}

onnx::TensorProto intTensor(const std::string &name, int type, const std::vector<std::int64_t> &dims,
                            const std::vector<std::int64_t> &values)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(type);
    for (std::int64_t d : dims)
        t.add_dims(d);
    for (std::int64_t v : values) {
        if (type == Tp::INT64)
            t.add_int64_data(v);
        else
            t.add_int32_data(static_cast<std::int32_t>(v));
    }
    return t;
}

// A model around one graph: x float[1,3,8,8] in, y out, W a 2×3×3×3 weight.
onnx::ModelProto model(int opset, const std::function<void(onnx::GraphProto &)> &build,
                       std::vector<std::int64_t> xDims = {1, 3, 8, 8})
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    auto *op = m.add_opset_import();
    op->set_version(opset);
    auto *g = m.mutable_graph();
    g->set_name("bad");
    *g->add_input() = test::tensorInfo("x", Tp::FLOAT, xDims);
    *g->add_initializer() = test::floatTensor("W", {2, 3, 3, 3}, std::vector<float>(54, 0.1f));
    build(*g);
    auto *out = g->add_output();
    out->set_name("y");
    return m;
}

onnx::NodeProto conv()
{
    return test::node("Conv", {"x", "W"}, {"y"}, "conv");
}

// A session on a model built in memory; null (and a test failure) when it does not load.
std::unique_ptr<InferenceSession> session(const onnx::ModelProto &proto)
{
    const std::string bytes = proto.SerializeAsString();
    Expected<ImportResult> r = loadModelFromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())), ".");
    if (!r) {
        QTest::qFail(r.status().message().c_str(), __FILE__, __LINE__);
        return nullptr;
    }
    Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(r->model);
    if (!s)
        QTest::qFail(s.status().message().c_str(), __FILE__, __LINE__);
    return s ? std::move(*s) : nullptr;
}

} // namespace

class TestRobustness : public QObject
{
    Q_OBJECT
private slots:
    void badModel_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("expected");
        // libonnx shape inference divides by these, or indexes attribute lists by the input rank.
        QTest::newRow("conv strides 0") << 0 << "attribute 'strides' is [0, 0]";
        QTest::newRow("conv dilations 0") << 1 << "attribute 'dilations' is [0, 0]";
        QTest::newRow("maxpool strides 0") << 2 << "attribute 'strides' is [0, 0]";
        QTest::newRow("avgpool kernel 0") << 3 << "attribute 'kernel_shape' is [0, 0]";
        QTest::newRow("conv on rank 2 input") << 4 << "its input has rank 2";
        QTest::newRow("conv on inferred rank 2") << 5 << "node 'conv' (Conv): its input has rank 2";
        QTest::newRow("conv weight rank") << 6 << "its weight has rank 3 but its input has rank 4";
        QTest::newRow("SplitToSequence split 0") << 7 << "scalar split 'sp' is 0";
        QTest::newRow("DepthToSpace blocksize 0") << 8 << "attribute 'blocksize' is 0";
        // Passes and kernels.
        QTest::newRow("Constant without value") << 9 << "has 0 value attributes";
        QTest::newRow("recursive function") << 10 << "calls itself (F → F)";
        QTest::newRow("mutually recursive functions") << 11 << "calls itself (A → B → A)";
        QTest::newRow("Einsum two arrows") << 12 << "has more than one '->'";
        QTest::newRow("Einsum bad letter") << 13 << "is not a letter";
        QTest::newRow("Einsum terms vs inputs") << 14 << "1 input term(s) for 2 input(s)";
        QTest::newRow("Split num_outputs 0") << 15 << "attribute 'num_outputs' is 0";
        // Once exit 2 (internal error) where the input is at fault.
        QTest::newRow("If branch with inputs") << 16 << "If branches take no inputs";
        QTest::newRow("Relu with three outputs") << 17 << "has 3 outputs; Relu-13 produces at most 1";
        QTest::newRow("If without then_branch") << 18 << "lacks its required attribute 'then_branch'";
        QTest::newRow("Resize NaN scales") << 19 << "must be a positive, finite number";
        // Once accepted silently.
        QTest::newRow("attribute of the wrong type") << 20 << "is a list of floats, but Conv expects a list of ints";
        QTest::newRow("conv bias length") << 21 << "bias B has shape [5]";
        QTest::newRow("name with a newline") << 22 << "node 'two\\nlines' (Conv)";
        // Above libonnx's newest opset its (older) schema's inference still runs: found by fuzz_loader.
        QTest::newRow("Scan without body, opset 18") << 23 << "lacks its required attribute 'body'";
        // A pad of 2^31 - 1 on a small input asked for a 10 GB output that fitted memory: minutes.
        QTest::newRow("MaxPool pads past the kernel") << 24 << "pads [0, 0, 2147483647, 0] are not all smaller than its kernel_shape [2, 2]";
        QTest::newRow("AveragePool pad equal to the kernel") << 25 << "pads [3, 0, 0, 0] are not all smaller than its kernel_shape [3, 3]";
        // Accepted silently until a new-user trial compared them with ONNX Runtime (2026-12-05).
        QTest::newRow("LSTM sequence_lens past the sequence") << 26 << "sequence_lens[0] is 9; every length must lie in 0..4";
        QTest::newRow("RNN layout 2") << 27 << "layout 2 is not 0 (sequence first) or 1 (batch first)";
        QTest::newRow("Resize with scales and sizes") << 28 << "both scales and sizes are given";
        QTest::newRow("Resize unknown coordinate mode") << 29 << "coordinate_transformation_mode 'half_pixel_bogus'";
        QTest::newRow("ConvTranspose output_padding past the stride") << 30 << "output_padding [2,2] must be ≥ 0 and smaller";
        QTest::newRow("Conv kernel_shape against its weights") << 31 << "kernel_shape [2,2] does not match the weights [2,3,3,3]";
        QTest::newRow("Resize roi of the wrong length") << 32 << "roi has 4 entries";
        // Pad's axes indexed the pads table unchecked: out of range wrote past it (a crash), repeated
        // ones padded one axis twice (found writing the CUDA Pad, 2026-12-05).
        QTest::newRow("Pad axis out of range") << 33 << "axis 5 is out of range for a rank-4 input";
        QTest::newRow("Pad axis given twice") << 34 << "axis -1 is given twice";
        // Slice sliced a repeated axis by its last entry alone; ONNX Runtime refuses it (sweep, 2026-12-05).
        QTest::newRow("Slice axis given twice") << 35 << "axis -1 is given twice in axes";
        // Redundant-node elimination composed two Transposes by indexing one perm with the other:
        // perm[-1] (fuzz_pipeline, UBSan). A perm must name each axis once, checked at load.
        QTest::newRow("Transpose perm with -1") << 36 << "perm [0, -1, 2, 3] is not a permutation of 0…3";
        QTest::newRow("Transpose perm repeating an axis") << 37 << "perm [0, 1, 1, 3] is not a permutation";
        // The split from a Constant node: libonnx's inference reads Constants as data too (a
        // guard that looked at initializers alone let this divide by zero, fuzz_loader).
        QTest::newRow("SplitToSequence split 0 from a Constant") << 38 << "scalar split 'sp' is 0";
        // A value of another kind than its parameter's types: inference functions assume their
        // constraints hold, and LayerNormalization's crashed on a sequence given its Mean output
        // (fuzz_loader, round 17). Every op's inputs are checked by kind before inference runs.
        QTest::newRow("LayerNormalization of a sequence") << 39
                                                          << "its input 0 is a sequence, but LayerNormalization takes a tensor";
        QTest::newRow("SequenceLength of a tensor") << 40 << "its input 0 is a tensor, but SequenceLength takes a sequence";
    }

    void badModel()
    {
        QFETCH(int, kind);
        QFETCH(QString, expected);
        onnx::ModelProto m;
        switch (kind) {
        case 0:
        case 1:
            m = model(13, [&](onnx::GraphProto &g) {
                auto n = conv();
                addInts(n, kind == 0 ? "strides" : "dilations", {0, 0});
                *g.add_node() = n;
            });
            break;
        case 2:
        case 3:
            m = model(13, [&](onnx::GraphProto &g) {
                auto n = test::node(kind == 2 ? "MaxPool" : "AveragePool", {"x"}, {"y"}, "pool");
                addInts(n, "kernel_shape", kind == 2 ? std::vector<std::int64_t>{2, 2} : std::vector<std::int64_t>{0, 0});
                if (kind == 2)
                    addInts(n, "strides", {0, 0});
                *g.add_node() = n;
            });
            break;
        case 4: m = model(13, [&](onnx::GraphProto &g) { *g.add_node() = conv(); }, {3, 8}); break;
        case 5:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_initializer() = intTensor("s", Tp::INT64, {2}, {3, 64});
                *g.add_node() = test::node("Reshape", {"x", "s"}, {"r"}, "reshape");
                *g.add_node() = test::node("Conv", {"r", "W"}, {"y"}, "conv");
            });
            break;
        case 6:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_initializer() = test::floatTensor("W3", {2, 3, 3}, std::vector<float>(18, 0.1f));
                *g.add_node() = test::node("Conv", {"x", "W3"}, {"y"}, "conv");
            });
            break;
        case 7:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_initializer() = intTensor("sp", Tp::INT64, {}, {0});
                *g.add_node() = test::node("SplitToSequence", {"x", "sp"}, {"y"}, "split");
            });
            break;
        case 8:
            m = model(13, [&](onnx::GraphProto &g) {
                auto n = test::node("DepthToSpace", {"x"}, {"y"}, "d2s");
                addInt(n, "blocksize", 0);
                *g.add_node() = n;
            });
            break;
        case 9:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_node() = test::node("Constant", {}, {"k"}, "k");
                *g.add_node() = conv();
                g.mutable_node(1)->set_output(0, "c");
                *g.add_node() = test::node("Mul", {"c", "k"}, {"y"}, "mul");
            });
            break;
        case 10:
        case 11: {
            m = model(13, [&](onnx::GraphProto &g) {
                auto n = test::node(kind == 10 ? "F" : "A", {"x"}, {"y"}, "call");
                n.set_domain("local");
                *g.add_node() = n;
            });
            auto *op = m.add_opset_import();
            op->set_domain("local");
            op->set_version(1);
            auto addFunction = [&](const std::string &name, const std::string &callee) {
                auto *f = m.add_functions();
                f->set_name(name);
                f->set_domain("local");
                f->add_input("a");
                f->add_output("b");
                auto *o = f->add_opset_import();
                o->set_domain("local");
                o->set_version(1);
                auto n = test::node(callee, {"a"}, {"b"});
                n.set_domain("local");
                *f->add_node() = n;
            };
            if (kind == 10) {
                addFunction("F", "F");
            } else {
                addFunction("A", "B");
                addFunction("B", "A");
            }
            break;
        }
        case 12:
        case 13:
        case 14:
            m = model(12, [&](onnx::GraphProto &g) {
                *g.add_initializer() = test::floatTensor("b", {3, 4}, std::vector<float>(12, 1.0f));
                auto n = test::node("Einsum", {"x", "b"}, {"y"}, "einsum");
                addString(n, "equation", kind == 12 ? "ij,jk->ik->" : kind == 13 ? "i(j),jk->ik" : "iij->i");
                *g.add_node() = n;
            });
            break;
        case 15:
            m = model(18, [&](onnx::GraphProto &g) {
                auto n = test::node("Split", {"x"}, {"y"}, "split");
                addInt(n, "num_outputs", 0);
                *g.add_node() = n;
            });
            break;
        case 16:
        case 18:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_input() = test::tensorInfo("c", Tp::BOOL, {});
                auto n = test::node("If", {"c"}, {"y"}, "if");
                onnx::GraphProto then;
                then.set_name("then");
                *then.add_input() = test::tensorInfo("q", Tp::FLOAT, {2});
                *then.add_node() = test::node("Identity", {"x"}, {"o"});
                *then.add_output() = test::tensorInfo("o", Tp::FLOAT, {});
                onnx::GraphProto otherwise = then;
                otherwise.set_name("else");
                otherwise.clear_input();
                for (auto [name, body] : {std::pair{"then_branch", &then}, std::pair{"else_branch", &otherwise}}) {
                    if (kind == 18 && std::string(name) == "then_branch")
                        continue;
                    auto *a = n.add_attribute();
                    a->set_name(name);
                    a->set_type(onnx::AttributeProto::GRAPH);
                    *a->mutable_g() = *body;
                }
                *g.add_node() = n;
            });
            break;
        case 17:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_node() = test::node("Relu", {"x"}, {"y", "y2", "y3"}, "relu");
            });
            break;
        case 19:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_initializer() = test::floatTensor("sc", {4}, {1.f, 1.f, std::nanf(""), 2.f});
                *g.add_node() = test::node("Resize", {"x", "", "sc"}, {"y"}, "resize");
            });
            break;
        case 20:
            m = model(13, [&](onnx::GraphProto &g) {
                auto n = conv();
                auto *a = n.add_attribute();
                a->set_name("strides");
                a->set_type(onnx::AttributeProto::FLOATS);
                a->add_floats(1.f);
                a->add_floats(1.f);
                *g.add_node() = n;
            });
            break;
        case 21:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_initializer() = test::floatTensor("B", {5}, std::vector<float>(5, 1.f));
                *g.add_node() = test::node("Conv", {"x", "W", "B"}, {"y"}, "conv");
            });
            break;
        case 23:
            m = model(18, [&](onnx::GraphProto &g) { *g.add_node() = test::node("Scan", {"x"}, {"y"}, "scan"); });
            break;
        case 24:
        case 25:
            m = model(13, [&](onnx::GraphProto &g) {
                auto n = test::node(kind == 24 ? "MaxPool" : "AveragePool", {"x"}, {"y"}, "pool");
                addInts(n, "kernel_shape", kind == 24 ? std::vector<std::int64_t>{2, 2} : std::vector<std::int64_t>{3, 3});
                addInts(n, "pads", kind == 24 ? std::vector<std::int64_t>{0, 0, 2147483647, 0}
                                              : std::vector<std::int64_t>{3, 0, 0, 0});
                *g.add_node() = n;
            });
            break;
        case 26:
        case 27:
            m = model(13, [&](onnx::GraphProto &g) {
                const bool lstm = kind == 26;
                const std::int64_t gates = lstm ? 4 : 1;
                *g.add_initializer() = test::floatTensor("Wr", {1, 2 * gates, 3}, std::vector<float>(6 * gates, 0.1f));
                *g.add_initializer() = test::floatTensor("Rr", {1, 2 * gates, 2}, std::vector<float>(4 * gates, 0.1f));
                *g.add_initializer() = intTensor("sl", Tp::INT32, {1}, {9});
                auto n = lstm ? test::node("LSTM", {"x", "Wr", "Rr", "", "sl"}, {"y"}, "rnn")
                              : test::node("RNN", {"x", "Wr", "Rr"}, {"y"}, "rnn");
                addInt(n, "hidden_size", 2);
                if (!lstm)
                    addInt(n, "layout", 2);
                *g.add_node() = n;
            }, {4, 1, 3});
            break;
        case 28:
        case 29:
        case 32:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_initializer() = test::floatTensor("sc", {4}, {1.f, 1.f, 2.f, 2.f});
                *g.add_initializer() = intTensor("sz", Tp::INT64, {4}, {1, 3, 16, 16});
                *g.add_initializer() = test::floatTensor("roi", {4}, {0.f, 0.f, 1.f, 1.f});
                auto n = kind == 28   ? test::node("Resize", {"x", "", "sc", "sz"}, {"y"}, "resize")
                         : kind == 29 ? test::node("Resize", {"x", "", "sc"}, {"y"}, "resize")
                                      : test::node("Resize", {"x", "roi", "sc"}, {"y"}, "resize");
                addString(n, "coordinate_transformation_mode",
                          kind == 29 ? "half_pixel_bogus" : kind == 32 ? "tf_crop_and_resize" : "half_pixel");
                *g.add_node() = n;
            });
            break;
        case 30:
            m = model(13, [&](onnx::GraphProto &g) {
                *g.add_initializer() = test::floatTensor("Wt", {3, 2, 3, 3}, std::vector<float>(54, 0.1f));
                auto n = test::node("ConvTranspose", {"x", "Wt"}, {"y"}, "convt");
                addInts(n, "strides", {2, 2});
                addInts(n, "output_padding", {2, 2});
                *g.add_node() = n;
            });
            break;
        case 31:
            m = model(13, [&](onnx::GraphProto &g) {
                auto n = conv();
                addInts(n, "kernel_shape", {2, 2});
                *g.add_node() = n;
            });
            break;
        case 33:
        case 34:
            m = model(18, [&](onnx::GraphProto &g) {
                const std::vector<std::int64_t> axes = kind == 33 ? std::vector<std::int64_t>{5}
                                                                  : std::vector<std::int64_t>{3, -1};
                *g.add_initializer() = intTensor("pads", Tp::INT64, {std::int64_t(2 * axes.size())},
                                                 std::vector<std::int64_t>(2 * axes.size(), 1));
                *g.add_initializer() = intTensor("axes", Tp::INT64, {std::int64_t(axes.size())}, axes);
                *g.add_node() = test::node("Pad", {"x", "pads", "", "axes"}, {"y"}, "pad");
            });
            break;
        case 35:
            m = model(18, [&](onnx::GraphProto &g) {
                *g.add_initializer() = intTensor("starts", Tp::INT64, {2}, {0, 1});
                *g.add_initializer() = intTensor("ends", Tp::INT64, {2}, {1, 2});
                *g.add_initializer() = intTensor("axes", Tp::INT64, {2}, {3, -1});
                *g.add_node() = test::node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "slice");
            });
            break;
        case 36:
        case 37:
            m = model(13, [&](onnx::GraphProto &g) {
                auto n = test::node("Transpose", {"x"}, {"t"}, "t1");
                addInts(n, "perm", {0, 2, 3, 1});
                *g.add_node() = n;
                auto n2 = test::node("Transpose", {"t"}, {"y"}, "t2");
                addInts(n2, "perm", kind == 36 ? std::vector<std::int64_t>{0, -1, 2, 3} : std::vector<std::int64_t>{0, 1, 1, 3});
                *g.add_node() = n2;
            });
            break;
        case 38:
            m = model(13, [&](onnx::GraphProto &g) {
                auto c = test::node("Constant", {}, {"sp"}, "c");
                auto *value = c.add_attribute();
                value->set_name("value");
                value->set_type(onnx::AttributeProto::TENSOR);
                *value->mutable_t() = intTensor("", Tp::INT64, {}, {0});
                *g.add_node() = c;
                *g.add_node() = test::node("SplitToSequence", {"x", "sp"}, {"y"}, "split");
            });
            break;
        case 39:
            m = model(17, [&](onnx::GraphProto &g) {
                *g.add_initializer() = test::floatTensor("sc", {8}, std::vector<float>(8, 1.0f));
                *g.add_node() = test::node("SequenceConstruct", {"x"}, {"s"}, "seq");
                *g.add_node() = test::node("LayerNormalization", {"s", "sc"}, {"y", "mean"}, "ln");
            });
            break;
        case 40:
            m = model(17, [&](onnx::GraphProto &g) { *g.add_node() = test::node("SequenceLength", {"x"}, {"y"}, "len"); });
            break;
        case 22:
            m = model(13, [&](onnx::GraphProto &g) {
                auto n = test::node("Conv", {"x", "W"}, {"y"}, "two\nlines");
                addInts(n, "strides", {0, 0});
                *g.add_node() = n;
            });
            break;
        }
        QTemporaryDir tmp;
        const fs::path path = fs::path(tmp.path().toStdString()) / "bad.onnx";
        test::writeProto(path, m);
        const QString in = QString::fromStdString(path.string());
        const QString out = tmp.filePath("out.onnx");
        // Problems found at load fail every command; problems found by a kernel fail `run` only.
        const bool kernelOnly = kind == 19 || kind == 21 || (kind >= 26 && kind <= 35);
        const std::vector<QStringList> commands = {
            {"info", in}, {"run", in, "--iterations", "1"}, {"optimize", in, "--level", "all", "-o", out}};
        for (const QStringList &args : commands) {
            const Run r = cli(args);
            QVERIFY2(r.exitCode != -2, qPrintable(args.first() + " crashed: " + r.err));
            QVERIFY2(r.exitCode != -3, qPrintable(args.first() + " did not finish in 60 s"));
            if (kernelOnly && args.first() != "run") {
                QVERIFY2(r.exitCode == 0, qPrintable(args.first() + ": " + r.err));
                continue;
            }
            QVERIFY2(r.exitCode == 1, qPrintable(args.first() + " exited " + QString::number(r.exitCode) + ": " + r.err));
            QVERIFY2(r.err.contains(expected), qPrintable(args.first() + ": " + r.err));
            QVERIFY2(r.err.trimmed().count('\n') == 0, qPrintable("more than one line: " + r.err));
        }
        QVERIFY(!fs::exists(out.toStdString()) || kernelOnly);
    }

    // An output path that is a FIFO (or a device: -o /dev/null as root) was replaced by a regular
    // file; a symbolic link was replaced by a file instead of writing its target.
    void outputsNeverReplaceDevicesOrLinks_data()
    {
        QTest::addColumn<QString>("command");
        QTest::newRow("optimize -o") << "optimize";
        QTest::newRow("optimize --report") << "report";
        QTest::newRow("convert") << "convert";
        QTest::newRow("profile --trace") << "trace";
    }

    void outputsNeverReplaceDevicesOrLinks()
    {
        QFETCH(QString, command);
        QTemporaryDir dir;
        const QString in = QString::fromStdString(test::samplePath("inception_block.onnx").string());
        auto args = [&](const QString &out) -> QStringList {
            if (command == "optimize")
                return {"optimize", in, "-o", out, "-q"};
            if (command == "report")
                return {"optimize", in, "--report", out, "-q"};
            if (command == "convert")
                return {"convert", in, out};
            return {"profile", in, "--iterations", "1", "--trace", out};
        };
        const std::string fifo = dir.filePath("fifo").toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
        const Run r = cli(args(QString::fromStdString(fifo)), 30000);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("FIFO"), qPrintable(r.err));
        QVERIFY(fs::is_fifo(fifo)); // still a FIFO
        // Through a link: the target is written, the link stays a link.
        const fs::path target = dir.filePath("target.out").toStdString(), link = dir.filePath("link.out").toStdString();
        test::writeBytes(target, "old");
        fs::create_symlink(target, link);
        const Run w = cli(args(QString::fromStdString(link.string())), 60000);
        QVERIFY2(w.exitCode == 0, qPrintable(w.err));
        QVERIFY(fs::is_symlink(link));
        QVERIFY(fs::file_size(target) > 3);
    }

    void savedOutputsNeverOverwriteEachOther()
    {
        // "a/b", "a:b" and "a_b" all make a_b.npy: each output gets its own file.
        onnx::ModelProto m = test::smallModel();
        auto *g = m.mutable_graph();
        g->clear_output();
        g->mutable_node(1)->set_output(0, "a/b");
        *g->add_node() = test::node("Neg", {"sum"}, {"a:b"}, "neg");
        *g->add_node() = test::node("Abs", {"sum"}, {"a_b"}, "abs");
        *g->add_node() = test::node("Relu", {"sum"}, {std::string(300, 'n')}, "long");
        for (const std::string &name : std::vector<std::string>{"a/b", "a:b", "a_b", std::string(300, 'n')})
            *g->add_output() = test::tensorInfo(name, onnx::TensorProto::FLOAT, {2, 3});
        QTemporaryDir dir;
        const QString model = dir.filePath("collide.onnx"), out = dir.filePath("outs");
        test::writeProto(model.toStdString(), m);
        const Run r = cli({"run", model, "--save-outputs", out, "--iterations", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        int files = 0;
        for (const auto &entry : fs::directory_iterator(out.toStdString()))
            files += entry.path().extension() == ".npy";
        QCOMPARE(files, 4);
    }

    // Every input a fuzz target once crashed on (bench/fuzz/run.sh writes them as crash-*; each is
    // kept in tests/fuzz-regressions/ under a name saying what it was): loads end in exit 0 or 1.
    // Kernels read their inputs as the schema's types: a value of another type (a float Where
    // condition, float + int64) must be refused before the kernel reinterprets its bytes. The
    // graphs declare the offending types on their inputs, as a model with wrong declarations does.
    void inputTypesAreCheckedBeforeKernels_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("Where float condition")
            << 0 << "node 'where' (Where): input 0 'a' is float32, which Where does not accept there (bool)";
        QTest::newRow("Add float and int64")
            << 1 << "input 0 'a' is float32 and input 1 'b' is int64; Add needs them of one type (T)";
        QTest::newRow("Compress uint8 condition") << 2 << "input 1 'b' is uint8, which Compress does not accept";
        QTest::newRow("Max variadic mixed") << 3 << "input 0 'a' is float32 and input 2 'c' is float64";
        QTest::newRow("Where bool condition runs") << 4 << "";
        QTest::newRow("Concat mixed") << 5 << "Concat needs them of one type (T)";
    }

    void inputTypesAreCheckedBeforeKernels()
    {
        QFETCH(int, kind);
        QFETCH(QString, expected);
        using Tp = onnx::TensorProto;
        const int types[][3] = {{Tp::FLOAT, Tp::FLOAT, Tp::FLOAT}, {Tp::FLOAT, Tp::INT64, Tp::FLOAT},
                                {Tp::FLOAT, Tp::UINT8, Tp::FLOAT}, {Tp::FLOAT, Tp::FLOAT, Tp::DOUBLE},
                                {Tp::BOOL, Tp::FLOAT, Tp::FLOAT},  {Tp::FLOAT, Tp::INT64, Tp::FLOAT}};
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(13);
        auto *g = m.mutable_graph();
        g->set_name("types");
        const char *names[] = {"a", "b", "c"};
        for (int i = 0; i < 3; ++i)
            *g->add_input() = test::tensorInfo(names[i], types[kind][i], {4});
        switch (kind) {
        case 0:
        case 4: *g->add_node() = test::node("Where", {"a", "b", "c"}, {"y"}, "where"); break;
        case 1: *g->add_node() = test::node("Add", {"a", "b"}, {"y"}, "add"); break;
        case 2: *g->add_node() = test::node("Compress", {"a", "b"}, {"y"}, "compress"); break;
        case 3: *g->add_node() = test::node("Max", {"a", "b", "c"}, {"y"}, "max"); break;
        case 5: {
            auto n = test::node("Concat", {"a", "b"}, {"y"}, "concat");
            auto *axis = n.add_attribute();
            axis->set_name("axis");
            axis->set_type(onnx::AttributeProto::INT);
            axis->set_i(0);
            *g->add_node() = n;
            break;
        }
        }
        onnx::ValueInfoProto y;
        y.set_name("y");
        *g->add_output() = y;
        // At load already: `info` and the app warn about what a run will refuse.
        onnx::ModelProto copy = m;
        Expected<ImportResult> imported = importModel(copy, ImportOptions{});
        QVERIFY(imported);
        bool warned = false;
        for (const std::string &w : imported->warnings)
            warned |= !expected.isEmpty() && QString::fromStdString(w).contains(expected) &&
                       QString::fromStdString(w).contains(QStringLiteral("running the model will fail"));
        QCOMPARE(warned, !expected.isEmpty());
        auto s = session(m);
        QVERIFY(s);
        const auto tensor = [](int type, std::vector<std::uint8_t> bytes) {
            const DataType t = DataType(type);
            RuntimeTensor r = *RuntimeTensor::allocate(t, {4});
            std::memset(r.mutableData<std::uint8_t>(), 0, r.byteSize());
            for (std::size_t i = 0; i < bytes.size(); ++i)
                r.mutableData<std::uint8_t>()[i * dataTypeSize(t)] = bytes[i];
            return r;
        };
        Feeds feeds;
        for (int i = 0; i < 3; ++i)
            feeds.emplace_back(names[i], tensor(types[kind][i], {1, 0, 1, 0}));
        const auto out = s->run(feeds);
        if (expected.isEmpty()) {
            QVERIFY2(out, out.status().message().c_str());
            QCOMPARE((*out)[0].elementCount(), 4);
            return;
        }
        QVERIFY(!out);
        QCOMPARE(out.status().kind(), ErrorKind::InvalidInput);
        QVERIFY2(QString::fromStdString(out.status().message()).contains(expected),
                 out.status().message().c_str());
    }

    void fuzzRegressions()
    {
        const fs::path dir = test::sourceDir() / "tests" / "fuzz-regressions";
        int files = 0;
        for (const auto &entry : fs::directory_iterator(dir)) {
            const QString path = QString::fromStdString(entry.path().string());
            const QString sample = QString::fromStdString(test::samplePath("transformer_block.onnx").string());
            // Models are loaded and run; tensor files are read as a --input of the sample.
            // Models are also optimized at level all (what the pipeline fuzz target does).
            const QString out = QDir::temp().filePath(QStringLiteral("opscope-fuzz-regression.onnx"));
            const std::vector<QStringList> commands =
                entry.path().extension() == ".onnx"
                    ? std::vector<QStringList>{{"info", path},
                                               {"run", path, "--iterations", "1"},
                                               {"optimize", path, "--level", "all", "-o", out, "--force"}}
                    : std::vector<QStringList>{{"run", sample, "--iterations", "1", "--input", "x=" + path}};
            for (const QStringList &args : commands) {
                const Run r = cli(args);
                QVERIFY2(r.exitCode == 0 || r.exitCode == 1,
                         qPrintable(args.join(' ') + " exited " + QString::number(r.exitCode) + ": " + r.err));
            }
            ++files;
        }
        QVERIFY(files > 0);
    }

    // A scalar has no axes. Kernels took axis 0 of a rank-0 input as valid and then read the size
    // of that axis past an empty shape (fuzzing found it in Concat; Split, Softmax and TopK did
    // the same). Every axis-taking kernel given a scalar answers with an error instead.
    void axisOfAScalarIsRefused_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("inputs");
        QTest::newRow("Concat") << "Concat" << 2;
        QTest::newRow("Split") << "Split" << 1;
        QTest::newRow("Softmax") << "Softmax" << 1;
        QTest::newRow("LogSoftmax") << "LogSoftmax" << 1;
        QTest::newRow("TopK") << "TopK" << 1;
        QTest::newRow("ArgMax") << "ArgMax" << 1;
        QTest::newRow("LpNormalization") << "LpNormalization" << 1;
        QTest::newRow("Gather") << "Gather" << 1;
    }

    void axisOfAScalarIsRefused()
    {
        QFETCH(QString, op);
        QFETCH(int, inputs);
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(13);
        auto *g = m.mutable_graph();
        g->set_name("scalar");
        // Rank unknown at load (no shape declared), so the load-time checks cannot refuse it:
        // the kernel meets the scalar.
        *g->add_input() = test::tensorInfo("x", Tp::FLOAT, {});
        g->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
        std::vector<std::string> names(std::size_t(inputs), "x");
        if (op == "TopK") {
            *g->add_initializer() = test::int64Tensor("k", {1}, {1});
            names.push_back("k");
        }
        if (op == "Gather") {
            *g->add_initializer() = test::int64Tensor("i", {}, {0});
            names.push_back("i");
        }
        onnx::NodeProto n = test::node(op.toStdString(), names, op == "TopK" ? std::vector<std::string>{"y", "idx"}
                                                                            : std::vector<std::string>{"y"},
                                       "n");
        addInt(n, "axis", 0);
        *g->add_node() = n;
        onnx::ValueInfoProto y;
        y.set_name("y");
        *g->add_output() = y;
        auto s = session(m);
        QVERIFY(s);
        RuntimeTensor x = *RuntimeTensor::allocate(DataType::Float, {});
        x.mutableData<float>()[0] = 1.f;
        const auto out = s->run({{"x", x}});
        QVERIFY(!out);
        QCOMPARE(out.status().kind(), ErrorKind::InvalidInput);
        QVERIFY2(QString::fromStdString(out.status().message()).contains("rank"), out.status().message().c_str());
    }

    // A negative size in an input's shape becomes a named symbol, said in a warning, bindable.
    void negativeDimensionIsASymbol()
    {
        onnx::ModelProto m = test::smallModel();
        m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(-3);
        QTemporaryDir tmp;
        const fs::path path = fs::path(tmp.path().toStdString()) / "neg.onnx";
        test::writeProto(path, m);
        const QString in = QString::fromStdString(path.string());
        const Run info = cli({"run", in, "--iterations", "1"});
        QCOMPARE(info.exitCode, 0);
        QVERIFY2(info.err.contains("dimension 'x_dim0' is not bound; using 1 (--dim x_dim0=VALUE)"), qPrintable(info.err));
        QCOMPARE(cli({"run", in, "--iterations", "1", "--dim", "x_dim0=2"}).exitCode, 0);
    }

    // External-data fields are whole decimal numbers; "12abc" and "-1" once parsed as 12 and 2^64-1.
    void externalDataNumbers_data()
    {
        QTest::addColumn<QString>("offset");
        QTest::newRow("trailing text") << "12abc";
        QTest::newRow("negative") << "-1";
        QTest::newRow("empty") << "";
    }

    void externalDataNumbers()
    {
        QFETCH(QString, offset);
        QTemporaryDir tmp;
        const fs::path dir = tmp.path().toStdString();
        test::writeBytes(dir / "w.bin", std::string(64, '\0'));
        onnx::ModelProto m = test::smallModel();
        auto *t = m.mutable_graph()->mutable_initializer(0);
        t->clear_float_data();
        t->clear_raw_data();
        t->set_data_location(Tp::EXTERNAL);
        for (auto [key, value] : {std::pair<std::string, std::string>{"location", "w.bin"}, {"offset", offset.toStdString()}}) {
            auto *kv = t->add_external_data();
            kv->set_key(key);
            kv->set_value(value);
        }
        test::writeProto(dir / "ext.onnx", m);
        const Run r = cli({"info", QString::fromStdString((dir / "ext.onnx").string())});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("is not a whole number"), qPrintable(r.err));
    }

    // Arithmetic that traps on x86 when done naively: the runtime and constant folding agree with
    // two's-complement wrap-around, and integer division by zero yields 0 rather than SIGFPE.
    void integerDivisionEdges_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("type");
        QTest::newRow("Div int32") << "Div" << int(Tp::INT32);
        QTest::newRow("Div int64") << "Div" << int(Tp::INT64);
        QTest::newRow("Mod int32") << "Mod" << int(Tp::INT32);
        QTest::newRow("Mod int64") << "Mod" << int(Tp::INT64);
    }

    void integerDivisionEdges()
    {
        QFETCH(QString, op);
        QFETCH(int, type);
        const std::int64_t min = type == Tp::INT32 ? std::numeric_limits<std::int32_t>::min()
                                                   : std::numeric_limits<std::int64_t>::min();
        for (bool folded : {true, false}) {
            onnx::ModelProto m;
            m.set_ir_version(8);
            m.add_opset_import()->set_version(13);
            auto *g = m.mutable_graph();
            g->set_name("div");
            *g->add_initializer() = intTensor("a", type, {3}, {min, 7, 5});
            *g->add_initializer() = intTensor("b", type, {3}, {-1, 0, -1});
            *g->add_node() = test::node(op.toStdString(), {"a", "b"}, {"y"}, "div");
            *g->add_output() = test::tensorInfo("y", type, {3});
            QTemporaryDir tmp;
            const fs::path path = fs::path(tmp.path().toStdString()) / "div.onnx";
            test::writeProto(path, m);
            // Folded by constant folding at load, or computed by the kernel with --optimize none.
            const Run r = cli({"run", QString::fromStdString(path.string()), "--iterations", "1", "--optimize",
                               folded ? "all" : "none"});
            QVERIFY2(r.exitCode == 0, qPrintable(QString::number(r.exitCode) + ": " + r.err));
        }
    }
};

QTEST_GUILESS_MAIN(TestRobustness)
#include "tst_robustness.moc"
