// The app never hangs on a layout. LayoutService runs dot in a helper process it can kill: past its
// time budget and on Cancel the request is answered with the quick layered layout (and a note for
// the status bar), destroying the service ends every helper, a superseded request's layout is
// cached, and a helper that dies or answers garbage is a note, never a crash. A helper that never
// answers is a shell script that sleeps: the same as dot stuck on a U-Net for an hour.
//
// Then the whole app on models shaped like the third-party exports it hung on
// (bench/make_realworld_shapes.py: Paddle-style Constant weights and hardswish chains, a U-Net with
// long skips, tf2onnx's long names): every changing pass step lays out within the budget.

#include "graphpane.h"
#include "graphitems.h"
#include "ir/verifier.h"
#include "graphscene.h"
#include "graphview.h"
#include "layout/layoutio.h"
#include "layoutservice.h"
#include "mainwindow.h"
#include "passpanel.h"
#include "passes/pipeline.h"
#include "testsupport.h"
#include "waitidle.h"

#include <QCoreApplication>
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <memory>

using namespace opscope;

namespace {

layout::LayoutRequest chain(std::size_t n)
{
    layout::LayoutRequest r;
    r.nodes.assign(n, {120, 36});
    for (std::size_t i = 0; i + 1 < n; ++i)
        r.edges.push_back({i, i + 1});
    return r;
}

// An executable shell script standing in for opscope-layout; empty path when it cannot be written.
QString helperScript(const QTemporaryDir &dir, const QString &name, const QString &script)
{
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(script.toUtf8());
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

// A helper that writes its pid and then never answers, like dot stuck for minutes.
QString hungHelper(const QTemporaryDir &dir)
{
    return helperScript(dir, QStringLiteral("hung-layout"),
                        // Written aside and renamed: the file appears whole, never empty
                        // between the shell's open and its write (CI read pid 0 there).
                        QStringLiteral("#!/bin/sh\necho $$ > '%1.tmp' && mv '%1.tmp' '%1'\nexec sleep 600\n")
                            .arg(dir.filePath(QStringLiteral("pid"))));
}

qint64 helperPid(const QTemporaryDir &dir)
{
    // A loaded CI machine may take seconds to start the helper's shell.
    QFile f(dir.filePath(QStringLiteral("pid")));
    for (int i = 0; i < 3000 && !f.exists(); ++i)
        QTest::qWait(10);
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    return f.readAll().trimmed().toLongLong();
}

bool processGone(qint64 pid)
{
    return pid > 0 && ::kill(pid_t(pid), 0) != 0;
}

struct Answer
{
    quint64 ticket = 0;
    QSharedPointer<const layout::LayoutResult> result;
    QString error, note;
};

Answer next(QSignalSpy &spy, int ms = 20000)
{
    if (spy.isEmpty() && !spy.wait(ms))
        return {};
    const QList<QVariant> args = spy.takeFirst();
    return {args[0].toULongLong(), args[1].value<QSharedPointer<const layout::LayoutResult>>(), args[2].toString(),
            args[4].toString()};
}

QString realWorld(const char *name)
{
    return QStringLiteral(OPSCOPE_REALWORLD_DIR "/%1.onnx").arg(QLatin1String(name));
}

using test::waitIdle;

} // namespace

class TestLayoutService : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("opscope-tests"));
        QStandardPaths::setTestModeEnabled(true);
    }

    void dotLaysOutAndTheCacheAnswersAgain()
    {
        LayoutService service;
        QVERIFY2(!service.helperPath().isEmpty(), "opscope-layout is built next to the tests");
        QSignalSpy spy(&service, &LayoutService::finished);
        const quint64 t = service.request(this, chain(30));
        const Answer a = next(spy);
        QCOMPARE(a.ticket, t);
        QVERIFY(a.result);
        QVERIFY2(a.note.isEmpty(), qPrintable(a.note)); // dot itself, well inside the budget
        QCOMPARE(a.result->centers.size(), std::size_t(30));
        QVERIFY(service.cached(chain(30)));
        const quint64 again = service.request(this, chain(30));
        const Answer b = next(spy);
        QCOMPARE(b.ticket, again);
        QCOMPARE(b.result.data(), a.result.data());
        QCOMPARE(service.runningHelpers(), 0);
    }

    void theItemBudgetFollowsHowFastDotIs()
    {
        LayoutService service;
        const std::size_t start = service.itemBudget();
        QVERIFY(start >= 150 && start <= 400);
        // A fast machine: 300 items in 60 ms, again and again: more items at once, up to the cap.
        for (int i = 0; i < 20; ++i)
            service.recordLayout(300, 60.0, true);
        QCOMPARE(service.itemBudget(), std::size_t(800));
        // A slow one: 300 items in 3 s: about a fifth of that.
        for (int i = 0; i < 20; ++i)
            service.recordLayout(300, 3000.0, true);
        QVERIFY2(service.itemBudget() < 80, qPrintable(QString::number(service.itemBudget())));
        // Back to normal, then one layout past the budget: the next view lays out fewer items.
        for (int i = 0; i < 20; ++i)
            service.recordLayout(250, 600.0, true);
        const std::size_t normal = service.itemBudget();
        service.recordLayout(250, service.budgetMs(), false);
        QVERIFY(service.itemBudget() < normal / 2);
        service.recordLayout(5, 5000.0, true); // start-up noise of a tiny layout is ignored
        QVERIFY(service.itemBudget() < normal / 2);
    }

    void aHungDotIsKilledAtTheBudget()
    {
        QTemporaryDir dir;
        LayoutService service;
        service.setHelperPath(hungHelper(dir));
        service.setBudgetMs(300);
        QSignalSpy spy(&service, &LayoutService::finished);
        service.request(this, chain(40));
        const qint64 pid = helperPid(dir);
        const Answer a = next(spy);
        QVERIFY(a.result);
        QVERIFY2(a.note.contains(QStringLiteral("did not finish within")), qPrintable(a.note));
        QVERIFY(a.note.contains(QStringLiteral("quick layered layout")));
        QCOMPARE(a.result->centers.size(), std::size_t(40));
        QCOMPARE(service.runningHelpers(), 0);
        QTRY_VERIFY(processGone(pid));
        // The quick layout is cached with its note: the step does not wait the budget again.
        QString note;
        QVERIFY(service.cached(chain(40), &note));
        QVERIFY(note.contains(QStringLiteral("did not finish")));
    }

    void cancelAnswersAtOnceWithTheQuickLayout()
    {
        QTemporaryDir dir;
        LayoutService service;
        service.setHelperPath(hungHelper(dir));
        service.setBudgetMs(600000);
        QSignalSpy spy(&service, &LayoutService::finished);
        const quint64 t = service.request(this, chain(25));
        const qint64 pid = helperPid(dir);
        service.cancelAll();
        const Answer a = next(spy, 5000);
        QCOMPARE(a.ticket, t);
        QVERIFY(a.result);
        QVERIFY2(a.note.contains(QStringLiteral("cancelled")), qPrintable(a.note));
        QCOMPARE(service.runningHelpers(), 0);
        QTRY_VERIFY(processGone(pid));
    }

    void destroyingTheServiceEndsEveryHelper()
    {
        // What quitting the app does: no dot keeps burning CPU after the window closed.
        QTemporaryDir dir;
        auto service = std::make_unique<LayoutService>();
        service->setHelperPath(hungHelper(dir));
        service->setBudgetMs(600000);
        service->request(this, chain(10));
        const qint64 pid = helperPid(dir);
        QVERIFY(pid > 0);
        QCOMPARE(service->runningHelpers(), 1);
        service.reset();
        QTRY_VERIFY(processGone(pid));
    }

    void aSupersededLayoutIsCachedNotDelivered()
    {
        LayoutService service;
        QSignalSpy spy(&service, &LayoutService::finished);
        const layout::LayoutRequest first = chain(120), second = chain(121);
        const quint64 a = service.request(this, first);
        const quint64 b = service.request(this, second);
        const Answer answer = next(spy);
        QCOMPARE(answer.ticket, b);
        QTRY_VERIFY(service.cached(first)); // finished after all, for stepping back
        QTest::qWait(50);
        for (const auto &args : spy)
            QVERIFY(args[0].toULongLong() != a);
        // Stepping back: answered from the cache, no helper started.
        const quint64 c = service.request(this, first);
        QCOMPARE(service.runningHelpers(), 0);
        QCOMPARE(next(spy).ticket, c);
    }

    void eachClientsLatestRequestIsAnswered()
    {
        // The main graph and a body view share the service; one does not starve the other.
        LayoutService service;
        QObject other;
        QSignalSpy spy(&service, &LayoutService::finished);
        const quint64 a = service.request(this, chain(12));
        const quint64 b = service.request(&other, chain(13));
        std::set<quint64> answered{next(spy).ticket, next(spy).ticket};
        QCOMPARE(answered, (std::set<quint64>{a, b}));
    }

    void aBrokenHelperIsANoteNotACrash_data()
    {
        QTest::addColumn<QString>("script");
        QTest::addColumn<QString>("expected");
        QTest::newRow("garbage answer") << QStringLiteral("#!/bin/sh\ncat > /dev/null\necho garbage\n")
                                        << QStringLiteral("not a layout");
        QTest::newRow("dies") << QStringLiteral("#!/bin/sh\ncat > /dev/null\necho 'out of memory' >&2\nexit 3\n")
                              << QStringLiteral("out of memory");
        QTest::newRow("killed") << QStringLiteral("#!/bin/sh\nkill -9 $$\n") << QStringLiteral("Graphviz failed");
        QTest::newRow("missing") << QString() << QStringLiteral("could not start");
    }

    void aBrokenHelperIsANoteNotACrash()
    {
        QFETCH(QString, script);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path =
            script.isEmpty() ? dir.filePath(QStringLiteral("helper")) : helperScript(dir, QStringLiteral("helper"), script);
        QVERIFY(!path.isEmpty());
        LayoutService service;
        service.setHelperPath(path);
        QSignalSpy spy(&service, &LayoutService::finished);
        service.request(this, chain(8));
        const Answer a = next(spy);
        QVERIFY(a.result);
        QVERIFY2(a.note.contains(expected), qPrintable(a.note));
    }

    void everyChangingPassStepOfRealWorldShapesLaysOut_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("minChanging"); // steps that change the graph, at the least
        for (const char *m : {"paddle_det", "unet_skips", "tf2onnx_long", "vad_like"})
            QTest::newRow(m) << realWorld(m) << 3;
        // Zero biases removed, equal weight scales merged: the quantized ops themselves stay.
        QTest::newRow("quant_unet") << realWorld("quant_unet") << 2;
    }

    void everyChangingPassStepOfRealWorldShapesLaysOut()
    {
        // Each step is answered within the budget plus a margin for the quick layout — by dot or
        // by the fallback — and shows a graph; before the helper process, hardswish-fusion on a
        // Paddle detector ran dot for 15 minutes and Cancel did nothing.
        QFETCH(QString, file);
        QFETCH(int, minChanging);
        constexpr int budgetMs = 1500, marginMs = 15000;
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        w.layoutService()->setBudgetMs(budgetMs);
        w.openFile(file);
        QVERIFY(waitIdle(w, 60000));
        QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        w.runPipeline();
        QVERIFY(waitIdle(w, 120000));
        QVERIFY(w.pipelineResult() && w.pipelineResult()->status);
        int changing = 0;
        for (std::size_t i = 0; i < w.pipelineResult()->passes.size(); ++i) {
            if (!w.pipelineResult()->passes[i].changed)
                continue;
            ++changing;
            w.showStep(int(i));
            QVERIFY2(waitIdle(w, budgetMs + marginMs),
                     qPrintable(QStringLiteral("step %1 (%2) did not lay out")
                                    .arg(i)
                                    .arg(QString::fromStdString(w.pipelineResult()->passes[i].name))));
            QVERIFY(!w.graphPane()->scene(0)->nodeItems().empty());
            QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        }
        QVERIFY(changing >= minChanging);
        w.showStep(-1); // original vs final
        QVERIFY(waitIdle(w, budgetMs + marginMs));
    }

    void theFirstViewIsReadable_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("weight");
        QTest::newRow("paddle_det") << realWorld("paddle_det") << "x" << "conv2d_3.w_0";
        QTest::newRow("unet_skips") << realWorld("unet_skips") << "input" << "batch_norm_7.b_0";
        QTest::newRow("tf2onnx_long") << realWorld("tf2onnx_long") << "input_1" << "block_5_depthwise_conv2d";
        QTest::newRow("quant_unet") << realWorld("quant_unet") << "input" << "conv_3_wq";
        QTest::newRow("vad_like") << realWorld("vad_like") << "x" << "W_nested_only";
    }

    void theFirstViewIsReadable()
    {
        // The input is on screen at 100 % (not the bounding box's empty centre), Constant weights
        // are inside their readers, long names are elided, and a weight's name is searchable.
        QFETCH(QString, file);
        QFETCH(QString, input);
        QFETCH(QString, weight);
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        w.openFile(file);
        QVERIFY(waitIdle(w, 60000));
        QTest::qWait(50); // showInitial runs again once the view has its size
        GraphScene *scene = w.graphPane()->scene(0);
        GraphView *view = w.graphPane()->view(0);
        const NodeItem *in = scene->itemForKey("in:" + input.toStdString());
        QVERIFY(in);
        const QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
        QVERIFY2(visible.contains(in->sceneBoundingRect()), "the graph's input is not in the first view");
        QVERIFY(view->zoom() >= 0.99 || visible.contains(scene->itemsBoundingRect()));
        for (const NodeItem *n : scene->nodeItems()) {
            QVERIFY2(n->visual().title != "Constant", "a Constant weight drawn as a box");
            QVERIFY2(n->boundingRect().width() < 520, qPrintable(QString::fromStdString(n->visual().key)));
        }
        QVERIFY(w.graphPane()->find(weight) >= 1);
        // Edge labels cover neither each other nor a node (fan-outs put many in one gap).
        const std::vector<QRectF> labels = scene->labelBoxes();
        QVERIFY(!labels.empty());
        for (std::size_t a = 0; a < labels.size(); ++a) {
            for (std::size_t b = a + 1; b < labels.size(); ++b)
                QVERIFY2(!labels[a].intersects(labels[b]), "two edge labels overlap");
            for (const NodeItem *n : scene->nodeItems())
                QVERIFY2(!labels[a].intersects(n->sceneBoundingRect()), "an edge label covers a node");
        }
        QCOMPARE(view->contextMenuPolicy(), Qt::CustomContextMenu); // before any double-click
        // The legend collapses to a tab when a node lies under it, and opens again when none does.
        view->setTransform(QTransform::fromScale(12, 12)); // one node fills the view, legend included
        view->centerOn(in->sceneBoundingRect().center());
        QTRY_VERIFY(w.graphPane()->overlayFaded(0));
        // The minimap in its corner fades the same way, and comes back under the mouse.
        auto *minimap = w.graphPane()->findChild<MiniMap *>();
        QVERIFY(minimap && minimap->isVisible());
        QTRY_VERIFY(w.graphPane()->overlayFaded(1));
        QEvent enter(QEvent::Enter), leave(QEvent::Leave);
        QCoreApplication::sendEvent(minimap, &enter);
        QVERIFY(!w.graphPane()->overlayFaded(1));
        QVERIFY(w.graphPane()->overlayFaded(0)); // the legend, not under the mouse, stays faded
        QCoreApplication::sendEvent(minimap, &leave);
        QVERIFY(w.graphPane()->overlayFaded(1));
        // Hidden (View ▸ Minimap off), it covers nothing: nothing to fade.
        w.graphPane()->setShowMinimap(false);
        QVERIFY(!w.graphPane()->overlayFaded(1));
        w.graphPane()->setShowMinimap(true);
        view->setTransform(QTransform::fromScale(0.01, 0.01)); // the graph a thin line in the middle
        view->centerOn(scene->itemsBoundingRect().center());
        QTRY_VERIFY(!w.graphPane()->overlayFaded(0));
        QTRY_VERIFY(!w.graphPane()->overlayFaded(1));
    }

    void aFusedNodeIsDrawnInTheSlotOfWhatItReplaced()
    {
        // The Paddle detector has no name scopes: it is grouped in topological blocks. The
        // HardSwish nodes a pass adds must land in the block (and the slot) of the chain they
        // replaced, not in a closed last block where the AFTER side shows only a long edge.
        MainWindow w;
        w.resize(1400, 900);
        w.show();
        w.openFile(realWorld("paddle_det"));
        QVERIFY(waitIdle(w, 60000));
        QSignalSpy optimized(&w, &MainWindow::pipelineFinished);
        w.runPipeline();
        QVERIFY(optimized.wait(120000));
        QVERIFY(waitIdle(w, 30000));
        for (std::size_t i = 0; i < w.pipelineResult()->passes.size(); ++i)
            if (w.pipelineResult()->passes[i].name == "hardswish-fusion")
                w.showStep(int(i));
        QVERIFY(waitIdle(w, 30000));
        const NodeItem *after = w.graphPane()->scene(1)->itemForKey("hard_swish_0");
        const NodeItem *before = w.graphPane()->scene(0)->itemForKey("hard_swish_0");
        QVERIFY(after && before);
        QCOMPARE(after->visual().title, std::string("HardSwish"));
        QCOMPARE(before->visual().title, std::string("Div"));
        QCOMPARE(after->pos(), before->pos());
    }

    void originalVsFinalMatchesAcrossTheLowering_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("inception sample") << QString::fromStdString(test::samplePath("inception_block.onnx").string());
        QTest::newRow("paddle_det") << realWorld("paddle_det");
        QTest::newRow("tf2onnx_long") << realWorld("tf2onnx_long");
    }

    void originalVsFinalMatchesAcrossTheLowering()
    {
        // The export lowering rebuilds fused ops under new names; matched by tensor identity, a
        // node the passes kept is not shown as removed and added (every node was, once).
        QFETCH(QString, file);
        MainWindow w;
        w.show();
        w.openFile(file);
        QVERIFY(waitIdle(w, 60000));
        QSignalSpy optimized(&w, &MainWindow::pipelineFinished);
        w.runPipeline();
        QVERIFY(optimized.wait(120000));
        w.showStep(-1);
        QVERIFY(waitIdle(w, 30000));
        const GraphDiff &matched = w.graphPane()->diff();
        const GraphDiff byName = diffGraphsByName(*w.graphPane()->graph(0), *w.graphPane()->graph(1));
        const std::size_t before = byName.removed.size() + byName.added.size(),
                          after = matched.removed.size() + matched.added.size();
        QVERIFY2(after <= before, qPrintable(QStringLiteral("%1 removed/added matched, %2 by name").arg(after).arg(before)));
        if (file.endsWith(QStringLiteral("inception_block.onnx")))
            QCOMPARE(after, std::size_t(0)); // every fusion there is lowered back: nothing is new
        // What is still "added" is new in kind: no added node has the op and output tensor of a
        // removed one.
        std::set<std::pair<std::string, std::string>> removed;
        for (const std::string &n : matched.removed) {
            const Node &node = w.graphPane()->graph(0)->node(w.graphPane()->graph(0)->findNode(n));
            removed.emplace(node.opType, w.graphPane()->graph(0)->value(node.outputs[0]).name);
        }
        for (const std::string &n : matched.added) {
            const Node &node = w.graphPane()->graph(1)->node(w.graphPane()->graph(1)->findNode(n));
            QVERIFY2(!removed.count({node.opType, w.graphPane()->graph(1)->value(node.outputs[0]).name}),
                     n.c_str());
        }
    }

    void savingAStepWritesStandardOnnxForTheTarget()
    {
        // A mid-pipeline step holds FusedConv: with target onnx it is lowered before writing;
        // with target none the ops only opscope runs are named (the dialog asks before writing).
        MainWindow w;
        w.show();
        w.openFile(realWorld("paddle_det"));
        QVERIFY(waitIdle(w, 60000));
        QSignalSpy optimized(&w, &MainWindow::pipelineFinished);
        w.runPipeline();
        QVERIFY(optimized.wait(120000));
        for (std::size_t i = 0; i < w.pipelineResult()->passes.size(); ++i)
            if (w.pipelineResult()->passes[i].name == "conv-activation-fusion")
                w.showStep(int(i));
        QVERIFY(waitIdle(w, 30000));
        QVERIFY(w.suggestedSaveName().endsWith(QStringLiteral("/paddle_det.conv-activation-fusion.onnx")));
        auto opscopeOps = [](const Model &m) {
            int n = 0;
            for (NodeId id : m.graph.nodeIds())
                n += m.graph.node(id).domain == "ai.opscope";
            return n;
        };
        w.passPanel()->setTarget(QStringLiteral("none"));
        QStringList only;
        Expected<std::shared_ptr<const Model>> raw = w.exportableModel(&only);
        QVERIFY(raw);
        QVERIFY(opscopeOps(**raw) > 0);
        QVERIFY2(only.join(QLatin1Char(' ')).contains(QStringLiteral("FusedConv")), qPrintable(only.join(QLatin1Char(' '))));
        w.passPanel()->setTarget(QStringLiteral("onnx"));
        only.clear();
        Expected<std::shared_ptr<const Model>> lowered = w.exportableModel(&only);
        QVERIFY(lowered);
        QCOMPARE(opscopeOps(**lowered), 0);
        QVERIFY(only.isEmpty());
        QVERIFY(verifyGraph((*lowered)->graph));
    }

    void aLayoutPastItsBudgetSaysSoInTheStatusBar()
    {
        // dot that does not answer within the budget: the window shows the quick layout and says
        // in the status bar why the graph looks different, with the count of items laid out.
        QTemporaryDir dir;
        MainWindow w;
        w.show();
        w.layoutService()->setHelperPath(hungHelper(dir));
        w.layoutService()->setBudgetMs(300);
        QSignalSpy loaded(&w, &MainWindow::modelLoaded);
        w.openFile(QString::fromStdString(test::samplePath("inception_block.onnx").string()));
        QVERIFY(loaded.wait(60000));
        QVERIFY(waitIdle(w, 20000));
        QVERIFY(!w.graphPane()->scene(0)->nodeItems().empty());
        const QString status = w.statusText();
        QVERIFY2(status.contains(QStringLiteral("did not finish within")), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("quick layered layout")), qPrintable(status));
        QVERIFY2(status.contains(QStringLiteral("items)")), qPrintable(status));
        QCOMPARE(w.layoutService()->runningHelpers(), 0);
    }

    void cancelDuringAStepShowsTheQuickLayout()
    {
        // With a budget no layout reaches, Cancel in the status bar is what ends each wait.
        MainWindow w;
        w.show();
        w.layoutService()->setBudgetMs(600000);
        QSignalSpy loaded(&w, &MainWindow::modelLoaded);
        w.openFile(realWorld("paddle_det"));
        QVERIFY(loaded.wait(60000));
        w.cancelWork();
        QVERIFY(waitIdle(w, 10000));
        QSignalSpy optimized(&w, &MainWindow::pipelineFinished);
        w.runPipeline();
        QVERIFY(optimized.wait(120000));
        for (std::size_t i = 0; i < w.pipelineResult()->passes.size(); ++i)
            if (w.pipelineResult()->passes[i].name == "hardswish-fusion")
                w.showStep(int(i));
        w.cancelWork();
        QVERIFY(waitIdle(w, 10000));
        QVERIFY(!w.graphPane()->scene(0)->nodeItems().empty());
        QCOMPARE(w.layoutService()->runningHelpers(), 0);
    }
};

QTEST_MAIN(TestLayoutService)
#include "tst_layoutservice.moc"
