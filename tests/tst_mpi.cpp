// profile --ranks as a user runs it, under mpirun with 2 and 3 ranks of CPU devices on this one
// machine: every spread schedule's outputs equal serial's (profile checks them against a serial
// run and fails otherwise) on the samples and on random DAGs whose round-robin placements cross
// ranks at almost every edge (no order of posting deadlocks); every cross-rank edge went through
// MPI; the merged trace has a process per rank and device and a flow for every cross-rank
// transfer; a killed or stopped rank ends the job within seconds with a message naming it; bad
// arguments are one message and exit 1 on every rank.

#include "onnx/modelio.h"
#include "rankplanning.h"
#include "runtime/randominputs.h"
#include "scheduletest.h"
#include "testsupport.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <chrono>
#include <csignal>
#include <fstream>
#include <random>
#include <set>
#include <thread>

using namespace opscope;
namespace fs = std::filesystem;

namespace {

struct Run
{
    int exitCode = -1;
    QString out, err;
    double seconds = 0.0;
};

QStringList mpirun(int ranks)
{
    // As root (CI containers) mpirun needs --allow-run-as-root; more ranks than cores need
    // --oversubscribe; --bind-to none lets a rank with two devices use two cores.
    return {"--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", QString::number(ranks)};
}

Run launch(int ranks, const QStringList &args, int timeoutMs = 120000)
{
    QProcess p;
    const auto start = std::chrono::steady_clock::now();
    p.start(OPSCOPE_MPIRUN, mpirun(ranks) + QStringList{test::cliPath()} + args);
    Run r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.exitCode = -3; // hung
    } else {
        r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// A random DAG over float[1,128]: MatMul with a shared weight, Tanh, Add of two earlier values.
void writeRandomDag(const fs::path &path, int nodes, unsigned seed)
{
    onnx::ModelProto m = test::emptyModel();
    onnx::GraphProto *g = m.mutable_graph();
    *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, 128});
    std::mt19937 rng(seed);
    std::vector<float> w(128 * 128);
    for (float &v : w)
        v = std::uniform_real_distribution<float>(-0.1f, 0.1f)(rng);
    *g->add_initializer() = test::floatTensor("w", {128, 128}, w);
    std::vector<std::string> values{"x"};
    std::vector<int> uses{0};
    for (int i = 0; i < nodes; ++i) {
        std::uniform_int_distribution<std::size_t> pick(0, values.size() - 1);
        const std::string out = "v" + std::to_string(i);
        const std::size_t a = pick(rng), b = pick(rng);
        switch (rng() % 3) {
        case 0: *g->add_node() = test::node("MatMul", {values[a], "w"}, {out}); break;
        case 1: *g->add_node() = test::node("Tanh", {values[a]}, {out}); break;
        default: *g->add_node() = test::node("Add", {values[a], values[b]}, {out}); ++uses[b]; break;
        }
        ++uses[a];
        values.push_back(out);
        uses.push_back(0);
    }
    for (std::size_t i = 1; i < values.size(); ++i)
        if (uses[i] == 0)
            *g->add_output() = test::tensorInfo(values[i], onnx::TensorProto::FLOAT, {1, 128});
    test::writeProto(path, m);
}

// x [1, width] through `layers` MatMul + Tanh pairs, every weight [width, width] in an external
// data file next to the model: a chain whose memory is its weights, mapped where read.
// `folded`: each weight is Mul(raw weight, 2), which constant folding makes a new weight of its own
// — a weight the passes made, on the heap rather than in the file.
fs::path writeWeightChain(const fs::path &path, int layers, int width, bool external = true, bool folded = false)
{
    onnx::ModelProto m = test::emptyModel();
    onnx::GraphProto *g = m.mutable_graph();
    *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, width});
    std::mt19937 rng(3);
    std::string at = "x";
    for (int i = 0; i < layers; ++i) {
        std::vector<float> w(std::size_t(width) * std::size_t(width));
        for (float &v : w)
            v = std::uniform_real_distribution<float>(-0.05f, 0.05f)(rng);
        const std::string weight = "w" + std::to_string(i), mm = "mm" + std::to_string(i),
                          out = "t" + std::to_string(i);
        if (folded) {
            *g->add_initializer() = test::floatTensor(weight + "_raw", {width, width}, w);
            if (i == 0)
                *g->add_initializer() = test::floatTensor("two", {}, {2.0f});
            *g->add_node() = test::node("Mul", {weight + "_raw", "two"}, {weight});
        } else {
            *g->add_initializer() = test::floatTensor(weight, {width, width}, w);
        }
        *g->add_node() = test::node("MatMul", {at, weight}, {mm});
        *g->add_node() = test::node("Tanh", {mm}, {out});
        at = out;
    }
    *g->add_output() = test::tensorInfo(at, onnx::TensorProto::FLOAT, {1, width});
    SaveOptions so;
    if (external)
        so.mode = ExternalDataMode::External;
    Expected<SaveResult> saved = saveModel(test::modelOrFail(m), path, so);
    if (!saved)
        QTest::qFail(saved.status().message().c_str(), __FILE__, __LINE__);
    return path;
}

