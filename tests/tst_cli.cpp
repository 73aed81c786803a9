// opscope-cli as a user runs it: info (text and JSON), convert, devices, --help/--version, exit
// codes, and every kind of bad input: one-line error, exit code 1, no output file.

#include "runtime/npy.h"
#include "trace/chrometrace.h"
#include "clirun.h"
#include "testsupport.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <thread>
#include <fstream>
#include <sys/stat.h>

using namespace opscope;
namespace fs = std::filesystem;

using namespace opscope::test::clirun;

namespace {

// A float input of `dims` whose first dim is the symbol `symbol`.
onnx::ValueInfoProto leadingSymbol(const std::string &name, const std::vector<std::int64_t> &dims,
                                   const std::string &symbol)
{
    onnx::ValueInfoProto v = test::tensorInfo(name, onnx::TensorProto::FLOAT, dims);
    v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(symbol);
    return v;
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT
private slots:
    void helpAndVersion()
    {
        const Run version = cli({"--version"});
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.startsWith("opscope-cli "));
        for (const char *cmd : {"info", "convert", "devices"}) {
            const Run help = cli({cmd, "--help"});
            QCOMPARE(help.exitCode, 0);
            QVERIFY2(help.out.contains("Usage"), qPrintable(help.out));
        }
        QCOMPARE(cli({}).exitCode, 1);
        const Run unknown = cli({"frobnicate"});
        QCOMPARE(unknown.exitCode, 1);
        QVERIFY2(unknown.err.startsWith("opscope-cli: error: unknown command 'frobnicate'"), qPrintable(unknown.err));
        QCOMPARE(cli({"info"}).exitCode, 1);
        QCOMPARE(cli({"info", sample("inception_block.onnx"), "--bogus"}).exitCode, 1);
    }

    void infoText()
    {
        const Run r = cli({"info", sample("inception_block.onnx")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.err.isEmpty());
        for (const char *expected : {"producer     opscope-samples 1.0", "opsets       ai.onnx 13",
                                     "inputs       input  float32 [1,3,64,64]", "nodes        25",
                                     "parameters   8,834 in 22 initializers", "shapes       all known",
                                     "Conv 8", "/inception/branch3x3.weight"})
            QVERIFY2(r.out.contains(expected),
                     qPrintable("missing '" + QString(expected) + "' in\n" + r.out));
        // Values of unknown shape are named, not only counted.
        onnx::ModelProto m = test::smallModel();
        *m.mutable_graph()->add_node() = test::node("Foo", {"y"}, {"mystery"}, "custom");
        m.mutable_graph()->mutable_node(2)->set_domain("com.example");
        auto *op = m.add_opset_import();
        op->set_domain("com.example");
        op->set_version(1);
        QTemporaryDir dir;
        test::writeProto(dir.filePath("custom.onnx").toStdString(), m);
        const Run u = cli({"info", dir.filePath("custom.onnx")});
        QVERIFY2(u.out.contains("unknown      mystery"), qPrintable(u.out + u.err));
    }

    void infoJson()
    {
        const Run r = cli({"info", "--json", sample("transformer_block.onnx")});
        QCOMPARE(r.exitCode, 0);
        QJsonParseError error;
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8(), &error).object();
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(j["ir_version"].toInt(), 7);
        QCOMPARE(j["node_count"].toInt(), 50);
        QCOMPARE(j["op_histogram"].toObject()["MatMul"].toInt(), 8);
        const QJsonArray shape = j["inputs"].toArray()[0].toObject()["shape"].toArray();
        QCOMPARE(shape[0].toString(), QString("batch"));
        QCOMPARE(shape[2].toInt(), 64);
        QCOMPARE(j["parameters"].toObject()["count"].toInteger(), 49997);
        QVERIFY(j["shapes"].toObject()["all_known"].toBool());
        QVERIFY(j["warnings"].toArray().isEmpty());
        for (const char *key : {"path", "producer", "opsets", "graph_name", "outputs",
                                "node_count_with_subgraphs", "function_count", "largest_initializers"})
            QVERIFY2(j.contains(key), key);
    }

