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
    rebuildRows();
    fit();
}

void TimelineView::setHighlightedNode(const QString &name)
{
    m_highlight = name;
    viewport()->update();
}

void TimelineView::rebuildRows()
{
    m_rows.clear();
    for (std::size_t r = 0; r < m_runs.size(); ++r) {
        m_rows.push_back({r, -1});
        // Lanes, then the run's counters (memory lanes) as rows numbered after its lanes.
        const std::size_t rows = m_runs[r].trace->lanes.size() + m_runs[r].trace->counters.size();
        for (std::size_t l = 0; l < rows; ++l)
            m_rows.push_back({r, int(l)});
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
        y += m_rows[i].lane < 0 ? HeaderHeight : RowHeight;
    return y;
}

void TimelineView::updateScrollBars()
{
    int total = 0;
    for (const Row &r : m_rows)
        total += r.lane < 0 ? HeaderHeight : RowHeight;
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

std::optional<std::pair<std::size_t, int>> TimelineView::rowAt(int y) const
{
    int top = AxisHeight - verticalScrollBar()->value();
    for (const Row &r : m_rows) {
        const int h = r.lane < 0 ? HeaderHeight : RowHeight;
        if (y >= top && y < top + h)
            return std::pair(r.run, r.lane);
        top += h;
    }
    return std::nullopt;
}

std::optional<TimelineView::Hit> TimelineView::spanAt(QPoint pos) const
{
    const auto row = rowAt(pos.y());
    if (!row || row->second < 0 || pos.x() < LabelWidth ||
        std::size_t(row->second) >= m_runs[row->first].trace->lanes.size()) // a counter row
        return std::nullopt;
    const trace::Lane &lane = m_runs[row->first].trace->lanes[std::size_t(row->second)];
    const double t = xToTime(pos.x()), slack = 2.0 / m_pixelsPerSecond; // a 2-pixel grip on thin spans
    auto it = std::lower_bound(lane.spans.begin(), lane.spans.end(), t - slack,
                               [](const trace::Span &s, double v) { return s.end < v; });
    if (it == lane.spans.end() || it->start > t + slack)
        return std::nullopt;
    return Hit{row->first, std::size_t(row->second), std::uint32_t(it - lane.spans.begin())};
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

void TimelineView::paintEvent(QPaintEvent *)
{
    QPainter p(viewport());
    const int w = viewport()->width(), h = viewport()->height();
    const CanvasTheme &theme = canvasTheme();
    p.fillRect(rect(), theme.canvas);
    const double t1 = visibleEnd();
    const QFont spanFont(QStringLiteral("DejaVu Sans"), 7), labelFont(QStringLiteral("DejaVu Sans"), 8);
    std::vector<int> laneY(m_rows.size(), -1);
    int y = AxisHeight - verticalScrollBar()->value();
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        const Row &row = m_rows[i];
        const int rh = row.lane < 0 ? HeaderHeight : RowHeight;
        laneY[i] = y;
        if (y + rh < AxisHeight || y > h) {
            y += rh;
            continue;
        }
        const TimelineRun &run = m_runs[row.run];
        if (row.lane < 0) {
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
        if (std::size_t(row.lane) >= run.trace->lanes.size()) {
            paintCounter(p, run.trace->counters[std::size_t(row.lane) - run.trace->lanes.size()], y, rh, t1);
            y += rh;
            continue;
        }
        const trace::Lane &lane = run.trace->lanes[std::size_t(row.lane)];
        if (i % 2)
            p.fillRect(QRect(LabelWidth, y, w - LabelWidth, rh), theme.lane);
        p.setClipRect(QRect(LabelWidth, y, w - LabelWidth, rh));
        p.setFont(spanFont);
        for (const trace::DrawItem &d : trace::levelOfDetail(lane, m_t0, t1, m_pixelsPerSecond)) {
            const double x0 = timeToX(d.start), x1 = std::max(timeToX(d.end), x0 + 1.0);
            const QRectF r(x0, y + 3, x1 - x0, rh - 6);
            const OpCategory cat = OpCategory(d.category);
            p.fillRect(r, d.count > 1 ? categoryBorder(cat) : categoryFill(cat));
            const trace::Span &s = lane.spans[d.span];
            const QString name = QString::fromStdString(run.trace->strings[s.name]);
            if (d.count == 1 && !m_highlight.isEmpty() && name == m_highlight) {
                p.setPen(QPen(theme.selection, 2));
                p.drawRect(r.adjusted(1, 1, -1, -1));
            }
            if (d.count == 1 && r.width() > 36) {
                p.setPen(theme.text);
                p.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter,
                           p.fontMetrics().elidedText(QString::fromStdString(run.trace->strings[s.op]) +
                                                          QStringLiteral(" ") + name,
                                                      Qt::ElideRight, int(r.width()) - 5));
            }
        }
        p.setClipping(false);
        p.fillRect(QRect(0, y, LabelWidth, rh), theme.axis);
        p.setFont(labelFont);
        p.setPen(theme.panelText);
        p.drawText(QRect(10, y, LabelWidth - 14, rh), Qt::AlignVCenter,
                   p.fontMetrics().elidedText(
                       QString::fromStdString(lane.device) +
                           (lane.label.empty() ? QStringLiteral("  q%1").arg(lane.queue)
                                               : QStringLiteral("  ") + QString::fromStdString(lane.label)),
                       Qt::ElideMiddle, LabelWidth - 14));
        y += rh;
    }
    // Transfers: arrows from the producer's lane to the receiver's.
    p.setClipRect(QRect(LabelWidth, AxisHeight, w - LabelWidth, h - AxisHeight));
    p.setRenderHint(QPainter::Antialiasing);
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].lane != 0)
            continue; // once per run, at its first lane row
        const TimelineRun &run = m_runs[m_rows[i].run];
        for (const trace::Transfer &x : run.trace->transfers) {
            if (x.end < m_t0 || x.start > t1)
                continue;
            const int y0 = laneY[i + x.fromLane] + RowHeight / 2, y1 = laneY[i + x.toLane] + RowHeight / 2;
            const QPointF a(timeToX(x.start), y0), b(timeToX(x.end), y1);
            p.setPen(QPen(diffColor(DiffState::Modified).darker(130), 1.2));
            p.drawLine(a, b);
            const double angle = std::atan2(b.y() - a.y(), b.x() - a.x());
            p.setBrush(diffColor(DiffState::Modified).darker(130));
            p.drawPolygon(QPolygonF{b, b - QPointF(std::cos(angle - 0.45) * 6, std::sin(angle - 0.45) * 6),
                                    b - QPointF(std::cos(angle + 0.45) * 6, std::sin(angle + 0.45) * 6)});
        }
        // Launch arrows (a CUDA API call → its kernel or copy): thin, and only when few enough are
        // in view to be told apart; zoomed out they would paint the rows over.
        std::vector<const trace::Launch *> launches;
        for (const trace::Launch &x : run.trace->launches)
            if (x.end >= m_t0 && x.start <= t1 && x.fromLane < run.trace->lanes.size() &&
                x.toLane < run.trace->lanes.size() && launches.size() <= kMaxLaunchArrows)
                launches.push_back(&x);
        if (launches.size() <= kMaxLaunchArrows) {
            p.setPen(QPen(theme.panelText, 0.8));
            for (const trace::Launch *x : launches) {
                // From the call's edge facing the work's lane to the work's edge facing the call.
                const bool down = laneY[i + x->toLane] > laneY[i + x->fromLane];
                p.drawLine(QPointF(timeToX(x->start), laneY[i + x->fromLane] + (down ? RowHeight - 2 : 2)),
                           QPointF(timeToX(x->end), laneY[i + x->toLane] + (down ? 2 : RowHeight - 2)));
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
    if (click)
        if (const auto hit = spanAt(event->pos())) {
            const trace::Trace &t = *m_runs[hit->run].trace;
            const trace::Span &s = t.lanes[hit->lane].spans[hit->span];
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
    if (const auto row = rowAt(event->pos().y()))
        fitRun(row->first);
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
            const trace::Span &s = t.lanes[hit->lane].spans[hit->span];
            QString text =
                QStringLiteral("%1  (%2)\n%3 from %4")
                    .arg(QString::fromStdString(t.strings[s.name]), QString::fromStdString(t.strings[s.op]),
                         durationText(s.end - s.start), durationText(s.start));
            if (s.shapes != trace::kNoString)
                text += QLatin1Char('\n') + QString::fromStdString(t.strings[s.shapes]);
            if (s.detail != trace::kNoString)
                text += QLatin1Char('\n') + QString::fromStdString(t.strings[s.detail]);
            QToolTip::showText(help->globalPos(), text, viewport());
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QAbstractScrollArea::viewportEvent(event);
}

} // namespace opscope
