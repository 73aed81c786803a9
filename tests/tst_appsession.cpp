// One app session under the abuse a real one sees: Cancel pressed — or the window closed — at
// every stage (load, layout, optimize, a pass step, compare, partition, profile) after 0 ms to
// 1.5 s, and the window is idle again within seconds with no error and no helper left running, and
// opens the next model as if nothing happened. Then many models opened one after another:
// each replaces the last, and the heap in use stops growing (caches are bounded). And a model of
// 2 GiB of external weights opens, optimizes and steps with its weights mapped, not read.

#include "graphpane.h"
#include "layoutservice.h"
#include "mainwindow.h"
#include "profilepanel.h"
#include "valuespanel.h"
#include "testsupport.h"
#include "waitidle.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTemporaryDir>
#include <filesystem>
#include <fstream>
#include <malloc.h>
#include <memory>

using namespace opscope;

namespace {

using test::waitIdle;

QString realWorld(const char *name)
{
    return QStringLiteral(OPSCOPE_REALWORLD_DIR "/%1.onnx").arg(QLatin1String(name));
}

QString sample(const char *name)
{
    return QString::fromStdString(test::samplePath(name).string());
}

bool underAddressSanitizer()
{
#if defined(__SANITIZE_ADDRESS__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return true;
#endif
#endif
    return false;
}

double rssMiB()
{
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stod(line.substr(6)) / 1024.0; // kB
    return 0.0;
}

// Bytes malloc has handed out and not had back (heap arenas + mmapped blocks): what a leak or an
// unbounded cache grows, unlike RSS, which also holds freed pages glibc keeps.
double heapInUseMiB()
{
    const struct mallinfo2 m = mallinfo2();
    return double(m.uordblks + m.hblkhd) / (1024.0 * 1024.0);
}

// Brings `w` to the start of `stage` (everything before it finished), starts it, and returns.
bool startStage(MainWindow &w, const QString &stage)
{
    const QString model = realWorld("paddle_det");
    if (stage == QLatin1String("load")) {
        w.openFile(model);
        return true;
    }
    if (stage == QLatin1String("layout")) {
        QSignalSpy loaded(&w, &MainWindow::modelLoaded);
        w.openFile(model);
        return loaded.wait(60000); // the model is set; its layout has just been asked for
    }
    w.openFile(model);
    if (!waitIdle(w, 60000) || !w.model())
        return false;
    if (stage == QLatin1String("optimize")) {
        w.runPipeline();
    } else if (stage == QLatin1String("step")) {
        QSignalSpy optimized(&w, &MainWindow::pipelineFinished);
        w.runPipeline();
        if (!optimized.wait(120000) || !waitIdle(w, 60000) || !w.pipelineResult())
            return false;
        const std::vector<int> steps = w.changingSteps();
        if (steps.size() < 2)
            return false;
        w.showStep(steps[steps.size() / 2]);
    } else if (stage == QLatin1String("compare")) {
        w.compareWith(realWorld("unet_skips"));
    } else if (stage == QLatin1String("partition")) {
        w.partitionForDevices(2);
    } else if (stage == QLatin1String("profile")) {
        schedule::ProfileOptions options;
        options.devices = 2;
        options.iterations = 20;
        w.profilePanel()->profile(w.model(), options);
    } else {
        return false;
    }
    return true;
}

// The window still works: the bundled sample opens and is drawn in full.
void opensTheSample(MainWindow &w)
{
    w.openFile(sample("inception_block.onnx"));
    QVERIFY(waitIdle(w, 60000));
    QVERIFY(w.model());
    QCOMPARE(w.model()->graph.nodeCount(), std::size_t(25));
    QCOMPARE(int(w.graphPane()->scene(0)->nodeItems().size()), 27);
}

} // namespace

