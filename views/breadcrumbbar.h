#pragma once
// The trail above the graph when walking into If/Loop/Scan bodies: ◀ ▶ (back, forward), then
// "model ▸ If_0 ▸ then_branch ▸ If_1". A crumb navigates to its level; the last crumb of a node
// with several bodies (an If's then_branch and else_branch) is a menu to switch between them.

#include <QStringList>
#include <QWidget>

class QHBoxLayout;
class QToolButton;

namespace opscope {

class BreadcrumbBar : public QWidget
{
    Q_OBJECT
public:
    explicit BreadcrumbBar(QWidget *parent = nullptr);

    // `crumbs`: one label per level, root first. `siblings`: the other bodies of the innermost
    // level's node (its attribute names), empty when it has one.
    void setTrail(const QStringList &crumbs, const QStringList &siblings, bool canBack, bool canForward);
    QStringList trail() const { return m_crumbs; }

signals:
    void levelChosen(int depth); // 0: the model's graph
    void siblingChosen(int index);
    void back();
    void forward();

private:
    QHBoxLayout *m_layout;
    QToolButton *m_back, *m_forward;
    QList<QWidget *> m_items;
    QStringList m_crumbs;
};

} // namespace opscope