    void convertRoundTrip()
    {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("out.onnx");
        Run r = cli({"convert", sample("inception_block.onnx"), out, "--external-data=2048"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(QFile::exists(out + ".data"));
        r = cli({"info", "--json", out});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(j["node_count"].toInt(), 25);
        QVERIFY(j["parameters"].toObject()["external_bytes"].toInteger() > 20000);

        // Back to one file.
        const QString embedded = tmp.filePath("embedded.onnx");
        QCOMPARE(cli({"convert", out, embedded, "--embed", "-q"}).exitCode, 0);
        QVERIFY(!QFile::exists(embedded + ".data"));
        QCOMPARE(cli({"convert", out, embedded, "--embed", "--external-data"}).exitCode, 1);

        // The threshold after a space, as the help reads (it was taken for a third file): a
        // threshold above every tensor leaves OUT.data empty, so nothing is external.
        const QString spaced = tmp.filePath("spaced.onnx");
        r = cli({"convert", "--external-data", "100000000", sample("inception_block.onnx"), spaced});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = cli({"info", "--json", spaced});
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["parameters"].toObject()["external_bytes"]
                     .toInteger(), 0);
        r = cli({"convert", sample("inception_block.onnx"), tmp.filePath("spaced2.onnx"), "--external-data", "64"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(QFile::exists(tmp.filePath("spaced2.onnx.data")));
    }

    void convertNeverOverwritesInputUnlessForced()
    {
        QTemporaryDir tmp;
        const fs::path in = fs::path(tmp.path().toStdString()) / "m.onnx";
        fs::copy_file(test::samplePath("inception_block.onnx"), in);
        const std::string before = readFile(in);
        const Run r =
            cli({"convert", QString::fromStdString(in.string()), QString::fromStdString(in.string())});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("is the input model; pass --force"), qPrintable(r.err));
        QCOMPARE(readFile(in), before);
        QCOMPARE(cli({"convert", QString::fromStdString(in.string()), QString::fromStdString(in.string()),
                      "--force"})
                     .exitCode,
                 0);
        QCOMPARE(cli({"info", QString::fromStdString(in.string())}).exitCode, 0);
    }

    void badInput_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("expected");
        QTest::newRow("missing file") << 0 << 1 << "does not exist";
        QTest::newRow("empty file") << 1 << 1 << "is empty";
        QTest::newRow("random bytes") << 2 << 1 << "error:";
        QTest::newRow("truncated model") << 3 << 1 << "corrupt or truncated";
        QTest::newRow("cycle") << 4 << 1 << "has a cycle";
        QTest::newRow("dangling input") << 5 << 1 << "which no node, initializer or graph input produces";
        QTest::newRow("two producers") << 6 << 1 << "is produced by two nodes";
        QTest::newRow("initializer size") << 7 << 1 << "holds 4 bytes but its shape [3] of float32 needs 12";
        QTest::newRow("dims overflow") << 8 << 1 << "overflows 64 bits";
        QTest::newRow("external escape") << 9 << 1 << "contains '..'";
        QTest::newRow("unknown domain") << 10 << 0 << "warning: operator 'com.acme::Frob'";
        QTest::newRow("folder") << 11 << 1 << "is a folder";
    }

    void badInput()
    {
        QFETCH(int, kind);
        QFETCH(int, exitCode);
        QFETCH(QString, expected);
        QTemporaryDir tmp;
        const fs::path dir = tmp.path().toStdString();
        const fs::path model = dir / "model.onnx";
        onnx::ModelProto m = test::smallModel();
        auto *g = m.mutable_graph();
        switch (kind) {
        case 0: break;
        case 1: test::writeBytes(model, ""); break;
        case 2: {
            std::string bytes(4096, '\0');
            QRandomGenerator rng(42);
            for (char &c : bytes)
                c = static_cast<char>(rng.bounded(256));
            test::writeBytes(model, bytes);
            break;
        }
        case 3: {
            const std::string full = readFile(test::samplePath("inception_block.onnx"));
            test::writeBytes(model, full.substr(0, full.size() / 2));
            break;
        }
        case 4: g->mutable_node(0)->set_input(0, "y"); break;
        case 5: g->mutable_node(1)->set_input(0, "nowhere"); break;
        case 6: *g->add_node() = test::node("Abs", {"x"}, {"y"}, "abs"); break;
        case 7: g->mutable_initializer(0)->set_raw_data(std::string(4, '\0')); break;
        case 8: {
            auto *shape = g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
            shape->mutable_dim(0)->set_dim_value(1LL << 62);
            shape->mutable_dim(1)->set_dim_value(1LL << 62);
            break;
        }
        case 9: {
            auto *t = g->mutable_initializer(0);
            t->clear_raw_data();
            t->set_data_location(onnx::TensorProto::EXTERNAL);
            auto *kv = t->add_external_data();
            kv->set_key("location");
            kv->set_value("../../etc/passwd");
            break;
        }
        case 10: {
            auto *n = g->add_node();
            *n = test::node("Frob", {"y"}, {"z"}, "frob");
            n->set_domain("com.acme");
            auto *op = m.add_opset_import();
            op->set_domain("com.acme");
            op->set_version(1);
            break;
        }
        case 11: fs::create_directory(model); break;
        }
        if (kind >= 4 && kind <= 10)
            test::writeProto(model, m);

        const QString in = QString::fromStdString(model.string());
        const Run info = cli({"info", in});
        QCOMPARE(info.exitCode, exitCode);
        QVERIFY2((info.err + info.out).contains(expected), qPrintable(info.err));
        if (exitCode != 0) {
            // One line, prefixed, naming the problem.
            QCOMPARE(info.err.count('\n'), 1);
            QVERIFY(info.err.startsWith("opscope-cli: error: "));
            QVERIFY(info.out.isEmpty());
        }

        const fs::path out = dir / "converted.onnx";
        const Run convert = cli({"convert", in, QString::fromStdString(out.string())});
        QCOMPARE(convert.exitCode, exitCode);
        QCOMPARE(fs::exists(out), exitCode == 0);
        // Nothing half-written: no temporary or data files remain beside the output.
        for (const auto &entry : fs::directory_iterator(dir))
            QVERIFY2(entry.path().filename().string().find(".tmp-") == std::string::npos,
                     entry.path().c_str());
    }

    void runModel()
    {
        QTemporaryDir tmp;
        const Run r = cli({"run", sample("inception_block.onnx"), "--iterations", "3", "--seed", "7",
                           "--save-outputs", tmp.filePath("out"), "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonObject out = j["outputs"].toArray()[0].toObject();
        QCOMPARE(out["name"].toString(), QString("probabilities"));
        QCOMPARE(out["dtype"].toString(), QString("float32"));
        QCOMPARE(out["shape"].toArray().size(), 2);
        QVERIFY(QFile::exists(out["file"].toString()));
        const QJsonObject lat = j["latency_ms"].toObject();
        QVERIFY(lat["min"].toDouble() > 0 && lat["min"].toDouble() <= lat["median"].toDouble() &&
                lat["median"].toDouble() <= lat["max"].toDouble());
        QVERIFY(j["peak_rss_mb"].toDouble() > 0);

        // The saved output feeds back in; a symbolic dim binds by name; text mode prints a summary.
        const Run t = cli({"run", sample("transformer_block.onnx"), "--dim", "batch=3", "--iterations", "1"});
        QCOMPARE(t.exitCode, 0);
        QVERIFY2(t.out.contains("output  float32[3,16,64]  min "), qPrintable(t.out));
        QVERIFY(t.out.contains("latency  median "));
        // Without --trace, nothing of a trace's summary: its loop and closing ")" once ran
        // unguarded, reading an empty optional.
        const QStringList lines = t.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines.last().startsWith("latency  median "), qPrintable(t.out));
    }

    // run --trace: one more run after the timed ones as a Chrome trace (on cuda:N with CUPTI's
    // lanes; here the CPU's steps), never over the model or an --input file.
    void runWritesATrace()
    {
        QTemporaryDir tmp;
        const QString trace = tmp.filePath("run.json");
        Run r = cli({"run", sample("inception_block.onnx"), "--iterations", "2", "--trace", trace, "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject t = QJsonDocument::fromJson(r.out.toUtf8()).object()["trace"].toObject();
        QCOMPARE(t["file"].toString(), trace);
        QVERIFY(t["run_ms"].toDouble() > 0);
        Expected<trace::Trace> read = trace::readChromeTrace(trace.toStdString());
        QVERIFY2(read, read ? "" : read.status().message().c_str());
        std::size_t spans = 0;
        for (const trace::Lane &l : read->lanes) {
            QVERIFY2(l.device == "cpu:0" || trace::isHostLane(l.device), l.device.c_str()); // and run setup
            spans += l.spans.size();
        }
        QCOMPARE(std::size_t(t["spans"].toInt()), spans);
        QVERIFY(spans >= 10); // the sample's nodes after optimization
        r = cli({"run", sample("inception_block.onnx"), "--iterations", "1", "--trace", trace});
        QVERIFY2(r.exitCode == 0 && r.out.contains("trace    " + trace), qPrintable(r.out + r.err));

        // Spans show the sizes the run had, not the graph's "batch" (a new-user trial).
        r = cli({"run", sample("transformer_block.onnx"), "--iterations", "1", "--dim", "batch=3", "--trace", trace});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        read = trace::readChromeTrace(trace.toStdString());
        QVERIFY(read);
        std::size_t withShapes = 0;
        for (const trace::Lane &l : read->lanes)
            for (const trace::Span &s : l.spans)
                if (s.shapes != trace::kNoString) {
                    ++withShapes;
                    QVERIFY2(read->strings[s.shapes].find("batch") == std::string::npos, read->strings[s.shapes].c_str());
                }
        QVERIFY(withShapes > 5);

        r = cli({"run", sample("inception_block.onnx"), "--iterations", "1", "--trace", ""});
        QVERIFY2(r.exitCode == 1 && r.err.contains("needs a file name"), qPrintable(r.err)); // was ignored

        const fs::path in = fs::path(tmp.path().toStdString()) / "m.onnx";
        fs::copy_file(test::samplePath("inception_block.onnx"), in);
        const std::string before = readFile(in);
        r = cli({"run", QString::fromStdString(in.string()), "--iterations", "1", "--trace",
                 QString::fromStdString(in.string())});
        QVERIFY2(r.exitCode == 1 && r.err.contains("is the input model; pass --force"), qPrintable(r.err));
        QCOMPARE(readFile(in), before);
    }

    void runWarnsWhenOutputsContradictTheirDeclaration()
    {
        // x [N, 3] → Relu → y declared [1, 3] (an exporter that fixed the batch of the output
        // only): inference keeps the declared 1, a run with N = 2 computes [2, 3]. The run
        // succeeds and says so, on stderr and in --json; with N = 1 it says nothing.
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        *g->add_input() = leadingSymbol("x", {2, 3}, "N");
        *g->add_node() = test::node("Relu", {"x"}, {"y"}, "relu");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {1, 3});
        QTemporaryDir dir;
        const QString model = dir.filePath("declared.onnx");
        test::writeProto(model.toStdString(), m);
        const Run r = cli({"run", model, "--dim", "N=2", "--iterations", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains("warning: output 'y' is float32[2,3]; the model declares float32[1,3]"),
                 qPrintable(r.err));
        const Run j = cli({"run", model, "--dim", "N=2", "--iterations", "1", "--json"});
        QCOMPARE(j.exitCode, 0);
        const QJsonArray warnings = QJsonDocument::fromJson(j.out.toUtf8()).object()["warnings"].toArray();
        QCOMPARE(warnings.size(), 1);
        QVERIFY(warnings[0].toString().startsWith("output 'y' is float32[2,3]"));
        const Run fits = cli({"run", model, "--dim", "N=1", "--iterations", "1", "--json"});
        QCOMPARE(fits.exitCode, 0);
        QVERIFY2(!fits.err.contains("warning"), qPrintable(fits.err));
        QCOMPARE(QJsonDocument::fromJson(fits.out.toUtf8()).object()["warnings"].toArray().size(), 0);
    }

    void anOutputInAMissingFolderIsRefusedBeforeAnyWork()
    {
        // optimize ran every pass and printed its report, then failed to write; profile --trace and
        // optimize --report the same.
        const QString missing = QDir::temp().filePath("opscope-no-such-folder-4711/x");
        const QList<QStringList> commands = {
            {"optimize", sample("inception_block.onnx"), "-o", missing + ".onnx", "--level", "all"},
            {"optimize", sample("inception_block.onnx"), "--report", missing + ".json"},
            {"profile", sample("inception_block.onnx"), "--trace", missing + ".json"}};
        for (const QStringList &args : commands) {
            const Run r = cli(args);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("opscope-no-such-folder-4711' does not exist"), qPrintable(r.err));
            QVERIFY2(r.out.isEmpty(), qPrintable(r.out));
        }
    }

    void aGivenInputBindsItsDimsForTheOthers()
    {
        // x [batch, 3] given as [2, 3]: the random m [batch] is made with batch = 2 too (it was 1,
        // and the run failed with "batch is 2 in one input and 1 in input 'm'").
        onnx::ModelProto m = test::emptyModel();
        auto *g = m.mutable_graph();
        *g->add_input() = leadingSymbol("x", {2, 3}, "batch");
        *g->add_input() = leadingSymbol("m", {2}, "batch");
        *g->add_node() = test::node("Unsqueeze", {"m", "axes"}, {"m2"}, "unsq");
        *g->add_initializer() = test::floatTensor("unused", {1}, {0.0f});
        onnx::TensorProto axes;
        axes.set_name("axes");
        axes.set_data_type(onnx::TensorProto::INT64);
        axes.add_dims(1);
        axes.add_int64_data(1);
        *g->add_initializer() = axes;
        *g->add_node() = test::node("Add", {"x", "m2"}, {"y"}, "add");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
        QTemporaryDir dir;
        const QString model = dir.filePath("dims.onnx"), npy = dir.filePath("x.npy");
        test::writeProto(model.toStdString(), m);
        QVERIFY(writeNpy(npy.toStdString(), *RuntimeTensor::zeros(DataType::Float, {2, 3})));
        const Run r = cli({"run", model, "--input", "x=" + npy, "--iterations", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains("not bound"), qPrintable(r.err));
        // A --dim the given input contradicts is refused, in every command that takes both.
        for (const char *command : {"run", "memory", "profile"}) {
            const Run bad = cli({command, model, "--input", "x=" + npy, "--dim", "batch=4"});
            QCOMPARE(bad.exitCode, 1);
            QVERIFY2(bad.err.contains("--dim batch=4 contradicts input 'x'"), qPrintable(bad.err));
        }
        const Run agreeing = cli({"run", model, "--input", "x=" + npy, "--dim", "batch=2", "--iterations", "1"});
        QVERIFY2(agreeing.exitCode == 0, qPrintable(agreeing.err));
    }

    void runBadArguments_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown input") << QStringList{"--input", "nope=x.npy"} << "cannot open 'x.npy'";
        QTest::newRow("bad dim") << QStringList{"--dim", "batch=-2"} << "must be a whole number";
        QTest::newRow("hex dim") << QStringList{"--dim", "batch=0x10"} << "must be a whole number";
        QTest::newRow("dim with trailing text") << QStringList{"--dim", "batch=12abc"} << "must be a whole number";
        QTest::newRow("unknown dim name") << QStringList{"--dim", "batsh=3"} << "have no dimension named 'batsh'";
        QTest::newRow("dim given twice") << QStringList{"--dim", "batch=4", "--dim", "batch=5"}
                                         << "--dim batch is given twice, as 4 and 5";
        QTest::newRow("threads 0") << QStringList{"--threads", "0"} << "give a whole number from 1 to 256, not 0";
        QTest::newRow("threads 100000") << QStringList{"--threads", "100000"}
                                        << "give a whole number from 1 to 256, not 100000";
        // CLI11's own checks printed their bounds as doubles: "not in range 0.000000 to 1797…" (300
        // digits) for --iterations -1, and called "abc" a value out of range.
        QTest::newRow("iterations -1") << QStringList{"--iterations", "-1"} << "give a whole number 0 or more, not -1";
        QTest::newRow("iterations abc") << QStringList{"--iterations", "abc"} << "'abc' is not a whole number";
        QTest::newRow("input is a FIFO") << QStringList{"--input", "x=FIFO"} << "not a regular file";
        QTest::newRow("input is /dev/zero") << QStringList{"--input", "x=/dev/zero"} << "not a regular file";
        QTest::newRow("bad assignment") << QStringList{"--input", "justaname"} << "must look like NAME=VALUE";
        // Device indices were read with stoi: a prefix counted, "cpu:0abc" ran on cpu:0.
        QTest::newRow("device index with trailing text") << QStringList{"--device", "cuda:0abc"} << "has no valid index";
        QTest::newRow("negative device index") << QStringList{"--device", "cuda:-1"} << "has no valid index";
    }

    // A symbolic dim whose name is digits is a name: `info --json` stopped with an internal error
    // on one past int64 and printed "123" as the number 123.
    void symbolicDimsOfDigitsStayNames()
    {
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(17);
        onnx::GraphProto *g = m.mutable_graph();
        g->set_name("g");
        *g->add_node() = test::node("Relu", {"x"}, {"y"});
        onnx::ValueInfoProto x = test::tensorInfo("x", onnx::TensorProto::FLOAT, {4});
        x.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("99999999999999999999");
        x.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("123");
        x.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(7);
        *g->add_input() = x;
        g->add_output()->set_name("y");
        QTemporaryDir tmp;
        const fs::path path = fs::path(tmp.path().toStdString()) / "digits.onnx";
        test::writeProto(path, m);
        const Run r = cli({"info", QString::fromStdString(path.string()), "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonArray shape =
            QJsonDocument::fromJson(r.out.toUtf8()).object()["inputs"].toArray()[0].toObject()["shape"].toArray();
        QCOMPARE(shape.size(), 3);
        QCOMPARE(shape[0].toString(), QString("99999999999999999999"));
        QCOMPARE(shape[1].toString(), QString("123"));
        QCOMPARE(shape[2].toInt(), 7);
    }

    // A dim shape inference could not compute is named "unk__0" by libonnx: info printed that name
    // for outputs ("[unk__0,8,1,1]") beside "?" for the inputs' unknown dims; both are unknown.
    void inventedDimsAreUnknown()
    {
        onnx::ModelProto m = test::emptyModel();
        onnx::GraphProto *g = m.mutable_graph();
        onnx::ValueInfoProto x = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8});
        for (int d : {2, 3})
            x.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(d)->clear_dim_value();
        *g->add_input() = x;
        *g->add_initializer() = test::floatTensor("W", {8, 3, 3, 3}, std::vector<float>(8 * 27, 0.1f));
        *g->add_node() = test::node("Conv", {"x", "W"}, {"y"}, "conv");
        g->add_output()->set_name("y");
        QTemporaryDir tmp;
        const fs::path path = fs::path(tmp.path().toStdString()) / "unk.onnx";
        test::writeProto(path, m);
        Run r = cli({"info", QString::fromStdString(path.string())});
        QVERIFY2(r.exitCode == 0 && !r.out.contains("unk__"), qPrintable(r.out));
        r = cli({"info", QString::fromStdString(path.string()), "--json"});
        const QJsonArray shape =
            QJsonDocument::fromJson(r.out.toUtf8()).object()["outputs"].toArray()[0].toObject()["shape"].toArray();
        QCOMPARE(shape.size(), 4);
        QCOMPARE(shape[1].toInt(), 8);
        QVERIFY2(shape[2].isNull() && shape[3].isNull(), qPrintable(r.out));
    }

    // tf2onnx writes "unk__314" into a graph input for an unknown batch: info prints it "?", so
    // `--dim ?=N` must size it (it said "no dimension named '?' (they have: unk__314)"); its own
    // name binds it too. A Reshape's −1 of that dim is a dim inference cannot compute: the summary
    // says the tensors have some dims unknown, not that their rank is.
    void exporterUnknownDimsBindAsUnnamed()
    {
        onnx::ModelProto m = test::emptyModel();
        onnx::GraphProto *g = m.mutable_graph();
        onnx::ValueInfoProto x = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 6});
        x.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("unk__314");
        *g->add_input() = x;
        onnx::TensorProto shape;
        shape.set_name("shape");
        shape.set_data_type(onnx::TensorProto::INT64);
        shape.add_dims(2);
        for (std::int64_t v : {std::int64_t(-1), std::int64_t(3)})
            shape.add_int64_data(v);
        *g->add_initializer() = shape;
        *g->add_node() = test::node("Reshape", {"x", "shape"}, {"r"});
        *g->add_node() = test::node("Relu", {"r"}, {"y"});
        g->add_output()->set_name("y");
        QTemporaryDir tmp;
        const QString path = tmp.filePath("unk_input.onnx");
        test::writeProto(fs::path(path.toStdString()), m);
        for (const QString &dim : {QStringLiteral("?=4"), QStringLiteral("unk__314=4")}) {
            const Run r = cli({"run", path, "--dim", dim, "--iterations", "1", "--json"});
            QVERIFY2(r.exitCode == 0, qPrintable(r.err));
            const QJsonArray out =
                QJsonDocument::fromJson(r.out.toUtf8()).object()["outputs"].toArray()[0].toObject()["shape"].toArray();
            QCOMPARE(out.size(), 2);
            QCOMPARE(out[0].toInt(), 8); // 4 × 6 / 3
        }
        const Run info = cli({"info", path, "--json"});
        QCOMPARE(info.exitCode, 0);
        const QJsonObject shapes = QJsonDocument::fromJson(info.out.toUtf8()).object()["shapes"].toObject();
        QCOMPARE(shapes["unknown_rank"].toInt(), 0);
        QVERIFY2(shapes["unknown"].toInt() >= 1, qPrintable(info.out));
        const Run text = cli({"info", path});
        QVERIFY2(text.out.contains("with some dims unknown, 0 of unknown rank"), qPrintable(text.out));
    }

    // CPU devices as cpu:N or N alike, in every command that takes them (optimize took only N,
    // profile and memory only cpu:N).
    void devicesTakeEitherForm()
    {
        QTemporaryDir tmp;
        for (const QString &devices : {QStringLiteral("2"), QStringLiteral("cpu:2")}) {
            Run r = cli({"optimize", sample("inception_block.onnx"), "--passes", "partition-for-devices", "--devices",
                         devices, "--target", "none", "-q", "-o", tmp.filePath("part.onnx"), "--force"});
            QVERIFY2(r.exitCode == 0, qPrintable(devices + ": " + r.err));
            r = cli({"memory", sample("inception_block.onnx"), "--devices", devices});
            QVERIFY2(r.exitCode == 0, qPrintable(devices + ": " + r.err));
        }
        const Run bad = cli({"optimize", sample("inception_block.onnx"), "--devices", "gpu:2", "-o",
                             tmp.filePath("x.onnx")});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.startsWith("opscope-cli: error: --devices must be cpu:N (or N)"), qPrintable(bad.err));
    }

