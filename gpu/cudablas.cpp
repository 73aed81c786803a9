// MatMul and Gemm on cuBLAS. Row-major tensors are column-major transposes, so C = A·B is
// computed as Cᵀ = Bᵀ·Aᵀ: cuBLAS gets B first and no data moves. float32 runs in float32 (no
// TF32 unless the backend allows it); float16/bfloat16 accumulate in float32.

#include "cudaexec.h"

#include <algorithm>

namespace opscope::gpu {
namespace {

cudaDataType_t blasType(DataType t)
{
    switch (t) {
    case DataType::Float16: return CUDA_R_16F;
    case DataType::BFloat16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
    }
}

// C[b] = alpha·op(A[b])·op(B[b]) + beta·C[b] with row-major A [M,K] (or [K,M] transposed), B [K,N]
// (or [N,K]), C [M,N]; batch strides in elements (0: shared).
Status gemmBatched(CudaExec &e, DataType t, bool transA, bool transB, std::int64_t m, std::int64_t n,
                   std::int64_t k, float alpha, const void *a, std::int64_t strideA, const void *b,
                   std::int64_t strideB, float beta, void *c, std::int64_t batch)
{
    if (m == 0 || n == 0 || batch == 0)
        return Status::ok();
    const std::int64_t limit = 2147483647;
    if (m > limit || n > limit || k > limit || batch > limit)
        return Status::unsupported("a matrix product beyond cuBLAS's 32-bit dimensions");
    const cublasComputeType_t compute =
        t == DataType::Float && e.allowTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const cudaDataType_t type = blasType(t);
    const int lda = int(transA ? m : k), ldb = int(transB ? k : n), ldc = int(n);
    return cublasCheck(cublasGemmStridedBatchedEx(e.blas, transB ? CUBLAS_OP_T : CUBLAS_OP_N,
                                                  transA ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m), int(k), &alpha, b,
                                                  type, ldb, strideB, a, type, lda, strideA, &beta, c, type, ldc, m * n,
                                                  int(batch), compute, CUBLAS_GEMM_DEFAULT),
                       "cuBLAS GEMM");
}

// How a MatMul's batch dims map onto one strided-batched call, when they do.
struct MatMulShape
{
    std::int64_t m = 1, n = 1, k = 1, batch = 1;
    std::int64_t strideA = 0, strideB = 0;
    std::vector<std::int64_t> out;
};

std::optional<MatMulShape> matMulShape(const std::vector<std::int64_t> &a0, const std::vector<std::int64_t> &b0)
{
    if (a0.empty() || b0.empty())
        return std::nullopt;
    std::vector<std::int64_t> a = a0, b = b0;
    const bool aVec = a.size() == 1, bVec = b.size() == 1;
    if (aVec)
        a.insert(a.begin(), 1);
    if (bVec)
        b.push_back(1);
    MatMulShape s;
    s.m = a[a.size() - 2];
    s.k = a.back();
    s.n = b.back();
    if (b[b.size() - 2] != s.k)
        return std::nullopt;
    const std::vector<std::int64_t> batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
    std::vector<std::int64_t> batch;
    if (!broadcastShape({batchA, batchB}, batch))
        return std::nullopt;
    std::int64_t countA = 1, countB = 1, count = 1;
    for (std::int64_t d : batchA)
        countA *= d;
    for (std::int64_t d : batchB)
        countB *= d;
    for (std::int64_t d : batch)
        count *= d;
    if (countB == 1) {
        // B shared: fold A's batch into M (A is contiguous), one GEMM.
        s.m *= countA;
        s.batch = 1;
        if (countA != count)
            return std::nullopt;
    } else if (countA == 1) {
        s.batch = count;
        s.strideA = 0;
        s.strideB = s.k * s.n;
        if (countB != count)
            return std::nullopt;
    } else if (countA == count && countB == count) {
        // Both full: same batch dims after padding with ones? Only when neither broadcasts.
        std::vector<std::int64_t> pa(batch.size() - batchA.size(), 1), pb(batch.size() - batchB.size(), 1);
        pa.insert(pa.end(), batchA.begin(), batchA.end());
        pb.insert(pb.end(), batchB.begin(), batchB.end());
        if (pa != batch || pb != batch)
            return std::nullopt;
        s.batch = count;
        s.strideA = s.m * s.k;
        s.strideB = s.k * s.n;
    } else {
        return std::nullopt; // partial broadcast ([2,1,M,K]·[1,3,K,N]): the host's
    }
    s.out = batch;
    if (!aVec)
        s.out.push_back(a[a.size() - 2]);
    if (!bVec)
        s.out.push_back(s.n);
    return s;
}

bool matMulAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *a = ctx.input(0), *b = ctx.input(1);
    return a && b && isFloatType(a->dtype()) && a->dtype() == b->dtype() && matMulShape(a->shape(), b->shape());
}

