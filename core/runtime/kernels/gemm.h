#pragma once
// Row-major single-precision GEMM through oneDNN: C = alpha·op(A)·op(B) + beta·C.

#include "util/status.h"

#include <cstdint>

namespace opscope::kernels {

Status gemmF32(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float *a, std::int64_t lda, const float *b, std::int64_t ldb, float beta, float *c,
               std::int64_t ldc);

} // namespace opscope::kernels
