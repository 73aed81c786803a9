#pragma once
// A zoomable, pannable view of a GraphScene (wheel zooms around the cursor, drag pans), and a
// minimap that shows the whole scene with the view's visible area.

#include <QGraphicsView>
#include <optional>

namespace opscope {

class GraphView : public QGraphicsView
{
    Q_OBJECT
public:
    explicit GraphView(QWidget *parent = nullptr);

    void zoomBy(double factor);
    void fit();
    // The first view of a new layout: everything when that stays readable, else the top at a
    // readable zoom (a 10,000-node chain fitted whole is a line of dots).
    // The first view: the whole graph when it is readable that way, else 100 % with `anchor` (the
    // graph's input) at the top centre — not the bounding box's centre, which on a wide model is
    // empty canvas.
    void showInitial(std::optional<QRectF> anchor = std::nullopt);
    double zoom() const { return transform().m11(); }
    void centerOnItem(QGraphicsItem *item);
    // Another view follows this one's pan and zoom (the pass stepper's BEFORE | AFTER).
    void syncWith(GraphView *other);
    // Where the synced view's centre is, relative to this one's: 0 where the two layouts are
    // aligned (a pass step), each graph's own first view where they are not (--compare of two
    // models: centred alike, the second's input sat off its pane).
    void setMirrorOffset(QPointF offset) { m_mirrorOffset = offset; }
    QPointF center() const { return mapToScene(viewport()->rect().center()); }

signals:
    void viewChanged();

protected:
    void changeEvent(QEvent *event) override; // a palette change (dark theme) repaints the canvas
    void wheelEvent(QWheelEvent *event) override;
    void scrollContentsBy(int dx, int dy) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    void mirror(GraphView *other);
    // The x to centre the first view on: the nodes in `band` (scene), keeping `anchor` in sight.
    double firstScreenCenterX(const QRectF &anchor, const QRectF &band) const;
    bool m_syncing = false;
    QPointF m_mirrorOffset;
};

class MiniMap : public QGraphicsView
{
    Q_OBJECT
public:
    explicit MiniMap(GraphView *main, QWidget *parent = nullptr);
    void refresh();

protected:
    void changeEvent(QEvent *event) override;
    void drawForeground(QPainter *painter, const QRectF &rect) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    GraphView *m_main;
};

} // namespace opscope
