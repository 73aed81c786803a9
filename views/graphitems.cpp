#include "graphitems.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QtMath>
#include <algorithm>

namespace opscope {

namespace {

constexpr double kPadX = 10.0, kPadY = 6.0;
constexpr int kMaxConstants = 3;

QFont titleFont()
{
    QFont f(QStringLiteral("DejaVu Sans"), 10);
    f.setBold(true);
    return f;
}

QFont smallFont()
{
    return QFont(QStringLiteral("DejaVu Sans"), 8);
}

QFont monoFont()
{
    return QFont(QStringLiteral("DejaVu Sans Mono"), 7);
}

// Long names (tf2onnx writes constant names of hundreds of characters) are cut in the middle: the
// start says where, the end says what ("StatefulPartitionedCall/mo…/block_3_depthwise/Pad"). The
// full name is in the tooltip and the inspector.
QString elided(const QString &s, int max = 48)
{
    if (s.size() <= max)
        return s;
    const int head = max / 3;
    return s.left(head) + QChar(0x2026) + s.right(max - head - 1);
}

QStringList constantLines(const layout::VisualItem &item)
{
    QStringList lines;
    for (std::size_t i = 0; i < item.constants.size() && i < kMaxConstants; ++i) {
        // "name  type": each part bounded, so a box never grows past a few hundred points.
        const QString line = QString::fromStdString(item.constants[i]);
        const qsizetype gap = line.indexOf(QStringLiteral("  "));
        lines << (gap < 0 ? elided(line, 56) : elided(line.left(gap), 36) + QStringLiteral("  ") + elided(line.mid(gap + 2), 24));
    }
    if (item.constants.size() > kMaxConstants)
        lines << QStringLiteral("+%1 more").arg(item.constants.size() - kMaxConstants);
    return lines;
}

QString titleText(const layout::VisualItem &item)
{
    if (item.kind == layout::VisualItem::Kind::Group)
        return QStringLiteral("▸ ") + elided(QString::fromStdString(item.title));
    return elided(QString::fromStdString(item.title));
}

} // namespace

layout::Point visualItemSize(const layout::VisualItem &item)
{
    // A slot shown by both sides must fit either face.
    if (item.kind == layout::VisualItem::Kind::Node && item.presentIn == 3u) {
        const layout::Point a = visualItemSizeOf(item.forSide(0)), b = visualItemSizeOf(item.forSide(1));
        return {std::max(a.x, b.x), std::max(a.y, b.y)};
    }
    return visualItemSizeOf(item);
}

layout::Point visualItemSizeOf(const layout::VisualItem &item)
{
    const QFontMetricsF title(titleFont()), small(smallFont()), mono(monoFont());
    double w = title.horizontalAdvance(titleText(item));
    double h = title.height();
    if (!item.subtitle.empty()) {
        w = std::max(w, small.horizontalAdvance(elided(QString::fromStdString(item.subtitle))));
        h += small.height();
    }
    for (const QString &line : constantLines(item)) {
        w = std::max(w, mono.horizontalAdvance(line));
        h += mono.height();
    }
    return {std::max(w + 2 * kPadX, 70.0), h + 2 * kPadY};
}

NodeItem::NodeItem(const layout::VisualItem &item, QPointF center, QSizeF size)
    : m_item(item), m_rect(-size.width() / 2, -size.height() / 2, size.width(), size.height())
{
    setPos(center);
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(true);
    QString tip = QString::fromStdString(item.title);
    if (!item.subtitle.empty())
        tip += QStringLiteral("\n") + QString::fromStdString(item.subtitle);
    if (item.kind == layout::VisualItem::Kind::Group)
        tip += QStringLiteral("\ndouble-click to open");
    else if (item.hasSubgraphs)
        tip += QStringLiteral("\ndouble-click to open its body");
    for (const std::string &c : item.constants)
        tip += QStringLiteral("\n") + QString::fromStdString(c);
    setToolTip(tip);
    setZValue(1);
}

QRectF NodeItem::boundingRect() const
{
    return m_rect.adjusted(-4, -4, 4, 4);
}

void NodeItem::setDiffState(DiffState s)
{
    m_diff = s;
    update();
}

void NodeItem::setHighlighted(bool on)
{
    m_highlighted = on;
    update();
}

void NodeItem::setHeat(double heat)
{
    m_heat = heat;
    update();
}

void NodeItem::setDevice(int device)
{
    m_device = device;
    update();
}

void NodeItem::setGhost(bool on)
{
    m_ghost = on;
    update();
}

void NodeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    using Kind = layout::VisualItem::Kind;
    const bool io = m_item.kind == Kind::Input || m_item.kind == Kind::Output;
    const CanvasTheme &theme = canvasTheme();
    QColor fill = io ? theme.ioFill : categoryFill(m_item.category);
    QColor border = io ? theme.ioBorder : categoryBorder(m_item.category);
    double borderWidth = 1.0;
    if (m_heat >= 0.0)
        fill = heatFill(m_heat);
    if (m_diff != DiffState::None) {
        border = diffColor(m_diff);
        fill = QColor::fromRgbF(0.75 * fill.redF() + 0.25 * border.redF(),
                                0.75 * fill.greenF() + 0.25 * border.greenF(),
                                0.75 * fill.blueF() + 0.25 * border.blueF());
        borderWidth = 2.5;
    }
    if (isSelected() || m_highlighted) {
        border = theme.selection;
        borderWidth = 3.0;
    }
    if (m_ghost) {
        fill.setAlpha(70);
        border.setAlpha(110);
    }
    const double radius = io ? m_rect.height() / 2 : 6.0;
    painter->setPen(QPen(border, borderWidth, m_ghost ? Qt::DashLine : Qt::SolidLine));
    painter->setBrush(fill);
    painter->drawRoundedRect(m_rect, radius, radius);
    if (m_item.kind == Kind::Group) // a stack: a second outline hints "more inside"
        painter->drawRoundedRect(m_rect.adjusted(3, 3, 3, 3).intersected(m_rect.adjusted(-1, -1, 4, 4)),
                                 radius, radius);
    if (m_device >= 0) {
        // The device band: visible at any zoom, so a partition reads from the overview.
        painter->setPen(Qt::NoPen);
        painter->setBrush(deviceColor(m_device));
        painter->drawRoundedRect(QRectF(m_rect.left(), m_rect.top(), 7, m_rect.height()), 3, 3);
        if (lod >= 0.5) {
            painter->setPen(deviceColor(m_device).darker(130));
            painter->setFont(smallFont());
            painter->drawText(m_rect.adjusted(0, 2, -5, 0), Qt::AlignRight | Qt::AlignTop,
                              QStringLiteral("dev %1").arg(m_device));
        }
    }
    if (lod < 0.3)
        return; // unreadable: boxes only
    QColor text = theme.text;
    if (m_ghost)
        text.setAlpha(110);
    painter->setPen(text);
    const QFontMetricsF title(titleFont()), small(smallFont()), mono(monoFont());
    double y = m_rect.top() + kPadY;
    painter->setFont(titleFont());
    painter->drawText(QRectF(m_rect.left(), y, m_rect.width(), title.height()), Qt::AlignHCenter,
                      titleText(m_item));
    y += title.height();
    if (lod < 0.5)
        return;
    if (!m_item.subtitle.empty()) {
        painter->setFont(smallFont());
        painter->setPen(m_ghost ? text : theme.subtitle);
        painter->drawText(QRectF(m_rect.left(), y, m_rect.width(), small.height()), Qt::AlignHCenter,
                          elided(QString::fromStdString(m_item.subtitle)));
        y += small.height();
    }
    painter->setFont(monoFont());
    painter->setPen(m_ghost ? text : theme.constants);
    for (const QString &line : constantLines(m_item)) {
        painter->drawText(QRectF(m_rect.left() + kPadX, y, m_rect.width() - 2 * kPadX, mono.height()),
                          Qt::AlignLeft, line);
        y += mono.height();
    }
}

