#pragma once
// The two kinds of items a graph scene holds. They paint from plain data with a level of detail:
// text disappears when it would be unreadable, so a 10,000-item overview stays fast.

#include "categorycolors.h"
#include "layout/presentation.h"

#include <QFont>
#include <QGraphicsItem>
#include <QPainterPath>
#include <optional>

namespace opscope {

// Box size for an item (points), from the fonts the items paint with; for a slot both sides
// show, the larger of its two faces.
layout::Point visualItemSize(const layout::VisualItem &item);
layout::Point visualItemSizeOf(const layout::VisualItem &item); // this face only

class NodeItem : public QGraphicsItem
{
public:
    NodeItem(const layout::VisualItem &item, QPointF center, QSizeF size);

    const layout::VisualItem &visual() const { return m_item; }
    QRectF boundingRect() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;

    void setDiffState(DiffState s);
    DiffState diffState() const { return m_diff; }
    void setHighlighted(bool on);
    bool isHighlighted() const { return m_highlighted; }
    // Dimmed: drawn faintly (overlay mode: the side an item is absent from).
    void setGhost(bool on);
    // Measured time as heat in [0, 1] (negative: none): the fill shades from white to red.
    void setHeat(double heat);
    double heat() const { return m_heat; }
    // The device a partition placed the node on (negative: none): a coloured band and a label.
    void setDevice(int device);
    int device() const { return m_device; }

private:
    layout::VisualItem m_item;
    QRectF m_rect;
    DiffState m_diff = DiffState::None;
    bool m_highlighted = false;
    bool m_ghost = false;
    double m_heat = -1.0;
    int m_device = -1;
};

class EdgeItem : public QGraphicsItem
{
public:
    EdgeItem(const layout::VisualEdge &edge, const std::vector<layout::Point> &spline);

    const layout::VisualEdge &visual() const { return m_edge; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *widget) override;
    void setShowLabel(bool on)
    {
        m_showLabel = on;
        update();
    }
    // Where the label goes (layout::placeEdgeLabels); none: the label is left out (the tooltip has it).
    void setLabelBox(const std::optional<QRectF> &box);
    const std::optional<QRectF> &labelBox() const { return m_labelBox; }
    static QFont labelFont();
    void setHighlighted(bool on)
    {
        m_highlighted = on;
        update();
    }
    void setDiffState(DiffState s)
    {
        m_diff = s;
        update();
    }

private:
    layout::VisualEdge m_edge;
    QPainterPath m_path;
    QPointF m_tip, m_tipFrom;
    std::optional<QRectF> m_labelBox;
    bool m_showLabel = true;
    bool m_highlighted = false;
    DiffState m_diff = DiffState::None;
};

} // namespace opscope