    void runBadArguments()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        QTemporaryDir tmp;
        const QString fifo = tmp.filePath("fifo.npy");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0); // opening it must not block
        args.replaceInStrings("FIFO", fifo);
        const Run r = cli(QStringList{"run", sample("transformer_block.onnx")} + args);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    }

    // A FIFO or a device as the model must be refused at once, not read forever.
    void modelIsNotARegularFile()
    {
        QTemporaryDir tmp;
        const QString fifo = tmp.filePath("model.onnx");
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        for (const QString &model : {fifo, QStringLiteral("/dev/zero")}) {
            const Run r = cli({"info", model});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("not a regular file"), qPrintable(r.err));
        }
    }

    // Every path a command writes is checked against every file the input model reads: the model
    // and its external weights, wherever in the model they are referenced.
    void neverOverwritesInputFiles_data()
    {
        QTest::addColumn<QString>("command");
        QTest::newRow("optimize --report IN") << "report";
        QTest::newRow("profile --trace IN") << "trace";
        QTest::newRow("convert IN WEIGHTS") << "weights";
    }

    void neverOverwritesInputFiles()
    {
        QFETCH(QString, command);
        QTemporaryDir tmp;
        const fs::path dir = tmp.path().toStdString();
        // The sample with its weights stored as external data in model.onnx.data.
        const fs::path model = dir / "model.onnx";
        QCOMPARE(cli({"convert", sample("inception_block.onnx"), QString::fromStdString(model.string()),
                      "--external-data=16"})
                     .exitCode,
                 0);
        const fs::path weights = dir / "model.onnx.data";
        QVERIFY(fs::exists(weights));
        const std::string modelBefore = readFile(model), weightsBefore = readFile(weights);
        const QString in = QString::fromStdString(model.string());
        QStringList args;
        if (command == "report")
            args = {"optimize", in, "--report", in};
        else if (command == "trace")
            args = {"profile", in, "--iterations", "1", "--trace", in};
        else
            args = {"convert", in, QString::fromStdString(weights.string())};
        const Run r = cli(args);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("pass --force to overwrite it"), qPrintable(r.err));
        QCOMPARE(readFile(model), modelBefore);
        QCOMPARE(readFile(weights), weightsBefore);
    }

    // A trace or a saved output written over an --input tensor replaced it, exit 0 (sweep, 2026-12-05).
    void neverOverwritesFeedFiles()
    {
        QTemporaryDir tmp;
        // The sample's output is "output": saved as output.npy, over the input of that name.
        const QString feed = tmp.filePath("output.npy");
        QVERIFY(writeNpy(feed.toStdString(), *RuntimeTensor::zeros(DataType::Float, {1, 16, 64})));
        const std::string before = readFile(feed.toStdString());
        const QString given = "hidden_states=" + feed;
        for (const QStringList &args :
             {QStringList{"profile", sample("transformer_block.onnx"), "--schedule", "serial", "--iterations", "1",
                          "--input", given, "--trace", feed},
              QStringList{"run", sample("transformer_block.onnx"), "--iterations", "1", "--input", given,
                          "--save-outputs", tmp.path()}}) {
            const Run r = cli(args);
            QVERIFY2(r.exitCode == 1, qPrintable(args.first() + ": " + r.err));
            QVERIFY2(r.err.contains("is the --input file") && r.err.contains("pass --force"), qPrintable(r.err));
            QCOMPARE(readFile(feed.toStdString()), before);
        }

        // Every --save-outputs path is checked before the run: the second output's file is the
        // --input, so the first (a.npy) must not be written either (it was, then the refusal came).
        onnx::ModelProto two = test::emptyModel();
        *two.mutable_graph()->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3});
        *two.mutable_graph()->add_node() = test::node("Relu", {"x"}, {"a"}, "relu");
        *two.mutable_graph()->add_node() = test::node("Neg", {"x"}, {"y"}, "neg");
        *two.mutable_graph()->add_output() = test::tensorInfo("a", onnx::TensorProto::FLOAT, {2, 3});
        *two.mutable_graph()->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
        test::writeProto(tmp.filePath("two.onnx").toStdString(), two);
        const QString yFeed = tmp.filePath("y.npy");
        QVERIFY(writeNpy(yFeed.toStdString(), *RuntimeTensor::zeros(DataType::Float, {2, 3})));
        const Run r = cli({"run", tmp.filePath("two.onnx"), "--iterations", "1", "--input", "x=" + yFeed,
                           "--save-outputs", tmp.path()});
        QVERIFY2(r.exitCode == 1 && r.err.contains("is the --input file"), qPrintable(r.err));
        QVERIFY(!QFile::exists(tmp.filePath("a.npy")));
    }

    // optimize writes the model first and the report and dumps after it: a model that could not be
    // written left a report describing it. --report naming -o's file would replace the model.
    void optimizeWritesNothingElseWhenTheModelFails()
    {
        QTemporaryDir tmp;
        const QString report = tmp.filePath("report.json"), dump = tmp.filePath("dump");
        Run r = cli({"optimize", sample("inception_block.onnx"), "-o", "/proc/opscope-cannot-write.onnx", "--report",
                     report, "--dump-dir", dump, "--level", "all"});
        QVERIFY2(r.exitCode == 1, qPrintable(r.err));
        QVERIFY(!QFile::exists(report));
        QVERIFY(QDir(dump).isEmpty());
        // Said once (the message named the path twice), and before any pass ran (their tables
        // printed first, then the failure).
        QCOMPARE(r.err.count("/proc/opscope-cannot-write.onnx"), 1);
        QVERIFY2(r.err.contains("cannot create a file in '/proc'") && r.out.isEmpty(), qPrintable(r.out + r.err));
        // The report's folder too: nothing written, not even the model.
        const QString model = tmp.filePath("m.onnx");
        r = cli({"optimize", sample("inception_block.onnx"), "-o", model, "--report", "/proc/r.json", "-q"});
        QVERIFY2(r.exitCode == 1 && !QFile::exists(model), qPrintable(r.err));
        const QString out = tmp.filePath("o.onnx");
        // The same file however it is written: the string, "/./", or a link to -o's file.
        QVERIFY(QFile::link(out, tmp.filePath("link.json")));
        for (const QString &same : {out, tmp.path() + "/./o.onnx", tmp.filePath("link.json")}) {
            r = cli({"optimize", sample("inception_block.onnx"), "-o", out, "--report", same, "-q"});
            QVERIFY2(r.exitCode == 1 && r.err.contains("--report and -o both name"), qPrintable(same + ": " + r.err));
            QVERIFY(!QFile::exists(out));
        }
    }

    void conformanceCommand()
    {
        const QString suite = QString(OPSCOPE_ONNX_TESTDATA) + "/node";
        if (!QDir(suite).exists())
            QSKIP("libonnx-testdata is not installed");
        const Run r = cli({"conformance", suite + "/test_relu", suite + "/test_conv_with_strides_padding",
                           suite + "/test_strnormalizer_export_monday_casesensintive_lower"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("pass         test_relu"), qPrintable(r.out));
        QVERIFY(r.out.contains("unsupported  test_strnormalizer_export_monday_casesensintive_lower"));
        QVERIFY(r.out.trimmed().endsWith("2 passed, 0 failed, 1 skipped"));
        QCOMPARE(cli({"conformance", "/nonexistent"}).exitCode, 1);
    }

    void optimizeWritesReportDumpsAndModel()
    {
        QTemporaryDir tmp;
        const QString out = tmp.filePath("opt.onnx"), report = tmp.filePath("report.json"),
                      dump = tmp.filePath("dump");
        const Run r = cli({"optimize", sample("inception_block.onnx"), "-o", out, "--level", "extended",
                           "--target", "ort", "--report", report, "--dump-dir", dump});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("conv-activation-fusion") && r.out.contains("com.microsoft::FusedConv"),
                 qPrintable(r.out));
        QVERIFY(QFile::exists(out));
        QFile f(report);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject j = QJsonDocument::fromJson(f.readAll()).object();
        const QJsonArray passes = j["passes"].toArray();
        QVERIFY(passes.size() > 10);
        bool sawFusion = false;
        for (const QJsonValue &p : passes) {
            const QJsonObject o = p.toObject();
            for (const char *key : {"name", "changed", "nodes_before", "nodes_after", "ms", "matches"})
                QVERIFY2(o.contains(key), key);
            if (o["name"].toString() == "conv-activation-fusion") {
                sawFusion = true;
                QVERIFY(o["changed"].toBool());
                QCOMPARE(o["matches"].toArray().size(), 8);
                const QJsonObject m = o["matches"].toArray()[0].toObject();
                QCOMPARE(m["matched"].toArray().size(), 2);
                QCOMPARE(m["replacement"].toArray().size(), 1);
            }
        }
        QVERIFY(sawFusion);
        QCOMPARE(j["ops_before"].toObject()["Conv"].toInt(), 8);
        QCOMPARE(j["ops_after"].toObject()["com.microsoft::FusedConv"].toInt(), 8);
        // One file per changing pass, numbered by position, and each loads.
        const QStringList dumps = QDir(dump).entryList({"*.onnx"}, QDir::Files, QDir::Name);
        QVERIFY2(!dumps.filter(QRegularExpression("^[0-9]{2}-conv-activation-fusion\\.onnx$")).isEmpty(),
                 qPrintable(dumps.join(", ")));
        for (const QString &d : dumps)
            QCOMPARE(cli({"info", QDir(dump).filePath(d)}).exitCode, 0);
        // The optimized model runs and passes the checker on load.
        const Run info = cli({"info", out});
        QCOMPARE(info.exitCode, 0);
        QVERIFY2(!info.err.contains("checker"), qPrintable(info.err));
        QCOMPARE(cli({"run", out, "--iterations", "1"}).exitCode, 0);
    }

    void optimizeRefusesBadArgumentsAndKeepsTheInput()
    {
        QTemporaryDir tmp;
        const fs::path in = fs::path(tmp.path().toStdString()) / "m.onnx";
        fs::copy_file(test::samplePath("inception_block.onnx"), in);
        const QString inPath = QString::fromStdString(in.string());
        const std::string before = readFile(in);
        Run r = cli({"optimize", inPath, "-o", inPath, "--level", "extended"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("is the input model; pass --force"), qPrintable(r.err));
        QCOMPARE(readFile(in), before);
        r = cli({"optimize", inPath, "-o", tmp.filePath("x.onnx"), "--passes", "constant-folding,nope"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("unknown pass 'nope'"), qPrintable(r.err));
        QVERIFY(!QFile::exists(tmp.filePath("x.onnx")));
        QCOMPARE(cli({"optimize", inPath, "--level", "warp"}).exitCode, 1);
        QCOMPARE(cli({"optimize", inPath, "--target", "tensorrt"}).exitCode, 1);
        QCOMPARE(cli({"optimize", tmp.filePath("missing.onnx")}).exitCode, 1);
        // --force replaces the input, atomically, with a model that still loads.
        QCOMPARE(cli({"optimize", inPath, "-o", inPath, "--level", "extended", "--force", "-q"}).exitCode, 0);
        QCOMPARE(cli({"info", inPath}).exitCode, 0);
        const Run list = cli({"optimize", "--list"});
        QCOMPARE(list.exitCode, 0);
        QVERIFY(list.out.contains("conv-bn-fusion") && list.out.contains("dead-code-elimination"));
    }

    void devices()
    {
        const Run r = cli({"devices", "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QVERIFY(j["cpu"].toObject()["cores"].toInt() >= 1);
        QVERIFY(j.contains("cuda"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
