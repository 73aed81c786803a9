// MatMul (numpy semantics: 1-D promotion, batch broadcasting) and Gemm. Float32 goes through
// oneDNN's sgemm; other types use a plain loop.

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernelutil.h"
#include "runtime/kernels/wrapping.h"

#include <cmath>
#include <limits>
#include <oneapi/dnnl/dnnl.h>

namespace opscope {
namespace kernels {

Status gemmF32(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float *a, std::int64_t lda, const float *b, std::int64_t ldb, float beta, float *c,
               std::int64_t ldc)
{
    if (m == 0 || n == 0)
        return Status::ok();
    if (k == 0) {
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return Status::ok();
    }
    const dnnl_status_t st =
        dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (st != dnnl_success)
        return Status::internal("oneDNN sgemm failed (status " + std::to_string(int(st)) + ")");
    return Status::ok();
}

Expected<MatMulShape> matMulShape(const KernelContext &ctx, Shape64 as, Shape64 bs)
{
    if (as.empty() || bs.empty())
        return ctx.fail("MatMul inputs must be at least 1-D");
    const std::string shapes = shapeText(as) + " × " + shapeText(bs);
    const bool aVec = as.size() == 1, bVec = bs.size() == 1;
    if (aVec)
        as.insert(as.begin(), 1);
    if (bVec)
        bs.push_back(1);
    MatMulShape r;
    r.m = as[as.size() - 2];
    r.k = as.back();
    r.n = bs.back();
    if (bs[bs.size() - 2] != r.k)
        return ctx.fail("inner dimensions differ: " + shapes);
    const Shape64 aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
    const Expected<Broadcast> bc = Broadcast::of({&aBatch, &bBatch}, ctx);
    if (!bc)
        return bc.status();
    r.outShape = bc->outShape;
    if (!aVec)
        r.outShape.push_back(r.m);
    if (!bVec)
        r.outShape.push_back(r.n);
    if (bc->outShape.empty()) {
        r.aBatch = {0};
        r.bBatch = {0};
    } else {
        forEachBroadcast(*bc, [&](std::int64_t, const std::int64_t *i) {
            r.aBatch.push_back(i[0]);
            r.bBatch.push_back(i[1]);
        });
    }
    return r;
}

namespace {

// s·v for an integer v: exact and wrapping where s is a whole number (MatMul's 1, most Gemms');
// otherwise through double, a result outside the type giving its lowest value as x86's
// conversion does (a plain cast would be undefined).
template<class C>
C scaleInteger(double s, C v)
{
    if (s == std::trunc(s) && std::fabs(s) < 9.2e18)
        return wrapMul(static_cast<C>(static_cast<std::int64_t>(s)), v);
    const double r = s * double(v), hi = std::ldexp(1.0, std::numeric_limits<C>::digits);
    const double lo = std::is_signed_v<C> ? -hi : 0.0;
    return r >= lo && r < hi ? static_cast<C>(r) : std::numeric_limits<C>::lowest();
}

template<class T>
void gemmGeneric(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                 const T *a, std::int64_t lda, const T *b, std::int64_t ldb, double beta, T *c,
                 std::int64_t ldc)
{
    using C = ComputeType<T>;
    using Acc = std::conditional_t<isFloatLike<T>, double, C>;
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            Acc sum = 0;
            for (std::int64_t p = 0; p < k; ++p) {
                const C av = transA ? C(a[p * lda + i]) : C(a[i * lda + p]);
                const C bv = transB ? C(b[j * ldb + p]) : C(b[p * ldb + j]);
                sum = wrapAdd(sum, wrapMul(static_cast<Acc>(av), static_cast<Acc>(bv)));
            }
            if constexpr (kWraps<C>) {
                // Integers exactly, wrapping (through double, an int64 sum past 2^53 lost its low
                // bits, and a result outside the type was undefined).
                const C prev = beta == 0.0 ? C(0) : scaleInteger(beta, C(c[i * ldc + j]));
                c[i * ldc + j] = static_cast<T>(wrapAdd(scaleInteger(alpha, C(sum)), prev));
            } else {
                const double prev = beta == 0.0 ? 0.0 : beta * double(C(c[i * ldc + j]));
                c[i * ldc + j] = static_cast<T>(static_cast<C>(alpha * double(sum) + prev));
            }
        }
}

} // namespace

Status matMulKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &a = ctx.in(0), &b = ctx.in(1);
    if (a.dtype() != b.dtype())
        return ctx.fail("input types differ");
    const Expected<MatMulShape> mm = matMulShape(ctx, a.shape(), b.shape());
    if (!mm)
        return mm.status();
    const std::int64_t m = mm->m, n = mm->n, k = mm->k;
    const std::vector<std::int64_t> &aOff = mm->aBatch, &bOff = mm->bBatch;
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, a.dtype(), mm->outShape);
    if (!out)
        return out.status();
    const auto batchCount = static_cast<std::int64_t>(aOff.size());
    if (a.dtype() == DataType::Float) {
        const float *pa = a.data<float>(), *pb = b.data<float>();
        float *po = (*out)->mutableData<float>();
        for (std::int64_t i = 0; i < batchCount; ++i)
            OPSCOPE_TRY(gemmF32(false, false, m, n, k, 1.0f, pa + aOff[std::size_t(i)] * m * k, k,
                                pb + bOff[std::size_t(i)] * k * n, n, 0.0f, po + i * m * n, n));
        return Status::ok();
    }
    return dispatchNumeric(a.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
            return ctx.unsupported("MatMul on bool");
        } else {
            const T *pa = a.data<T>(), *pb = b.data<T>();
            T *po = (*out)->template mutableData<T>();
            for (std::int64_t i = 0; i < batchCount; ++i)
                gemmGeneric<T>(false, false, m, n, k, 1.0, pa + aOff[std::size_t(i)] * m * k, k,
                               pb + bOff[std::size_t(i)] * k * n, n, 0.0, po + i * m * n, n);
            return Status::ok();
        }
    });
}

