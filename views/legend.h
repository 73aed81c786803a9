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
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    bool m_diff = false;
};

} // namespace opscope
