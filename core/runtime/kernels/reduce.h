#pragma once
// The reduction engine's float32 row loops, for the ops that are reductions under another name
// (GlobalAveragePool, GlobalMaxPool: one row of H×W per channel).

#include <cstdint>

namespace opscope::kernels {

enum class RowReduction
{
    Mean,
    Max, // NaN propagates, as in ReduceMax
};

// dst[r] = mean or max of src[r * len .. (r + 1) * len), rows in parallel.
void reduceRowsF32(RowReduction op, const float *src, float *dst, std::int64_t rows, std::int64_t len);

} // namespace opscope::kernels