QJsonObject json(const Run &r)
{
    const int brace = int(r.out.indexOf('{'));
    return QJsonDocument::fromJson(r.out.mid(brace).toUtf8()).object();
}

// The pid of rank `rank` of a running mpirun: the opscope-cli process whose environment says so.
pid_t rankPid(int rank)
{
    const std::string want = "OMPI_COMM_WORLD_RANK=" + std::to_string(rank);
    for (const auto &entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream cmd(entry.path() / "cmdline");
        std::string cmdline((std::istreambuf_iterator<char>(cmd)), {});
        if (cmdline.find("opscope-cli") == std::string::npos || cmdline.find("mpirun") != std::string::npos)
            continue;
        std::ifstream env(entry.path() / "environ");
        std::string text((std::istreambuf_iterator<char>(env)), {});
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t end = text.find('\0', at);
            if (text.compare(at, (end == std::string::npos ? text.size() : end) - at, want) == 0)
                return pid_t(std::stoi(name));
            if (end == std::string::npos)
                break;
            at = end + 1;
        }
    }
    return 0;
}

} // namespace

class TestMpi : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // A machine where mpirun cannot start two processes at all (a container without the
        // shared memory or process limits OpenMPI needs) says so and skips, as GPU tests do
        // without a device; anything opscope does wrong still fails.
        {
            QProcess p;
            p.start(OPSCOPE_MPIRUN, mpirun(2) + QStringList{"true"});
            if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
                QSKIP(qPrintable("mpirun cannot start 2 processes here: " +
                                 QString::fromUtf8(p.readAllStandardError()).left(300)));
        }
        // A model whose batch is fixed at 2 (exporters that trace with one example batch).
        {
            onnx::ModelProto m = test::smallModel();
            auto *in = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
            in->mutable_dim(0)->set_dim_value(2);
            test::writeProto(fs::path(m_dir.path().toStdString()) / "fixed2.onnx", m);
        }
        // An If whose branches read three outer values (one two levels down, through a nested
        // If), computed by nodes round-robin deals to different ranks.
        test::writeProto(fs::path(m_dir.path().toStdString()) / "capture.onnx", test::nestedCaptureModel());
        for (unsigned seed : {1u, 2u, 3u})
            writeRandomDag(fs::path(m_dir.path().toStdString()) / ("dag" + std::to_string(seed) + ".onnx"), 40, seed);
    }

    void outputsMatchSerialAcrossRanks_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<QString>("perRank");
        QTest::addColumn<QString>("schedules");
        const QString inception = QString::fromStdString(test::samplePath("inception_block.onnx").string());
        const QString transformer = QString::fromStdString(test::samplePath("transformer_block.onnx").string());
        const QString dir = m_dir.path() + "/";
        QTest::newRow("inception, 2 ranks") << inception << 2 << "cpu:1" << "greedy,round-robin";
        QTest::newRow("inception, 3 ranks") << inception << 3 << "cpu:1" << "round-robin";
        QTest::newRow("transformer, 2 ranks") << transformer << 2 << "cpu:1" << "greedy,round-robin";
        QTest::newRow("transformer, 2 ranks x 2 devices") << transformer << 2 << "cpu:2" << "round-robin";
        QTest::newRow("random DAG 1, 3 ranks") << dir + "dag1.onnx" << 3 << "cpu:1" << "round-robin,greedy";
        QTest::newRow("random DAG 2, 2 ranks") << dir + "dag2.onnx" << 2 << "cpu:1" << "round-robin";
        QTest::newRow("random DAG 3, 3 ranks") << dir + "dag3.onnx" << 3 << "cpu:1" << "round-robin";
    }

    void outputsMatchSerialAcrossRanks()
    {
        QFETCH(QString, model);
        QFETCH(int, ranks);
        QFETCH(QString, perRank);
        QFETCH(QString, schedules);
        const QString trace = m_dir.path() + "/trace-" + QString::number(QTest::currentDataTag()[0]) +
                              QString::number(qHash(QString(QTest::currentDataTag()))) + ".json";
        const Run r = launch(ranks, {"profile", model, "--ranks", "--devices-per-rank", perRank, "--schedule",
                                     "serial," + schedules, "--iterations", "2", "--json", "--trace", trace});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = json(r);
        QCOMPARE(j["ranks"].toInt(), ranks);
        const int devices = ranks * perRank.mid(4).toInt();
        const QJsonArray runs = j["schedules"].toArray();
        QCOMPARE(runs.size(), 1 + int(schedules.count(',')) + 1);
        QSet<QString> spreadNames;
        int crossRank = 0;
        for (const QJsonValue &v : runs) {
            const QJsonObject s = v.toObject();
            if (s["name"].toString() == "serial")
                continue;
            spreadNames.insert(s["name"].toString());
            QCOMPARE(s["devices"].toArray().size(), devices);
            // Every cross-rank edge went through MPI, once per run.
            QCOMPARE(s["mpi_messages"].toInt(), s["cross_rank_transfers"].toInt());
            if (s["name"].toString() == "round-robin")
                QVERIFY2(s["cross_rank_transfers"].toInt() > 0, "round-robin crossed no rank");
            crossRank += s["cross_rank_transfers"].toInt();
        }
        // The merged trace: a process per schedule, rank and device; a flow per transfer, each
        // begun and ended, the cross-rank ones between processes of different ranks.
        QFile f(trace);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
        const QJsonArray events = doc.isObject() ? doc.object()["traceEvents"].toArray() : doc.array();
        QHash<int, QString> process;
        QHash<int, int> flowStart, flowEnd; // id → pid
        for (const QJsonValue &v : events) {
            const QJsonObject e = v.toObject();
            const QString ph = e["ph"].toString();
            if (ph == "M" && e["name"].toString() == "process_name")
                process[e["pid"].toInt()] = e["args"].toObject()["name"].toString();
            else if (ph == "s")
                flowStart[e["id"].toInt()] = e["pid"].toInt();
            else if (ph == "f")
                flowEnd[e["id"].toInt()] = e["pid"].toInt();
        }
        const QSet<QString> names(process.begin(), process.end());
        for (const QString &s : spreadNames)
            for (int d = 0; d < devices; ++d) {
                const int k = perRank.mid(4).toInt();
                const QString device = s + "/rank" + QString::number(d / k) + ":cpu:" + QString::number(d % k);
                QVERIFY2(names.contains(device), qPrintable("no process " + device));
            }
        // Every lane belongs to a rank, the hosts' setup lanes too (not one "host" for all ranks).
        for (const QString &name : names)
            QVERIFY2(name.section('/', 1).startsWith("rank"), qPrintable("a process of no rank: " + name));
        QCOMPARE(flowStart.size(), flowEnd.size());
        int betweenRanks = 0;
        const auto rankOf = [&](int pid) { return process[pid].section('/', 1).section(':', 0, 0); };
        for (auto it = flowStart.begin(); it != flowStart.end(); ++it) {
            QVERIFY(flowEnd.contains(it.key()));
            if (rankOf(it.value()) != rankOf(flowEnd[it.key()]))
                ++betweenRanks;
        }
        QCOMPARE(betweenRanks, crossRank);
    }

    // GPipe across ranks: the batch split into micro-batches flows through contiguous stages, one
    // per rank; the joined outputs equal serial's on the whole batch, every micro-batch crossed
    // every cross-rank edge over MPI, and the bubble is reported beside GPipe's ideal.
    void pipelineMicrobatchesMatchSerial_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("microbatches");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("perRank");
        QTest::newRow("2 ranks, 4 micro-batches") << 2 << 4 << 8 << 1;
        QTest::newRow("3 ranks, 6 micro-batches") << 3 << 6 << 12 << 1;
        QTest::newRow("2 ranks, 1 micro-batch") << 2 << 1 << 2 << 1;
        // Each rank's two devices are stages of their own (runtime/stagerunner.h).
        QTest::newRow("2 ranks x 2 devices, 4 micro-batches") << 2 << 4 << 8 << 2;
    }
    void pipelineMicrobatchesMatchSerial()
    {
        QFETCH(int, ranks);
        QFETCH(int, microbatches);
        QFETCH(int, batch);
        QFETCH(int, perRank);
        const QString trace = m_dir.path() + "/pipeline" + QString::number(ranks) + QString::number(microbatches) +
                              QString::number(perRank) + ".json";
        const Run r = launch(ranks, {"profile", QString::fromStdString(test::samplePath("transformer_block.onnx").string()),
                                     "--ranks", "--devices-per-rank", "cpu:" + QString::number(perRank),
                                     "--schedule", "serial,pipeline", "--microbatches",
                                     QString::number(microbatches), "--dim", "batch=" + QString::number(batch),
                                     "--iterations", "2", "--json", "--trace", trace});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray runs = json(r)["schedules"].toArray();
        QCOMPARE(runs.size(), 2);
        const QJsonObject p = runs[1].toObject();
        QCOMPARE(p["name"].toString(), microbatches > 1 ? QStringLiteral("pipeline, %1 micro-batches").arg(microbatches)
                                                        : QStringLiteral("pipeline"));
        const int edges = p["cross_rank_transfers"].toInt();
        QVERIFY(edges >= ranks - 1); // each stage hands on to the next
        QCOMPARE(p["mpi_messages"].toInt(), edges * microbatches);
        if (microbatches > 1) {
            QCOMPARE(p["microbatches"].toInt(), microbatches);
            const int stages = ranks * perRank;
            QCOMPARE(p["stages"].toInt(), stages);
            QVERIFY(p["bubble"].toDouble() >= 0.0 && p["bubble"].toDouble() < 1.0);
            QCOMPARE(p["ideal_bubble"].toDouble(), double(stages - 1) / double(microbatches + stages - 1));
            QVERIFY(p["ideal_ms"].toDouble() > 0.0);
        }
        // A flow per micro-batch and cross-rank edge.
        QFile f(trace);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
        const QJsonArray events = doc.isObject() ? doc.object()["traceEvents"].toArray() : doc.array();
        QHash<int, QString> process;
        QHash<int, int> flowStart, flowEnd;
        for (const QJsonValue &v : events) {
            const QJsonObject e = v.toObject();
            if (e["ph"].toString() == "M" && e["name"].toString() == "process_name")
                process[e["pid"].toInt()] = e["args"].toObject()["name"].toString();
            else if (e["ph"].toString() == "s")
                flowStart[e["id"].toInt()] = e["pid"].toInt();
            else if (e["ph"].toString() == "f")
                flowEnd[e["id"].toInt()] = e["pid"].toInt();
        }
        int betweenRanks = 0;
        for (auto it = flowStart.begin(); it != flowStart.end(); ++it)
            if (process[it.value()].startsWith("pipeline") &&
                process[it.value()].section('/', 1).section(':', 0, 0) !=
                    process[flowEnd.value(it.key())].section('/', 1).section(':', 0, 0))
                ++betweenRanks;
        QCOMPARE(betweenRanks, edges * microbatches);
    }

    // A rank that dies mid-run: mpirun ends the others within seconds and says which rank.
    void aKilledRankEndsTheJob()
    {
        QProcess p;
        p.start(OPSCOPE_MPIRUN, mpirun(2) + QStringList{test::cliPath(), "profile",
                                                       QString::fromStdString(test::samplePath("transformer_block.onnx").string()),
                                                       "--ranks", "--schedule", "round-robin", "--iterations", "50000"});
        QVERIFY(p.waitForStarted());
        pid_t victim = 0;
        for (int i = 0; i < 200 && !victim; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            victim = rankPid(1);
        }
        QVERIFY2(victim, "rank 1 never started");
        // Past start-up (serial's three runs for op times, planning), inside the timed runs.
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));
        const auto killed = std::chrono::steady_clock::now();
        QCOMPARE(::kill(victim, SIGKILL), 0);
        QVERIFY2(p.waitForFinished(30000), "the other rank kept running after rank 1 died");
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
        QVERIFY2(seconds < 15, qPrintable(QString::number(seconds) + " s"));
        QVERIFY(p.exitCode() != 0);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("rank 1"), qPrintable(err));
    }

    // A rank that stops answering (SIGSTOP: stuck, not dead) ends the job after the transfer
    // timeout with a message naming what was waited for, instead of hanging.
    void aStoppedRankTimesOut()
    {
        QProcess p;
        p.start(OPSCOPE_MPIRUN, mpirun(2) + QStringList{test::cliPath(), "profile",
                                                       QString::fromStdString(test::samplePath("transformer_block.onnx").string()),
                                                       "--ranks", "--schedule", "round-robin", "--iterations", "50000",
                                                       "--transfer-timeout", "2"});
        QVERIFY(p.waitForStarted());
        pid_t victim = 0;
        for (int i = 0; i < 200 && !victim; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            victim = rankPid(1);
        }
        QVERIFY(victim);
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));
        QCOMPARE(::kill(victim, SIGSTOP), 0);
        const bool ended = p.waitForFinished(30000);
        ::kill(victim, SIGKILL); // in case mpirun left it stopped
        QVERIFY2(ended, "the job hung on a stopped rank");
        QVERIFY(p.exitCode() != 0);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("rank 0") && err.contains("within 2 s"), qPrintable(err));
    }

    void badArgumentsAreOneMessage_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const QString transformer = QString::fromStdString(test::samplePath("transformer_block.onnx").string());
        QTest::newRow("missing model") << QStringList{"profile", "/nonexistent/m.onnx", "--ranks"} << "every rank:";
        QTest::newRow("parallel") << QStringList{"profile", transformer, "--ranks", "--schedule", "parallel"}
                                  << "parallel runs the workers of one device";
        QTest::newRow("simulate") << QStringList{"profile", transformer, "--ranks", "--simulate", "gpu:4"}
                                  << "--simulate predicts";
        QTest::newRow("micro-batches that do not divide the batch")
            << QStringList{"profile", transformer, "--ranks", "--schedule", "pipeline", "--microbatches", "4", "--dim",
                           "batch=6"}
            << "does not divide the batch of 6";
        QTest::newRow("micro-batches of a fixed batch")
            << QStringList{"profile", m_dir.path() + "/fixed2.onnx", "--ranks", "--schedule", "pipeline",
                           "--microbatches", "2"}
            << "which the model fixes at 2";
        QTest::newRow("micro-batches without pipeline")
            << QStringList{"profile", transformer, "--ranks", "--schedule", "greedy", "--microbatches", "2"}
            << "add --schedule pipeline";
        QTest::newRow("--devices with --ranks") << QStringList{"profile", transformer, "--ranks", "--devices", "cpu:4"}
                                                << "--devices is for one process";
        QTest::newRow("devices per rank") << QStringList{"profile", transformer, "--ranks", "--devices-per-rank", "gpu:2"}
                                          << "--devices-per-rank must be cpu:N";
    }

    void badArgumentsAreOneMessage()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = launch(2, args);
        QVERIFY2(r.exitCode == 1, qPrintable(QString::number(r.exitCode) + r.err));
        QCOMPARE(r.err.count(message), 1); // said once, by rank 0, not once per rank
    }

    // Ranks started with other options (mpirun's MPMD form) waited for each other until a timeout
    // (different --microbatches: over 2 minutes) or ran on different data and said nothing
    // (--seed, --dim): one message naming the option, at once (robustness sweep, 2026-12-05).
    void ranksStartedWithOtherOptionsAreRefused_data()
    {
        QTest::addColumn<QStringList>("rank0");
        QTest::addColumn<QStringList>("rank1");
        QTest::addColumn<QString>("message");
        QTest::newRow("micro-batches") << QStringList{"--schedule", "pipeline", "--microbatches", "2", "--dim", "batch=2"}
                                       << QStringList{"--schedule", "pipeline", "--microbatches", "1", "--dim", "batch=2"}
                                       << "started with --microbatches 1, rank 0 with 2";
        QTest::newRow("seed") << QStringList{"--seed", "1"} << QStringList{"--seed", "2"}
                              << "started with --seed 2, rank 0 with 1";
        QTest::newRow("schedules") << QStringList{"--schedule", "greedy,pipeline"} << QStringList{"--schedule", "greedy"}
                                   << "started with --schedule greedy, rank 0 with greedy,pipeline";
    }
    void ranksStartedWithOtherOptionsAreRefused()
    {
        QFETCH(QStringList, rank0);
        QFETCH(QStringList, rank1);
        QFETCH(QString, message);
        const QString transformer = QString::fromStdString(test::samplePath("transformer_block.onnx").string());
        const QStringList common{"profile", transformer, "--ranks", "--iterations", "1"};
        QStringList args = mpirun(1) + QStringList{test::cliPath()} + common + rank0 + QStringList{":", "-np", "1"} +
                           QStringList{test::cliPath()} + common + rank1;
        QProcess p;
        const auto start = std::chrono::steady_clock::now();
        p.start(OPSCOPE_MPIRUN, args);
        QVERIFY(p.waitForFinished(60000));
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(err.contains("rank 1: " + message), qPrintable(err));
        QVERIFY2(seconds < 30, qPrintable(QString::number(seconds) + " s"));
    }

    // A body reading a value another rank computes gets it through a Send/Recv like any input
    // (nested bodies too): round-robin puts the If and its outer values on different ranks, the
    // outputs equal serial's (profile checks them) and every such read crossed over MPI. Such
    // plans were skipped before.
    void bodiesReadOtherRanksValuesThroughMpi_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::newRow("2 ranks") << 2;
        QTest::newRow("3 ranks") << 3;
    }
    void bodiesReadOtherRanksValuesThroughMpi()
    {
        QFETCH(int, ranks);
        const Run r = launch(ranks, {"profile", m_dir.path() + "/capture.onnx", "--ranks", "--schedule",
                                     "serial,round-robin", "--optimize", "none", "--iterations", "2", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = json(r);
        const QJsonArray runs = j["schedules"].toArray();
        QCOMPARE(runs.size(), 2);
        const QJsonObject spread = runs[1].toObject();
        QCOMPARE(spread["name"].toString(), QStringLiteral("round-robin"));
        // tanh's b, read by the If's bodies on the other rank (the condition, a Constant node, is
        // made again there rather than sent).
        QVERIFY(spread["cross_rank_transfers"].toInt() >= 1);
        QCOMPARE(spread["mpi_messages"].toInt(), spread["cross_rank_transfers"].toInt());
        QVERIFY2(j["notes"].toArray().isEmpty() || !QJsonDocument(j["notes"].toArray()).toJson().contains("skipped"),
                 qPrintable(QJsonDocument(j["notes"].toArray()).toJson()));
    }

    // Every spread plan's share per rank is predicted before any rank runs it (a sizing run on
    // rank 0): intermediates from the memory plan, the send buffers MPI keeps, the weights each
    // rank holds. Against a budget (--memory-per-rank) the embedded weights count: every rank
    // loads the whole model.
    void eachRanksShareIsPredicted()
    {
        const Run r = launch(2, {"profile", QString::fromStdString(test::samplePath("inception_block.onnx").string()),
                                 "--ranks", "--schedule", "greedy,round-robin", "--iterations", "2",
                                 "--memory-per-rank", "1GiB", "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = json(r);
        QVERIFY(j["refused"].toArray().isEmpty());
        for (const QJsonValue &v : j["schedules"].toArray()) {
            const QJsonObject s = v.toObject();
            const QJsonArray ranks = s["rank_memory"].toArray();
            QCOMPARE(ranks.size(), 2);
            qint64 embedded = -1, intermediates = 0;
            for (const QJsonValue &m : ranks) {
                const QJsonObject o = m.toObject();
                intermediates += o["intermediate_bytes"].toInteger();
                QCOMPARE(o["available_bytes"].toInteger(), qint64(1) << 30);
                QCOMPARE(o["needs_bytes"].toInteger(),
                         o["intermediate_bytes"].toInteger() + o["send_buffer_bytes"].toInteger() +
                             o["mapped_weight_bytes"].toInteger() + o["embedded_weight_bytes"].toInteger());
                // round-robin crosses ranks everywhere: both ranks compute and send. (greedy may
                // keep the block on one rank when the link measured slow: a busy machine.)
                if (s["name"].toString() == "round-robin") {
                    QVERIFY(o["intermediate_bytes"].toInteger() > 0);
                    QVERIFY(o["send_buffer_bytes"].toInteger() > 0);
                }
                // The sample's weights are inside the file: every rank holds all of them.
                QVERIFY(o["embedded_weight_bytes"].toInteger() > 0);
                QVERIFY(embedded < 0 || embedded == o["embedded_weight_bytes"].toInteger());
                embedded = o["embedded_weight_bytes"].toInteger();
            }
            QVERIFY(intermediates > 0);
        }
    }

    // greedy places within each rank's memory: the first placement's share is predicted and,
    // where a rank's is over its budget, that rank's caps are scaled by what was predicted and
    // greedy places again. Here the devices start uncapped, so the first placement puts the
    // whole chain on one rank (transfers cost more than they gain) and only the second fits.
    void greedyPlacesAgainUntilEachRankFits()
    {
        const fs::path path = writeWeightChain(fs::path(m_dir.path().toStdString()) / "planchain.onnx", 10, 128);
        Expected<ImportResult> loaded = loadModel(path);
        QVERIFY2(loaded, loaded ? "" : loaded.status().message().c_str());
        const Model &model = loaded->model;
        Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(model);
        QVERIFY(session);
        Expected<Feeds> feeds = randomFeeds(**session, {}, RandomInputOptions{});
        QVERIFY(feeds);
        const std::uint64_t weights = 10ull * 128 * 128 * 4;
        dist::RankPlanRequest request;
        request.strategy = schedule::Strategy::Greedy;
        request.name = "greedy";
        request.cost = test::devices(2);
        request.cost.processOf = {0, 1};
        request.rankOfDevice = {0, 1};
        request.ranks = 2;
        request.available = {weights * 7 / 10, weights * 7 / 10};
        request.limitGiven = true;
        Expected<dist::RankPlanOutcome> outcome = dist::planAcrossRanks(model, request, *feeds);
        QVERIFY2(outcome, outcome ? "" : outcome.status().message().c_str());
        QVERIFY2(!outcome->encoded.contains("refused"),
                 outcome->encoded.value("refused", std::string()).c_str());
        QVERIFY(outcome->placements >= 2);
        const auto &memory = outcome->encoded.at("memory");
        QCOMPARE(memory.size(), std::size_t(2));
        for (const auto &m : memory) {
            std::uint64_t total = 0;
            for (const auto &part : m)
                total += part.get<std::uint64_t>();
            QVERIFY(total <= request.available[0]);
            QVERIFY(m[3].get<std::uint64_t>() > 0); // each rank maps some of the weights
        }
        // 4 ranks, capped from the start as profile --ranks caps them, the budget a third of the
        // weights: fits, and no re-placement raises a cap or moves the chain to one rank.
        {
            dist::RankPlanRequest four = request;
            four.cost = test::devices(4);
            four.cost.processOf = four.rankOfDevice = {0, 1, 2, 3};
            four.ranks = 4;
            four.available.assign(4, weights / 3);
            dist::capDevicesByRank(four, model);
            Expected<dist::RankPlanOutcome> spread = dist::planAcrossRanks(model, four, *feeds);
            QVERIFY2(spread && !spread->encoded.contains("refused"),
                     spread ? spread->encoded.dump().c_str() : spread.status().message().c_str());
            int holding = 0;
            for (const auto &m : spread->encoded.at("memory"))
                holding += m[3].get<std::uint64_t>() > 0;
            QVERIFY(holding >= 3);
        }
        // The same chain inside the model file, 2 ranks of 2 devices, each rank's budget the weights
        // and a third: every rank holds the weights whatever it runs, so greedy counts only the
        // tensors and keeps the chain on one device. Counting them per device (half the budget
        // each), it spread the chain over devices and ranks for no memory saved.
        {
            const fs::path embeddedPath =
                writeWeightChain(fs::path(m_dir.path().toStdString()) / "embeddedchain.onnx", 10, 128, false);
            Expected<ImportResult> embedded = loadModel(embeddedPath);
            QVERIFY(embedded);
            dist::RankPlanRequest two = request;
            two.cost = test::devices(4);
            two.rankOfDevice = two.cost.processOf = {0, 0, 1, 1};
            two.available.assign(2, weights + weights / 3);
            dist::capDevicesByRank(two, embedded->model);
            for (const auto &d : two.cost.devices)
                QCOMPARE(d.memoryBytes, (weights / 3) / 2);
            Expected<dist::RankPlanOutcome> kept = dist::planAcrossRanks(embedded->model, two, *feeds);
            QVERIFY2(kept && !kept->encoded.contains("refused"),
                     kept ? kept->encoded.dump().c_str() : kept.status().message().c_str());
            std::set<int> used;
            for (const auto &d : kept->encoded.at("device"))
                if (d.get<int>() >= 0)
                    used.insert(d.get<int>());
            QCOMPARE(int(used.size()), 1);
            for (const auto &m : kept->encoded.at("memory")) {
                QCOMPARE(m[3].get<std::uint64_t>(), std::uint64_t(0)); // nothing mapped
                QCOMPARE(m[4].get<std::uint64_t>(), weights);          // embedded: on every rank
            }
        }
        // pipeline cuts its stages within the same budget.
        {
            dist::RankPlanRequest piped = request;
            piped.strategy = schedule::Strategy::Pipeline;
            piped.name = "pipeline";
            dist::capDevicesByRank(piped, model);
            Expected<dist::RankPlanOutcome> staged = dist::planAcrossRanks(model, piped, *feeds);
            QVERIFY2(staged && !staged->encoded.contains("refused"),
                     staged ? staged->encoded.dump().c_str() : staged.status().message().c_str());
        }
        // A budget nothing fits, for a schedule that does not place by memory: refused, pointing at
        // the ones that do.
        request.strategy = schedule::Strategy::RoundRobin;
        request.name = "round-robin";
        request.available = {weights / 4, weights / 4};
        outcome = dist::planAcrossRanks(model, request, *feeds);
        QVERIFY(outcome && outcome->encoded.contains("refused"));
        QVERIFY(QString::fromStdString(outcome->encoded["refused"].get<std::string>()).contains("try greedy or pipeline"));
        // A budget nothing fits: greedy says how often it tried.
        request.strategy = schedule::Strategy::Greedy;
        request.name = "greedy";
        outcome = dist::planAcrossRanks(model, request, *feeds);
        QVERIFY(outcome && outcome->encoded.contains("refused"));
        QVERIFY2(QString::fromStdString(outcome->encoded["refused"].get<std::string>()).contains("greedy found no placement"),
                 outcome->encoded["refused"].get<std::string>().c_str());
    }

    // As a user runs it: a chain of external weights whose whole does not fit one rank's budget
    // runs under greedy across 2 ranks, each rank mapping its part. Before, greedy counted only
    // outputs, put the chain on one rank and the job was refused.
    void greedyFitsRanksByTheWeightsTheyRead()
    {
        const fs::path path = writeWeightChain(fs::path(m_dir.path().toStdString()) / "chain.onnx", 10, 256);
        const qint64 weights = 10ll * 256 * 256 * 4;
        const Run r = launch(2, {"profile", QString::fromStdString(path.string()), "--ranks", "--schedule", "greedy",
                                 "--iterations", "2", "--memory-per-rank", QString::number(weights * 7 / 10),
                                 "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonObject j = json(r);
        QVERIFY(j["refused"].toArray().isEmpty());
        const QJsonArray runs = j["schedules"].toArray();
        QCOMPARE(runs.size(), 1);
        qint64 mapped = 0;
        for (const QJsonValue &m : runs[0].toObject()["rank_memory"].toArray()) {
            const QJsonObject o = m.toObject();
            QVERIFY(o["needs_bytes"].toInteger() <= o["available_bytes"].toInteger());
            QVERIFY(o["mapped_weight_bytes"].toInteger() > 0);
            QCOMPARE(o["embedded_weight_bytes"].toInteger(), 0);
            mapped += o["mapped_weight_bytes"].toInteger();
        }
        QCOMPARE(mapped, weights); // each weight on one rank
    }

    // The same for weights the passes made (a weight times 2, folded): new heap tensors on every
    // rank, they counted on every rank and the chain was refused at 70 % of its weights per rank;
    // spilled to a scratch file and mapped, each counts only where a node reads it.
    void greedyFitsRanksByTheWeightsThePassesMade()
    {
        const fs::path path =
            writeWeightChain(fs::path(m_dir.path().toStdString()) / "folded.onnx", 10, 256, false, true);
        const qint64 weights = 10ll * 256 * 256 * 4;
        const Run r = launch(2, {"profile", QString::fromStdString(path.string()), "--ranks", "--schedule", "greedy",
                                 "--iterations", "2", "--memory-per-rank", QString::number(weights * 7 / 10),
                                 "--json"});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(!r.err.contains("stay on every rank's heap"), qPrintable(r.err));
        const QJsonArray runs = json(r)["schedules"].toArray();
        QCOMPARE(runs.size(), 1);
        qint64 mapped = 0;
        for (const QJsonValue &m : runs[0].toObject()["rank_memory"].toArray()) {
            const QJsonObject o = m.toObject();
            QVERIFY(o["needs_bytes"].toInteger() <= o["available_bytes"].toInteger());
            QVERIFY(o["embedded_weight_bytes"].toInteger() < 1024); // the scalar, no weight
            mapped += o["mapped_weight_bytes"].toInteger();
        }
        QCOMPARE(mapped, weights); // each folded weight on one rank
    }

    // A plan whose share does not fit a rank is refused before any rank runs it, naming the
    // schedule and the rank; exit 1. Serial, on rank 0 alone, is held to rank 0's budget too.
    void aShareThatDoesNotFitIsRefusedUpFront_data()
    {
        QTest::addColumn<QString>("budget");
        QTest::addColumn<QString>("schedules");
        QTest::addColumn<int>("refused");
        QTest::newRow("serial, greedy and round-robin, 4 KiB") << "4K" << "serial,greedy,round-robin" << 3;
        QTest::newRow("round-robin alone, 1000 B") << "1000" << "round-robin" << 1;
    }
    void aShareThatDoesNotFitIsRefusedUpFront()
    {
        QFETCH(QString, budget);
        QFETCH(QString, schedules);
        QFETCH(int, refused);
        const Run r = launch(2, {"profile", QString::fromStdString(test::samplePath("inception_block.onnx").string()),
                                 "--ranks", "--schedule", schedules, "--iterations", "2", "--memory-per-rank", budget,
                                 "--json"});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(int(r.err.count("does not fit rank")), refused); // said once each, by rank 0
        QVERIFY2(r.err.contains("allowed by --memory-per-rank"), qPrintable(r.err));
        const QJsonObject j = json(r);
        QCOMPARE(j["refused"].toArray().size(), refused);
        QVERIFY(j["schedules"].toArray().isEmpty());
    }

    // A model that outgrew one rank — its weights alone over rank 0's budget — is profiled across
    // ranks all the same: no serial run on rank 0 (refused when asked for, the rest still run),
    // the plans take the cost model's op times, each placement is sized from the inferred shapes
    // instead of a run in rank 0's process, and pipeline's outputs are checked against greedy's.
    // Before, rank 0 ran serial and sized every plan by running the whole model, over its budget.
    void aModelLargerThanOneRankRunsWithoutSerial()
    {
        const fs::path path = writeWeightChain(fs::path(m_dir.path().toStdString()) / "big.onnx", 10, 256);
        const qint64 weights = 10ll * 256 * 256 * 4;
        const Run r = launch(2, {"profile", QString::fromStdString(path.string()), "--ranks", "--schedule",
                                 "serial,greedy,pipeline", "--iterations", "2", "--memory-per-rank",
                                 QString::number(weights * 7 / 10), "--json"});
        QCOMPARE(r.exitCode, 1); // serial was refused
        QVERIFY2(r.err.contains("serial does not fit rank 0: the whole model needs"), qPrintable(r.err));
        QVERIFY2(r.err.contains("no serial run on rank 0"), qPrintable(r.err));
        QVERIFY2(r.err.contains("sized from the inferred shapes"), qPrintable(r.err));
        const QJsonObject j = json(r);
        QCOMPARE(j["refused"].toArray().size(), 1);
        const QJsonArray runs = j["schedules"].toArray();
        QCOMPARE(runs.size(), 2);
        for (const QJsonValue &run : runs)
            for (const QJsonValue &m : run.toObject()["rank_memory"].toArray()) {
                const QJsonObject o = m.toObject();
                QVERIFY(o["needs_bytes"].toInteger() <= o["available_bytes"].toInteger());
                QVERIFY(o["needs_bytes"].toInteger() > 0);
            }
    }

    void aBadMemoryBudgetIsOneMessage_data()
    {
        QTest::addColumn<QString>("budget");
        QTest::newRow("unit") << "1.5X";
        QTest::newRow("zero") << "0";
        QTest::newRow("negative") << "-1G";
        QTest::newRow("too large") << "10000000TB";
    }
    void aBadMemoryBudgetIsOneMessage()
    {
        QFETCH(QString, budget);
        const Run r = launch(2, {"profile", QString::fromStdString(test::samplePath("inception_block.onnx").string()),
                                 "--ranks", "--memory-per-rank", budget});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(int(r.err.count("--memory-per-rank")), 1);
    }

    // Under mpirun without --ranks every rank would profile alone: refused once.
    void profileUnderMpirunNeedsRanks()
    {
        const Run r = launch(2, {"profile", QString::fromStdString(test::samplePath("transformer_block.onnx").string())});
        QCOMPARE(r.exitCode, 1);
        QCOMPARE(r.err.count("without --ranks"), 1);
    }

    void ranksNeedMpirun()
    {
        QProcess p;
        p.start(test::cliPath(), {"profile", QString::fromStdString(test::samplePath("transformer_block.onnx").string()),
                                  "--ranks"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("start it with mpirun"));
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestMpi)
#include "tst_mpi.moc"
