#include "timelineview.h"

#include "util/systemmemory.h"

#include "categorycolors.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>
#include <limits>

namespace opscope {

namespace {

QString durationText(double seconds)
{
    if (seconds >= 1.0)
        return QString::number(seconds, 'f', 2) + QStringLiteral(" s");
    if (seconds >= 1e-3)
        return QString::number(seconds * 1e3, 'f', seconds >= 1e-2 ? 1 : 2) + QStringLiteral(" ms");
    return QString::number(seconds * 1e6, 'f', 1) + QStringLiteral(" µs");
}

// 1, 2, 5 × 10^k: the tick step for about `target` seconds.
double niceStep(double target)
{
    const double p = std::pow(10.0, std::floor(std::log10(target)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= target)
            return m * p;
    return 10.0 * p;
}

} // namespace

TimelineView::TimelineView(QWidget *parent) : QAbstractScrollArea(parent)
{
    setMouseTracking(true);
    viewport()->setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    connect(verticalScrollBar(), &QScrollBar::valueChanged, viewport(), qOverload<>(&QWidget::update));
}

void TimelineView::setRuns(std::vector<TimelineRun> runs)
{
    m_runs = std::move(runs);
    m_groups.clear();
    m_expanded.clear();
    m_groupOf.clear();
    for (const TimelineRun &r : m_runs) {
        m_groups.push_back(trace::deviceGroups(*r.trace));
        m_expanded.emplace_back(m_groups.back().size(), false);
        m_groupOf.emplace_back(r.trace->lanes.size(), -1);
        for (std::size_t g = 0; g < m_groups.back().size(); ++g)
            for (std::uint32_t lane : m_groups.back()[g].lanes)
                m_groupOf.back()[lane] = int(g);
    }
    rebuildRows();
    fit();
}

void TimelineView::setHighlightedNode(const QString &name)
{
    m_highlight = name;
    viewport()->update();
}

bool TimelineView::isGroupExpanded(std::size_t run, int group) const
{
    return run < m_expanded.size() && group >= 0 && std::size_t(group) < m_expanded[run].size() &&
           m_expanded[run][std::size_t(group)];
}

void TimelineView::setGroupExpanded(std::size_t run, int group, bool expanded)
{
    if (run >= m_expanded.size() || group < 0 || std::size_t(group) >= m_expanded[run].size() ||
        m_expanded[run][std::size_t(group)] == expanded)
        return;
    m_expanded[run][std::size_t(group)] = expanded;
    rebuildRows();
    viewport()->update();
}

bool TimelineView::showNodeWork(std::size_t run, int group, const QString &node, double from)
{
    if (run >= m_groups.size() || group < 0 || std::size_t(group) >= m_groups[run].size())
        return false;
    const trace::Span *work =
        trace::nodeWorkSpan(*m_runs[run].trace, m_groups[run][std::size_t(group)], node.toStdString(), from);
    if (!work)
        return false;
    setGroupExpanded(run, group, true);
    setHighlightedNode(node);
    // The node's work with a margin of a third of it on each side: its neighbours for context.
    const double pad = std::max(1e-7, (work->end - work->start) / 3.0);
    setVisibleRange(std::max(0.0, work->start - pad), work->end + pad);
    return true;
}

void TimelineView::rebuildRows()
{
    m_rows.clear();
    for (std::size_t r = 0; r < m_runs.size(); ++r) {
        const trace::Trace &t = *m_runs[r].trace;
        m_rows.push_back({r, Row::Kind::Header, 0, -1});
        // A group's rows where its device's first lane is, its lanes under them when expanded.
        std::vector<bool> placed(m_groups[r].size(), false);
        for (std::size_t l = 0; l < t.lanes.size(); ++l) {
            const int g = m_groupOf[r][l];
            if (g < 0) {
                // A host lane with nothing on it (a CPU run's: no launches, no setup spans) is a
                // row of nothing under every run; an idle device keeps its row (that is news).
                if (trace::isHostLane(t.lanes[l].device) && t.lanes[l].spans.empty())
                    continue;
                m_rows.push_back({r, Row::Kind::Lane, l, -1});
                continue;
            }
            if (placed[std::size_t(g)])
                continue;
            placed[std::size_t(g)] = true;
            const trace::DeviceGroup &group = m_groups[r][std::size_t(g)];
            for (std::size_t k = 0; k < group.rows.size(); ++k)
                m_rows.push_back({r, Row::Kind::Group, k, g});
            if (m_expanded[r][std::size_t(g)])
                for (std::uint32_t member : group.lanes)
                    m_rows.push_back({r, Row::Kind::Lane, member, g});
        }
        for (std::size_t c = 0; c < t.counters.size(); ++c)
            m_rows.push_back({r, Row::Kind::Counter, c, -1});
    }
    updateScrollBars();
}

double TimelineView::duration() const
{
    double d = 0.0;
    for (const TimelineRun &r : m_runs)
        d = std::max(d, r.trace->duration());
    return d;
}

int TimelineView::rowTop(std::size_t row) const
{
    int y = AxisHeight - verticalScrollBar()->value();
    for (std::size_t i = 0; i < row; ++i)
        y += rowHeight(m_rows[i]);
    return y;
}

void TimelineView::updateScrollBars()
{
    int total = 0;
    for (const Row &r : m_rows)
        total += rowHeight(r);
    verticalScrollBar()->setRange(0, std::max(0, total - (viewport()->height() - AxisHeight)));
    verticalScrollBar()->setPageStep(viewport()->height());
}

double TimelineView::visibleEnd() const
{
    return xToTime(viewport()->width());
}

void TimelineView::setVisibleRange(double t0, double t1)
{
    if (t1 <= t0)
        return;
    m_keptRange = std::pair(t0, t1);
    m_t0 = t0;
    m_pixelsPerSecond = std::max(1e-3, double(viewport()->width() - LabelWidth - 10) / (t1 - t0));
    viewport()->update();
}

void TimelineView::fit()
{
    const double d = duration();
    setVisibleRange(0.0, d > 0 ? d * 1.02 : 1e-3);
}

void TimelineView::zoomAt(double factor, double x)
{
    const double t = xToTime(x);
    m_pixelsPerSecond = std::clamp(m_pixelsPerSecond * factor, 1.0, 1e12);
    m_t0 = t - (x - LabelWidth) / m_pixelsPerSecond;
    m_keptRange.reset();
    viewport()->update();
}

std::optional<TimelineView::Row> TimelineView::rowAt(int y) const
{
    int top = AxisHeight - verticalScrollBar()->value();
    for (const Row &r : m_rows) {
        const int h = rowHeight(r);
        if (y >= top && y < top + h)
            return r;
        top += h;
    }
    return std::nullopt;
}

const trace::Span &TimelineView::span(const Hit &hit) const
{
    const trace::Lane &lane = hit.group >= 0 ? m_groups[hit.run][std::size_t(hit.group)].rows[hit.lane]
                                             : m_runs[hit.run].trace->lanes[hit.lane];
    return lane.spans[hit.span];
}

std::optional<TimelineView::Hit> TimelineView::spanAt(QPoint pos) const
{
    const auto row = rowAt(pos.y());
    if (!row || pos.x() < LabelWidth || (row->kind != Row::Kind::Lane && row->kind != Row::Kind::Group))
        return std::nullopt;
    const bool group = row->kind == Row::Kind::Group;
    const trace::Lane &lane = group ? m_groups[row->run][std::size_t(row->group)].rows[row->index]
                                    : m_runs[row->run].trace->lanes[row->index];
    const double t = xToTime(pos.x()), slack = 2.0 / m_pixelsPerSecond; // a 2-pixel grip on thin spans
    auto it = std::lower_bound(lane.spans.begin(), lane.spans.end(), t - slack,
                               [](const trace::Span &s, double v) { return s.end < v; });
    if (it == lane.spans.end() || it->start > t + slack)
        return std::nullopt;
    return Hit{row->run, row->index, std::uint32_t(it - lane.spans.begin()), group ? row->group : -1};
}

void TimelineView::paintAxis(QPainter &p)
{
    const int w = viewport()->width();
    const CanvasTheme &theme = canvasTheme();
    p.fillRect(QRect(0, 0, w, AxisHeight), theme.axis);
    const double step = niceStep(90.0 / m_pixelsPerSecond);
    p.setPen(theme.axisText);
    p.setFont(QFont(QStringLiteral("DejaVu Sans"), 8));
    for (double t = std::floor(std::max(0.0, m_t0) / step) * step; timeToX(t) < w; t += step) {
        const double x = timeToX(t);
        if (x < LabelWidth)
            continue;
        p.drawLine(QPointF(x, AxisHeight - 6), QPointF(x, AxisHeight));
        p.drawText(QPointF(x + 3, AxisHeight - 9), durationText(t));
    }
    p.drawLine(0, AxisHeight - 1, w, AxisHeight - 1);
}

// A memory lane: the counter as a filled step chart scaled to its own peak, the peak in the label.
void TimelineView::paintCounter(QPainter &p, const trace::Counter &c, int y, int rh, double t1) const
{
    const int w = viewport()->width();
    const CanvasTheme &theme = canvasTheme();
    double peak = 0.0;
    for (const auto &[t, v] : c.samples)
        peak = std::max(peak, v);
    p.setClipRect(QRect(LabelWidth, y, w - LabelWidth, rh));
    QColor fill = categoryFill(OpCategory::Normalization);
    QPolygonF area;
    const double base = y + rh - 2, height = rh - 5;
    const auto yOf = [&](double v) { return peak > 0 ? base - height * v / peak : base; };
    area << QPointF(timeToX(m_t0), base);
    double last = 0.0;
    for (const auto &[t, v] : c.samples) {
        if (t > t1)
            break;
        const double x = timeToX(std::max(t, m_t0));
        area << QPointF(x, yOf(last)) << QPointF(x, yOf(v));
        last = v;
    }
    area << QPointF(timeToX(t1), yOf(last)) << QPointF(timeToX(t1), base);
    p.setPen(Qt::NoPen);
    p.setBrush(fill);
    p.drawPolygon(area);
    p.setClipping(false);
    p.fillRect(QRect(0, y, LabelWidth, rh), theme.axis);
    p.setFont(QFont(QStringLiteral("DejaVu Sans"), 8));
    p.setPen(theme.panelText);
    p.drawText(QRect(10, y, LabelWidth - 14, rh), Qt::AlignVCenter,
               QStringLiteral("%1  mem %2").arg(QString::fromStdString(c.device), QString::fromStdString(bytesText(std::uint64_t(peak)))));
}

void TimelineView::paintSpans(QPainter &p, const trace::Trace &t, const trace::Lane &lane, int y, int rh, double t1)
{
    const CanvasTheme &theme = canvasTheme();
    for (const trace::DrawItem &d : trace::levelOfDetail(lane, m_t0, t1, m_pixelsPerSecond)) {
        const double x0 = timeToX(d.start), x1 = std::max(timeToX(d.end), x0 + 1.0);
        const QRectF r(x0, y + 3, x1 - x0, rh - 6);
        const OpCategory cat = OpCategory(d.category);
        p.fillRect(r, d.count > 1 ? categoryBorder(cat) : categoryFill(cat));
        const trace::Span &s = lane.spans[d.span];
        const QString name = QString::fromStdString(t.strings[s.name]);
        if (d.count == 1 && !m_highlight.isEmpty() && name == m_highlight) {
            p.setPen(QPen(theme.selection, 2));
            p.drawRect(r.adjusted(1, 1, -1, -1));
        }
        if (d.count == 1 && r.width() > 36) {
            p.setPen(theme.text);
            p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter,
                       p.fontMetrics().elidedText(QString::fromStdString(t.strings[s.op]) + QStringLiteral(" ") + name,
                                                  Qt::ElideRight, int(r.width()) - 5));
        }
    }
}

void TimelineView::paintEvent(QPaintEvent *)
{
    QPainter p(viewport());
    const int w = viewport()->width(), h = viewport()->height();
    const CanvasTheme &theme = canvasTheme();
    p.fillRect(rect(), theme.canvas);
    const double t1 = visibleEnd();
    const QFont spanFont(QStringLiteral("DejaVu Sans"), 7), labelFont(QStringLiteral("DejaVu Sans"), 8);
    // Where each lane's arrows end: its own row, or its group's first row when collapsed.
    std::vector<std::vector<int>> laneY(m_runs.size());
    for (std::size_t r = 0; r < m_runs.size(); ++r)
        laneY[r].assign(m_runs[r].trace->lanes.size(), std::numeric_limits<int>::min());
    std::vector<std::vector<int>> groupY(m_runs.size());
    for (std::size_t r = 0; r < m_runs.size(); ++r)
        groupY[r].assign(m_groups[r].size(), std::numeric_limits<int>::min());
    int y = AxisHeight - verticalScrollBar()->value();
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        const Row &row = m_rows[i];
        const int rh = rowHeight(row);
        if (row.kind == Row::Kind::Lane)
            laneY[row.run][row.index] = y;
        else if (row.kind == Row::Kind::Group && row.index == 0)
            groupY[row.run][std::size_t(row.group)] = y;
        if (y + rh < AxisHeight || y > h) {
            y += rh;
            continue;
        }
        const TimelineRun &run = m_runs[row.run];
        if (row.kind == Row::Kind::Header) {
            p.fillRect(QRect(0, y, w, rh), theme.runHeader);
            QFont bold = labelFont;
            bold.setBold(true);
            p.setFont(bold);
            p.setPen(theme.text);
            p.drawText(QRect(8, y, w - 16, rh), Qt::AlignVCenter,
                       QString::fromStdString(run.trace->name) + QStringLiteral("    ") + run.summary);
            y += rh;
            continue;
        }
        if (row.kind == Row::Kind::Counter) {
            paintCounter(p, run.trace->counters[row.index], y, rh, t1);
            y += rh;
            continue;
        }
        const bool groupRow = row.kind == Row::Kind::Group;
        const trace::Lane &lane = groupRow ? m_groups[row.run][std::size_t(row.group)].rows[row.index]
                                           : run.trace->lanes[row.index];
        if (groupRow)
            p.fillRect(QRect(LabelWidth, y, w - LabelWidth, rh), theme.runHeader.lighter(104));
        else if (i % 2)
            p.fillRect(QRect(LabelWidth, y, w - LabelWidth, rh), theme.lane);
        p.setClipRect(QRect(LabelWidth, y, w - LabelWidth, rh));
        p.setFont(spanFont);
        paintSpans(p, *run.trace, lane, y, rh, t1);
        p.setClipping(false);
        p.fillRect(QRect(0, y, LabelWidth, rh), theme.axis);
        QString label;
        if (groupRow && row.index == 0)
            label = (isGroupExpanded(row.run, row.group) ? QStringLiteral("▾ ") : QStringLiteral("▸ ")) +
                    QString::fromStdString(lane.device) + QStringLiteral("  nodes");
        else if (groupRow)
            label = QStringLiteral("    ") + QString::fromStdString(lane.label);
        else if (row.group >= 0) // under its device's row: the executor's lanes queued the work
            label = QStringLiteral("    ") + (lane.label.empty() ? QStringLiteral("launches  q%1").arg(lane.queue)
                                                                 : QString::fromStdString(lane.label));
        else
            label = QString::fromStdString(lane.device) +
                    (lane.label.empty() ? QStringLiteral("  q%1").arg(lane.queue)
                                        : QStringLiteral("  ") + QString::fromStdString(lane.label));
        QFont font = labelFont;
        font.setBold(groupRow && row.index == 0);
        p.setFont(font);
        p.setPen(theme.panelText);
        p.drawText(QRect(10, y, LabelWidth - 14, rh), Qt::AlignVCenter,
                   p.fontMetrics().elidedText(label, Qt::ElideMiddle, LabelWidth - 14));
        y += rh;
    }
    for (std::size_t r = 0; r < m_runs.size(); ++r)
        for (std::size_t l = 0; l < laneY[r].size(); ++l)
            if (laneY[r][l] == std::numeric_limits<int>::min() && m_groupOf[r][l] >= 0)
                laneY[r][l] = groupY[r][std::size_t(m_groupOf[r][l])];
    // Transfers: arrows from the producer's lane to the receiver's.
    p.setClipRect(QRect(LabelWidth, AxisHeight, w - LabelWidth, h - AxisHeight));
    p.setRenderHint(QPainter::Antialiasing);
    constexpr int kNone = std::numeric_limits<int>::min();
    for (std::size_t r = 0; r < m_runs.size(); ++r) {
        const trace::Trace &t = *m_runs[r].trace;
        const std::vector<int> &ys = laneY[r];
        const auto rowOf = [&](std::uint32_t lane) { return lane < ys.size() ? ys[lane] : kNone; };
        for (const trace::Transfer &x : t.transfers) {
            if (x.end < m_t0 || x.start > t1 || rowOf(x.fromLane) == kNone || rowOf(x.toLane) == kNone)
                continue;
            const QPointF a(timeToX(x.start), rowOf(x.fromLane) + RowHeight / 2),
                b(timeToX(x.end), rowOf(x.toLane) + RowHeight / 2);
            p.setPen(QPen(diffColor(DiffState::Modified).darker(130), 1.2));
            p.drawLine(a, b);
            const double angle = std::atan2(b.y() - a.y(), b.x() - a.x());
            p.setBrush(diffColor(DiffState::Modified).darker(130));
            p.drawPolygon(QPolygonF{b, b - QPointF(std::cos(angle - 0.45) * 6, std::sin(angle - 0.45) * 6),
                                    b - QPointF(std::cos(angle + 0.45) * 6, std::sin(angle + 0.45) * 6)});
        }
        // Launch arrows (a CUDA API call → its kernel or copy): thin, and only when few enough are
        // in view to be told apart; zoomed out they would paint the rows over. A collapsed group
        // hides its lanes' launches: they would fan into its one row from every call.
        const auto shown = [&](std::uint32_t lane) {
            return lane < ys.size() && ys[lane] != kNone &&
                   (m_groupOf[r][lane] < 0 || isGroupExpanded(r, m_groupOf[r][lane]));
        };
        std::vector<const trace::Launch *> launches;
        for (const trace::Launch &x : t.launches)
            if (x.end >= m_t0 && x.start <= t1 && shown(x.fromLane) && shown(x.toLane) &&
                launches.size() <= kMaxLaunchArrows)
                launches.push_back(&x);
        if (launches.size() <= kMaxLaunchArrows) {
            p.setPen(QPen(theme.panelText, 0.8));
            for (const trace::Launch *x : launches) {
                // From the call's edge facing the work's lane to the work's edge facing the call.
                const int from = rowOf(x->fromLane), to = rowOf(x->toLane);
                const bool down = to > from;
                p.drawLine(QPointF(timeToX(x->start), from + (down ? RowHeight - 2 : 2)),
                           QPointF(timeToX(x->end), to + (down ? 2 : RowHeight - 2)));
            }
        }
    }
    p.setClipping(false);
    paintAxis(p);
    if (m_selecting) {
        QColor selection = theme.selection;
        p.setPen(QPen(selection, 1, Qt::DashLine));
        selection.setAlpha(40);
        p.setBrush(selection);
        p.drawRect(QRect(QPoint(m_pressPos.x(), AxisHeight), QPoint(m_selectionEnd.x(), h)).normalized());
    }
}