Status matMulKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> a = e.input(ctx, 0), b = e.input(ctx, 1);
    if (!a || !b)
        return !a ? a.status() : b.status();
    const std::optional<MatMulShape> s = matMulShape(a->shape(), b->shape());
    if (!s)
        return ctx.fail("shapes " + a->shapeText() + " and " + b->shapeText() + " do not multiply");
    Expected<RuntimeTensor> y = e.allocate(a->dtype(), s->out);
    if (!y)
        return y.status();
    if (s->k == 0) {
        OPSCOPE_TRY(cudaCheck(cudaMemsetAsync(y->mutableBytes(), 0, y->byteSize(), e.stream), "MatMul"));
    } else {
        OPSCOPE_TRY(gemmBatched(e, a->dtype(), false, false, s->m, s->n, s->k, 1.0f, a->bytes(), s->strideA, b->bytes(),
                                s->strideB, 0.0f, y->mutableBytes(), s->batch));
    }
    ctx.setOutput(0, std::move(*y));
    return Status::ok();
}

bool gemmAccepts(const KernelContext &ctx)
{
    const RuntimeTensor *a = ctx.input(0), *b = ctx.input(1), *c = ctx.input(2);
    if (!a || !b || !isFloatType(a->dtype()) || a->dtype() != b->dtype() || a->rank() != 2 || b->rank() != 2)
        return false;
    // An empty inner dimension leaves beta·C, which the GEMM would not scale: the host does it.
    const std::int64_t k = ctx.attrInt("transA", 0) != 0 ? a->dim(0) : a->dim(1);
    if (k == 0 && c && ctx.attrFloat("beta", 1.0f) != 0.0f)
        return false;
    return !c || c->dtype() == a->dtype();
}

Status gemmKernel(CudaExec &e, KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> a = e.input(ctx, 0), b = e.input(ctx, 1);
    if (!a || !b)
        return !a ? a.status() : b.status();
    const bool transA = ctx.attrInt("transA", 0) != 0, transB = ctx.attrInt("transB", 0) != 0;
    const float alpha = ctx.attrFloat("alpha", 1.0f), beta = ctx.attrFloat("beta", 1.0f);
    const std::int64_t m = transA ? a->dim(1) : a->dim(0), k = transA ? a->dim(0) : a->dim(1);
    const std::int64_t kb = transB ? b->dim(1) : b->dim(0), n = transB ? b->dim(0) : b->dim(1);
    if (k != kb)
        return ctx.fail("A " + a->shapeText() + " and B " + b->shapeText() + " do not multiply");
    Expected<RuntimeTensor> y = e.allocate(a->dtype(), {m, n});
    if (!y)
        return y.status();
    // An empty product leaves beta·C, which the GEMM would not scale: the host's (accepts says
    // so too); refused before any work is queued.
    if (k == 0 && ctx.input(2) && beta != 0.0f)
        return ctx.unsupported("an empty product plus beta·C");
    float betaUsed = 0.0f;
    if (ctx.input(2) && beta != 0.0f) {
        // C broadcast into the output first; the GEMM adds onto it with beta.
        Expected<RuntimeTensor> c = e.input(ctx, 2);
        if (!c)
            return c.status();
        std::vector<std::int64_t> out;
        std::vector<IndexMap> maps;
        if (!broadcastShape({c->shape(), {m, n}}, out) || out != std::vector<std::int64_t>{m, n} ||
            !broadcastMaps(out, {c->shape()}, maps))
            return ctx.fail("C " + c->shapeText() + " does not broadcast to [" + std::to_string(m) + "," +
                            std::to_string(n) + "]");
        OPSCOPE_TRY(cudaCheck(launchGatherMap(dataTypeSize(c->dtype()), c->bytes(), maps[0], y->mutableBytes(), m * n,
                                              e.stream),
                              "Gemm's C"));
        betaUsed = beta;
    }
    if (k == 0)
        OPSCOPE_TRY(cudaCheck(cudaMemsetAsync(y->mutableBytes(), 0, y->byteSize(), e.stream), "Gemm"));
    else
        OPSCOPE_TRY(gemmBatched(e, a->dtype(), transA, transB, m, n, k, alpha, a->bytes(), 0, b->bytes(), 0, betaUsed,
                                y->mutableBytes(), 1));
    ctx.setOutput(0, std::move(*y));
    return Status::ok();
}

} // namespace

void registerCudaBlasOps(CudaOpTable &t)
{
    t.add("MatMul", {matMulKernel, matMulAccepts});
    t.add("Gemm", {gemmKernel, gemmAccepts});
}

} // namespace opscope::gpu