Status gemmKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &a = ctx.in(0), &b = ctx.in(1);
    if (a.rank() != 2 || b.rank() != 2)
        return ctx.fail("Gemm inputs must be 2-D, got " + a.shapeText() + " and " + b.shapeText());
    const bool ta = ctx.attrInt("transA", 0) != 0, tb = ctx.attrInt("transB", 0) != 0;
    const float alpha = ctx.attrFloat("alpha", 1.0f), beta = ctx.attrFloat("beta", 1.0f);
    const std::int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
    const std::int64_t kb = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
    if (k != kb)
        return ctx.fail("inner dimensions differ: " + a.shapeText() + " × " + b.shapeText());
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, a.dtype(), {m, n});
    if (!out)
        return out.status();
    const RuntimeTensor *c = ctx.input(2);
    Broadcast cb;
    if (c) {
        const Shape64 target{m, n};
        const Expected<Broadcast> bc = Broadcast::of({&c->shape(), &target}, ctx);
        if (!bc)
            return bc.status();
        if (bc->outShape != target)
            return ctx.fail("C " + c->shapeText() + " does not broadcast to [" + std::to_string(m) + "," +
                            std::to_string(n) + "]");
        cb = *bc;
    }
    return dispatchNumeric(a.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
            return ctx.unsupported("Gemm on bool");
        } else {
            T *po = (*out)->template mutableData<T>();
            const bool useC = c && beta != 0.0f;
            if (useC) {
                const T *pc = c->data<T>();
                forEachBroadcast(cb, [&](std::int64_t o, const std::int64_t *i) { po[o] = pc[i[0]]; });
            }
            if constexpr (std::is_same_v<T, float>)
                return gemmF32(ta, tb, m, n, k, alpha, a.data<float>(), a.dim(1), b.data<float>(), b.dim(1),
                               useC ? beta : 0.0f, po, n);
            gemmGeneric<T>(ta, tb, m, n, k, alpha, a.data<T>(), a.dim(1), b.data<T>(), b.dim(1),
                           useC ? beta : 0.0, po, n);
            return Status::ok();
        }
    });
}

} // namespace kernels

void registerMatMulKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("MatMul", matMulKernel);
    r.add("Gemm", gemmKernel);
}

} // namespace opscope