void TimelineView::wheelEvent(QWheelEvent *event)
{
    if (event->modifiers() & Qt::ShiftModifier) {
        QAbstractScrollArea::wheelEvent(event); // vertical scrolling through lanes
        return;
    }
    zoomAt(std::pow(1.25, event->angleDelta().y() / 120.0), event->position().x());
    event->accept();
}

void TimelineView::mousePressEvent(QMouseEvent *event)
{
    m_pressPos = event->pos();
    m_pressT0 = m_t0;
    m_panning = event->button() == Qt::LeftButton;
    m_selecting = event->button() == Qt::RightButton;
    m_selectionEnd = event->pos();
}

void TimelineView::mouseMoveEvent(QMouseEvent *event)
{
    if (m_panning) {
        m_t0 = m_pressT0 - (event->pos().x() - m_pressPos.x()) / m_pixelsPerSecond;
        m_keptRange.reset();
        viewport()->update();
    } else if (m_selecting) {
        m_selectionEnd = event->pos();
        viewport()->update();
    }
}

void TimelineView::mouseReleaseEvent(QMouseEvent *event)
{
    if (m_selecting) {
        m_selecting = false;
        const double a = xToTime(std::min(m_pressPos.x(), event->pos().x()));
        const double b = xToTime(std::max(m_pressPos.x(), event->pos().x()));
        if (std::abs(event->pos().x() - m_pressPos.x()) > 4)
            setVisibleRange(a, b);
        viewport()->update();
        return;
    }
    const bool click = (event->pos() - m_pressPos).manhattanLength() < 4;
    m_panning = false;
    if (!click)
        return;
    if (event->pos().x() < LabelWidth) {
        // A group's label opens or closes it.
        if (const auto row = rowAt(event->pos().y()); row && row->kind == Row::Kind::Group)
            setGroupExpanded(row->run, row->group, !isGroupExpanded(row->run, row->group));
        return;
    }
    if (const auto hit = spanAt(event->pos())) {
        const trace::Trace &t = *m_runs[hit->run].trace;
        const trace::Span &s = span(*hit);
        setHighlightedNode(QString::fromStdString(t.strings[s.name]));
        emit spanClicked(QString::fromStdString(t.strings[s.name]), QString::fromStdString(t.name));
    }
}

