#include "legend.h"

#include "categorycolors.h"

#include <QPainter>

namespace opscope {

namespace {

constexpr int kRow = 16;
constexpr OpCategory kShown[] = {OpCategory::Compute,     OpCategory::Activation,  OpCategory::Normalization,
                                 OpCategory::Elementwise, OpCategory::ShapeLayout, OpCategory::Reduction,
                                 OpCategory::ControlFlow, OpCategory::Fused,       OpCategory::Quantization};

} // namespace

Legend::Legend(QWidget *parent) : QWidget(parent)
{
    setAttribute(Qt::WA_TransparentForMouseEvents);
    resize(sizeHint());
}

void Legend::setShowDiff(bool on)
{
    m_diff = on;
    resize(sizeHint());
    update();
}

void Legend::setCollapsed(bool on)
{
    if (on == m_collapsed)
        return;
    m_collapsed = on;
    resize(sizeHint());
    update();
}

QSize Legend::sizeHint() const
{
    if (m_collapsed)
        return {64, 20};
    const int rows = int(std::size(kShown)) + (m_diff ? 4 : 0);
    return {150, rows * kRow + 10};
}

void Legend::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const CanvasTheme &theme = canvasTheme();
    p.setPen(theme.panelBorder);
    p.setBrush(theme.panel);
    p.drawRoundedRect(rect().adjusted(0, 0, -1, -1), 5, 5);
    QFont f(QStringLiteral("DejaVu Sans"), 8);
    p.setFont(f);
    if (m_collapsed) {
        p.setPen(theme.panelText);
        p.drawText(rect(), Qt::AlignCenter, tr("Legend"));
        return;
    }
    int y = 5;
    auto row = [&](const QColor &fill, const QColor &border, const QString &text) {
        p.setPen(QPen(border, 1.2));
        p.setBrush(fill);
        p.drawRoundedRect(QRectF(8, y + 3, 18, 10), 2, 2);
        p.setPen(theme.panelText);
        p.drawText(QRect(32, y, width() - 36, kRow), Qt::AlignVCenter, text);
        y += kRow;
    };
    for (OpCategory c : kShown)
        row(categoryFill(c), categoryBorder(c),
            QString::fromLatin1(opCategoryName(c).data(), int(opCategoryName(c).size())));
    if (m_diff) {
        y += 6;
        row(theme.canvas, diffColor(DiffState::Removed), tr("removed"));
        row(theme.canvas, diffColor(DiffState::Added), tr("added"));
        row(theme.canvas, diffColor(DiffState::Modified), tr("modified"));
    }
}

} // namespace opscope
