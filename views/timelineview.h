#pragma once
// The timeline: one lane per device and queue, runs stacked on one time axis (compare mode:
// serial / parallel / greedy, or any recorded or imported runs), spans coloured by op category,
// transfers as arrows between lanes. Drawing asks core for a level-of-detail list per lane
// (trace::levelOfDetail) and only paints it, so a million spans draw at any zoom.
// Wheel zooms around the cursor, drag pans, right-drag zooms to a range, Ctrl+0 fits.
// A GPU's lanes sit under one row per device (trace::deviceGroups): collapsed, each node's work
// on the device is one span; a click on the row's label expands it into its launch and stream
// lanes, and a double-click on a node's span expands it and zooms to that node's kernels.

#include "trace/devicegroups.h"
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

    struct Row
    {
        enum class Kind { Header, Lane, Group, Counter };
        std::size_t run = 0;
        Kind kind = Kind::Header;
        std::size_t index = 0;  // the lane, the counter, or the row of the group
        int group = -1;         // Group rows and the lanes of a group: which of the run's groups
        bool operator==(const Row &) const = default;
    };
    struct Hit
    {
        std::size_t run = 0, lane = 0; // lane: in the trace, or the group's row (group ≥ 0)
        std::uint32_t span = 0;
        int group = -1;
    };
    std::optional<Hit> spanAt(QPoint viewportPos) const;
    const trace::Span &span(const Hit &hit) const;
    // The row under a viewport y.
    std::optional<Row> rowAt(int y) const;
    int rowCount() const { return int(m_rows.size()); }
    // A run's device groups (GPUs with stream lanes), and whether each shows its lanes.
    const std::vector<trace::DeviceGroup> &groups(std::size_t run) const { return m_groups[run]; }
    bool isGroupExpanded(std::size_t run, int group) const;
    void setGroupExpanded(std::size_t run, int group, bool expanded);
    // Expands the group and zooms to `node`'s work on the device (its first at or after `from`),
    // the node outlined; false when the node did nothing there.
    bool showNodeWork(std::size_t run, int group, const QString &node, double from);

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
    void rebuildRows();
    int rowHeight(const Row &row) const { return row.kind == Row::Kind::Header ? HeaderHeight : RowHeight; }
    void paintSpans(QPainter &p, const trace::Trace &t, const trace::Lane &lane, int y, int rh, double t1);
    void updateScrollBars();
    double duration() const;
    int rowTop(std::size_t row) const;
    void paintAxis(QPainter &p);
    void paintCounter(QPainter &p, const trace::Counter &c, int y, int rh, double t1) const;

    std::vector<TimelineRun> m_runs;
    std::vector<std::vector<trace::DeviceGroup>> m_groups; // per run
    std::vector<std::vector<bool>> m_expanded;             // per run, per group
    std::vector<std::vector<int>> m_groupOf;               // per run, per lane: its group or -1
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
