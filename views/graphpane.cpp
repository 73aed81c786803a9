#include "graphpane.h"

#include "breadcrumbbar.h"
#include "layoutservice.h"
#include "legend.h"
#include "layout/sidelayout.h"
#include "passes/partitionpass.h"

#include <QEvent>
#include <QGraphicsItem>
#include <QGraphicsOpacityEffect>
#include <QSignalBlocker>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QPainter>
#include <QShortcut>
#include <QSplitter>
#include <QSvgGenerator>
#include <QTimer>
#include <QVBoxLayout>

namespace opscope {

GraphPane::GraphPane(LayoutService *layouts, QWidget *parent) : QWidget(parent), m_layouts(layouts)
{
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(0);
    m_crumbs = new BreadcrumbBar(this);
    m_crumbs->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    m_crumbs->hide();
    outer->addWidget(m_crumbs);
    connect(m_crumbs, &BreadcrumbBar::levelChosen, this, &GraphPane::navigateTo);
    connect(m_crumbs, &BreadcrumbBar::siblingChosen, this, &GraphPane::switchBody);
    connect(m_crumbs, &BreadcrumbBar::back, this, &GraphPane::back);
    connect(m_crumbs, &BreadcrumbBar::forward, this, &GraphPane::forward);
    for (const auto &[key, slot] : {std::pair{QKeySequence(Qt::ALT | Qt::Key_Left), &GraphPane::back},
                                    std::pair{QKeySequence(Qt::ALT | Qt::Key_Right), &GraphPane::forward}}) {
        auto *shortcut = new QShortcut(key, this);
        shortcut->setContext(Qt::WidgetWithChildrenShortcut);
        connect(shortcut, &QShortcut::activated, this, slot);
    }
    m_splitter = new QSplitter(Qt::Horizontal, this);
    for (int side = 0; side < 2; ++side) {
        auto *box = new QWidget(m_splitter);
        auto *v = new QVBoxLayout(box);
        v->setContentsMargins(0, 0, 0, 0);
        v->setSpacing(0);
        m_titles[side] = new QLabel(box);
        m_titles[side]->setContentsMargins(8, 3, 8, 3);
        m_titles[side]->setStyleSheet(QStringLiteral("font-weight: bold; background: palette(button);")); // follows a dark theme
        m_scenes[side] = new GraphScene(this);
        m_views[side] = new GraphView(box);
        m_views[side]->setScene(m_scenes[side]);
        v->addWidget(m_titles[side]);
        v->addWidget(m_views[side]);
        m_splitter->addWidget(box);
        connect(m_scenes[side], &GraphScene::itemActivated, this,
                [this, side](const QString &key) { onActivated(side, key); });
        // The context menu (open/close groups, open every group) is there from the start.
        m_views[side]->setContextMenuPolicy(Qt::CustomContextMenu);
        connect(m_views[side], &QWidget::customContextMenuRequested, this,
                [this, side](const QPoint &pos) { showContextMenu(side, pos); });
        connect(m_scenes[side], &QGraphicsScene::selectionChanged, this,
                [this, side] { onSelectionChanged(side); });
        connect(m_scenes[side], &GraphScene::tensorClicked, this, [this, side](const QString &tensor) {
            const int graphSide = m_scenes[side]->side() == GraphScene::Overlay ? 1 : side;
            emit tensorSelected(graphSide, m_graphs[std::size_t(graphSide)], tensor);
        });
    }
    m_views[0]->syncWith(m_views[1]);
    outer->addWidget(m_splitter, 1);
    m_legend = new Legend(this);
    m_legend->move(12, 12);
    m_legend->raise();
    m_minimap = new MiniMap(m_views[0], this);
    m_minimap->setFixedSize(180, 140);
    m_minimap->raise();
    // Overlays never hide nodes: over nodes the legend collapses and the minimap fades (under the
    // mouse it comes back). The legend has no opacity effect: its cached picture was what a
    // screenshot showed, at its old place and size.
    auto *effect = new QGraphicsOpacityEffect(m_minimap);
    effect->setOpacity(1.0);
    m_minimap->setGraphicsEffect(effect);
    m_minimap->installEventFilter(this);
    for (GraphView *v : m_views)
        connect(v, &GraphView::viewChanged, this, &GraphPane::updateOverlays);
    connect(m_layouts, &LayoutService::finished, this, &GraphPane::onLayoutFinished);
    setMode(Mode::Single);
}

void GraphPane::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    updateOverlays();
}

