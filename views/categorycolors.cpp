#include "categorycolors.h"

namespace opscope {

QColor categoryFill(OpCategory c)
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

QColor categoryBorder(OpCategory c)
{
    return categoryFill(c).darker(165);
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
