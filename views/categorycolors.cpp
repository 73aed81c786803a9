#include "categorycolors.h"

#include <QGuiApplication>
#include <algorithm>
#include <QPalette>

namespace opscope {

namespace {

QColor lightFill(OpCategory c)
{
    switch (c) {
    case OpCategory::Compute: return QColor(0xbb, 0xd7, 0xf5);
    case OpCategory::Activation: return QColor(0xf9, 0xd9, 0xb6);
    case OpCategory::Normalization: return QColor(0xd7, 0xc8, 0xf0);
    case OpCategory::Elementwise: return QColor(0xd4, 0xec, 0xd0);
    case OpCategory::ShapeLayout: return QColor(0xe6, 0xe6, 0xe6);
    case OpCategory::Reduction: return QColor(0xc6, 0xea, 0xea);
    case OpCategory::ControlFlow: return QColor(0xf6, 0xc8, 0xd8);
    case OpCategory::Fused: return QColor(0xff, 0xe8, 0x8a);
    case OpCategory::Quantization: return QColor(0xe3, 0xd5, 0xc1);
    case OpCategory::Communication: return QColor(0xf5, 0xb8, 0xb8);
    case OpCategory::Other: break;
    }
    return QColor(0xf2, 0xf2, 0xf2);
}

CanvasTheme makeTheme(bool dark)
{
    CanvasTheme t;
    t.dark = dark;
    const QColor selection(0x1e, 0x66, 0xf5);
    if (!dark) {
        t.canvas = QColor(0xfc, 0xfc, 0xfb);
        t.minimap = QColor(0xf4, 0xf4, 0xf2);
        t.text = QColor(0x20, 0x20, 0x20);
        t.subtitle = QColor(0x50, 0x50, 0x50);
        t.constants = QColor(0x45, 0x45, 0x70);
        t.edge = QColor(0x70, 0x70, 0x70);
        t.edgeLabel = QColor(0x55, 0x55, 0x55);
        t.ioFill = QColor(0xfa, 0xfa, 0xfa);
        t.ioBorder = QColor(0x80, 0x80, 0x80);
        t.selection = selection;
        t.panel = QColor(255, 255, 255, 225);
        t.panelBorder = QColor(0xd0, 0xd0, 0xd0);
        t.panelText = QColor(0x30, 0x30, 0x30);
        t.axis = QColor(0xf1, 0xf0, 0xec);
        t.axisText = QColor(0x66, 0x66, 0x66);
        t.runHeader = QColor(0xe6, 0xe4, 0xdc);
        t.lane = QColor(0xf6, 0xf6, 0xf4);
        return t;
    }
    t.canvas = QColor(0x1e, 0x1f, 0x22);
    t.minimap = QColor(0x27, 0x28, 0x2c);
    t.text = QColor(0xec, 0xec, 0xec);
    t.subtitle = QColor(0xb8, 0xb8, 0xb8);
    t.constants = QColor(0xb9, 0xc4, 0xf0);
    t.edge = QColor(0x9a, 0x9a, 0xa0);
    t.edgeLabel = QColor(0xa8, 0xa8, 0xa8);
    t.ioFill = QColor(0x30, 0x31, 0x36);
    t.ioBorder = QColor(0xa0, 0xa0, 0xa0);
    t.selection = QColor(0x5b, 0x9b, 0xff);
    t.panel = QColor(0x2a, 0x2b, 0x30, 230);
    t.panelBorder = QColor(0x50, 0x50, 0x56);
    t.panelText = QColor(0xe0, 0xe0, 0xe0);
    t.axis = QColor(0x2a, 0x2b, 0x30);
    t.axisText = QColor(0xb0, 0xb0, 0xb0);
    t.runHeader = QColor(0x36, 0x37, 0x3d);
    t.lane = QColor(0x24, 0x25, 0x29);
    return t;
}

} // namespace

bool isDarkPalette(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2c, 0x30), base(0x1e, 0x1f, 0x22), text(0xe6, 0xe6, 0xe6);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x27, 0x2b));
    p.setColor(QPalette::ToolTipBase, window);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Link, QColor(0x6c, 0xa8, 0xff));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x6f, 0xd6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::PlaceholderText, QColor(0x90, 0x90, 0x90));
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, QColor(0x80, 0x80, 0x80));
    return p;
}

const CanvasTheme &canvasTheme()
{
    static const CanvasTheme light = makeTheme(false), dark = makeTheme(true);
    return isDarkPalette(QGuiApplication::palette()) ? dark : light;
}

QColor categoryFill(OpCategory c)
{
    const QColor fill = lightFill(c);
    if (!canvasTheme().dark)
        return fill;
    // Same hue, deep: light text stays readable on it.
    return QColor::fromHslF(fill.hslHueF() < 0 ? 0 : fill.hslHueF(), fill.hslSaturationF() * 0.55, 0.30);
}

QColor categoryBorder(OpCategory c)
{
    return canvasTheme().dark ? categoryFill(c).lighter(170) : categoryFill(c).darker(165);
}

QColor heatFill(double heat)
{
    const double h = std::clamp(heat, 0.0, 1.0);
    if (!canvasTheme().dark)
        return QColor::fromRgbF(1.0, 1.0 - 0.75 * h, 1.0 - 0.85 * h);
    return QColor::fromRgbF(0.19 + 0.66 * h, 0.19 - 0.04 * h, 0.21 - 0.08 * h);
}

QColor diffColor(DiffState s)
{
    switch (s) {
    case DiffState::Removed: return QColor(0xd6, 0x2f, 0x2f);
    case DiffState::Added: return QColor(0x2e, 0x9e, 0x45);
    case DiffState::Modified: return QColor(0xe8, 0x9a, 0x0c);
    case DiffState::None: break;
    }
    return QColor();
}

QColor deviceColor(int device)
{
    static const QColor palette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xd6, 0x27, 0x28),
                                     QColor(0x2c, 0xa0, 0x2c), QColor(0x94, 0x67, 0xbd),
                                     QColor(0xff, 0x7f, 0x0e), QColor(0x17, 0xbe, 0xcf),
                                     QColor(0x8c, 0x56, 0x4b), QColor(0xe3, 0x77, 0xc2)};
    return palette[std::size_t(std::max(0, device)) % std::size(palette)];
}

} // namespace opscope