bool GraphPane::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::Enter || event->type() == QEvent::Leave) {
        m_hovered = event->type() == QEvent::Enter ? watched : nullptr;
        updateOverlays();
    }
    return QWidget::eventFilter(watched, event);
}

bool GraphPane::overlayCoversNodes(const QWidget *overlay) const
{
    return overlay->isVisible() && rectCoversNodes(overlay->geometry());
}

bool GraphPane::rectCoversNodes(const QRect &rect) const
{
    for (int side = 0; side < 2; ++side) {
        const GraphView *view = m_views[std::size_t(side)];
        if (!view->isVisible())
            continue;
        const QRect inView(view->viewport()->mapFrom(this, rect.topLeft()), rect.size());
        const QPolygonF area = view->mapToScene(inView);
        for (const QGraphicsItem *item : m_scenes[std::size_t(side)]->items(area))
            if (dynamic_cast<const NodeItem *>(item))
                return true;
    }
    return false;
}

void GraphPane::updateOverlays()
{
    // The minimap maps the left view: in its bottom right corner, not the pane's (side by side,
    // that is over AFTER, which then seemed to hold BEFORE's removed nodes).
    const QRect left(m_views[0]->mapTo(this, QPoint(0, 0)), m_views[0]->viewport()->size());
    m_minimap->move(left.right() - m_minimap->width() - 12, left.bottom() - m_minimap->height() - 12);
    // The legend moves to a corner of the left view where no node is (top left, top right, bottom
    // left); when every corner has nodes it collapses to a small tab (faded over the nodes, its
    // text still collided with their labels), itself put in a corner free of nodes if there is one.
    if (m_legend->isVisible()) {
        m_legend->setCollapsed(false);
        placeLegend();
        const QRect view(m_views[0]->mapTo(this, QPoint(0, 0)), m_views[0]->viewport()->size());
        const QPoint home = m_legend->pos();
        const QSize size = m_legend->size();
        const QPoint corners[] = {home, QPoint(view.right() - size.width() - 12, home.y()),
                                  QPoint(home.x(), view.bottom() - size.height() - 12)};
        bool placed = false;
        for (const QPoint &at : corners)
            if (view.contains(QRect(at, size)) && !rectCoversNodes(QRect(at, size))) {
                m_legend->move(at);
                placed = true;
                break;
            }
        m_legend->setCollapsed(!placed);
        if (!placed) {
            // The tab too goes where no node is (at home it clipped a transformer's first node).
            const QSize tab = m_legend->size();
            const QPoint tabCorners[] = {home, QPoint(view.right() - tab.width() - 12, home.y()),
                                         QPoint(home.x(), view.bottom() - tab.height() - 12)};
            for (const QPoint &at : tabCorners)
                if (view.contains(QRect(at, tab)) && !rectCoversNodes(QRect(at, tab))) {
                    m_legend->move(at);
                    break;
                }
        }
    }
    // The minimap over nodes fades nearly away, and comes back under the mouse.
    auto *effect = static_cast<QGraphicsOpacityEffect *>(m_minimap->graphicsEffect());
    effect->setOpacity(m_minimap != m_hovered && overlayCoversNodes(m_minimap) ? 0.12 : 1.0);
}

bool GraphPane::overlayFaded(int which) const
{
    if (which == 0)
        return m_legend->isCollapsed(); // the legend gives way by collapsing
    return static_cast<const QGraphicsOpacityEffect *>(m_minimap->graphicsEffect())->opacity() < 1.0;
}

void GraphPane::setShowMinimap(bool on)
{
    m_minimap->setVisible(on);
    updateOverlays();
}

GraphScene *GraphPane::scene(int side) const
{
    return m_scenes[std::size_t(side)];
}

GraphView *GraphPane::view(int side) const
{
    return m_views[std::size_t(side)];
}

std::vector<const Graph *> GraphPane::graphList() const
{
    std::vector<const Graph *> out{m_graphs[0]};
    if (m_graphs[1])
        out.push_back(m_graphs[1]);
    return out;
}

