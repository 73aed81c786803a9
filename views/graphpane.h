#pragma once
// The graph panel: one graph, or two compared (BEFORE | AFTER side by side with synchronized
// pan/zoom, or overlaid in one view), laid out in the background, grouped by name scope so big
// models open fast; groups open on double-click. If/Loop/Scan bodies open here too, with a
// breadcrumb trail (model ▸ If_0 ▸ then_branch ▸ If_1), back/forward, and both branches of an If
// one click apart; values a body reads from outside are its inputs, and double-clicking one goes
// to its producer in the enclosing graph.

#include "graphscene.h"
#include "graphview.h"
#include "ir/graphdiff.h"
#include "ir/model.h"
#include "layout/presentation.h"

#include <QHash>
#include <QSharedPointer>
#include <QWidget>
#include <memory>
#include <optional>

class QSplitter;
class QLabel;

namespace opscope {

class BreadcrumbBar;
class LayoutService;
class Legend;

class GraphPane : public QWidget
{
    Q_OBJECT
public:
    enum class Mode
    {
        Single,
        SideBySide,
        Overlay,
    };

    explicit GraphPane(LayoutService *layouts, QWidget *parent = nullptr);

    // The models are kept alive; the graphs point into them (a body graph for nested views).
    void showGraph(std::shared_ptr<const Model> model, const Graph *graph);
    // `alias`: AFTER nodes drawn in the slot of the BEFORE node they replaced (a pass's matches).
    // `aliasIsSameNode`: the pairs are one node renamed (original vs final), diffed as such.
    void showComparison(std::shared_ptr<const Model> before, const Graph *beforeGraph,
                        std::shared_ptr<const Model> after, const Graph *afterGraph, Mode mode,
                        std::unordered_map<std::string, std::string> alias = {}, bool aliasIsSameNode = false);
    void setMode(Mode mode);
    // What the two sides are called ("BEFORE"/"AFTER" by default; File ▸ Compare: the file names).
    void setTitles(const QString &before, const QString &after);
    Mode mode() const { return m_mode; }
    const Graph *graph(int side) const { return m_graphs[std::size_t(side)]; }
    // The model graph(side) belongs to (its opsets, for the inspector).
    const std::shared_ptr<const Model> &model(int side) const { return m_models[std::size_t(side)]; }
    const GraphDiff &diff() const { return m_diff; }

    GraphScene *scene(int side) const;
    GraphView *view(int side) const;
    const layout::Presentation &presentation() const { return m_presentation; }
    bool layoutPending() const { return m_pendingTicket != 0; }
    const layout::Grouping &grouping() const { return m_grouping; }
    const std::set<std::string> &expandedGroups() const { return m_expanded; }

    // Opens (or closes) a group and lays out again.
    void setGroupExpanded(const std::string &path, bool expanded);
    // The item standing for a node now (itself, or the closed group it is in).
    std::string visibleKeyFor(const std::string &nodeName) const;

    // Search by node name, op type or tensor name; returns the number of hits and shows the first.
    int find(const QString &text);
    void findNext();
    void findPrevious();
    int currentHit() const { return m_hit; }
    // Highlights these nodes (opening their groups) and centres on them: a pattern instance.
    void focusNodes(const std::vector<std::string> &names);

    void fit();
    void showInitial();
    void zoomIn();
    void zoomOut();
    void setShowEdgeLabels(bool on);
    // Walking into bodies (double-click does it too): `node` is an item key of the current graph.
    bool enterBody(const std::string &node, int side = 0);
    void switchBody(int sibling); // among the other bodies of the innermost level's node
    void navigateTo(int depth);   // 0: the model's graph
    void back();
    void forward();
    int depth() const { return int(m_path.size()) - 1; }
    QStringList breadcrumbs() const;

