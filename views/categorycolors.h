#pragma once
// One palette for op categories and diff states, shared by every view (graph, timeline, legend).

#include "ir/opcategory.h"

#include <QColor>

namespace opscope {

QColor categoryFill(OpCategory c);
QColor categoryBorder(OpCategory c);

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