void GraphPane::showGraph(std::shared_ptr<const Model> model, const Graph *graph)
{
    Frame root;
    root.label = model && !graph->name().empty() ? QString::fromStdString(graph->name()) : tr("model");
    root.models = {std::move(model), nullptr};
    root.graphs = {graph, nullptr};
    m_path = {std::move(root)};
    m_backStack.clear();
    m_forwardStack.clear();
    display();
}

void GraphPane::showComparison(std::shared_ptr<const Model> before, const Graph *beforeGraph,
                               std::shared_ptr<const Model> after, const Graph *afterGraph, Mode mode,
                               std::unordered_map<std::string, std::string> alias, bool aliasIsSameNode)
{
    Frame root;
    root.label = !beforeGraph->name().empty() ? QString::fromStdString(beforeGraph->name()) : tr("model");
    root.models = {std::move(before), std::move(after)};
    root.graphs = {beforeGraph, afterGraph};
    root.alias = std::move(alias);
    root.aliasIsSameNode = aliasIsSameNode;
    root.mode = mode == Mode::Single ? Mode::SideBySide : mode;
    m_beforeTitle.clear();
    m_afterTitle.clear();
    m_path = {std::move(root)};
    m_backStack.clear();
    m_forwardStack.clear();
    display();
}

void GraphPane::setTitles(const QString &before, const QString &after)
{
    m_beforeTitle = before;
    m_afterTitle = after;
    setMode(m_mode);
}

void GraphPane::display()
{
    const Frame &f = m_path.back();
    const bool sameGraphs = m_graphs == f.graphs;
    m_models = f.models;
    m_graphs = f.graphs;
    m_alias = f.alias;
    m_diff = f.graphs[1] ? diffGraphsByName(*f.graphs[0], *f.graphs[1],
                                            f.aliasIsSameNode ? m_alias : std::unordered_map<std::string, std::string>{})
                         : GraphDiff{};
    if (!sameGraphs) {
        m_current.reset(); // setMode must not redraw the previous graphs' layout with this diff
        rebuildGrouping();
    }
    m_fitAfterLayout = !sameGraphs || !f.graphs[1] || m_mode == Mode::Single;
    setMode(f.graphs[1] ? f.mode : Mode::Single);
    relayout();
    updateBreadcrumbs();
}


void GraphPane::setMode(Mode mode)
{
    m_mode = mode;
    const bool two = mode == Mode::SideBySide && m_graphs[1];
    if (two && !m_splitter->widget(1)->isVisible())
        m_splitter->setSizes({1, 1}); // opened at half and half (the first pane took what it had)
    m_splitter->widget(1)->setVisible(two);
    m_titles[0]->setVisible(mode != Mode::Single);
    m_titles[1]->setVisible(two);
    const QString before = m_beforeTitle.isEmpty() ? tr("BEFORE") : m_beforeTitle,
                  after = m_afterTitle.isEmpty() ? tr("AFTER") : m_afterTitle;
    m_titles[0]->setText(mode == Mode::Overlay
                             ? tr("%1 + %2 (removed dashed red, added green, modified amber)").arg(before, after)
                             : before);
    m_titles[1]->setText(after);
    m_legend->setShowDiff(mode != Mode::Single);
    updateOverlays(); // its place too: placing it home alone left it over nodes
    if (m_current && !layoutPending() && wantsLayoutBySide() != m_layoutBySide)
        relayout(); // overlay needs the union, side by side may not
    else if (m_current && !layoutPending())
        applyLayout(*m_current);
}

void GraphPane::rebuildGrouping()
{
    m_grouping = layout::Grouping::build(graphList());
    m_expanded = m_grouping.initialExpansion(m_layouts->itemBudget());
}

