#include "graphscene.h"

#include "layout/edgelabels.h"

#include <QGraphicsSceneMouseEvent>
#include <QFontMetricsF>
#include <QGraphicsView>
#include <QKeyEvent>
#include <algorithm>
#include <set>

namespace opscope {

GraphScene::GraphScene(QObject *parent) : QGraphicsScene(parent)
{
    setItemIndexMethod(QGraphicsScene::BspTreeIndex);
}

void GraphScene::build(const layout::Presentation &p, const layout::LayoutResult &layout, int side)
{
    clear();
    m_nodes.clear();
    m_edges.clear();
    m_byKey.clear();
    m_byIndex.assign(p.items.size(), nullptr);
    m_indexOf.clear();
    m_side = side;
    const unsigned bit = side == Overlay ? 3u : (1u << side);
    std::vector<std::size_t> edgeIndex; // per m_edges entry: its index in the layout
    for (std::size_t i = 0; i < p.items.size() && i < layout.centers.size(); ++i) {
        const layout::VisualItem &v = p.items[i];
        if (!(v.presentIn & bit))
            continue;
        const layout::Point size = visualItemSize(v);
        const int face = side == Overlay ? ((v.presentIn & 2u) ? 1 : 0) : side;
        auto *item = new NodeItem(v.forSide(face), QPointF(layout.centers[i].x, layout.centers[i].y),
                                  QSizeF(size.x, size.y));
        addItem(item);
        m_nodes.push_back(item);
        m_byKey.emplace(v.key, item);
        m_byIndex[i] = item;
        m_indexOf.emplace(item, i);
    }
    for (std::size_t i = 0; i < p.edges.size() && i < layout.edges.size(); ++i) {
        const layout::VisualEdge &e = p.edges[i];
        if (!(e.presentIn & bit))
            continue;
        auto *item = new EdgeItem(e, layout.edges[i]);
        item->setShowLabel(m_showLabels);
        addItem(item);
        m_edges.push_back(item);
        edgeIndex.push_back(i);
    }
    placeLabels(layout, edgeIndex);
    setSceneRect(QRectF(-40, -40, layout.width + 80, layout.height + 80));
}

void GraphScene::placeLabels(const layout::LayoutResult &layout, const std::vector<std::size_t> &edgeIndex)
{
    std::vector<layout::Box> obstacles;
    obstacles.reserve(m_nodes.size());
    for (const NodeItem *n : m_nodes) {
        const QRectF r = n->sceneBoundingRect();
        obstacles.push_back({r.left(), r.top(), r.right(), r.bottom()});
    }
    const QFontMetricsF metrics(EdgeItem::labelFont());
    std::vector<std::vector<layout::Point>> splines;
    std::vector<layout::Point> sizes;
    splines.reserve(m_edges.size());
    sizes.reserve(m_edges.size());
    for (std::size_t k = 0; k < m_edges.size(); ++k) {
        splines.push_back(layout.edges[edgeIndex[k]]);
        const std::string &label = m_edges[k]->visual().label;
        sizes.push_back(label.empty() ? layout::Point{}
                                      : layout::Point{metrics.horizontalAdvance(QString::fromStdString(label)) + 2,
                                                      metrics.height()});
    }
    const auto boxes = layout::placeEdgeLabels(splines, sizes, obstacles);
    for (std::size_t k = 0; k < m_edges.size(); ++k)
        m_edges[k]->setLabelBox(boxes[k] ? std::optional<QRectF>(QRectF(QPointF(boxes[k]->x0, boxes[k]->y0),
                                                                         QPointF(boxes[k]->x1, boxes[k]->y1)))
                                         : std::nullopt);
}

std::vector<QRectF> GraphScene::labelBoxes() const
{
    std::vector<QRectF> boxes;
    for (const EdgeItem *e : m_edges)
        if (e->labelBox())
            boxes.push_back(*e->labelBox());
    return boxes;
}

void GraphScene::applyDiff(const GraphDiff &diff)
{
    for (NodeItem *n : m_nodes) {
        const std::string &name = n->visual().name; // the node this side shows in the slot
        DiffState s = DiffState::None;
        if (diff.removed.count(name) && m_side != 1)
            s = DiffState::Removed;
        else if (diff.added.count(name) && m_side != 0)
            s = DiffState::Added;
        else if (diff.modified.count(name))
            s = DiffState::Modified;
        n->setDiffState(s);
        n->setGhost(m_side == Overlay && diff.removed.count(name) && n->visual().presentIn == 1u);
    }
    for (EdgeItem *e : m_edges) {
        const unsigned present = e->visual().presentIn;
        e->setDiffState(m_side == Overlay && present == 1u   ? DiffState::Removed
                        : m_side == Overlay && present == 2u ? DiffState::Added
                                                             : DiffState::None);
    }
}

void GraphScene::clearDiff()
{
    for (NodeItem *n : m_nodes) {
        n->setDiffState(DiffState::None);
        n->setGhost(false);
    }
    for (EdgeItem *e : m_edges)
        e->setDiffState(DiffState::None);
}

NodeItem *GraphScene::itemForKey(const std::string &key) const
{
    const auto it = m_byKey.find(key);
    return it == m_byKey.end() ? nullptr : it->second;
}

std::vector<std::string> GraphScene::search(const QString &text) const
{
    if (text.isEmpty())
        return {};
    auto matches = [&](const std::string &s) {
        return QString::fromStdString(s).contains(text, Qt::CaseInsensitive);
    };
    std::set<std::string> seen;
    std::vector<std::pair<QPointF, std::string>> hits;
    auto hit = [&](NodeItem *n) {
        if (n && seen.insert(n->visual().key).second)
            hits.emplace_back(n->pos(), n->visual().key);
    };
    for (NodeItem *n : m_nodes) {
        const layout::VisualItem &v = n->visual();
        if (matches(v.title) || matches(v.subtitle) || matches(v.key) || matches(v.name))
            hit(n);
        else // weights: initializers and inlined Constants are found at the node that reads them
            for (const std::string &line : v.constants)
                if (matches(line.substr(0, line.find("  ")))) {
                    hit(n);
                    break;
                }
    }
    for (EdgeItem *e : m_edges) // a tensor is found at its producer
        if (matches(e->visual().tensor))
            hit(m_byIndex[e->visual().from]);
    std::sort(hits.begin(), hits.end(), [](const auto &a, const auto &b) {
        return a.first.y() != b.first.y() ? a.first.y() < b.first.y() : a.first.x() < b.first.x();
    });
    std::vector<std::string> keys;
    for (auto &h : hits)
        keys.push_back(h.second);
    return keys;
}

void GraphScene::highlight(const std::vector<std::string> &keys)
{
    clearHighlight();
    for (const std::string &k : keys)
        if (NodeItem *n = itemForKey(k))
            n->setHighlighted(true);
}

void GraphScene::highlightTensor(const std::string &tensor)
{
    clearHighlight();
    for (EdgeItem *e : m_edges) {
        if (e->visual().tensor != tensor)
            continue;
        e->setHighlighted(true);
        for (std::size_t end : {e->visual().from, e->visual().to})
            if (NodeItem *n = m_byIndex[end])
                n->setHighlighted(true);
    }
}

void GraphScene::clearHighlight()
{
    for (NodeItem *n : m_nodes)
        if (n->isHighlighted())
            n->setHighlighted(false);
    for (EdgeItem *e : m_edges)
        e->setHighlighted(false);
}

void GraphScene::applyHeat(const std::map<std::string, double> &secondsPerNode)
{
    double most = 0.0;
    for (const auto &[name, s] : secondsPerNode)
        most = std::max(most, s);
    for (NodeItem *n : m_nodes) {
        const auto it = secondsPerNode.find(n->visual().name.empty() ? n->visual().key : n->visual().name);
        n->setHeat(secondsPerNode.empty()                    ? -1.0
                   : it == secondsPerNode.end() || most <= 0 ? 0.0
                                                             : it->second / most);
    }
}

void GraphScene::applyDevices(const std::map<std::string, int> &deviceOf)
{
    for (NodeItem *n : m_nodes) {
        const auto it = deviceOf.find(n->visual().name.empty() ? n->visual().key : n->visual().name);
        n->setDevice(it == deviceOf.end() ? -1 : it->second);
    }
}

void GraphScene::setShowEdgeLabels(bool on)
{
    m_showLabels = on;
    for (EdgeItem *e : m_edges)
        e->setShowLabel(on);
}

void GraphScene::mouseDoubleClickEvent(QGraphicsSceneMouseEvent *event)
{
    for (QGraphicsItem *item : items(event->scenePos()))
        if (auto *n = dynamic_cast<NodeItem *>(item)) {
            emit itemActivated(QString::fromStdString(n->visual().key));
            event->accept();
            return;
        }
    QGraphicsScene::mouseDoubleClickEvent(event);
}

void GraphScene::mousePressEvent(QGraphicsSceneMouseEvent *event)
{
    QGraphicsScene::mousePressEvent(event);
    for (QGraphicsItem *item : items(event->scenePos())) {
        if (dynamic_cast<NodeItem *>(item))
            return;
        if (auto *e = dynamic_cast<EdgeItem *>(item)) {
            highlightTensor(e->visual().tensor);
            emit tensorClicked(QString::fromStdString(e->visual().tensor));
            return;
        }
    }
}

NodeItem *GraphScene::neighbour(const NodeItem *from, int key) const
{
    const auto self = m_indexOf.find(from);
    if (self == m_indexOf.end())
        return nullptr;
    const std::size_t me = self->second;
    std::set<std::size_t> producers, consumers;
    for (const EdgeItem *e : m_edges) {
        if (e->visual().to == me && e->visual().from != me)
            producers.insert(e->visual().from);
        if (e->visual().from == me && e->visual().to != me)
            consumers.insert(e->visual().to);
    }
    const QPointF at = from->sceneBoundingRect().center();
    // The candidate nearest to `at`, first in x, then in y; only those `keep` accepts.
    const auto nearest = [&](const std::set<std::size_t> &among, auto keep) -> NodeItem * {
        NodeItem *best = nullptr;
        double bestCost = 0;
        for (std::size_t i : among) {
            NodeItem *n = i < m_byIndex.size() ? m_byIndex[i] : nullptr;
            if (!n || n == from)
                continue;
            const QPointF c = n->sceneBoundingRect().center();
            if (!keep(c))
                continue;
            const double cost = std::abs(c.x() - at.x()) + 0.25 * std::abs(c.y() - at.y());
            if (!best || cost < bestCost) {
                best = n;
                bestCost = cost;
            }
        }
        return best;
    };
    const auto any = [](QPointF) { return true; };
    if (key == Qt::Key_Up)
        return nearest(producers, any);
    if (key == Qt::Key_Down)
        return nearest(consumers, any);
    if (key != Qt::Key_Left && key != Qt::Key_Right)
        return nullptr;
    const bool left = key == Qt::Key_Left;
    const auto onSide = [&](QPointF c) { return left ? c.x() < at.x() - 1 : c.x() > at.x() + 1; };
    std::set<std::size_t> siblings;
    for (const EdgeItem *e : m_edges) {
        if (producers.count(e->visual().from))
            siblings.insert(e->visual().to);
        if (consumers.count(e->visual().to))
            siblings.insert(e->visual().from);
    }
    siblings.erase(me);
    if (NodeItem *n = nearest(siblings, onSide))
        return n;
    // No sibling that way: the nearest item of the same row.
    std::set<std::size_t> row;
    for (const NodeItem *n : m_nodes)
        if (std::abs(n->sceneBoundingRect().center().y() - at.y()) < from->boundingRect().height() / 2)
            row.insert(m_indexOf.at(n));
    return nearest(row, onSide);
}

void GraphScene::keyPressEvent(QKeyEvent *event)
{
    const int key = event->key();
    const bool arrow = key == Qt::Key_Up || key == Qt::Key_Down || key == Qt::Key_Left || key == Qt::Key_Right;
    const QList<QGraphicsItem *> selected = selectedItems();
    auto *from = arrow && event->modifiers() == Qt::NoModifier && selected.size() == 1
                     ? dynamic_cast<NodeItem *>(selected.front())
                     : nullptr;
    if (!from) {
        QGraphicsScene::keyPressEvent(event); // the view scrolls
        return;
    }
    if (NodeItem *to = neighbour(from, key)) {
        clearSelection();
        to->setSelected(true);
        for (QGraphicsView *v : views())
            v->ensureVisible(to, 40, 40);
    }
    event->accept(); // at an end of the graph the selection stays and the view does not jump
}

} // namespace opscope
