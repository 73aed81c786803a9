#pragma once
// One palette for op categories and diff states, shared by every view (graph, timeline, legend),
// light or dark after the application's palette (a desktop's dark theme, or `opscope --dark`).

#include "ir/opcategory.h"

#include <QColor>

class QPalette;

namespace opscope {

// The colours every canvas paints with (graph, minimap, legend, timeline). Categories keep their
// hue in both; in the dark theme their fills are deep and their text light.
struct CanvasTheme
{
    bool dark = false;
    QColor canvas, minimap, text, subtitle, constants, edge, edgeLabel, ioFill, ioBorder, selection;
    QColor panel, panelBorder, panelText; // legend and the timeline's headers
    QColor axis, axisText, runHeader, lane;
};
bool isDarkPalette(const QPalette &palette);
// A dark widget palette (for Fusion): what `opscope --dark` uses where the desktop has none.
QPalette darkPalette();
// For the application's palette now (cached until the palette changes).
const CanvasTheme &canvasTheme();

QColor categoryFill(OpCategory c);
QColor categoryBorder(OpCategory c);
// Measured time as heat in [0, 1]: from the plain node fill to red.
QColor heatFill(double heat);

enum class DiffState
{
    None,
    Removed,  // in BEFORE only: red
    Added,    // in AFTER only: green
    Modified, // both, changed: amber
};
QColor diffColor(DiffState s);

// Device i of a partition (8 distinct hues, repeating).
QColor deviceColor(int device);

} // namespace opscope