void GraphPane::relayout()
{
    if (!m_graphs[0])
        return;
    m_presentation = layout::present(graphList(), m_grouping, m_expanded, m_alias);
    m_current.reset(); // the scene shows the previous presentation until the new layout lands
    m_layoutBySide = wantsLayoutBySide();
    m_request = m_layoutBySide ? layout::layoutRequestBySide(m_presentation, visualItemSize)
                               : layout::layoutRequest(m_presentation, visualItemSize);
    layout::LayoutRequest request = m_request;
    // The service's cache is keyed by content: a pass step seen before lays out at once.
    QString note;
    if (const auto cached = m_layouts->cached(request, &note)) {
        m_pendingTicket = 0;
        m_current = cached;
        applyLayout(*cached);
        emit layoutFinished(0.0, int(m_presentation.items.size()), note);
        return;
    }
    m_pendingTicket = m_layouts->request(this, std::move(request));
    emit layoutStarted(int(m_presentation.items.size()));
}

bool GraphPane::wantsLayoutBySide() const
{
    return m_graphs[1] && m_mode != Mode::Overlay && layout::sharesLittle(m_presentation);
}

void GraphPane::onLayoutFinished(quint64 ticket, QSharedPointer<const layout::LayoutResult> result,
                                 const QString &error, double ms, const QString &note)
{
    if (ticket != m_pendingTicket)
        return; // another pane's request, or superseded
    m_pendingTicket = 0;
    if (!result) {
        emit layoutFailed(error);
        return;
    }
    m_current = result;
    applyLayout(*result);
    emit layoutFinished(ms, int(m_presentation.items.size()), note);
}

void GraphPane::applyLayout(const layout::LayoutResult &result)
{
    const bool compare = m_graphs[1] != nullptr;
    const double zoom = m_views[0]->zoom();
    if (m_mode == Mode::Overlay && compare) {
        m_scenes[0]->build(m_presentation, result, GraphScene::Overlay);
    } else if (m_layoutBySide && compare) {
        const auto sides = layout::splitBySide(m_presentation, m_request, result);
        m_scenes[0]->build(m_presentation, sides[0], 0);
        m_scenes[1]->build(m_presentation, sides[1], 1);
    } else {
        m_scenes[0]->build(m_presentation, result, 0);
        if (compare)
            m_scenes[1]->build(m_presentation, result, 1);
    }
    for (GraphScene *s : m_scenes) {
        s->setShowEdgeLabels(m_edgeLabels);
        if (compare)
            s->applyDiff(m_diff);
    }
    // A partitioned model carries its placement: nodes show their device.
    for (int side = 0; side < 2; ++side)
        if (m_models[std::size_t(side)])
            m_scenes[std::size_t(side)]->applyDevices(passes::placementOf(*m_models[std::size_t(side)]));
    m_minimap->refresh();
    updateOverlays();
    if (m_fitAfterLayout) {
        m_fitAfterLayout = false;
        showFirstView();
        // Again once a newly shown side has its size — unless a node was selected (and brought
        // into view) in between: the user's choice wins over the first view.
        QTimer::singleShot(0, this, [this, generation = m_selectionGeneration] {
            if (generation == m_selectionGeneration)
                showFirstView();
        });
    } else if (!m_centerKey.empty()) {
        m_views[0]->setTransform(QTransform::fromScale(zoom, zoom));
        if (NodeItem *n = m_scenes[0]->itemForKey(m_centerKey))
            m_views[0]->centerOnItem(n);
        m_centerKey.clear();
    } else if (m_openedGroup) {
        m_views[0]->setTransform(QTransform::fromScale(zoom, zoom));
        showOpenedGroup(*m_openedGroup);
    }
    m_openedGroup.reset();
    if (!m_hits.empty())
        showHit();
}

void GraphPane::setGroupExpanded(const std::string &path, bool expanded)
{
    if (expanded)
        m_expanded.insert(path);
    else if (!path.empty())
        m_expanded.erase(path);
    m_centerKey = expanded ? std::string() : "group:" + path;
    if (expanded)
        m_openedGroup = path;
    relayout();
}

void GraphPane::showOpenedGroup(const std::string &path)
{
    // The group's box is gone: frame what was inside it, from its top (where its inputs enter)
    // when it is taller than the view.
    QRectF members;
    for (const NodeItem *n : m_scenes[0]->nodeItems()) {
        bool inside = false;
        for (std::string g = n->visual().groupPath; !g.empty() && !inside; g = m_grouping.parentOf(g))
            inside = g == path;
        if (inside)
            members = members.united(n->sceneBoundingRect());
    }
    if (members.isEmpty())
        return;
    GraphView *view = m_views[0];
    const QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
    QPointF centre = members.center();
    if (members.height() > visible.height())
        centre.setY(members.top() + visible.height() / 2 - 20);
    view->centerOn(centre);
    emit view->viewChanged();
}

