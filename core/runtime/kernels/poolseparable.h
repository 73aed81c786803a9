#pragma once
// Pooling over any number of spatial dims and any numeric type, one axis at a time. Every ONNX
// pooling window is a box (a product of per-axis tap sets), so its max, sum or Lp sum is the
// same reduction applied along each axis in turn: a window of k₀·k₁ taps costs k₀ + k₁ reads
// per output instead of k₀·k₁ (a 60×80 dilated MaxPool over 1000×1000 in double: 26 M tap reads
// instead of 516 M — fuzzing reported the direct loop as a timeout).
//
// Visits only taps inside the input (padding never wins a max nor adds); an output whose clamped
// taps equal its neighbour's reuses the result, so a SAME-padded window of 2^31 taps costs what
// the input holds. Axes go in the order that shrinks the data first, so no intermediate is larger
// than the input or the output. MaxPool's Indices: the first maximum in row-major window order
// (ONNX Runtime's), kept whatever the axis order by breaking ties on the input offset; a NaN wins
// and stays, as in the ONNX reference.
//
// The 2-D float row kernels in pool.cpp stay the fast path for ordinary float windows; this is
// the path for Indices, other types, 1-D and 3-D, and windows far wider than the input.

#include "runtime/kernels/convgeometry.h"

namespace opscope::kernels {

enum class PoolReduction
{
    Max,
    Average,
    Lp
};

struct SeparablePool
{
    PoolReduction reduction = PoolReduction::Max;
    bool includePad = false; // AveragePool's count_include_pad
    double p = 2;            // LpPool
    bool colMajor = false;   // MaxPool's storage_order 1: Indices column-major (2-D)
    int threads = 1;
};

// Taps [lo, hi) of a window of k taps, d apart, starting at `start`, that fall inside [0, limit).
std::pair<std::int64_t, std::int64_t> tapRange(std::int64_t start, std::int64_t limit, std::int64_t k, std::int64_t d);

// x: [N, C, *spatial] of a numeric type other than bool; y allocated with geo.outShape and x's
// type; indices (may be null, Max only) as many int64 as y holds.
Status separablePool(const RuntimeTensor &x, RuntimeTensor &y, std::int64_t *indices, const ConvGeometry &geo,
                     const SeparablePool &how);

} // namespace opscope::kernels
