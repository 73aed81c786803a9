// opscope-cli profile: schedules compared on CPU devices, micro-batched pipelines in one process,
// its arguments read whole (split out of tst_cli, which runs the other commands).

#include "clirun.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>

using namespace opscope;
using namespace opscope::test::clirun;
namespace fs = std::filesystem;

class TestCliProfile : public QObject
{
    Q_OBJECT
private slots:
    // Device counts were read with atoi: "cpu:1,cuda:1" ran on one CPU and said nothing of the GPU.
    void profileArgumentsAreReadWhole_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");
        QTest::newRow("mixed devices") << QStringList{"profile", "--devices", "cpu:1,cuda:1"}
                                       << "one kind of device per run";
        QTest::newRow("count with trailing text") << QStringList{"profile", "--devices", "cpu:2x"} << "whole number";
        QTest::newRow("memory: count with trailing text") << QStringList{"memory", "--devices", "cpu:2x"}
                                                          << "needs a whole number 1 ≤ N ≤ 256"; // one parser for every command
        QTest::newRow("simulated count with trailing text") << QStringList{"profile", "--simulate", "gpu:8abc"}
                                                            << "whole number from 1 to 1024";
        QTest::newRow("simulated link unknown") << QStringList{"profile", "--simulate", "2xgpu:8:bogus"}
                                                << "must be pcie or nvlink";
        QTest::newRow("simulated cpu with a link") << QStringList{"profile", "--simulate", "cpu:2:pcie"}
                                                   << "CPU devices take no link";
        QTest::newRow("simulated hosts nested") << QStringList{"profile", "--simulate", "2x2xgpu:4"}
                                                << "gives the host count twice";
        QTest::newRow("schedule twice") << QStringList{"profile", "--schedule", "greedy,greedy"} << "is given twice";
        // 1e10 s overflowed the wait's clock and failed at once; NaN passed as "automatic".
        QTest::newRow("transfer timeout past any wait") << QStringList{"profile", "--transfer-timeout", "1e10"}
                                                        << "takes seconds from 0 (automatic) to 1000000";
        QTest::newRow("transfer timeout nan") << QStringList{"profile", "--transfer-timeout", "nan"}
                                              << "takes seconds from 0 (automatic) to 1000000";
        QTest::newRow("simulated link between hosts, one host") << QStringList{"profile", "--simulate", "gpu:4@eth"}
                                                                << "needs a host count";
    }
    void profileArgumentsAreReadWhole()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        args.insert(1, sample("transformer_block.onnx"));
        const Run r = cli(args + (args.first() == "profile" ? QStringList{"--iterations", "1"} : QStringList{}));
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    }

    // The pipeline schedule with micro-batches in one process: each device a stage; the joined
    // outputs are checked against serial's by profile itself (a difference is exit 2).
    void profilePipelinesMicrobatchesInOneProcess()
    {
        Run r = cli({"profile", sample("transformer_block.onnx"), "--schedule", "serial,pipeline", "--devices",
                     "cpu:2", "--microbatches", "4", "--dim", "batch=8", "--iterations", "2", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray schedules = QJsonDocument::fromJson(r.out.toUtf8()).object()["schedules"].toArray();
        QCOMPARE(schedules[1].toObject()["name"].toString(), QStringLiteral("pipeline, 4 micro-batches"));
        QCOMPARE(schedules[1].toObject()["stages"].toInt(), 2);
        QCOMPARE(schedules[1].toObject()["microbatches"].toInt(), 4);
        QCOMPARE(schedules[1].toObject()["ideal_bubble"].toDouble(), 1.0 / 5.0);
        // A batch the micro-batches do not divide: one message naming the --dim that sets it.
        r = cli({"profile", sample("transformer_block.onnx"), "--schedule", "pipeline", "--devices", "cpu:2",
                 "--microbatches", "3", "--dim", "batch=8"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("does not divide the batch of 8"), qPrintable(r.err));

        // Only inputs whose dim 0 is the batch's symbol are split: k[K, 32] stays whole even when
        // K = N (it was split by size, and the pipeline then computed another y). A model whose
        // output mixes the batch's samples is the model's doing: exit 1, not an internal error.
        QTemporaryDir tmp;
        const auto symbolic = [](const std::string &name, const std::string &dim0) {
            onnx::ValueInfoProto v = test::tensorInfo(name, onnx::TensorProto::FLOAT, {1, 32});
            v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param(dim0);
            return v;
        };
        onnx::ModelProto two = test::emptyModel();
        *two.mutable_graph()->add_input() = symbolic("x", "N");
        *two.mutable_graph()->add_input() = symbolic("k", "K");
        *two.mutable_graph()->add_node() = test::node("Transpose", {"k"}, {"kt"}, "transpose");
        *two.mutable_graph()->add_node() = test::node("MatMul", {"kt", "k"}, {"g"}, "gram");
        *two.mutable_graph()->add_node() = test::node("MatMul", {"x", "g"}, {"y"}, "project");
        *two.mutable_graph()->add_output() = symbolic("y", "N");
        test::writeProto(tmp.filePath("two.onnx").toStdString(), two);
        r = cli({"profile", tmp.filePath("two.onnx"), "--schedule", "serial,pipeline", "--devices", "cpu:2",
                 "--microbatches", "2", "--dim", "N=8", "--dim", "K=8", "--iterations", "1"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));

        onnx::ModelProto mix = test::emptyModel();
        *mix.mutable_graph()->add_input() = symbolic("x", "N");
        onnx::NodeProto mean = test::node("ReduceMean", {"x"}, {"m"}, "mean");
        auto *axes = mean.add_attribute();
        axes->set_name("axes");
        axes->set_type(onnx::AttributeProto::INTS);
        axes->add_ints(0);
        *mix.mutable_graph()->add_node() = mean;
        *mix.mutable_graph()->add_node() = test::node("Sub", {"x", "m"}, {"y"}, "centre");
        *mix.mutable_graph()->add_output() = symbolic("y", "N");
        test::writeProto(tmp.filePath("mix.onnx").toStdString(), mix);
        // Whatever the order, and alone: the pipeline is checked against the whole batch run
        // serially (alone it was its own reference and passed; first, it blamed serial, exit 2).
        for (const QString &order : {QStringLiteral("serial,pipeline"), QStringLiteral("pipeline"),
                                         QStringLiteral("pipeline,serial"), QStringLiteral("pipeline,greedy")}) {
            r = cli({"profile", tmp.filePath("mix.onnx"), "--schedule", order, "--devices", "cpu:2",
                     "--microbatches", "2", "--dim", "N=8", "--iterations", "1"});
            QVERIFY2(r.exitCode == 1, qPrintable(order + ": " + r.err));
            QVERIFY2(r.err.contains("pipeline, 2 micro-batches computes a different output 'y' than serial") &&
                         r.err.contains("mix the samples of a batch"),
                     qPrintable(order + ": " + r.err));
        }
        // A prediction refuses the split a run would: a batch the model fixes (it predicted one).
        onnx::ModelProto fixedBatch = test::emptyModel();
        *fixedBatch.mutable_graph()->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 4});
        *fixedBatch.mutable_graph()->add_node() = test::node("Relu", {"x"}, {"y"}, "relu");
        *fixedBatch.mutable_graph()->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {1, 4});
        test::writeProto(tmp.filePath("fixedbatch.onnx").toStdString(), fixedBatch);
        r = cli({"profile", tmp.filePath("fixedbatch.onnx"), "--simulate", "gpu:2", "--schedule", "pipeline",
                 "--microbatches", "4"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("which the model fixes at 1"), qPrintable(r.err));

        // A batch fixed inside the graph (a Reshape to a constant shape): the whole batch runs, a
        // micro-batch does not; exit 1 with why, where it was a kernel's bare message.
        onnx::ModelProto fixed = test::emptyModel();
        *fixed.mutable_graph()->add_input() = symbolic("x", "N");
        *fixed.mutable_graph()->add_initializer() = test::int64Tensor("shape", {2}, {8, 32});
        *fixed.mutable_graph()->add_node() = test::node("Reshape", {"x", "shape"}, {"r"}, "reshape");
        *fixed.mutable_graph()->add_node() = test::node("Relu", {"r"}, {"y"}, "relu");
        *fixed.mutable_graph()->add_output() = symbolic("y", "N");
        test::writeProto(tmp.filePath("fixed.onnx").toStdString(), fixed);
        r = cli({"profile", tmp.filePath("fixed.onnx"), "--schedule", "pipeline", "--devices", "cpu:2",
                 "--microbatches", "2", "--dim", "N=8", "--iterations", "1"});
        QVERIFY2(r.exitCode == 1, qPrintable(r.err));
        QVERIFY2(r.err.contains("the whole batch ran, but not a micro-batch of 1/2") &&
                     r.err.contains("without --microbatches"),
                 qPrintable(r.err));

        // A batch dim the model leaves unnamed is "?" to --dim, and the message says so (it named
        // nothing to set); run's note suggested --dim ?=VALUE, which --dim then refused.
        onnx::ModelProto unnamed = test::emptyModel();
        onnx::ValueInfoProto ux = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 32});
        ux.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->clear_dim_value();
        *unnamed.mutable_graph()->add_input() = ux;
        *unnamed.mutable_graph()->add_node() = test::node("Relu", {"x"}, {"y"}, "relu");
        ux.set_name("y");
        *unnamed.mutable_graph()->add_output() = ux;
        test::writeProto(tmp.filePath("unnamed.onnx").toStdString(), unnamed);
        r = cli({"profile", tmp.filePath("unnamed.onnx"), "--schedule", "pipeline", "--devices", "cpu:2",
                 "--microbatches", "2", "--iterations", "1"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("does not divide the batch of 1 (set it with --dim, e.g. --dim ?=2, or feed it "
                                "with --input x=FILE.npy)"),
                 qPrintable(r.err));
        QVERIFY2(r.err.contains("note: dimension '?' is not bound; using 1 (--dim ?=VALUE)"), qPrintable(r.err));
        r = cli({"profile", tmp.filePath("unnamed.onnx"), "--schedule", "serial,pipeline", "--devices", "cpu:2",
                 "--microbatches", "2", "--dim", "?=8", "--iterations", "1", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        r = cli({"run", tmp.filePath("unnamed.onnx"), "--iterations", "1", "--dim", "?=3", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains("is not bound"), qPrintable(r.err));
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["outputs"].toArray()[0].toObject()["shape"]
                     .toArray()[0].toInt(), 3);

        // What applies only across ranks is refused without --ranks, not ignored.
        for (const QStringList &extra : {QStringList{"--memory-per-rank", "1G"}, QStringList{"--in-process"},
                                         QStringList{"--devices-per-rank", "cpu:2"}}) {
            r = cli(QStringList{"profile", sample("transformer_block.onnx"), "--iterations", "1"} + extra);
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains("add --ranks"), qPrintable(r.err));
        }
    }

    void profileComparesSchedules()
    {
        QTemporaryDir tmp;
        const QString trace = tmp.filePath("trace.json");
        Run r = cli({"profile", sample("inception_block.onnx"), "--schedule", "serial,parallel,greedy",
                     "--devices", "cpu:2", "--iterations", "3", "--trace", trace, "--json"});
        QCOMPARE(r.exitCode, 0);
        const QJsonArray schedules = QJsonDocument::fromJson(r.out.toUtf8()).object()["schedules"].toArray();
        QCOMPARE(schedules.size(), 4); // and serial with both cores as intra-op threads
        QCOMPARE(schedules[3].toObject()["name"].toString(), QStringLiteral("serial, 2 threads"));
        for (const QJsonValue &v : schedules) {
            const QJsonObject s = v.toObject();
            for (const char *key : {"name", "makespan_ms", "predicted_ms", "devices"})
                QVERIFY2(s.contains(key), key);
            QVERIFY(s["makespan_ms"].toDouble() > 0);
        }
        QCOMPARE(schedules[2].toObject()["devices"].toArray().size(), 2); // greedy used both devices
        // Which devices a schedule used, and by how many workers: parallel shares cpu:0 between
        // two workers and leaves cpu:1 unused (its "cpu:1 0%" read as a failure to use it).
        const QJsonArray serialDevices = schedules[0].toObject()["devices"].toArray();
        QCOMPARE(serialDevices[0].toObject()["workers"].toInt(), 1);
        QCOMPARE(serialDevices[1].toObject()["workers"].toInt(), 0);
        // Two workers share cpu:0; on a busy machine one may have taken every step (then 1 ran).
        const int parallelWorkers = schedules[1].toObject()["devices"].toArray()[0].toObject()["workers"].toInt();
        QVERIFY2(parallelWorkers == 1 || parallelWorkers == 2, qPrintable(QString::number(parallelWorkers)));
        QCOMPARE(schedules[1].toObject()["devices"].toArray()[1].toObject()["workers"].toInt(), 0);
        const Run text = cli({"profile", sample("inception_block.onnx"), "--schedule", "serial,parallel", "--devices",
                              "cpu:2", "--iterations", "1"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.contains(QRegularExpression("\\nserial .*cpu:0 [0-9]+%  cpu:1 unused")), qPrintable(text.out));
        QVERIFY2(text.out.contains(QRegularExpression("\\nparallel .*cpu:0 [0-9]+%( of 2 workers)?  cpu:1 unused")),
                 qPrintable(text.out));
        // Serial alone asked for: serial alone (the all-cores row competes with spread schedules).
        const Run alone = cli({"profile", sample("inception_block.onnx"), "--schedule", "serial", "--devices", "cpu:2",
                               "--iterations", "1", "--json"});
        QCOMPARE(alone.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(alone.out.toUtf8()).object()["schedules"].toArray().size(), 1);
        QFile f(trace);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject t = QJsonDocument::fromJson(f.readAll()).object();
        QVERIFY(t["traceEvents"].toArray().size() > 50);
        // Prediction for other devices, without running.
        r = cli({"profile", sample("inception_block.onnx"), "--simulate", "gpu:4", "--json"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(QJsonDocument::fromJson(r.out.toUtf8()).object()["simulated"].toBool());
        QCOMPARE(cli({"profile", sample("inception_block.onnx"), "--devices", "tpu:3"}).exitCode, 1);
        // More devices than cores runs, with a warning that says what the numbers then mean.
        const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
        r = cli({"profile", sample("inception_block.onnx"), "--devices", QStringLiteral("cpu:%1").arg(cores + 1),
                 "--iterations", "1", "--schedule", "serial"});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.contains(QStringLiteral("time-slicing")), qPrintable(r.err));
        r = cli({"profile", sample("inception_block.onnx"), "--devices", "cpu:1", "--iterations", "1", "--schedule",
                 "serial"});
        QVERIFY2(!r.err.contains(QStringLiteral("time-slicing")), qPrintable(r.err));
        QCOMPARE(cli({"profile", sample("inception_block.onnx"), "--schedule", "magic"}).exitCode, 1);
    }
};

QTEST_GUILESS_MAIN(TestCliProfile)
#include "tst_cliprofile.moc"