class TestAppSession : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("opscope-tests"));
        QStandardPaths::setTestModeEnabled(true);
    }

    void cancelAtEveryStage_data()
    {
        QTest::addColumn<QString>("stage");
        QTest::addColumn<int>("delayMs");
        QTest::addColumn<bool>("closeWindow");
        for (const char *stage : {"load", "layout", "optimize", "step", "compare", "partition", "profile"})
            for (int delay : {0, 30, 250, 1500})
                for (bool close : {false, true})
                    QTest::addRow("%s after %d ms, %s", stage, delay, close ? "window closed" : "Cancel")
                        << QString::fromLatin1(stage) << delay << close;
    }

    void cancelAtEveryStage()
    {
        QFETCH(QString, stage);
        QFETCH(int, delayMs);
        QFETCH(bool, closeWindow);
        auto w = std::make_unique<MainWindow>();
        w->show();
        QVERIFY2(startStage(*w, stage), qPrintable(stage));
        QTest::qWait(delayMs);
        if (closeWindow) {
            // Closing (and destroying) the window mid-stage: no hang, no crash, no helper process
            // left behind, and a new window works.
            const qint64 before = QDateTime::currentMSecsSinceEpoch();
            w->close();
            w.reset();
            QVERIFY2(QDateTime::currentMSecsSinceEpoch() - before < 5000, "closing the window blocked");
            MainWindow next;
            next.show();
            opensTheSample(next);
            QCOMPARE(next.layoutService()->runningHelpers(), 0);
            return;
        }
        w->cancelWork();
        QVERIFY2(waitIdle(*w, 15000), "still busy 15 s after Cancel");
        QVERIFY2(w->lastError().isEmpty(), qPrintable(w->lastError()));
        QCOMPARE(w->layoutService()->runningHelpers(), 0);
        // A cancelled stage starts nothing by itself afterwards (no layout of a half-run pipeline).
        QTest::qWait(100);
        QVERIFY(!w->isBusy());
        QVERIFY2(!w->statusText().endsWith(QStringLiteral("…")), qPrintable(w->statusText())); // nothing stale
        opensTheSample(*w);
        QVERIFY2(w->lastError().isEmpty(), qPrintable(w->lastError()));
    }

    void aHundredModelsOneAfterAnother()
    {
        if (underAddressSanitizer())
            QSKIP("mallinfo2 does not see AddressSanitizer's allocator");
        // 100 models opened in turn, each replacing the last and optimized: the bundled samples,
        // the real-world-shaped fixtures and backend-suite models (every k-th, sorted). Three
        // rounds; the heap in use after the third must be what it was after the first: nothing is
        // kept per model opened beyond the bounded caches.
        QStringList models;
        models << sample("inception_block.onnx") << sample("transformer_block.onnx") << realWorld("paddle_det")
               << realWorld("unet_skips") << realWorld("tf2onnx_long");
        QStringList suite;
        for (const auto &entry : std::filesystem::directory_iterator(OPSCOPE_ONNX_TESTDATA "/node"))
            if (std::filesystem::exists(entry.path() / "model.onnx"))
                suite << QString::fromStdString((entry.path() / "model.onnx").string());
        suite.sort();
        const int wanted = 100 - int(models.size());
        QVERIFY(suite.size() >= wanted);
        for (int i = 0; i < wanted; ++i)
            models << suite[int(qint64(i) * suite.size() / wanted)];
        MainWindow w;
        w.show();
        std::vector<double> heap, rss;
        for (int round = 0; round < 3; ++round) {
            int opened = 0;
            for (const QString &path : models) {
                w.openFile(path);
                QVERIFY2(waitIdle(w, 60000), qPrintable(path));
                if (!w.model() || w.model()->sourcePath != std::filesystem::path(path.toStdString()))
                    continue; // a suite model opscope refuses (a clear error is tested elsewhere)
                ++opened;
                w.runPipeline();
                QVERIFY2(waitIdle(w, 120000), qPrintable(path));
            }
            QVERIFY(opened >= 90);
            malloc_trim(0);
            heap.push_back(heapInUseMiB());
            rss.push_back(rssMiB());
            qInfo("round %d: %d of %d models opened and optimized; heap in use %.1f MiB, RSS %.1f MiB", round + 1,
                  opened, int(models.size()), heap.back(), rss.back());
        }
        // Allowance: the layout cache (bounded) and Qt's caches fill during the first rounds.
        QVERIFY2(heap[2] - heap[0] < 48.0,
                 qPrintable(QStringLiteral("heap grew from %1 to %2 MiB").arg(heap[0]).arg(heap[2])));
    }

    void twoGiBOfWeightsAreMappedNotRead()
    {
        // x[1,4096] · W0[4096,16384] · W1[16384,4096] · … — eight 256 MiB weights in one sparse
        // external-data file. Opening, optimizing and stepping must map them, not read them:
        // resident memory grows by far less than the weights.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path folder = dir.path().toStdString();
        constexpr std::int64_t n = 4096, wide = 16384, count = 8, bytes = n * wide * 4;
        onnx::ModelProto m = test::smallModel();
        onnx::GraphProto *g = m.mutable_graph();
        g->clear_node();
        g->clear_initializer();
        g->clear_input();
        g->clear_output();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, n});
        for (std::int64_t i = 0; i < count; ++i) {
            onnx::TensorProto *t = g->add_initializer();
            t->set_name("w" + std::to_string(i));
            t->set_data_type(onnx::TensorProto::FLOAT);
            t->add_dims(i % 2 ? wide : n);
            t->add_dims(i % 2 ? n : wide);
            t->set_data_location(onnx::TensorProto::EXTERNAL);
            for (const auto &[key, value] : {std::pair<std::string, std::string>{"location", "weights.bin"},
                                             {"offset", std::to_string(i * bytes)},
                                             {"length", std::to_string(bytes)}}) {
                onnx::StringStringEntryProto *e = t->add_external_data();
                e->set_key(key);
                e->set_value(value);
            }
            *g->add_node() = test::node("MatMul", {i ? "h" + std::to_string(i - 1) : "x", t->name()},
                                        {"h" + std::to_string(i)}, "layer" + std::to_string(i));
        }
        *g->add_output() = test::tensorInfo("h" + std::to_string(count - 1), onnx::TensorProto::FLOAT, {1, n});
        test::writeProto(folder / "model.onnx", m);
        {
            // Sparse (no disk): each weight's first value differs, so nothing may call two of them
            // equal without reading them; the rest reads as zeros.
            std::ofstream out(folder / "weights.bin", std::ios::binary);
            for (std::int64_t i = 0; i < count; ++i) {
                const float first = float(i + 1);
                out.seekp(i * bytes);
                out.write(reinterpret_cast<const char *>(&first), sizeof first);
            }
        }
        std::filesystem::resize_file(folder / "weights.bin", std::uintmax_t(count * bytes));
        const double before = rssMiB();
        MainWindow w;
        w.show();
        w.openFile(QString::fromStdString((folder / "model.onnx").string()));
        QVERIFY(waitIdle(w, 60000));
        QVERIFY2(w.model(), qPrintable(w.lastError()));
        const double opened = rssMiB() - before;
        w.runPipeline();
        QVERIFY(waitIdle(w, 120000));
        const double optimized = rssMiB() - before;
        QVERIFY2(w.pipelineResult() && w.pipelineResult()->status,
                 w.pipelineResult() ? w.pipelineResult()->status.message().c_str() : "no result");
        w.selectNode(QStringLiteral("layer3"));
        const double grown = rssMiB() - before;
        qInfo("2 GiB of weights: resident memory grew by %.1f MiB (%.1f after opening, %.1f after optimizing)", grown,
              opened, optimized);
        QVERIFY2(grown < 200.0, qPrintable(QStringLiteral("RSS grew by %1 MiB").arg(grown)));
        // The Values tab shows the 256 MiB weight at once and reads its statistics in the
        // background: the window stays responsive while they come.
        w.showValuesTab();
        QVERIFY(w.valuesPanel()->statisticsPending());
        QVERIFY(w.valuesPanel()->table()->rowCount() > 0);
        QElapsedTimer t;
        t.start();
        while (w.valuesPanel()->statisticsPending() && t.elapsed() < 60000)
            QTest::qWait(20);
        QVERIFY(!w.valuesPanel()->statisticsPending());
        QVERIFY2(w.valuesPanel()->summaryText().contains(QStringLiteral("min ")),
                 qPrintable(w.valuesPanel()->summaryText()));
        // Selecting another node while they are read cancels the job and shows the new weight.
        w.selectNode(QStringLiteral("layer4"));
        QVERIFY(w.valuesPanel()->statisticsPending());
        w.selectNode(QStringLiteral("layer5"));
        QVERIFY(w.valuesPanel()->summaryText().contains(QStringLiteral("w5")));
    }
};

QTEST_MAIN(TestAppSession)
#include "tst_appsession.moc"