std::string GraphPane::visibleKeyFor(const std::string &nodeName) const
{
    if (const auto it = m_presentation.inlined.find(nodeName); it != m_presentation.inlined.end())
        return it->second; // a Constant drawn inside its reader
    if (const auto it = m_alias.find(nodeName); it != m_alias.end() && m_presentation.index.count(it->second))
        return it->second;
    return m_grouping.visibleKey(nodeName, m_expanded);
}

void GraphPane::onActivated(int side, const QString &qkey)
{
    const std::string key = qkey.toStdString();
    const auto it = m_presentation.index.find(key);
    if (it == m_presentation.index.end())
        return;
    const layout::VisualItem &v = m_presentation.items[it->second];
    if (v.kind == layout::VisualItem::Kind::Group) {
        m_centerKey.clear();
        setGroupExpanded(v.groupPath, true);
        return;
    }
    if (v.kind == layout::VisualItem::Kind::Input && v.outerScope) {
        goToProducer(v.title); // a value this body reads from outside
        return;
    }
    if (v.kind == layout::VisualItem::Kind::Node && v.hasSubgraphs) {
        const int graphSide =
            m_scenes[std::size_t(side)]->side() == GraphScene::Overlay ? (v.node[1].valid() ? 1 : 0) : side;
        const Graph *g = m_graphs[std::size_t(graphSide)];
        const NodeId id = v.node[std::size_t(graphSide)];
        if (g && id.valid())
            enterBody(g->node(id).name, graphSide);
    }
}

void GraphPane::showContextMenu(int side, const QPoint &pos)
{
    GraphView *view = m_views[std::size_t(side)];
    NodeItem *node = nullptr;
    for (QGraphicsItem *item : view->items(pos))
        if ((node = dynamic_cast<NodeItem *>(item)))
            break;
    QMenu menu(this);
    if (node) {
        const layout::VisualItem &v = node->visual();
        if (v.kind == layout::VisualItem::Kind::Group)
            menu.addAction(tr("Open group %1").arg(QString::fromStdString(v.groupPath)), this,
                           [this, g = v.groupPath] { setGroupExpanded(g, true); });
        // Close any open group around it, innermost first.
        std::string g = v.kind == layout::VisualItem::Kind::Group ? m_grouping.parentOf(v.groupPath)
                                                                  : m_grouping.groupOf(v.name);
        for (; !g.empty(); g = m_grouping.parentOf(g))
            menu.addAction(tr("Close group %1").arg(QString::fromStdString(g)), this,
                           [this, g] { setGroupExpanded(g, false); });
        if (!menu.isEmpty())
            menu.addSeparator();
    }
    menu.addAction(tr("Fit"), this, &GraphPane::fit);
    menu.addAction(tr("Open every group (may be slow)"), this, [this] {
        std::set<std::string> all{""};
        std::vector<std::string> stack{""};
        while (!stack.empty()) {
            const std::string g = stack.back();
            stack.pop_back();
            for (const std::string &c : m_grouping.childGroups(g)) {
                all.insert(c);
                stack.push_back(c);
            }
        }
        m_expanded = std::move(all);
        relayout();
    });
    menu.addAction(tr("Close every group"), this, [this] {
        m_expanded = {""};
        relayout();
    });
    menu.exec(view->viewport()->mapToGlobal(pos));
}

