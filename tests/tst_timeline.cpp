// The timeline view and profiling sessions (offscreen): time ↔ pixel mapping, compare mode on a
// profiled fixture (runs stacked, per-op totals, span hit-testing and selection), trace files in
// and out, and one paint of a million spans (QBENCHMARK; the target is < 16 ms).

#include "optotalsmodel.h"
#include "profilepanel.h"
#include "testsupport.h"
#include "timelineview.h"
#include "trace/chrometrace.h"

#include <QAbstractItemModelTester>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
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

} // namespace

class TestTimeline : public QObject
{
    Q_OBJECT

private slots:
    void timeAndPixels_data()
    {
        QTest::addColumn<double>("t0");
        QTest::addColumn<double>("t1");
        QTest::newRow("a millisecond") << 0.0 << 1e-3;
        QTest::newRow("a window late in the run") << 0.5 << 0.5001;
        QTest::newRow("ten seconds") << 2.0 << 12.0;
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
        for (const auto &r : panel.runs())
            lanes += r.trace.lanes.size();
        QCOMPARE(view->rowCount(), int(3 + lanes)); // a header per run, then its lanes
        QCOMPARE(panel.totals()->columnCount(), 4); // op + one column per run
        QVERIFY(panel.totals()->rowCount() >= 3);
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
        // Every node's time for the graph's heat overlay.
        QVERIFY(panel.timePerNode().size() >= 10);

        // Saved as one Chrome trace, and read back as a run.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("session.json"));
        QVERIFY(panel.saveTrace(path));
        panel.clearRuns();
        QVERIFY(panel.openTrace(path));
        QCOMPARE(panel.runs().size(), std::size_t(1));
        QCOMPARE(panel.runs()[0].trace.lanes.size(), lanes);
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
