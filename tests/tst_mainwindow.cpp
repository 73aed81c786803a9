// The desktop app under QT_QPA_PLATFORM=offscreen: a fixture loads into a scene with the right
// items and colours; the pipeline runs in the background and fills the passes panel; stepping
// shows each pass's BEFORE | AFTER with diff colours; search finds nodes and tensors; arrow keys
// walk the selection along edges; a bad file
// shows the core's message; item models pass QAbstractItemModelTester.

#include "categorycolors.h"
#include "graphitems.h"
#include "graphpane.h"
#include "graphscene.h"
#include "inspectormodel.h"
#include "mainwindow.h"
#include "memoryview.h"
#include "passpanel.h"
#include "passes/passdocs.h"
#include "passes/pipeline.h"
#include "valuespanel.h"
#include "testsupport.h"
#include "waitidle.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDragEnterEvent>
#include <QElapsedTimer>
#include <QComboBox>
#include <QImage>
#include <QPushButton>
#include <QMimeData>
#include <QUrl>
#include <QTableView>
#include <QTreeView>
#include <QPainter>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <set>

using namespace opscope;

namespace {

using test::waitIdle;

QString sample(const char *name)
{
    return QString::fromStdString(test::samplePath(name).string());
}

double r_half(const NodeItem *n)
{
    return n->boundingRect().width() / 2 - 4; // boundingRect has a 4-point margin
}

int countDiff(const GraphScene *s, DiffState state)
{
    int n = 0;
    for (const NodeItem *item : s->nodeItems())
        n += item->diffState() == state ? 1 : 0;
    return n;
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("opscope-tests"));
        QStandardPaths::setTestModeEnabled(true);
    }

    void loadsAFixtureIntoTheScene()
    {
        MainWindow w;
        w.show();
        w.openFile(sample("inception_block.onnx"));
        QVERIFY(waitIdle(w));
        QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        const GraphScene *scene = w.graphPane()->scene(0);
        // 25 nodes + 1 input + 1 output; one edge per (producer, consumer, tensor).
        QCOMPARE(int(scene->nodeItems().size()), 27);
        QCOMPARE(int(scene->edgeItems().size()), 29);
        int convs = 0;
        for (const NodeItem *n : scene->nodeItems())
            if (n->visual().title == "Conv") {
                ++convs;
                QCOMPARE(n->visual().category, OpCategory::Compute);
                QCOMPARE(int(n->visual().constants.size()), 2); // weight and bias shown inside
            }
        QCOMPARE(convs, 8);
        // Painted in their category's colour: sample the box just inside its left edge.
        const NodeItem *conv = scene->itemForKey("/stem/conv1/Conv");
        QVERIFY(conv);
        QImage img(400, 200, QImage::Format_ARGB32);
        img.fill(Qt::white);
        {
            QPainter p(&img);
            const QRectF r = conv->sceneBoundingRect();
            w.graphPane()->scene(0)->render(&p, QRectF(0, 0, 400, 200),
                                            QRectF(r.center() - QPointF(200, 100), QSizeF(400, 200)));
        }
        const QColor px = img.pixelColor(200 - int(r_half(conv)) + 6, 100 + 8);
        QVERIFY2(std::abs(px.red() - categoryFill(OpCategory::Compute).red()) < 12 &&
                     std::abs(px.blue() - categoryFill(OpCategory::Compute).blue()) < 12,
                 qPrintable(px.name()));
        new QAbstractItemModelTester(w.inspector(), QAbstractItemModelTester::FailureReportingMode::QtTest,
                                     &w);
        new QAbstractItemModelTester(w.passPanel()->model(),
                                     QAbstractItemModelTester::FailureReportingMode::QtTest, &w);
        // Selecting a node fills the inspector with its sections.
        w.selectNode(QStringLiteral("/stem/conv1/Conv"));
        QVERIFY(w.inspector()->rowCount() >= 4);
        QCOMPARE(w.inspector()->index(0, 0).data().toString(), QStringLiteral("Node"));
    }

    void pipelineRunsAndStepsShowDiffs()
    {
        MainWindow w;
        w.show();
        w.openFile(sample("inception_block.onnx"));
        QVERIFY(waitIdle(w));
        QSignalSpy finished(&w, &MainWindow::pipelineFinished);
        w.runPipeline();
        QVERIFY(finished.wait(30000));
        QVERIFY(waitIdle(w));
        const passes::PipelineResult *r = w.pipelineResult();
        QVERIFY(r && r->status.isOk());
        // The panel lists every pass with its outcome.
        PassListModel *model = w.passPanel()->model();
        QCOMPARE(model->rowCount(), int(r->passes.size()));
        const int fusionRow = model->rowOfRecord(
            int(std::find_if(r->passes.begin(), r->passes.end(),
                             [](const auto &p) { return p.name == "conv-activation-fusion"; }) -
                r->passes.begin()));
        QVERIFY(fusionRow >= 0);
        QCOMPARE(model->index(fusionRow, PassListModel::ChangedColumn).data().toString(),
                 QStringLiteral("yes"));
        QCOMPARE(model->index(fusionRow, PassListModel::MatchesColumn).data().toInt(), 8);
        // Each pass says what it does: its one-line summary as the row's tooltip (with the full
        // name, which the column may elide), and its header's text and diagram below the table
        // for the selected row.
        const std::string summary = passes::passSummary("conv-activation-fusion");
        QVERIFY(!summary.empty());
        const QString tip = model->index(fusionRow, PassListModel::PassColumn).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("conv-activation-fusion")), qPrintable(tip));
        QVERIFY2(tip.contains(QString::fromStdString(summary).toHtmlEscaped()), qPrintable(tip));
        w.passPanel()->table()->setCurrentIndex(model->index(fusionRow, PassListModel::PassColumn));
        QCOMPARE(w.passPanel()->aboutText().toStdString(),
                 std::string(passes::passDocumentation("conv-activation-fusion")));
        QVERIFY(w.passPanel()->aboutText().contains(QStringLiteral("FusedConv")));
        // The first changing pass is shown: 8 Conv + 8 Relu removed, 8 FusedConv added.
        QCOMPARE(r->passes[std::size_t(w.currentStep())].name, std::string("conv-activation-fusion"));
        QCOMPARE(countDiff(w.graphPane()->scene(0), DiffState::Removed), 16);
        QCOMPARE(countDiff(w.graphPane()->scene(1), DiffState::Added), 8);
        // MaxPool and Concat now read FusedConv outputs: their neighbours changed, they did not
        // (they were drawn amber once, as if the pass had touched them).
        QCOMPARE(countDiff(w.graphPane()->scene(1), DiffState::Modified), 0);
        QCOMPARE(countDiff(w.graphPane()->scene(0), DiffState::Added), 0);
        // The step's counts stay in the status bar once its layout has landed.
        QVERIFY(waitIdle(w));
        QVERIFY2(w.statusText().startsWith(QStringLiteral("conv-activation-fusion: 16 removed, 8 added")),
                 qPrintable(w.statusText()));
        // Unchanged nodes keep their position between BEFORE and AFTER.
        const NodeItem *before = w.graphPane()->scene(0)->itemForKey("/head/Softmax");
        const NodeItem *after = w.graphPane()->scene(1)->itemForKey("/head/Softmax");
        QVERIFY(before && after);
        QCOMPARE(before->pos(), after->pos());
        // Next step: the lowering back to ONNX, the reverse diff.
        const int first = w.currentStep();
        w.stepNext();
        QVERIFY(waitIdle(w));
        QVERIFY(w.currentStep() > first);
        QCOMPARE(countDiff(w.graphPane()->scene(0), DiffState::Removed), 8);
        QCOMPARE(countDiff(w.graphPane()->scene(1), DiffState::Added), 16);
        w.stepPrevious();
        QVERIFY(waitIdle(w));
        QCOMPARE(w.currentStep(), first);
        // Pattern instances: jumping to one highlights its nodes.
        w.nextMatch();
        QVERIFY(waitIdle(w));
        int highlighted = 0;
        for (const NodeItem *n : w.graphPane()->scene(1)->nodeItems())
            highlighted += n->isHighlighted() ? 1 : 0;
        QVERIFY(highlighted >= 1);
        // Selecting an AFTER-only node centres both views on it (synchronized pan and zoom).
        w.selectNode(QStringLiteral("/inception/branch3x3/Conv_Relu"));
        GraphView *v0 = w.graphPane()->view(0), *v1 = w.graphPane()->view(1);
        const QPointF c0 = v0->mapToScene(v0->viewport()->rect().center());
        const QPointF c1 = v1->mapToScene(v1->viewport()->rect().center());
        QVERIFY2(
            QLineF(c0, c1).length() < 5.0,
            qPrintable(QStringLiteral("%1,%2 vs %3,%4").arg(c0.x()).arg(c0.y()).arg(c1.x()).arg(c1.y())));
        QCOMPARE(v0->transform(), v1->transform());
        // Overlay mode: one view with both sides.
        w.graphPane()->setMode(GraphPane::Mode::Overlay);
        QCOMPARE(int(w.graphPane()->scene(0)->nodeItems().size()),
                 int(w.graphPane()->presentation().items.size()));
    }

    void partitionShowsAsAStepWithDevices()
    {
        MainWindow w;
        w.show();
        w.openFile(sample("inception_block.onnx"));
        QVERIFY(waitIdle(w));
        QSignalSpy finished(&w, &MainWindow::pipelineFinished);
        w.partitionForDevices(2);
        QVERIFY(finished.wait(30000));
        QVERIFY(waitIdle(w));
        QVERIFY(w.pipelineResult() && w.pipelineResult()->status.isOk());
        QVERIFY(countDiff(w.graphPane()->scene(1), DiffState::Added) >= 2); // the Send/Recv pairs
        std::set<int> devices;
        for (const NodeItem *n : w.graphPane()->scene(1)->nodeItems())
            if (n->visual().kind == layout::VisualItem::Kind::Node) {
                QVERIFY2(n->device() >= 0, n->visual().name.c_str());
                devices.insert(n->device());
            }
        QCOMPARE(devices.size(), std::size_t(2));
        for (const NodeItem *n : w.graphPane()->scene(0)->nodeItems())
            QCOMPARE(n->device(), -1); // BEFORE was not partitioned
    }

    void searchFindsNodesAndTensors()
    {
        MainWindow w;
        w.show();
        w.openFile(sample("inception_block.onnx"));
        QVERIFY(waitIdle(w));
        GraphPane *pane = w.graphPane();
        QCOMPARE(pane->find(QStringLiteral("maxpool")), 2);
        QCOMPARE(pane->currentHit(), 0);
        pane->findNext();
        QCOMPARE(pane->currentHit(), 1);
        pane->findNext();
        QCOMPARE(pane->currentHit(), 0);
        QVERIFY(pane->find(QStringLiteral("branch3x3/Relu_output")) >= 1 ||
                pane->find(QStringLiteral("branch3x3")) >= 1);
        QCOMPARE(pane->find(QStringLiteral("no such thing")), 0);
        // A tensor highlights its producer and consumers.
        const GraphScene *scene = pane->scene(0);
        const std::string tensor = scene->edgeItems().front()->visual().tensor;
        pane->scene(0)->highlightTensor(tensor);
        int lit = 0;
        for (const NodeItem *n : scene->nodeItems())
            lit += n->isHighlighted() ? 1 : 0;
        QVERIFY(lit >= 2);
    }

    void theGraphGetsMostOfASmallWindow_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("13-inch laptop at 200 %") << QSize(1280, 800);
        QTest::newRow("1024x640") << QSize(1024, 640);
        QTest::newRow("full HD") << QSize(1920, 1080);
    }

    void theGraphGetsMostOfASmallWindow()
    {
        // Docks take a share of the window, not fixed pixels (at 200 % a laptop is 1280 logical
        // pixels wide: 440 + 400 fixed pixels of docks left the graph a strip).
        QFETCH(QSize, size);
        MainWindow w;
        w.resize(size);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTest::qWait(50);
        QVERIFY2(w.graphPane()->width() >= size.width() * 38 / 100,
                 qPrintable(QStringLiteral("graph %1 of %2").arg(w.graphPane()->width()).arg(size.width())));
    }

    void aSmallScreenStaysReadable()
    {
        // 1024x640 logical pixels: a small laptop at 200 % (CTest runs this again with
        // QT_SCALE_FACTOR=2). The inspector's values keep room beside long property names, and
        // before the pipeline has run the pass names are not cut for four empty result columns.
        MainWindow w;
        w.resize(1024, 640);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.openFile(sample("inception_block.onnx"));
        QVERIFY(waitIdle(w));
        QTest::qWait(50);
        for (QTreeView *tree : w.findChildren<QTreeView *>()) {
            if (!tree->isVisible() || tree->model()->columnCount() != 2)
                continue;
            const int width = tree->viewport()->width();
            QVERIFY2(tree->columnWidth(0) <= width * 56 / 100,
                     qPrintable(QStringLiteral("property column %1 of %2").arg(tree->columnWidth(0)).arg(width)));
        }
        QTableView *passes = w.findChild<PassPanel *>()->findChild<QTableView *>();
        QVERIFY(passes);
        const QFontMetrics metrics(passes->font());
        for (int c = 1; c < passes->model()->columnCount(); ++c)
            QVERIFY(passes->isColumnHidden(c));
        int cut = 0;
        for (int r = 0; r < passes->model()->rowCount(); ++r) {
            const QString name = passes->model()->index(r, 0).data().toString();
            if (metrics.horizontalAdvance(name) + 40 > passes->columnWidth(0)) // check box and margins
                ++cut;
        }
        QCOMPARE(cut, 0);
        QVERIFY(w.graphPane()->width() >= 1024 * 38 / 100);
    }

    void followsADarkPalette()
    {
        // A desktop's dark theme reaches the app as a dark application palette: the canvas,
        // node fills and text follow it, and switching back restores the light colours.
        const QPalette before = QApplication::palette();
        QApplication::setPalette(darkPalette());
        MainWindow w;
        w.show();
        w.openFile(sample("inception_block.onnx"));
        QVERIFY(waitIdle(w));
        QVERIFY(canvasTheme().dark);
        GraphView *view = w.graphPane()->view(0);
        QTest::qWait(50);
        const QImage shot = view->viewport()->grab().toImage();
        QVERIFY(shot.pixelColor(3, shot.height() - 3).lightness() < 60); // canvas
        const NodeItem *conv = w.graphPane()->scene(0)->itemForKey("/stem/conv1/Conv");
        QVERIFY(conv);
        const QPoint inside = view->mapFromScene(conv->sceneBoundingRect().left() + 8, conv->sceneBoundingRect().bottom() - 6);
        const QColor fill = shot.pixelColor(inside);
        QVERIFY2(fill.lightness() < 110 && fill.blue() > fill.red(), qPrintable(fill.name())); // deep blue
        QVERIFY(canvasTheme().text.lightness() - fill.lightness() > 120);                    // text reads on it
        QApplication::setPalette(before);
        QVERIFY(!canvasTheme().dark);
        QTest::qWait(50);
        QVERIFY(view->viewport()->grab().toImage().pixelColor(3, shot.height() - 3).lightness() > 200);
    }

    void selectingANodeBringsItIntoView()
    {
        MainWindow w;
        w.resize(1200, 700);
        w.show();
        w.openFile(sample("inception_block.onnx"));
        QVERIFY(waitIdle(w));
        const Graph &g = w.model()->graph;
        const std::string last = g.node(g.nodeIds().back()).name; // at the bottom, below the first view
        GraphView *view = w.graphPane()->view(0);
        QVERIFY(w.selectNode(QString::fromStdString(last)));
        QTest::qWait(100); // nothing queued (the first view of the layout) may move it back
        const QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
        const NodeItem *item = w.graphPane()->scene(0)->itemForKey(last);
        QVERIFY(item);
        QVERIFY2(visible.contains(item->sceneBoundingRect().center()), last.c_str());
    }

    void arrowKeysWalkTheSelectionAlongEdges()
    {
        MainWindow w;
        w.show();
        w.openFile(sample("inception_block.onnx"));
        QVERIFY(waitIdle(w));
        const Graph &g = w.model()->graph;
        // The inception split: a node whose output four branches read.
        NodeId split;
        std::set<std::string> branches;
        for (NodeId id : g.nodeIds()) {
            std::set<std::string> readers;
            for (const Use &use : g.uses(g.node(id).outputs[0]))
                readers.insert(g.node(use.node).name);
            if (readers.size() >= 3) {
                split = id;
                branches = readers;
                break;
            }
        }
        QVERIFY(split.valid());
        GraphView *view = w.graphPane()->view(0);
        const auto selected = [&]() -> std::string {
            const auto items = w.graphPane()->scene(0)->selectedItems();
            const auto *n = items.size() == 1 ? dynamic_cast<const NodeItem *>(items.front()) : nullptr;
            return n ? n->visual().name : std::string();
        };
        QVERIFY(w.selectNode(QString::fromStdString(g.node(split).name)));
        QSignalSpy inspected(w.graphPane(), &GraphPane::nodeSelected);
        QTest::keyClick(view, Qt::Key_Down); // to a reader
        const std::string first = selected();
        QVERIFY2(branches.count(first), first.c_str());
        QTest::keyClick(view, Qt::Key_Right); // to another branch
        const std::string second = selected();
        QVERIFY2(branches.count(second) && second != first, second.c_str());
        QTest::keyClick(view, Qt::Key_Left);
        QVERIFY(branches.count(selected()) && selected() != second);
        QTest::keyClick(view, Qt::Key_Up); // back to the split
        QCOMPARE(selected(), g.node(split).name);
        QCOMPARE(inspected.count(), 4); // the inspector followed every step
        // Up from the first node reaches the graph input; above it the selection stays.
        QVERIFY(w.selectNode(QString::fromStdString(g.node(g.nodeIds().front()).name)));
        QTest::keyClick(view, Qt::Key_Up);
        QTest::keyClick(view, Qt::Key_Up);
        const auto items = w.graphPane()->scene(0)->selectedItems();
        QCOMPARE(items.size(), 1);
        QCOMPARE(dynamic_cast<const NodeItem *>(items.front())->visual().kind, layout::VisualItem::Kind::Input);
    }

    void groupsOpenAndBodiesOpenInPlaceWithBreadcrumbs()
    {
        // x ─► If(c) { then: Relu(x) (x read from outside)  else: Neg(x) } ─► y
        onnx::ModelProto m = test::smallModel();
        auto *proto = m.mutable_graph();
        proto->clear_node();
        proto->clear_initializer();
        proto->clear_output();
        *proto->add_input() = test::tensorInfo("c", onnx::TensorProto::BOOL, {});
        *proto->add_node() = test::node("Relu", {"x"}, {"xr"}, "pre");
        onnx::NodeProto *ifNode = proto->add_node();
        *ifNode = test::node("If", {"c"}, {"y"}, "If_0");
        // then_branch holds If_1, whose bodies read xr from two levels up (spox's VAD exports).
        onnx::NodeProto inner = test::node("If", {"c"}, {"then_inner_y"}, "If_1");
        for (const char *innerBranch : {"then_branch", "else_branch"}) {
            const std::string prefix = std::string("inner_") + innerBranch;
            test::addBody(inner, innerBranch, {test::node("Sigmoid", {"xr"}, {prefix + "_y"}, prefix + "_op")},
                          prefix + "_y");
        }
        test::addBody(*ifNode, "then_branch",
                      {test::node("Relu", {"xr"}, {"then_branch_y"}, "then_branch_op"), inner,
                       test::node("Add", {"then_branch_y", "then_inner_y"}, {"then_sum"}, "then_add")},
                      "then_sum");
        test::addBody(*ifNode, "else_branch", {test::node("Neg", {"xr"}, {"else_branch_y"}, "else_branch_op")},
                      "else_branch_y");
        *proto->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {2, 3});
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("if.onnx"));
        test::writeProto(path.toStdString(), m);

        MainWindow w;
        w.show();
        w.openFile(path);
        QVERIFY(waitIdle(w));
        QVERIFY2(w.lastError().isEmpty(), qPrintable(w.lastError()));
        GraphPane *pane = w.graphPane();
        QVERIFY(pane->scene(0)->itemForKey("If_0"));
        // Double-click: the then_branch in the main graph area, not a dock.
        emit pane->scene(0)->itemActivated(QStringLiteral("If_0"));
        QVERIFY(waitIdle(w));
        QCOMPARE(pane->depth(), 1);
        QCOMPARE(pane->breadcrumbs(), (QStringList{QStringLiteral("small"), QStringLiteral("If_0 ▸ then_branch")}));
        QVERIFY(pane->scene(0)->itemForKey("then_branch_op"));
        QCOMPARE(w.findChildren<GraphPane *>().size(), qsizetype(1));
        // The captured value is an input of the body, wired to the op reading it.
        const NodeItem *capture = pane->scene(0)->itemForKey("in:xr");
        QVERIFY(capture);
        QVERIFY(capture->visual().outerScope);
        // A body's node has activations too: one run, the branch's values, or (when the random
        // condition took the other branch) a note saying the body did not run.
        w.showValuesTab();
        QVERIFY(w.selectNode(QStringLiteral("then_branch_op")));
        auto *probe = w.valuesPanel()->findChild<QPushButton *>();
        QVERIFY(probe && probe->isVisible());
        probe->click();
        QVERIFY(waitIdle(w));
        auto *chooser = w.valuesPanel()->findChild<QComboBox *>();
        QVERIFY2((chooser && chooser->count() >= 2 && !probe->isVisible()) ||
                     w.valuesPanel()->probeNoteText().contains(QStringLiteral("did not run")),
                 qPrintable(w.valuesPanel()->probeNoteText()));
        // One level further down: the trail grows, the grandparent's value is a capture here too,
        // and double-clicking it climbs both levels to its producer.
        emit pane->scene(0)->itemActivated(QStringLiteral("If_1"));
        QVERIFY(waitIdle(w));
        QCOMPARE(pane->depth(), 2);
        QCOMPARE(pane->breadcrumbs(), (QStringList{QStringLiteral("small"), QStringLiteral("If_0 ▸ then_branch"),
                                                   QStringLiteral("If_1 ▸ then_branch")}));
        QVERIFY(pane->scene(0)->itemForKey("inner_then_branch_op"));
        const NodeItem *deepCapture = pane->scene(0)->itemForKey("in:xr");
        QVERIFY(deepCapture && deepCapture->visual().outerScope);
        pane->switchBody(0);
        QVERIFY(waitIdle(w));
        QVERIFY(pane->scene(0)->itemForKey("inner_else_branch_op"));
        emit pane->scene(0)->itemActivated(QStringLiteral("in:xr"));
        QVERIFY(waitIdle(w));
        QCOMPARE(pane->depth(), 0);
        QVERIFY(pane->scene(0)->itemForKey("pre"));
        emit pane->scene(0)->itemActivated(QStringLiteral("If_0")); // back in, for the rest of the test
        QVERIFY(waitIdle(w));
        QCOMPARE(pane->depth(), 1);
        QVERIFY(pane->scene(0)->itemForKey("then_branch_op"));
        // Both branches one click apart.
        pane->switchBody(0);
        QVERIFY(waitIdle(w));
        QCOMPARE(pane->breadcrumbs().last(), QStringLiteral("If_0 ▸ else_branch"));
        QVERIFY(pane->scene(0)->itemForKey("else_branch_op"));
        // Back, forward, and the crumb of the model.
        pane->back();
        QVERIFY(waitIdle(w));
        QVERIFY(pane->scene(0)->itemForKey("then_branch_op"));
        pane->forward();
        QVERIFY(waitIdle(w));
        QVERIFY(pane->scene(0)->itemForKey("else_branch_op"));
        // Double-clicking the capture goes to its producer in the enclosing graph.
        emit pane->scene(0)->itemActivated(QStringLiteral("in:xr"));
        QVERIFY(waitIdle(w));
        QCOMPARE(pane->depth(), 0);
        QCOMPARE(pane->currentHit(), 0);
        QVERIFY(pane->scene(0)->itemForKey("pre"));
        pane->navigateTo(0);
        QCOMPARE(pane->depth(), 0);

        // A generated chain of 600 unscoped nodes opens as blocks; double-clicking one opens it.
        Graph g("chain");
        ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float, Shape::fromSizes({4})));
        for (int i = 0; i < 600; ++i) {
            const ValueId out = *g.createValue("t" + std::to_string(i));
            (void)g.addNode("Relu", {x}, {out}, {}, "relu" + std::to_string(i));
            x = out;
        }
        g.setOutputs({x});
        auto model = std::make_shared<Model>();
        model->opsets = {{"", 17}};
        model->graph = g;
        pane->showGraph(model, &model->graph);
        QVERIFY(waitIdle(w));
        std::string group; // the last block, far from the first view
        double lowest = -1e300;
        for (const NodeItem *n : pane->scene(0)->nodeItems())
            if (n->visual().kind == layout::VisualItem::Kind::Group && n->pos().y() > lowest) {
                group = n->visual().key;
                lowest = n->pos().y();
            }
        QVERIFY(!group.empty());
        // Selected, a group shows its summary: nodes, operators, parameters, border.
        NodeItem *groupItem = pane->scene(0)->itemForKey(group);
        groupItem->setSelected(true);
        const QModelIndex summary = w.inspector()->index(0, 0);
        QCOMPARE(summary.data().toString(), QStringLiteral("Group"));
        QString nodes;
        for (int r = 0; r < w.inspector()->rowCount(summary); ++r)
            if (w.inspector()->index(r, 0, summary).data().toString() == QStringLiteral("nodes"))
                nodes = w.inspector()->index(r, 1, summary).data().toString();
        QCOMPARE(nodes.toULongLong(), qulonglong(pane->grouping().size(groupItem->visual().groupPath)));
        QCOMPARE(w.inspector()->index(1, 0).data().toString(), QStringLiteral("Operators"));
        QCOMPARE(w.inspector()->index(0, 0, w.inspector()->index(1, 0)).data().toString(), QStringLiteral("Relu"));
        groupItem->setSelected(false);
        QVERIFY(w.selectNode(QString::fromStdString(groupItem->visual().groupPath))); // by its scope
        QVERIFY(groupItem->isSelected());
        groupItem->setSelected(false);
        const std::size_t before = pane->scene(0)->nodeItems().size();
        const std::string groupPath = groupItem->visual().groupPath;
        pane->view(0)->centerOnItem(groupItem); // where the user double-clicks it
        emit pane->scene(0)->itemActivated(QString::fromStdString(group));
        QVERIFY(waitIdle(w));
        QVERIFY(pane->scene(0)->nodeItems().size() > before);
        QVERIFY(!pane->scene(0)->itemForKey(group));
        // Opened, the view is on the group's nodes (the layout moved everything below it).
        GraphView *view = pane->view(0);
        const QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
        int membersInView = 0;
        for (const NodeItem *n : pane->scene(0)->nodeItems())
            if (n->visual().groupPath == groupPath && visible.intersects(n->sceneBoundingRect()))
                ++membersInView;
        QVERIFY2(membersInView > 0, "opening a group lost it from the view");
    }

    void theValuesTabShowsWeightsAndConstants()
    {
        MainWindow w;
        w.show();
        w.openBundledSample();
        QVERIFY(waitIdle(w));
        ValuesPanel *values = w.valuesPanel();
        new QAbstractItemModelTester(values->table(), QAbstractItemModelTester::FailureReportingMode::QtTest, values);
        // A Conv's weights: [16,3,3,3] is too big to print: a table through the last two axes.
        w.selectNode(QStringLiteral("/stem/conv1/Conv"));
        QVERIFY2(values->summaryText().contains(QStringLiteral("/stem/conv1.weight")), qPrintable(values->summaryText()));
        QVERIFY(values->summaryText().contains(QStringLiteral("NaN 0")));
        QVERIFY(values->fullText().isEmpty());
        QCOMPARE(values->table()->rowCount(), 3);
        QCOMPARE(values->table()->columnCount(), 3);
        values->setAxes(0, 1, {0, 0, 2, 1});
        QCOMPARE(values->table()->rowCount(), 16);
        // Its bias (16 values) is printed in full.
        values->showTensor(1);
        QVERIFY(values->fullText().startsWith(QLatin1Char('[')));
        QCOMPARE(values->fullText().count(QLatin1Char(',')), 15);
    }

    void theValuesTabShowsActivationsOfOneRun()
    {
        MainWindow w;
        w.show();
        w.openBundledSample();
        QVERIFY(waitIdle(w));
        ValuesPanel *values = w.valuesPanel();
        w.showValuesTab();
        QVERIFY(w.selectNode(QStringLiteral("/stem/conv1/Relu")));
        auto *probe = values->findChild<QPushButton *>();
        QVERIFY(probe && probe->isVisible());
        probe->click();
        QVERIFY(waitIdle(w));
        // Its input and output, computed: a ReLU's output has no negative value, its input does.
        auto *chooser = values->findChild<QComboBox *>();
        QVERIFY(chooser->count() >= 2);
        bool sawOutput = false;
        for (int i = 0; i < chooser->count(); ++i) {
            chooser->setCurrentIndex(i);
            if (values->summaryText().contains(QStringLiteral("min 0 ")))
                sawOutput = true;
        }
        QVERIFY2(sawOutput, qPrintable(values->summaryText()));
        QVERIFY(!probe->isVisible()); // everything shown; nothing left to run for
        // Kept for the model: selecting away and back shows them without another run.
        w.selectNode(QStringLiteral("/stem/conv1/Conv"));
        QVERIFY(probe->isVisible());
        QVERIFY(w.selectNode(QStringLiteral("/stem/conv1/Relu")));
        QVERIFY(!w.isBusy());
        QVERIFY(chooser->count() >= 2);
        QVERIFY2(values->probeNoteText().contains(QStringLiteral("symbolic dims 1")), qPrintable(values->probeNoteText()));
    }

    void activationsRunWithTheMemoryDocksDims()
    {
        // The transformer sample's batch is symbolic: the run for the Values tab takes it from the
        // Memory dock (or --dim), says so, and runs again when it changes.
        MainWindow w;
        w.show();
        w.memoryPanel()->presetDims({{"batch", 3}, {"not_a_dim_here", 5}});
        w.openFile(sample("transformer_block.onnx"));
        QVERIFY(waitIdle(w));
        ValuesPanel *values = w.valuesPanel();
        w.showValuesTab();
        const Graph &g = w.model()->graph;
        const std::string &first = g.node(g.nodeIds().front()).name;
        QVERIFY(w.selectNode(QString::fromStdString(first)));
        auto *probe = values->findChild<QPushButton *>();
        QVERIFY(probe && probe->isVisible());
        probe->click();
        QVERIFY(waitIdle(w));
        const QString note = values->probeNoteText();
        QVERIFY2(note.contains(QStringLiteral("batch=3")) && !note.contains(QStringLiteral("not_a_dim_here")),
                 qPrintable(note));
        QVERIFY2(values->summaryText().contains(QStringLiteral("[3,")), qPrintable(values->summaryText()));
    }

    // Profile ▸ Plan memory: the arena map of the model on screen; every tensor drawn can be
    // hovered and clicked (its producer is selected); on a pass step the summary compares the
    // plan with the one before the pass.
    void theMemoryDockShowsThePlan()
    {
        MainWindow w;
        w.show();
        w.openBundledSample();
        QVERIFY(waitIdle(w));
        w.planMemoryAction()->trigger();
        QVERIFY(waitIdle(w));
        MemoryPanel *panel = w.memoryPanel();
        QVERIFY2(panel->summaryText().contains(QStringLiteral("Arena")), qPrintable(panel->summaryText()));
        QVERIFY2(panel->summaryText().startsWith(QStringLiteral("The model as loaded, not optimized")),
                 qPrintable(panel->summaryText()));
        QVERIFY(panel->isVisible());
        {
            // "As run runs it": the loaded model after the level-all passes, as opscope-cli memory
            // plans it (a user compared the dock with the CLI and found other numbers).
            const std::size_t loadedNodes = panel->model()->graph.nodeCountWithSubgraphs();
            panel->setPlansAsRun(true);
            w.planMemoryAction()->trigger();
            QVERIFY(waitIdle(w));
            QVERIFY2(panel->summaryText().startsWith(QStringLiteral("As run runs it: the loaded model optimized at level all")),
                     qPrintable(panel->summaryText()));
            QVERIFY(panel->model()->graph.nodeCountWithSubgraphs() < loadedNodes);
            QCOMPARE(panel->model()->graph.nodeCountWithSubgraphs(),
                     [&] {
                         Model m = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
                         passes::optimizeForExecution(m, "all");
                         return m.graph.nodeCountWithSubgraphs();
                     }());
            panel->setPlansAsRun(false);
            w.planMemoryAction()->trigger();
            QVERIFY(waitIdle(w));
            QCOMPARE(panel->model()->graph.nodeCountWithSubgraphs(), loadedNodes);
        }
        MemoryView *view = panel->view();
        view->resize(800, 240);
        int drawn = 0;
        std::size_t first = 0;
        for (std::size_t i = 0; i < 200; ++i) {
            const QRectF r = view->tensorRect(i);
            if (r.isEmpty())
                continue;
            if (drawn++ == 0)
                first = i;
            QCOMPARE(view->tensorAt(r.center()), std::optional<std::size_t>(i)); // hit test matches the drawing
        }
        QVERIFY(drawn >= 10);
        QVERIFY(view->peakX() > 0 && view->peakX() < view->width());
        QSignalSpy activated(view, &MemoryView::nodeActivated);
        QTest::mouseClick(view, Qt::LeftButton, {}, view->tensorRect(first).center().toPoint());
        QCOMPARE(activated.count(), 1);
        QVERIFY(w.selectNode(activated.first().first().toString())); // a node of the graph on screen

        // View ▸ Colour nodes by planned bytes: the node writing the most bytes is the hottest.
        QAction *bytesHeat = nullptr;
        for (QAction *a : w.findChildren<QAction *>())
            if (a->text() == QStringLiteral("Colour nodes by planned &bytes"))
                bytesHeat = a;
        QVERIFY(bytesHeat);
        bytesHeat->setChecked(true);
        double hottest = 0.0;
        for (const NodeItem *n : w.graphPane()->scene(0)->nodeItems())
            hottest = std::max(hottest, n->heat());
        QCOMPARE(hottest, 1.0);
        bytesHeat->setChecked(false);
        for (const NodeItem *n : w.graphPane()->scene(0)->nodeItems())
            QCOMPARE(n->heat(), -1.0);

        w.runPipeline();
        QVERIFY(waitIdle(w));
        const std::vector<int> steps = w.changingSteps();
        QVERIFY(!steps.empty());
        w.showStep(steps.front());
        QVERIFY(waitIdle(w));
        w.planMemoryAction()->trigger();
        QVERIFY(waitIdle(w));
        QVERIFY2(panel->summaryText().contains(QStringLiteral("This pass step")), qPrintable(panel->summaryText()));
    }

    void exportsSvgAndPng()
    {
        MainWindow w;
        w.show();
        w.openFile(sample("inception_block.onnx"));
        QVERIFY(waitIdle(w));
        QTemporaryDir dir;
        const QString svg = dir.filePath(QStringLiteral("g.svg")),
                      png = dir.filePath(QStringLiteral("g.png"));
        QVERIFY(w.graphPane()->exportSvg(svg));
        QVERIFY(w.graphPane()->exportPng(png));
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.contains("<svg") && text.contains("Conv"));
        QImage img(png);
        QVERIFY(!img.isNull() && img.width() > 200 && img.height() > 500);
    }

    void badFileShowsTheCoreMessage()
    {
        QTemporaryDir dir;
        const QString bad = dir.filePath(QStringLiteral("bad.onnx"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("this is not a protobuf model at all");
        f.close();
        MainWindow w;
        w.show();
        QSignalSpy failed(&w, &MainWindow::loadFailed);
        w.openFile(bad);
        QVERIFY(failed.wait(10000));
        QVERIFY(!w.lastError().isEmpty());
        QVERIFY(!w.model()); // nothing half-loaded
        w.openFile(dir.filePath(QStringLiteral("missing.onnx")));
        QVERIFY(failed.wait(10000));
        QVERIFY2(w.lastError().contains(QStringLiteral("missing.onnx")), qPrintable(w.lastError()));
        QVERIFY(waitIdle(w));
        QVERIFY2(w.statusText().startsWith(QStringLiteral("Could not open")), qPrintable(w.statusText()));
    }

    void droppingAFileOpensIt()
    {
        MainWindow w;
        w.show();
        const auto drag = [&](const QList<QUrl> &urls) {
            QMimeData data;
            data.setUrls(urls);
            const QPoint at = w.rect().center();
            QDragEnterEvent enter(at, Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
            QCoreApplication::sendEvent(&w, &enter);
            if (!enter.isAccepted())
                return false;
            QDropEvent drop(QPointF(at), Qt::CopyAction, &data, Qt::LeftButton, Qt::NoModifier);
            QCoreApplication::sendEvent(&w, &drop);
            return true;
        };
        // Text is not a file: refused at the door.
        {
            QMimeData text;
            text.setText(QStringLiteral("hello"));
            QDragEnterEvent enter(w.rect().center(), Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
            QCoreApplication::sendEvent(&w, &enter);
            QVERIFY(!enter.isAccepted());
        }
        // A remote URL is refused too (nothing to map).
        QVERIFY(!drag({QUrl(QStringLiteral("https://example.com/model.onnx"))}));
        QVERIFY(!w.model());
        // Two files: the first opens.
        QVERIFY(drag({QUrl::fromLocalFile(sample("transformer_block.onnx")), QUrl::fromLocalFile(sample("inception_block.onnx"))}));
        QVERIFY(waitIdle(w));
        QVERIFY2(w.model(), qPrintable(w.lastError()));
        QCOMPARE(QString::fromStdString(w.model()->sourcePath.filename().string()), QStringLiteral("transformer_block.onnx"));
        QVERIFY(!w.statusText().endsWith(QStringLiteral("…")));
    }

    void opensTheBundledSampleAndComparesModels()
    {
        MainWindow w;
        w.show();
        w.openBundledSample();
        QVERIFY(waitIdle(w));
        QVERIFY(w.model());
        QCOMPARE(int(w.model()->graph.nodeCount()), 25);
        w.compareWith(sample("transformer_block.onnx"));
        QVERIFY(waitIdle(w));
        QVERIFY(w.graphPane()->graph(1));
        QCOMPARE(countDiff(w.graphPane()->scene(0), DiffState::Removed), 25);
        // The layout lands after the comparison: its timing used to replace the summary.
        QVERIFY2(w.statusText().startsWith(QStringLiteral("Comparing with")) &&
                     w.statusText().contains(QStringLiteral("25 removed")),
                 qPrintable(w.statusText()));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