EdgeItem::EdgeItem(const layout::VisualEdge &edge, const std::vector<layout::Point> &spline) : m_edge(edge)
{
    if (!spline.empty()) {
        m_path.moveTo(spline[0].x, spline[0].y);
        for (std::size_t i = 1; i + 2 < spline.size(); i += 3)
            m_path.cubicTo(spline[i].x, spline[i].y, spline[i + 1].x, spline[i + 1].y, spline[i + 2].x,
                           spline[i + 2].y);
        m_tip = QPointF(spline.back().x, spline.back().y);
        m_tipFrom = m_path.pointAtPercent(0.97);
    }
    setToolTip(QString::fromStdString(edge.tensor + (edge.label.empty() ? "" : "\n" + edge.label)));
    setZValue(0);
}

QRectF EdgeItem::boundingRect() const
{
    const QRectF path = m_path.boundingRect().adjusted(-8, -8, 8, 8); // the arrowhead and the pen
    return m_labelBox ? path.united(*m_labelBox) : path;
}

void EdgeItem::setLabelBox(const std::optional<QRectF> &box)
{
    prepareGeometryChange();
    m_labelBox = box;
}

QFont EdgeItem::labelFont()
{
    return QFont(QStringLiteral("DejaVu Sans"), 7);
}

QPainterPath EdgeItem::shape() const
{
    QPainterPathStroker stroker;
    stroker.setWidth(6);
    return stroker.createStroke(m_path);
}

void EdgeItem::paint(QPainter *painter, const QStyleOptionGraphicsItem *option, QWidget *)
{
    if (m_path.isEmpty())
        return;
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const CanvasTheme &theme = canvasTheme();
    QColor color = m_highlighted ? theme.selection : theme.edge;
    if (m_diff != DiffState::None)
        color = diffColor(m_diff);
    painter->setPen(QPen(color, m_highlighted ? 2.2 : 1.1));
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(m_path);
    // Arrowhead.
    const QLineF dir(m_tipFrom, m_tip);
    if (dir.length() > 0.01) {
        const double angle = std::atan2(-dir.dy(), dir.dx());
        const QPointF a = m_tip - QPointF(std::cos(angle - M_PI / 7) * 7, -std::sin(angle - M_PI / 7) * 7);
        const QPointF b = m_tip - QPointF(std::cos(angle + M_PI / 7) * 7, -std::sin(angle + M_PI / 7) * 7);
        painter->setBrush(color);
        painter->drawPolygon(QPolygonF{m_tip, a, b});
    }
    if (!m_showLabel || lod < 0.55 || m_edge.label.empty() || !m_labelBox)
        return;
    painter->setFont(labelFont());
    painter->setPen(theme.edgeLabel);
    painter->drawText(*m_labelBox, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextSingleLine,
                      QString::fromStdString(m_edge.label));
}

} // namespace opscope
