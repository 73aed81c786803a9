#pragma once
// The timeline: one lane per device and queue, runs stacked on one time axis (compare mode:
// serial / parallel / greedy, or any recorded or imported runs), spans coloured by op category,
// transfers as arrows between lanes. Drawing asks core for a level-of-detail list per lane
// (trace::levelOfDetail) and only paints it, so a million spans draw at any zoom.
// Wheel zooms around the cursor, drag pans, right-drag zooms to a range, Ctrl+0 fits.

#include "trace/trace.h"

#include <QAbstractScrollArea>
#include <memory>
#include <optional>
#include <vector>

namespace opscope {

struct TimelineRun
{
    std::shared_ptr<const trace::Trace> trace;
    QString summary; // "makespan 12.3 ms · cpu:0 98% · cpu:1 71%"
};

class TimelineView : public QAbstractScrollArea
{
    Q_OBJECT
public:
    static constexpr int LabelWidth = 170;
    static constexpr int RowHeight = 22;
    static constexpr std::size_t kMaxLaunchArrows = 400;
    static constexpr int HeaderHeight = 26;
    static constexpr int AxisHeight = 24;

    explicit TimelineView(QWidget *parent = nullptr);

    void setRuns(std::vector<TimelineRun> runs);
    const std::vector<TimelineRun> &runs() const { return m_runs; }
    // Outlines every span of this node (the graph view's selection).
    void setHighlightedNode(const QString &name);

    // Time (seconds) ↔ viewport x (pixels).
    double timeToX(double t) const { return LabelWidth + (t - m_t0) * m_pixelsPerSecond; }
    double xToTime(double x) const { return m_t0 + (x - LabelWidth) / m_pixelsPerSecond; }
    void setVisibleRange(double t0, double t1);
    double visibleStart() const { return m_t0; }
    double visibleEnd() const;
    void fit();
    // Zooms to one run (runs differ by orders of magnitude: a 90 ms run makes a 0.3 ms one a sliver).
    void fitRun(std::size_t run);
    void zoomAt(double factor, double x);

    struct Hit
    {
        std::size_t run = 0, lane = 0;
        std::uint32_t span = 0;
    };
    std::optional<Hit> spanAt(QPoint viewportPos) const;
    // The row under a viewport y: (run, lane), lane -1 for a run's header.
    std::optional<std::pair<std::size_t, int>> rowAt(int y) const;
    int rowCount() const { return int(m_rows.size()); }

signals:
    void spanClicked(const QString &node, const QString &run);

protected:
    void paintEvent(QPaintEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override; // on a run: zoom to it
    void resizeEvent(QResizeEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override;
    bool viewportEvent(QEvent *event) override;

private:
    struct Row
    {
        std::size_t run;
        int lane; // -1: header
    };
    void rebuildRows();
    void updateScrollBars();
    double duration() const;
    int rowTop(std::size_t row) const;
    void paintAxis(QPainter &p);
    void paintCounter(QPainter &p, const trace::Counter &c, int y, int rh, double t1) const;

    std::vector<TimelineRun> m_runs;
    std::vector<Row> m_rows;
    double m_t0 = 0.0;
    double m_pixelsPerSecond = 1e4;
    // The range last asked for (fit, a run double-clicked, a rubber band) until the user zooms or
    // pans: a resize shows the same range again. A view sized while hidden (a dock opened after
    // its trace) had fitted into no width and showed a million seconds.
    std::optional<std::pair<double, double>> m_keptRange;
    QString m_highlight;
    QPoint m_pressPos;
    double m_pressT0 = 0.0;
    bool m_panning = false, m_selecting = false;
    QPoint m_selectionEnd;
};

} // namespace opscope
