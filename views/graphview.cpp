#include "graphview.h"

#include "categorycolors.h"
#include "graphitems.h"

#include <QGraphicsItem>
#include <QMouseEvent>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>

namespace opscope {

GraphView::GraphView(QWidget *parent) : QGraphicsView(parent)
{
    setDragMode(QGraphicsView::ScrollHandDrag);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setBackgroundBrush(canvasTheme().canvas);
    setFrameShape(QFrame::NoFrame);
}

void GraphView::changeEvent(QEvent *event)
{
    QGraphicsView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        setBackgroundBrush(canvasTheme().canvas);
        if (scene())
            scene()->update(); // items paint from the theme
    }
}

void MiniMap::changeEvent(QEvent *event)
{
    QGraphicsView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        setBackgroundBrush(canvasTheme().minimap);
}

void GraphView::zoomBy(double factor)
{
    const double next = zoom() * factor;
    if (next < 0.02 || next > 8.0)
        return;
    scale(factor, factor);
    emit viewChanged();
}

void GraphView::fit()
{
    if (!scene())
        return;
    fitInView(scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20), Qt::KeepAspectRatio);
    // Small graphs would be blown up: never beyond 1:1.
    if (zoom() > 1.0)
        setTransform(QTransform());
    emit viewChanged();
}

void GraphView::showInitial(std::optional<QRectF> anchor)
{
    if (!scene())
        return;
    const QRectF r = scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20);
    const QSize v = viewport()->size();
    const double whole = std::min(v.width() / r.width(), v.height() / r.height());
    if (whole >= 0.4) {
        fit();
        return;
    }
    if (anchor) {
        setTransform(QTransform());
        const double top = anchor->top() - 30;
        centerOn(QPointF(firstScreenCenterX(*anchor, QRectF(r.left(), top, r.width(), v.height())),
                         top + v.height() / 2.0));
    } else {
        const double z = std::clamp(v.width() / r.width(), 0.6, 1.0);
        setTransform(QTransform::fromScale(z, z));
        centerOn(QPointF(r.center().x(), r.top() + v.height() / (2 * z)));
    }
    emit viewChanged();
}

double GraphView::firstScreenCenterX(const QRectF &anchor, const QRectF &band) const
{
    // The middle of what the first screen holds, not of the anchor alone: a model's trunk often
    // runs to one side of its input, and centring on the input cut the trunk off at the edge.
    QRectF nodes;
    for (QGraphicsItem *item : scene()->items(band))
        if (dynamic_cast<NodeItem *>(item))
            nodes |= item->sceneBoundingRect();
    const double half = viewport()->width() / 2.0;
    if (nodes.isEmpty())
        return anchor.center().x();
    // Where the band is wider than the view, keep the anchor on screen.
    const double lo = std::min(anchor.right() + 20 - half, anchor.center().x()),
                 hi = std::max(anchor.left() - 20 + half, anchor.center().x());
    return std::clamp(nodes.center().x(), lo, hi);
}

void GraphView::centerOnItem(QGraphicsItem *item)
{
    if (!item)
        return;
    if (zoom() < 0.6) {
        setTransform(QTransform::fromScale(0.8, 0.8));
    }
    centerOn(item);
    emit viewChanged();
}

void GraphView::syncWith(GraphView *other)
{
    connect(this, &GraphView::viewChanged, other, [this, other] { mirror(other); });
    connect(other, &GraphView::viewChanged, this, [this, other] { other->mirror(this); });
}

void GraphView::mirror(GraphView *other)
{
    // A hidden view (the AFTER side in single mode) never drives the visible one: its centre is
    // wherever it last was, and following it threw a selected node back out of sight.
    if (m_syncing || other->m_syncing || !isVisible())
        return;
    other->m_syncing = true;
    other->setTransform(transform());
    // By the centre, not scroll bar values: the two views may differ in size.
    other->centerOn(center() + m_mirrorOffset);
    other->m_syncing = false;
}

void GraphView::wheelEvent(QWheelEvent *event)
{
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0.0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    zoomBy(std::pow(1.2, steps));
    event->accept();
}

void GraphView::scrollContentsBy(int dx, int dy)
{
    QGraphicsView::scrollContentsBy(dx, dy);
    if (!m_syncing)
        emit viewChanged();
}

void GraphView::resizeEvent(QResizeEvent *event)
{
    QGraphicsView::resizeEvent(event);
    emit viewChanged();
}

MiniMap::MiniMap(GraphView *main, QWidget *parent) : QGraphicsView(parent), m_main(main)
{
    setScene(main->scene());
    setInteractive(false);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setRenderHints(QPainter::Antialiasing);
    setFrameShape(QFrame::Box);
    setBackgroundBrush(canvasTheme().minimap);
    connect(main, &GraphView::viewChanged, this, [this] { viewport()->update(); });
}

void MiniMap::refresh()
{
    setScene(m_main->scene());
    if (scene())
        fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
    viewport()->update();
}

void MiniMap::drawForeground(QPainter *painter, const QRectF &)
{
    const QRectF visible = m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
    QColor selection = canvasTheme().selection;
    painter->setPen(QPen(selection, 0));
    selection.setAlpha(40);
    painter->setBrush(selection);
    painter->drawRect(visible);
}

void MiniMap::mousePressEvent(QMouseEvent *event)
{
    m_main->centerOn(mapToScene(event->pos()));
}

void MiniMap::mouseMoveEvent(QMouseEvent *event)
{
    if (event->buttons() & Qt::LeftButton)
        m_main->centerOn(mapToScene(event->pos()));
}

void MiniMap::resizeEvent(QResizeEvent *event)
{
    QGraphicsView::resizeEvent(event);
    refresh();
}

} // namespace opscope