    void setShowLegend(bool on);
    void setShowMinimap(bool on);
    // 0 legend, 1 minimap: faded because it lies over nodes (for tests).
    bool overlayFaded(int which) const;
    bool exportSvg(const QString &path) const;
    bool exportPng(const QString &path) const;

signals:
    void layoutStarted(int items);
    // `note` is non-empty when the quick layered layout stands in for dot's (and says why).
    void layoutFinished(double milliseconds, int items, const QString &note);
    void layoutFailed(const QString &message);
    void nodeSelected(int side, const opscope::Graph *graph, opscope::NodeId node);
    // A collapsed group was selected: `members` are its nodes (at any depth) in `graph`.
    void groupSelected(int side, const opscope::Graph *graph, const QString &path,
                       const std::vector<opscope::NodeId> &members, int childGroups);
    void tensorSelected(int side, const opscope::Graph *graph, const QString &tensor);
    void navigated(); // another graph level is shown

protected:
    void resizeEvent(QResizeEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void showOpenedGroup(const std::string &path);
    struct Frame
    {
        std::array<std::shared_ptr<const Model>, 2> models;
        std::array<const Graph *, 2> graphs{nullptr, nullptr};
        std::unordered_map<std::string, std::string> alias;
        bool aliasIsSameNode = false;
        Mode mode = Mode::Single;
        QString label;
        std::string owner;                                   // the node whose body this is
        std::vector<std::pair<std::string, std::size_t>> bodies; // the owner's bodies: attribute, index
        std::size_t body = 0;                                // which of them this is
    };
    void display();
    void pushHistory();
    void updateBreadcrumbs();
    void placeLegend();
    void showFirstView(); // fit, or the input at 100 %; on a pass step, the first change
    std::optional<Frame> bodyFrame(const Frame &parent, const std::string &owner, std::size_t body) const;
    void goToProducer(const std::string &value);
    void rebuildGrouping();
    bool overlayCoversNodes(const QWidget *overlay) const;
    bool rectCoversNodes(const QRect &area) const; // in pane coordinates
    void updateOverlays();
    void relayout();
    bool wantsLayoutBySide() const;
    void onLayoutFinished(quint64 ticket, QSharedPointer<const layout::LayoutResult> result,
                          const QString &error, double ms, const QString &note);
    void applyLayout(const layout::LayoutResult &result);
    void onActivated(int side, const QString &key);
    void onSelectionChanged(int side);
    void showContextMenu(int side, const QPoint &pos);
    void showHit();
    std::vector<const Graph *> graphList() const;

    LayoutService *m_layouts;
    std::vector<Frame> m_path; // root … current level
    std::vector<std::vector<Frame>> m_backStack, m_forwardStack;
    BreadcrumbBar *m_crumbs = nullptr;
    Mode m_mode = Mode::Single;
    std::array<std::shared_ptr<const Model>, 2> m_models;
    std::array<const Graph *, 2> m_graphs{nullptr, nullptr};
    GraphDiff m_diff;
    std::unordered_map<std::string, std::string> m_alias;
    layout::Grouping m_grouping;
    std::set<std::string> m_expanded;
    layout::Presentation m_presentation;
    QSharedPointer<const layout::LayoutResult> m_current; // the layout on screen, once it landed
    // m_current holds each side as its own component (layout/sidelayout.h): two graphs that share
    // little, side by side. Overlay mode needs the union.
    bool m_layoutBySide = false;
    layout::LayoutRequest m_request; // what m_current was asked for (splitting needs its sizes)
    quint64 m_pendingTicket = 0;
    bool m_fitAfterLayout = true;
    int m_selectionGeneration = 0; // a selection since the layout: the delayed first view stays away
    std::string m_centerKey; // keep this item in view after the next layout
    std::optional<std::string> m_openedGroup; // frame this group's members after the next layout

    std::array<GraphScene *, 2> m_scenes{};
    std::array<GraphView *, 2> m_views{};
    std::array<QLabel *, 2> m_titles{};
    QSplitter *m_splitter = nullptr;
    MiniMap *m_minimap = nullptr;
    Legend *m_legend = nullptr;
    bool m_edgeLabels = true;
    QString m_beforeTitle, m_afterTitle; // empty: BEFORE / AFTER
    const QObject *m_hovered = nullptr; // the overlay under the mouse

    std::vector<std::string> m_hits;
    int m_hit = -1;
};

} // namespace opscope