void TimelineView::fitRun(std::size_t run)
{
    if (run < m_runs.size() && m_runs[run].trace->duration() > 0)
        setVisibleRange(0.0, m_runs[run].trace->duration());
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent *event)
{
    // A node's span on a GPU (its work in the group's row, or its launch) opens into its kernels.
    if (const auto hit = spanAt(event->pos())) {
        const int group = hit->group >= 0 ? hit->group : m_groupOf[hit->run][hit->lane];
        const trace::Span &s = span(*hit);
        const QString node = QString::fromStdString(m_runs[hit->run].trace->strings[s.name]);
        if (group >= 0 && showNodeWork(hit->run, group, node, s.start))
            return;
    }
    if (event->pos().x() < LabelWidth)
        return; // the label toggles a group on each click; the double-click is two of them
    if (const auto row = rowAt(event->pos().y()))
        fitRun(row->run);
    else
        QAbstractScrollArea::mouseDoubleClickEvent(event);
}

void TimelineView::resizeEvent(QResizeEvent *event)
{
    QAbstractScrollArea::resizeEvent(event);
    if (m_keptRange)
        setVisibleRange(m_keptRange->first, m_keptRange->second);
    updateScrollBars();
}

void TimelineView::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_0 && (event->modifiers() & Qt::ControlModifier))
        fit();
    else if (event->key() == Qt::Key_Plus || event->key() == Qt::Key_Equal)
        zoomAt(1.25, viewport()->width() / 2.0);
    else if (event->key() == Qt::Key_Minus)
        zoomAt(0.8, viewport()->width() / 2.0);
    else
        QAbstractScrollArea::keyPressEvent(event);
}

