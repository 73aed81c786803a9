#pragma once
// A QGraphicsScene for one side of a graph presentation (or both, overlaid): node and edge items
// placed by a layout, diff colours, search and tensor highlighting. Built from plain data.

#include "graphitems.h"
#include "ir/graphdiff.h"
#include "layout/presentation.h"

#include <QGraphicsScene>
#include <map>
#include <unordered_map>

namespace opscope {

class GraphScene : public QGraphicsScene
{
    Q_OBJECT
public:
    static constexpr int Overlay = -1; // side: draw the union, absent items as ghosts

    explicit GraphScene(QObject *parent = nullptr);

    // Items of `side` (0 BEFORE, 1 AFTER) placed by `layout`; Overlay draws every item.
    void build(const layout::Presentation &presentation, const layout::LayoutResult &layout, int side = 0);
    // Removed nodes red (BEFORE / overlay), added green (AFTER / overlay), modified amber.
    void applyDiff(const GraphDiff &diff);
    void clearDiff();

    NodeItem *itemForKey(const std::string &key) const;
    const std::vector<NodeItem *> &nodeItems() const { return m_nodes; }
    const std::vector<EdgeItem *> &edgeItems() const { return m_edges; }
    // The edge labels drawn (when shown), in scene coordinates: none overlaps another or a node.
    std::vector<QRectF> labelBoxes() const;
    int side() const { return m_side; }

    // Keys of items whose node name, op type or tensor (edge) matches `text`, case-insensitively,
    // top to bottom.
    std::vector<std::string> search(const QString &text) const;
    void highlight(const std::vector<std::string> &keys);
    // The tensor's producer and consumers, and its edges.
    void highlightTensor(const std::string &tensor);
    void clearHighlight();
    void setShowEdgeLabels(bool on);
    // Seconds per node name (a profiled run): nodes shaded by their share of the slowest; empty clears.
    void applyHeat(const std::map<std::string, double> &secondsPerNode);
    // Device per node name (a partition); empty clears.
    void applyDevices(const std::map<std::string, int> &deviceOf);

    // Where an arrow key moves the selection from `from` (edges run top to bottom): Up to a
    // producer, Down to a consumer (the nearest in x), Left/Right to the nearest sibling on that
    // side — another reader of its inputs or writer of its readers' inputs — else the nearest item
    // in the same row. Null when there is none.
    NodeItem *neighbour(const NodeItem *from, int key) const;

signals:
    void itemActivated(const QString &key); // double-click
    void tensorClicked(const QString &tensor);

protected:
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent *event) override;
    void mousePressEvent(QGraphicsSceneMouseEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override; // arrows walk the selection along edges

private:
    void placeLabels(const layout::LayoutResult &layout, const std::vector<std::size_t> &edgeIndex);
    int m_side = 0;
    std::vector<NodeItem *> m_nodes;
    std::vector<EdgeItem *> m_edges;
    std::unordered_map<std::string, NodeItem *> m_byKey;
    std::vector<NodeItem *> m_byIndex; // by presentation item index (null when not on this side)
    std::unordered_map<const NodeItem *, std::size_t> m_indexOf;
    bool m_showLabels = true;
};

} // namespace opscope
