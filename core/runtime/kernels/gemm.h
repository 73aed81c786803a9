#pragma once
// Row-major single-precision GEMM through oneDNN: C = alpha·op(A)·op(B) + beta·C.

#include "runtime/kernels/kernelutil.h"
#include "util/status.h"

#include <cstdint>

namespace opscope::kernels {

Status gemmF32(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float *a, std::int64_t lda, const float *b, std::int64_t ldb, float beta, float *c,
               std::int64_t ldc);

// numpy MatMul semantics: 1-D operands promoted, batch dims broadcast. aBatch/bBatch hold, per
// output batch, the batch index into each operand.
struct MatMulShape
{
    std::int64_t m = 0, n = 0, k = 0;
    Shape64 outShape;
    std::vector<std::int64_t> aBatch, bBatch;
};
Expected<MatMulShape> matMulShape(const KernelContext &ctx, Shape64 a, Shape64 b);

// The MatMul and Gemm kernels, which the fused kernels build on.
Status matMulKernel(KernelContext &ctx);
Status gemmKernel(KernelContext &ctx);

} // namespace opscope::kernels