bool TimelineView::viewportEvent(QEvent *event)
{
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        if (const auto hit = spanAt(help->pos())) {
            const trace::Trace &t = *m_runs[hit->run].trace;
            const trace::Span &s = span(*hit);
            QString text =
                QStringLiteral("%1  (%2)\n%3 from %4")
                    .arg(QString::fromStdString(t.strings[s.name]), QString::fromStdString(t.strings[s.op]),
                         durationText(s.end - s.start), durationText(s.start));
            if (s.shapes != trace::kNoString)
                text += QLatin1Char('\n') + QString::fromStdString(t.strings[s.shapes]);
            if (s.detail != trace::kNoString)
                text += QLatin1Char('\n') + QString::fromStdString(t.strings[s.detail]);
            if (hit->group >= 0) {
                const trace::NodeWork &work = m_groups[hit->run][std::size_t(hit->group)].work[hit->lane][hit->span];
                text += QStringLiteral("\n%1 kernel%2, %3 cop%4, busy %5\nDouble-click: its kernels")
                            .arg(work.kernels)
                            .arg(work.kernels == 1 ? "" : "s")
                            .arg(work.copies)
                            .arg(work.copies == 1 ? "y" : "ies")
                            .arg(durationText(work.busy));
            }
            QToolTip::showText(help->globalPos(), text, viewport());
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

} // namespace opscope
