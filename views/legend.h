#pragma once
// The colour key drawn over the graph view: op categories, and the diff colours when comparing.

#include <QWidget>

namespace opscope {

class Legend : public QWidget
{
    Q_OBJECT
public:
    explicit Legend(QWidget *parent = nullptr);
    void setShowDiff(bool on);
    // Collapsed: a small "Legend" tab instead of the key, where the key would cover nodes (drawn
    // faded over them, its text collided with the nodes' labels).
    void setCollapsed(bool on);
    bool isCollapsed() const { return m_collapsed; }
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    bool m_diff = false;
    bool m_collapsed = false;
};

} // namespace opscope
