// GraphPane's walk into If/Loop/Scan bodies: the frames of the breadcrumb trail, back/forward
// history, switching between an If's branches, and going to the producer of a captured value.
#include "breadcrumbbar.h"
#include "graphpane.h"
#include "legend.h"

#include <algorithm>

namespace opscope {

std::optional<GraphPane::Frame> GraphPane::bodyFrame(const Frame &parent, const std::string &owner,
                                                     std::size_t body) const
{
    // The owner in each side's graph; a body compared BEFORE | AFTER when both sides have it.
    std::array<const Node *, 2> nodes{nullptr, nullptr};
    for (int side = 0; side < 2; ++side)
        if (const Graph *g = parent.graphs[std::size_t(side)])
            if (const NodeId id = g->findNode(owner); id.valid())
                nodes[std::size_t(side)] = &g->node(id);
    const Node *any = nodes[0] ? nodes[0] : nodes[1];
    if (!any)
        return std::nullopt;
    Frame f;
    for (const Attribute &a : any->attributes) {
        if (a.g)
            f.bodies.emplace_back(a.name, 0);
        for (std::size_t i = 0; i < a.graphs.size(); ++i)
            f.bodies.emplace_back(a.name, i);
    }
    // An If opens on its then_branch, whatever order the file lists its attributes in.
    std::stable_sort(f.bodies.begin(), f.bodies.end(),
                     [](const auto &a, const auto &b) { return a.first == "then_branch" && b.first != "then_branch"; });
    if (body >= f.bodies.size())
        return std::nullopt;
    f.owner = owner;
    f.body = body;
    const auto &[attribute, index] = f.bodies[body];
    auto bodyOf = [&](const Node *n) -> const Graph * {
        const Attribute *a = n ? n->attribute(attribute) : nullptr;
        if (!a)
            return nullptr;
        return a->g ? a->g.get() : index < a->graphs.size() ? a->graphs[index].get() : nullptr;
    };
    const Graph *before = bodyOf(nodes[0]), *after = bodyOf(nodes[1]);
    if (before && after) {
        f.models = parent.models;
        f.graphs = {before, after};
        f.mode = parent.mode;
    } else {
        const int side = before ? 0 : 1;
        f.models = {parent.models[std::size_t(side)], nullptr};
        f.graphs = {before ? before : after, nullptr};
    }
    f.label = QString::fromStdString(owner + " ▸ " + attribute +
                                     (!any->attribute(attribute)->graphs.empty() ? "[" + std::to_string(index) + "]" : ""));
    return f;
}

bool GraphPane::enterBody(const std::string &node, int side)
{
    (void)side;
    std::optional<Frame> f = bodyFrame(m_path.back(), node, 0);
    if (!f)
        return false;
    pushHistory();
    m_path.push_back(std::move(*f));
    display();
    emit navigated();
    return true;
}

void GraphPane::switchBody(int sibling)
{
    if (m_path.size() < 2)
        return;
    const Frame &current = m_path.back();
    // The siblings listed are the owner's bodies other than the one shown.
    std::size_t body = 0;
    for (std::size_t i = 0, k = 0; i < current.bodies.size(); ++i)
        if (i != current.body && int(k++) == sibling)
            body = i;
    std::optional<Frame> f = bodyFrame(m_path[m_path.size() - 2], current.owner, body);
    if (!f)
        return;
    pushHistory();
    m_path.back() = std::move(*f);
    display();
    emit navigated();
}

void GraphPane::navigateTo(int depth)
{
    if (depth < 0 || depth + 1 >= int(m_path.size()))
        return;
    pushHistory();
    m_path.resize(std::size_t(depth) + 1);
    display();
    emit navigated();
}

void GraphPane::pushHistory()
{
    m_backStack.push_back(m_path);
    m_forwardStack.clear();
}

void GraphPane::back()
{
    if (m_backStack.empty())
        return;
    m_forwardStack.push_back(std::move(m_path));
    m_path = std::move(m_backStack.back());
    m_backStack.pop_back();
    display();
    emit navigated();
}

void GraphPane::forward()
{
    if (m_forwardStack.empty())
        return;
    m_backStack.push_back(std::move(m_path));
    m_path = std::move(m_forwardStack.back());
    m_forwardStack.pop_back();
    display();
    emit navigated();
}

QStringList GraphPane::breadcrumbs() const
{
    QStringList out;
    for (const Frame &f : m_path)
        out << f.label;
    return out;
}

void GraphPane::updateBreadcrumbs()
{
    QStringList siblings;
    if (m_path.size() > 1) {
        const Frame &f = m_path.back();
        for (std::size_t i = 0; i < f.bodies.size(); ++i)
            if (i != f.body)
                siblings << QString::fromStdString(f.bodies[i].first +
                                                   (f.bodies[i].second ? "[" + std::to_string(f.bodies[i].second) + "]"
                                                                       : ""));
    }
    m_crumbs->setTrail(breadcrumbs(), siblings, !m_backStack.empty(), !m_forwardStack.empty());
    m_crumbs->setVisible(m_path.size() > 1 || !m_backStack.empty() || !m_forwardStack.empty());
    updateOverlays(); // placed home alone, the legend stayed over nodes until the view next moved
}

void GraphPane::placeLegend()
{
    // Below the breadcrumb trail and the BEFORE/AFTER titles, whichever are shown.
    const int top = (m_crumbs->isVisible() ? m_crumbs->sizeHint().height() : 0) + (m_mode == Mode::Single ? 12 : 36);
    m_legend->move(12, top);
}

void GraphPane::goToProducer(const std::string &value)
{
    // Up the levels until the value is defined: produced by a node there, or an input of it.
    for (int depth = int(m_path.size()) - 2; depth >= 0; --depth) {
        const Graph *g = m_path[std::size_t(depth)].graphs[0] ? m_path[std::size_t(depth)].graphs[0]
                                                              : m_path[std::size_t(depth)].graphs[1];
        const ValueId v = g->findValue(value);
        if (!v.valid() || g->value(v).outerScope)
            continue;
        navigateTo(depth);
        if (const NodeId p = g->producer(v); p.valid())
            focusNodes({g->node(p).name});
        return;
    }
}

} // namespace opscope