void GraphPane::onSelectionChanged(int side)
{
    ++m_selectionGeneration;
    const auto selected = m_scenes[std::size_t(side)]->selectedItems();
    if (selected.isEmpty())
        return;
    auto *n = dynamic_cast<NodeItem *>(selected.front());
    if (!n)
        return;
    const layout::VisualItem &v = n->visual();
    if (v.kind == layout::VisualItem::Kind::Group) {
        // Members on the side shown (overlay: the AFTER graph when there is one).
        const int gs = m_scenes[std::size_t(side)]->side() == GraphScene::Overlay ? (m_graphs[1] ? 1 : 0) : side;
        const Graph *graph = m_graphs[std::size_t(gs)];
        if (!graph)
            return;
        std::vector<NodeId> members;
        for (NodeId id : graph->nodeIds()) {
            for (std::string g = m_grouping.groupOf(graph->node(id).name); !g.empty(); g = m_grouping.parentOf(g))
                if (g == v.groupPath) {
                    members.push_back(id);
                    break;
                }
        }
        emit groupSelected(gs, graph, QString::fromStdString(v.groupPath), members,
                           int(m_grouping.childGroups(v.groupPath).size()));
        return;
    }
    const int graphSide =
        m_scenes[std::size_t(side)]->side() == GraphScene::Overlay ? (v.node[1].valid() ? 1 : 0) : side;
    if (v.node[std::size_t(graphSide)].valid())
        emit nodeSelected(graphSide, m_graphs[std::size_t(graphSide)], v.node[std::size_t(graphSide)]);
}

int GraphPane::find(const QString &text)
{
    m_hits = m_scenes[0]->search(text);
    // Nodes inside closed groups are found too: their group stands for them.
    if (!text.isEmpty())
        for (const Graph *g : graphList())
            for (NodeId id : g->nodeIds()) {
                const Node &n = g->node(id);
                bool match = QString::fromStdString(n.name).contains(text, Qt::CaseInsensitive) ||
                             QString::fromStdString(n.opType).contains(text, Qt::CaseInsensitive);
                for (ValueId in : n.inputs) // its weights: initializers and Constant values
                    match = match || (in.valid() && (g->value(in).isConstant() || g->value(in).producer.valid()) &&
                                      QString::fromStdString(g->value(in).name).contains(text, Qt::CaseInsensitive) &&
                                      (g->value(in).isConstant() ||
                                       layout::isInlinedConstant(*g, g->node(g->value(in).producer))));
                const std::string key = visibleKeyFor(n.name);
                if (match && key != n.name && std::find(m_hits.begin(), m_hits.end(), key) == m_hits.end())
                    m_hits.push_back(key);
            }
    m_hit = m_hits.empty() ? -1 : 0;
    if (m_hits.empty())
        for (GraphScene *s : m_scenes)
            s->clearHighlight();
    else
        showHit();
    return int(m_hits.size());
}

void GraphPane::findNext()
{
    if (m_hits.empty())
        return;
    m_hit = (m_hit + 1) % int(m_hits.size());
    showHit();
}

void GraphPane::findPrevious()
{
    if (m_hits.empty())
        return;
    m_hit = (m_hit + int(m_hits.size()) - 1) % int(m_hits.size());
    showHit();
}

void GraphPane::showHit()
{
    if (m_hit < 0 || m_hit >= int(m_hits.size()))
        return;
    const std::string &key = m_hits[std::size_t(m_hit)];
    for (GraphScene *s : m_scenes)
        s->highlight(m_hits);
    for (GraphScene *s : m_scenes)
        if (NodeItem *n = s->itemForKey(key)) {
            s->clearSelection();
            n->setSelected(true);
        }
    if (NodeItem *n = m_scenes[0]->itemForKey(key))
        m_views[0]->centerOnItem(n);
    else if (NodeItem *n1 = m_scenes[1]->itemForKey(key))
        m_views[1]->centerOnItem(n1);
}

void GraphPane::focusNodes(const std::vector<std::string> &names)
{
    bool opened = false;
    for (const std::string &name : names)
        for (std::string g = m_grouping.groupOf(name); !g.empty(); g = m_grouping.parentOf(g))
            opened = m_expanded.insert(g).second || opened;
    m_hits.clear();
    for (const std::string &n : names)
        m_hits.push_back(n);
    m_hit = m_hits.empty() ? -1 : 0;
    if (opened)
        relayout(); // showHit runs when the layout lands
    else
        showHit();
}

void GraphPane::fit()
{
    m_views[0]->fit();
    if (m_splitter->widget(1)->isVisible())
        m_views[1]->fit();
}

