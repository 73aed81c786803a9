// The timeline view and profiling sessions (offscreen): time ↔ pixel mapping, compare mode on a
// profiled fixture (runs stacked, per-op totals, span hit-testing and selection), trace files in
// and out, and one paint of a million spans (QBENCHMARK; the target is < 16 ms).

#include "optotalsmodel.h"
#include "profiledialog.h"
#include "profilepanel.h"
#include "runtime/npy.h"
#include "testsupport.h"
#include "timelineview.h"
#include "trace/chrometrace.h"
#include "trace/devicegroups.h"
#include "ir/opcategory.h"

#include <QAbstractItemModelTester>
#include <QImage>
#include <QLineEdit>
#include <QSpinBox>
#include <QHeaderView>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QThread>
#include <QTest>

using namespace opscope;

namespace {

std::shared_ptr<const trace::Trace> syntheticTrace(int lanes, int spansPerLane)
{
    auto t = std::make_shared<trace::Trace>();
    t->name = "synthetic";
    for (int l = 0; l < lanes; ++l) {
        const std::size_t lane = t->laneFor("cpu:" + std::to_string(l), 0);
        for (int i = 0; i < spansPerLane; ++i) {
            const double start = i * 2e-6;
            t->lanes[lane].spans.push_back({start, start + 1.5e-6, t->intern("n" + std::to_string(i % 100)),
                                            t->intern("Conv"), std::uint8_t(i % 9)});
        }
    }
    return t;
}

// A GPU run as `run --device cuda:0 --trace` writes it: the executor's launches on cuda:0 queue 0,
// CUPTI's kernels and copies on stream lanes (conv1: its input's copy and two kernels on stream 13;
// gemm on stream 14 while relu1 runs on 13), the CUDA calls on a host lane with launch arrows.
std::shared_ptr<const trace::Trace> gpuTrace()
{
    auto t = std::make_shared<trace::Trace>();
    t->name = "run on cuda:0";
    const std::uint32_t conv = t->intern("conv1"), convOp = t->intern("Conv"), relu = t->intern("relu1"),
                        reluOp = t->intern("Relu"), gemm = t->intern("fc"), gemmOp = t->intern("Gemm"),
                        copy = t->intern("Memcpy HtoD");
    const auto cat = [](const char *op) { return std::uint8_t(opCategory(op, "")); };
    t->lanes.push_back({"cuda:0", 0, {{0.0, 2e-5, conv, convOp, cat("Conv")}, {2e-5, 3e-5, relu, reluOp, cat("Relu")},
                                      {3e-5, 4e-5, gemm, gemmOp, cat("Gemm")}}, {}});
    t->lanes.push_back({"cuda:0", 1013,
                        {{1e-4, 1.2e-4, conv, copy, std::uint8_t(OpCategory::Communication)},
                         {1.2e-4, 2e-4, conv, convOp, cat("Conv")},
                         {2e-4, 3e-4, conv, convOp, cat("Conv")},
                         {3.1e-4, 3.6e-4, relu, reluOp, cat("Relu")}},
                        "stream 13"});
    t->lanes.push_back({"cuda:0", 1014, {{3.2e-4, 5e-4, gemm, gemmOp, cat("Gemm")}}, "stream 14"});
    t->lanes.push_back({"host", 1007, {{0.0, 5e-6, t->intern("cudaLaunchKernel"), t->intern("CUDA API"),
                                        trace::kIdleCategory}}, "CUDA API (thread 7)"});
    t->launches.push_back({0.0, 1.2e-4, 3, 1});
    return t;
}

} // namespace

