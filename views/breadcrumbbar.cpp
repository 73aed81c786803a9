#include "breadcrumbbar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QToolButton>

namespace opscope {

BreadcrumbBar::BreadcrumbBar(QWidget *parent) : QWidget(parent), m_layout(new QHBoxLayout(this))
{
    m_layout->setContentsMargins(6, 2, 6, 2);
    m_layout->setSpacing(2);
    m_back = new QToolButton(this);
    m_back->setText(QStringLiteral("◀"));
    m_back->setToolTip(tr("Back (Alt+Left)"));
    m_back->setAutoRaise(true);
    m_forward = new QToolButton(this);
    m_forward->setText(QStringLiteral("▶"));
    m_forward->setToolTip(tr("Forward (Alt+Right)"));
    m_forward->setAutoRaise(true);
    connect(m_back, &QToolButton::clicked, this, &BreadcrumbBar::back);
    connect(m_forward, &QToolButton::clicked, this, &BreadcrumbBar::forward);
    m_layout->addWidget(m_back);
    m_layout->addWidget(m_forward);
    m_layout->addStretch(1);
    setStyleSheet(QStringLiteral("opscope--BreadcrumbBar { background: #f4f3ef; }"));
    setAttribute(Qt::WA_StyledBackground);
}

void BreadcrumbBar::setTrail(const QStringList &crumbs, const QStringList &siblings, bool canBack, bool canForward)
{
    m_crumbs = crumbs;
    for (QWidget *w : m_items)
        w->deleteLater();
    m_items.clear();
    m_back->setEnabled(canBack);
    m_forward->setEnabled(canForward);
    int at = 2; // after back and forward
    for (int i = 0; i < crumbs.size(); ++i) {
        if (i) {
            auto *sep = new QLabel(QStringLiteral("▸"), this);
            m_layout->insertWidget(at++, sep);
            m_items << sep;
        }
        auto *crumb = new QToolButton(this);
        crumb->setAutoRaise(true);
        crumb->setText(crumbs[i]);
        crumb->setToolTip(crumbs[i]);
        const bool last = i + 1 == crumbs.size();
        if (last)
            crumb->setStyleSheet(QStringLiteral("font-weight: bold;"));
        if (last && !siblings.isEmpty()) {
            // then_branch ▾ → else_branch: both bodies of an If are one click apart.
            auto *menu = new QMenu(crumb);
            for (int s = 0; s < siblings.size(); ++s)
                menu->addAction(siblings[s], this, [this, s] { emit siblingChosen(s); });
            crumb->setMenu(menu);
            crumb->setPopupMode(QToolButton::InstantPopup);
        } else {
            connect(crumb, &QToolButton::clicked, this, [this, i] { emit levelChosen(i); });
        }
        m_layout->insertWidget(at++, crumb);
        m_items << crumb;
    }
}

} // namespace opscope