void GraphPane::showFirstView()
{
    showInitial();
    if (!m_graphs[1] || m_diff.empty())
        return;
    // A pass step opens on its first change (topmost), at 100 %: the top of a transformer is
    // otherwise attention layers the pass did not touch.
    const NodeItem *first = nullptr;
    for (int side = 0; side < 2; ++side)
        for (const NodeItem *n : m_scenes[std::size_t(side)]->nodeItems())
            if (n->diffState() != DiffState::None && (!first || n->pos().y() < first->pos().y()))
                first = n;
    if (!first)
        return;
    GraphView *view = m_views[0];
    // In sight means in the upper two thirds: what the rewrite made of it lies below (at the
    // bottom edge of a 1280×720 window the fused node was off screen).
    QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
    visible.setBottom(visible.top() + visible.height() * 2.0 / 3.0);
    if (visible.contains(first->sceneBoundingRect()))
        return; // already in sight
    view->setTransform(QTransform());
    view->centerOn(first->sceneBoundingRect().center() + QPointF(0, view->viewport()->height() / 3.0));
}

void GraphPane::showInitial()
{
    // Each side its own first view, not the other's mirrored; the sync keeps the offset between
    // them from here on.
    const QSignalBlocker block0(m_views[0]), block1(m_views[1]);
    const bool two = m_splitter->widget(1)->isVisible();
    for (int side = 0; side < 2; ++side) {
        if (side == 1 && !m_splitter->widget(1)->isVisible())
            break;
        // Where a reader starts: the first graph input, else the topmost item.
        std::optional<QRectF> anchor;
        const GraphScene *scene = m_scenes[std::size_t(side)];
        if (const Graph *g = m_graphs[std::size_t(side)] ? m_graphs[std::size_t(side)] : m_graphs[0])
            for (ValueId in : g->inputs())
                if (const NodeItem *item = scene->itemForKey("in:" + g->value(in).name)) {
                    anchor = item->sceneBoundingRect();
                    break;
                }
        if (!anchor)
            for (const NodeItem *item : scene->nodeItems())
                if (!anchor || item->sceneBoundingRect().top() < anchor->top())
                    anchor = item->sceneBoundingRect();
        m_views[std::size_t(side)]->showInitial(anchor);
    }
    // One zoom for both sides: a graph that fits its pane was fitted and one that does not was
    // shown at 100 %, and the panes then kept different scales (boxes of one op at two sizes).
    if (two) {
        const double z = std::min(m_views[0]->zoom(), m_views[1]->zoom());
        for (GraphView *v : m_views)
            if (v->zoom() > z) {
                const QPointF c = v->center();
                v->setTransform(QTransform::fromScale(z, z));
                v->centerOn(c);
            }
    }
    const QPointF offset = two ? m_views[1]->center() - m_views[0]->center() : QPointF();
    m_views[0]->setMirrorOffset(offset);
    m_views[1]->setMirrorOffset(-offset);
    updateOverlays();
}

void GraphPane::zoomIn()
{
    m_views[0]->zoomBy(1.25);
}

void GraphPane::zoomOut()
{
    m_views[0]->zoomBy(0.8);
}

void GraphPane::setShowLegend(bool on)
{
    m_legend->setVisible(on);
    updateOverlays();
}

void GraphPane::setShowEdgeLabels(bool on)
{
    m_edgeLabels = on;
    for (GraphScene *s : m_scenes)
        s->setShowEdgeLabels(on);
}

bool GraphPane::exportSvg(const QString &path) const
{
    QGraphicsScene *s = m_scenes[0];
    const QRectF r = s->itemsBoundingRect().adjusted(-10, -10, 10, 10);
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(r.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), r.size()));
    svg.setTitle(QStringLiteral("opscope graph"));
    QPainter p;
    if (!p.begin(&svg))
        return false;
    s->render(&p, QRectF(QPointF(0, 0), r.size()), r);
    return p.end();
}

bool GraphPane::exportPng(const QString &path) const
{
    QGraphicsScene *s = m_scenes[0];
    const QRectF r = s->itemsBoundingRect().adjusted(-10, -10, 10, 10);
    // 2× for crisp text, capped so huge graphs stay a sane file.
    const double scale = std::min(2.0, 16000.0 / std::max(r.width(), r.height()));
    QImage img((r.size() * scale).toSize(), QImage::Format_ARGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    p.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    s->render(&p, QRectF(QPointF(0, 0), r.size() * scale), r);
    p.end();
    return img.save(path);
}

} // namespace opscope