class TestTimeline : public QObject
{
    Q_OBJECT

private slots:
    // A GPU trace: the executor's steps on cuda:0 say when launches were queued, CUPTI's stream
    // lane when the kernels ran, the host lane when the CUDA calls were made. The per-op totals
    // count the stream lane alone (summed with the steps, Conv was counted twice; the CUDA calls
    // and syncs were listed as ops).
    void opTotalsOfAGpuTraceCountTheKernels()
    {
        auto t = std::make_shared<trace::Trace>();
        t->name = "run on cuda:0";
        const std::uint32_t conv = t->intern("conv1"), op = t->intern("Conv");
        t->lanes.push_back({"cuda:0", 0, {{0.0, 1e-4, conv, op, 0}}, {}});
        t->lanes.push_back({"cuda:0", 1013, {{2e-4, 6e-4, conv, op, 0}}, "stream 13"});
        t->lanes.push_back({"host", 1007, {{0.0, 5e-5, t->intern("cudaLaunchKernel"), t->intern("CUDA API"),
                                            trace::kIdleCategory}}, "CUDA API (thread 7)"});
        // Overlapping calls read back from a file split into a further lane, which has no label:
        // its calls are still waits, no op's (they were listed as "CUDA API").
        t->lanes.push_back({"host", 1, {{1e-5, 2e-5, t->intern("cudaLaunchKernel"), t->intern("CUDA API"),
                                         trace::kIdleCategory}}, {}});
        OpTotalsModel model;
        new QAbstractItemModelTester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest, &model);
        model.setRuns({t});
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.data(model.index(0, 0)).toString(), QStringLiteral("Conv"));
        QCOMPARE(model.data(model.index(0, 1)).toString(), QStringLiteral("0.400"));
    }

    // A GPU's lanes group under one row per device; a node's consecutive records on a stream are
    // one span of it (kernels and the copies it made), overlapping nodes a further row; host lanes
    // and CPU devices do not group.
    void deviceGroupsSummarizeEachNodesWork()
    {
        const auto t = gpuTrace();
        const std::vector<trace::DeviceGroup> groups = trace::deviceGroups(*t);
        QCOMPARE(groups.size(), std::size_t(1));
        const trace::DeviceGroup &g = groups[0];
        QCOMPARE(g.device, std::string("cuda:0"));
        QCOMPARE(g.lanes, (std::vector<std::uint32_t>{0, 1, 2}));
        QCOMPARE(g.rows.size(), std::size_t(2)); // fc overlaps relu1
        QCOMPARE(g.rows[0].spans.size(), std::size_t(2));
        const trace::Span &conv = g.rows[0].spans[0];
        QCOMPARE(t->strings[conv.name], std::string("conv1"));
        QCOMPARE(t->strings[conv.op], std::string("Conv")); // named by its kernels, not its copy
        QCOMPARE(conv.category, std::uint8_t(opCategory("Conv", "")));
        QCOMPARE(conv.start, 1e-4);
        QCOMPARE(conv.end, 3e-4);
        QCOMPARE(g.work[0][0].kernels, 2u);
        QCOMPARE(g.work[0][0].copies, 1u);
        QVERIFY(std::abs(g.work[0][0].busy - 2e-4) < 1e-12);
        QCOMPARE(t->strings[g.rows[0].spans[1].name], std::string("relu1"));
        QCOMPARE(t->strings[g.rows[1].spans[0].name], std::string("fc"));
        QCOMPARE(trace::nodeWorkSpan(*t, g, "fc", 0.0)->start, 3.2e-4);
        QVERIFY(!trace::nodeWorkSpan(*t, g, "nothing", 0.0));
        // The same node twice on one stream with another between: two spans (a loop body's node,
        // a pipeline's micro-batches), found from where the caller is.
        trace::Trace twice = *t;
        twice.lanes[1].spans.push_back({4e-4, 4.5e-4, twice.intern("conv1"), twice.intern("Conv"), 0});
        const auto again = trace::deviceGroups(twice);
        QCOMPARE(again[0].rows[0].spans.size(), std::size_t(3));
        QCOMPARE(trace::nodeWorkSpan(twice, again[0], "conv1", 3.5e-4)->start, 4e-4);
        QCOMPARE(trace::nodeWorkSpan(twice, again[0], "conv1", 9.0)->start, 4e-4); // the last before
        QVERIFY(trace::deviceGroups(*syntheticTrace(2, 10)).empty());
    }

    // Collapsed, a GPU is one row of node spans; a click on its label shows its launch and stream
    // lanes; a double-click on a node's span zooms to that node's kernels, outlined.
    void gpuLanesGroupUnderTheirDevice()
    {
        TimelineView view;
        view.resize(1000, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        const auto t = gpuTrace();
        view.setRuns({{t, QStringLiteral("gpu")}});
        QCOMPARE(view.groups(0).size(), std::size_t(1));
        QCOMPARE(view.rowCount(), 1 + 2 + 1); // header, the group's two rows, the host lane
        const int groupY = TimelineView::AxisHeight + TimelineView::HeaderHeight + TimelineView::RowHeight / 2;
        const auto groupRow = view.rowAt(groupY);
        QVERIFY(groupRow && groupRow->kind == TimelineView::Row::Kind::Group);
        // The group's row hit-tests its node spans.
        const QPoint onConv(int(view.timeToX(2e-4)), groupY);
        const auto hit = view.spanAt(onConv);
        QVERIFY(hit && hit->group == 0);
        QCOMPARE(t->strings[view.span(*hit).name], std::string("conv1"));
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, QPoint(40, groupY));
        QVERIFY(view.isGroupExpanded(0, 0));
        QCOMPARE(view.rowCount(), 1 + 2 + 3 + 1);
        // The expanded lanes follow the group's rows: the launch lane, then the streams.
        const auto stream13 = view.rowAt(groupY + 3 * TimelineView::RowHeight);
        QVERIFY(stream13 && stream13->kind == TimelineView::Row::Kind::Lane);
        QCOMPARE(stream13->index, std::size_t(1));
        QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, QPoint(40, groupY));
        QVERIFY(!view.isGroupExpanded(0, 0));
        QCOMPARE(view.rowCount(), 4);
        // Double-clicking the node's span opens the group on its kernels.
        QTest::mouseDClick(view.viewport(), Qt::LeftButton, {}, onConv);
        QVERIFY(view.isGroupExpanded(0, 0));
        QVERIFY(view.visibleStart() <= 1e-4 && view.visibleStart() > 2e-5); // a third of its time either side
        QVERIFY(view.visibleEnd() >= 3e-4 && view.visibleEnd() < 4e-4);
        // So does its launch on the executor's lane: from the launch, to the work it queued.
        view.fit();
        view.setGroupExpanded(0, 0, false);
        view.setGroupExpanded(0, 0, true);
        const int launchY = groupY + 2 * TimelineView::RowHeight;
        QCOMPARE(view.rowAt(launchY)->index, std::size_t(0));
        QVERIFY(view.showNodeWork(0, 0, QStringLiteral("fc"), 3e-5));
        QVERIFY(view.visibleStart() <= 3.2e-4 && view.visibleEnd() >= 5e-4);
        QVERIFY(!view.showNodeWork(0, 0, QStringLiteral("nothing"), 0.0));
        QImage image(view.size(), QImage::Format_ARGB32);
        view.render(&image); // paints collapsed arrows and both row kinds without tripping
    }

    void timeAndPixels_data()
    {
        QTest::addColumn<double>("t0");
        QTest::addColumn<double>("t1");
        QTest::newRow("a millisecond") << 0.0 << 1e-3;
        QTest::newRow("a window late in the run") << 0.5 << 0.5001;
        QTest::newRow("ten seconds") << 2.0 << 12.0;
    }
    // A CPU run's host lane holds nothing: no row for it (a new-user trial saw an empty "host q0"
    // under every run); an idle device keeps its row, and a host lane with spans is shown.
    void emptyHostLanesHaveNoRow()
    {
        auto t = std::make_shared<trace::Trace>(*syntheticTrace(2, 10));
        t->lanes.push_back({"host", 0, {}, {}});
        t->lanes.push_back({"cpu:9", 0, {}, {}}); // an idle device
        TimelineView view;
        view.setRuns({{t, {}}});
        QCOMPARE(view.rowCount(), 1 + 2 + 1); // header, the two busy lanes, the idle device
        t->lanes[2].spans.push_back({1e-4, 2e-4, t->intern("setup"), t->intern("setup"), 0});
        view.setRuns({{t, {}}});
        QCOMPARE(view.rowCount(), 1 + 2 + 1 + 1);
    }

    void timeAndPixels()
    {
        QFETCH(double, t0);
        QFETCH(double, t1);
        TimelineView view;
        view.resize(1000, 300);
        view.setRuns({{syntheticTrace(2, 100), {}}});
        view.setVisibleRange(t0, t1);
        QCOMPARE(view.timeToX(t0), double(TimelineView::LabelWidth));
        const double right = view.viewport()->width() - 10.0;
        QVERIFY(std::abs(view.timeToX(t1) - right) < 1e-6);
        for (double x : {200.0, 555.5, 990.0})
            QVERIFY(std::abs(view.timeToX(view.xToTime(x)) - x) < 1e-6);
        // Zooming keeps the time under the cursor where it was.
        const double under = view.xToTime(600.0);
        view.zoomAt(3.0, 600.0);
        QVERIFY(std::abs(view.xToTime(600.0) - under) < 1e-12 + 1e-9 * std::abs(under));
        QVERIFY(std::abs((view.visibleEnd() - view.visibleStart()) -
                         (t1 - t0) * (right - TimelineView::LabelWidth + 10) /
                             (right - TimelineView::LabelWidth) / 3.0) < 1e-9 + 1e-6 * (t1 - t0));
    }

    void doubleClickZoomsToARunAndCtrl0FitsAll()
    {
        // Runs differ by orders of magnitude: a double-click on a run's header or lanes zooms to
        // that run alone; Ctrl+0 fits every run again; + and - zoom around the middle.
        TimelineView view;
        view.resize(1000, 400);
        view.show();
        const auto longRun = syntheticTrace(2, 1000), shortRun = syntheticTrace(1, 10);
        view.setRuns({{longRun, QStringLiteral("long")}, {shortRun, QStringLiteral("short")}});
        view.fit();
        const double all = view.visibleEnd() - view.visibleStart();
        QVERIFY(all >= longRun->duration());
        // The short run's header: after the axis, the long run's header and its two lanes.
        const int shortHeader = TimelineView::AxisHeight + TimelineView::HeaderHeight +
                                2 * TimelineView::RowHeight + TimelineView::HeaderHeight / 2;
        QCOMPARE(view.rowAt(shortHeader)->run, std::size_t(1));
        QTest::mouseDClick(view.viewport(), Qt::LeftButton, {}, QPoint(400, shortHeader));
        QCOMPARE(view.visibleStart(), 0.0);
        // The run fills the width up to the 10-pixel right margin.
        const double pixel = (view.visibleEnd() - view.visibleStart()) / view.viewport()->width();
        QVERIFY2(std::abs(view.timeToX(shortRun->duration()) - (view.viewport()->width() - 10)) < 1.0,
                 qPrintable(QString::number(view.timeToX(shortRun->duration()))));
        QVERIFY(view.visibleEnd() < shortRun->duration() + 20 * pixel);
        // A lane of the long run zooms to the long run.
        QTest::mouseDClick(view.viewport(), Qt::LeftButton, {},
                           QPoint(400, TimelineView::AxisHeight + TimelineView::HeaderHeight + 5));
        QVERIFY(std::abs(view.timeToX(longRun->duration()) - (view.viewport()->width() - 10)) < 1.0);
        QTest::keyClick(&view, Qt::Key_Plus);
        QVERIFY(view.visibleEnd() - view.visibleStart() < 0.9 * longRun->duration());
        QTest::keyClick(&view, Qt::Key_Minus);
        QTest::keyClick(&view, Qt::Key_Minus);
        QVERIFY(view.visibleEnd() - view.visibleStart() > longRun->duration());
        QTest::mouseDClick(view.viewport(), Qt::LeftButton, {}, QPoint(400, shortHeader));
        QTest::keyClick(&view, Qt::Key_0, Qt::ControlModifier);
        QVERIFY(std::abs((view.visibleEnd() - view.visibleStart()) - all) < 1e-12 + 1e-9 * all);
    }

    void aViewSizedAfterItsRunsShowsThemWhole()
    {
        // A trace opened while the timeline's dock was hidden fitted into no width (a million
        // seconds across); shown later, the view must fit the runs it was given — and keep a
        // range the user zoomed to only until the user zooms or pans.
        TimelineView view;
        view.resize(40, 100);
        const auto run = syntheticTrace(2, 1000);
        view.setRuns({{run, QStringLiteral("run")}});
        view.resize(1000, 400);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY2(std::abs(view.timeToX(run->duration() * 1.02) - (view.viewport()->width() - 10)) < 1.0,
                 qPrintable(QString::number(view.timeToX(run->duration()))));
        // Zoomed by the user, a resize keeps the scale and position (it only shows more or less).
        QTest::keyClick(&view, Qt::Key_Plus);
        const double x = view.timeToX(run->duration() / 3);
        view.resize(1200, 400);
        QCOMPARE(view.timeToX(run->duration() / 3), x);
    }

    void compareModeOnAProfiledFixture()
    {
        const Model model = test::loadOrFail(test::samplePath("inception_block.onnx")).model;
        ProfilePanel panel;
        panel.resize(1200, 400);
        panel.show();
        new QAbstractItemModelTester(panel.totals(), QAbstractItemModelTester::FailureReportingMode::QtTest,
                                     &panel);
        QSignalSpy finished(&panel, &ProfilePanel::finished);
        schedule::ProfileOptions o;
        o.devices = 2;
        o.iterations = 2;
        o.allCoresSerial = false;
        panel.profile(std::make_shared<Model>(model), o);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.front().front().toString(), QString());
        QCOMPARE(panel.runs().size(), std::size_t(3)); // serial, parallel, greedy
        TimelineView *view = panel.timeline();
        std::size_t lanes = 0;
        for (const auto &r : panel.runs()) {
            QVERIFY(!r.trace.counters.empty()); // a memory lane per device
            lanes += r.trace.lanes.size() + r.trace.counters.size();
        }
        QCOMPARE(view->rowCount(), int(3 + lanes)); // a header per run, then its lanes and memory lanes
        QCOMPARE(panel.totals()->columnCount(), 4); // op + one column per run
        QVERIFY(panel.totals()->rowCount() >= 3);
        // Every run's column fits beside the timeline: none is cut off.
        QTest::qWait(50);
        QVERIFY2(panel.totalsView()->horizontalHeader()->length() <= panel.totalsView()->viewport()->width(),
                 qPrintable(QStringLiteral("%1 > %2").arg(panel.totalsView()->horizontalHeader()->length())
                                .arg(panel.totalsView()->viewport()->width())));
        // The first lane of the first run: its first span is hit at its middle, and a click selects it.
        const trace::Span &first = panel.runs()[0].trace.lanes[0].spans[0];
        view->setVisibleRange(0.0, panel.runs()[0].trace.duration());
        const int y = TimelineView::AxisHeight + TimelineView::HeaderHeight + TimelineView::RowHeight / 2;
        const QPoint at(int(view->timeToX((first.start + first.end) / 2)), y);
        const auto hit = view->spanAt(at);
        QVERIFY(hit);
        QCOMPARE(hit->run, std::size_t(0));
        QSignalSpy clicked(&panel, &ProfilePanel::spanClicked);
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(clicked.front().front().toString().toStdString(), panel.runs()[0].trace.strings[first.name]);
        // The first run's memory lane follows its lanes: no span there to hit.
        const int counterY = y + int(panel.runs()[0].trace.lanes.size()) * TimelineView::RowHeight;
        QVERIFY(!view->spanAt(QPoint(at.x(), counterY)));
        // Every node's time for the graph's heat overlay, under the names of the model as given:
        // the FusedConv that ran stands for the Conv and the Relu it replaced.
        const auto heat = panel.timePerNode();
        QVERIFY(heat.size() >= 10);
        QVERIFY(heat.count("/stem/conv1/Conv") && heat.count("/stem/conv1/Relu"));
        QVERIFY(!heat.count("/stem/conv1/Conv_Relu"));
        QVERIFY(std::abs(heat.at("/stem/conv1/Conv") - heat.at("/stem/conv1/Relu")) < 1e-12);

        // Saved as one Chrome trace and reopened as it was saved: the same runs in the same order,
        // each with its lanes in order, on its own clock (it reopened as one merged run once).
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("session.json"));
        // The save dialog proposes a name beside the model, then the trace last opened.
        panel.currentSource = [&] { return dir.filePath(QStringLiteral("inception_block.onnx")); };
        QCOMPARE(panel.suggestedTraceName(), dir.filePath(QStringLiteral("inception_block.trace.json")));
        QVERIFY(panel.saveTrace(path));
        const std::vector<schedule::ProfileRun> saved = panel.runs();
        panel.clearRuns();
        QVERIFY(panel.openTrace(path));
        QCOMPARE(panel.suggestedTraceName(), path);
        QCOMPARE(panel.runs().size(), saved.size());
        for (std::size_t r = 0; r < saved.size(); ++r) {
            const schedule::ProfileRun &a = saved[r], &b = panel.runs()[r];
            QCOMPARE(b.name, a.name);
            QCOMPARE(b.trace.lanes.size(), a.trace.lanes.size());
            for (std::size_t l = 0; l < a.trace.lanes.size(); ++l) {
                QCOMPARE(b.trace.lanes[l].device, a.trace.lanes[l].device);
                QCOMPARE(b.trace.lanes[l].spans.size(), a.trace.lanes[l].spans.size());
            }
            QCOMPARE(b.trace.transfers.size(), a.trace.transfers.size());
            QCOMPARE(b.trace.counters.size(), a.trace.counters.size());
            QVERIFY2(std::abs(b.trace.duration() - a.trace.duration()) < 1e-6,
                     qPrintable(QStringLiteral("%1: %2 s saved, %3 s reopened")
                                    .arg(QString::fromStdString(a.name))
                                    .arg(a.trace.duration())
                                    .arg(b.trace.duration())));
            QVERIFY(std::abs(b.makespanMs - a.trace.duration() * 1e3) < 1e-3);
        }
        QCOMPARE(view->rowCount(), int(3 + lanes));

        // Nine runs side by side: past 45 % of the panel, every run's column keeps its numbers
        // whole (its name elides in the header, whole in the tooltip), the op column takes what is
        // left, and the table stays within its share of the panel.
        QVERIFY(panel.openTrace(path));
        QVERIFY(panel.openTrace(path));
        QCOMPARE(panel.totals()->columnCount(), 10);
        panel.resize(1400, 400);
        QTest::qWait(50);
        QTableView *table = panel.totalsView();
        const QAbstractItemView *cells = table; // sizeHintForColumn is public here
        const int cap = table->parentWidget()->width() * 45 / 100;
        QVERIFY2(table->width() <= cap, qPrintable(QStringLiteral("%1 > %2").arg(table->width()).arg(cap)));
        for (int c = 1; c < panel.totals()->columnCount(); ++c)
            QVERIFY2(table->columnWidth(c) >= cells->sizeHintForColumn(c),
                     qPrintable(QStringLiteral("column %1: %2 < %3")
                                    .arg(c)
                                    .arg(table->columnWidth(c))
                                    .arg(cells->sizeHintForColumn(c))));
        QVERIFY2(table->horizontalHeader()->length() <= table->viewport()->width(),
                 qPrintable(QStringLiteral("%1 > %2").arg(table->horizontalHeader()->length())
                                .arg(table->viewport()->width())));
        QVERIFY(table->columnWidth(0) > 0);
        QVERIFY(!panel.totals()->headerData(1, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
    }

    void profileDialogBindsDimsAndInputs()
    {
        // What the CLI's --dim and --input give, in the dialog; unbound dims are called out.
        auto model = std::make_shared<Model>();
        Shape shape;
        shape.dims = {Dim::symbolic("batch"), Dim::known(3), Dim::symbolic("height"), Dim::symbolic("height")};
        const ValueId x = model->graph.addInput("x", TypeInfo::tensor(DataType::Float, shape));
        Shape other;
        other.dims = {Dim::symbolic("tokens")};
        const ValueId t = model->graph.addInput("t", TypeInfo::tensor(DataType::Float, other));
        const ValueId y = *model->graph.createValue("y");
        (void)model->graph.addNode("Relu", {x}, {y}, {}, "relu");
        const ValueId u = *model->graph.createValue("u");
        (void)model->graph.addNode("Relu", {t}, {u}, {}, "relu_t");
        model->graph.setOutputs({y, u});
        ProfileDialog dialog(model);
        QCOMPARE(dialog.symbols(), (std::vector<std::string>{"batch", "height", "tokens"}));
        QVERIFY(dialog.dimWarning().contains(QStringLiteral("batch, height, tokens left at 1")));
        dialog.dimBox("height")->setValue(224);
        QVERIFY(dialog.dimWarning().contains(QStringLiteral("batch, tokens left at 1")));
        // An input from a file needs none of its dims bound.
        QTemporaryDir dir;
        const QString npy = dir.filePath(QStringLiteral("t.npy"));
        QVERIFY(writeNpy(npy.toStdString(), *RuntimeTensor::zeros(DataType::Float, {5})));
        dialog.inputFile("t")->setText(npy);
        QVERIFY(dialog.dimWarning().contains(QStringLiteral("batch left at 1")));
        // More devices than this machine's cores: said before the run, not discovered after.
        dialog.devicesBox()->setValue(std::max(1, QThread::idealThreadCount()) + 1);
        QVERIFY2(dialog.dimWarning().contains(QStringLiteral("time-slicing")), qPrintable(dialog.dimWarning()));
        dialog.devicesBox()->setValue(1);
        QVERIFY(!dialog.dimWarning().contains(QStringLiteral("time-slicing")));
        Expected<schedule::ProfileOptions> o = dialog.options();
        QVERIFY(o);
        QCOMPARE(o->dims, (std::map<std::string, std::int64_t>{{"height", 224}}));
        QCOMPARE(o->given.size(), std::size_t(1));
        QCOMPARE(o->given[0].first, std::string("t"));
        QVERIFY(!o->allCoresSerial); // only the runs asked for
        dialog.inputFile("t")->setText(dir.filePath(QStringLiteral("missing.npy")));
        QVERIFY(!dialog.options()); // a bad file is an error, not a random input
    }

    void paintsAMillionSpans_data()
    {
        QTest::addColumn<bool>("zoomed");
        QTest::newRow("whole run") << false;
        QTest::newRow("zoomed in, labels") << true;
    }
    void paintsAMillionSpans()
    {
        QFETCH(bool, zoomed);
        TimelineView view;
        view.resize(1600, 400);
        view.setRuns({{syntheticTrace(8, 125000), {}}});
        if (zoomed)
            view.setVisibleRange(0.1, 0.1005);
        QImage img(view.viewport()->size(), QImage::Format_ARGB32);
        QBENCHMARK
        {
            view.viewport()->render(&img);
        }
    }
};

QTEST_MAIN(TestTimeline)
#include "tst_timeline.moc"
