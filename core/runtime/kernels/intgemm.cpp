// Exact integer GEMM: oneDNN's u8s8s32 GEMM where it is exact (VNNI), on split weights where its
// kernels would saturate int16 pairs, plain int32 loops elsewhere. See intgemm.h.

#include "runtime/kernels/intgemm.h"

#include "runtime/kernels/kernelutil.h"
#include "util/cpuclones.h"

#include <atomic>
#include <oneapi/dnnl/dnnl.h>

namespace opscope::kernels {

namespace {

std::atomic<int> g_forced{-1};

bool hasIsa(dnnl_cpu_isa_t isa, dnnl_cpu_isa_t want)
{
    return (unsigned(isa) & unsigned(want)) == unsigned(want);
}

Int8GemmPath detectPath()
{
    const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    // Checked empirically for oneDNN 2.6 with worst-case operands (255 · 127 over k = 8192):
    // VNNI kernels are exact; the AVX2 / AVX-512 (no VNNI) kernels saturate unless split.
    if (hasIsa(isa, dnnl_cpu_isa_avx512_core_vnni) || hasIsa(isa, dnnl_cpu_isa_avx2_vnni))
        return Int8GemmPath::Vnni;
    if (isa == dnnl_cpu_isa_avx2 || isa == dnnl_cpu_isa_avx512_core)
        return Int8GemmPath::Split;
    return Int8GemmPath::Reference;
}

// uint32 arithmetic: int32 accumulators wrap like MLAS's instead of being undefined on overflow.
inline std::int32_t wrapAdd(std::int32_t a, std::int64_t b)
{
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

// One row of C = Σ_k (A[k] − a0)·B[k][·] in int32; k-outer order keeps the inner loop contiguous.
// Cloned for AVX2 and AVX-512 (vpmovsxbd + vpmulld), picked at run time.
OPSCOPE_CPU_CLONES
void referenceRightRow(std::int64_t n, std::int64_t k, const std::uint8_t *arow, std::int32_t a0,
                       const std::int8_t *b, std::int32_t b0, std::uint32_t *c)
{
    for (std::int64_t j = 0; j < n; ++j)
        c[j] = 0;
    for (std::int64_t p = 0; p < k; ++p) {
        const std::int32_t av = std::int32_t(arow[p]) - a0;
        if (av == 0)
            continue;
        const std::int8_t *brow = b + p * n;
        for (std::int64_t j = 0; j < n; ++j)
            c[j] += static_cast<std::uint32_t>(av * (std::int32_t(brow[j]) - b0));
    }
}

// One row of C = Σ_k w[k]·(X[k][·] − x0), w already w − w0.
OPSCOPE_CPU_CLONES
void referenceLeftRow(std::int64_t n, std::int64_t k, const std::int32_t *w, const std::int8_t *x,
                      std::int64_t ldx, std::int32_t x0, std::uint32_t *c)
{
    for (std::int64_t j = 0; j < n; ++j)
        c[j] = 0;
    for (std::int64_t p = 0; p < k; ++p) {
        const std::int32_t wv = w[p];
        if (wv == 0)
            continue;
        const std::int8_t *xrow = x + p * ldx;
        for (std::int64_t j = 0; j < n; ++j)
            c[j] += static_cast<std::uint32_t>(wv * (std::int32_t(xrow[j]) - x0));
    }
}

Status dnnlGemm(std::int64_t m, std::int64_t n, std::int64_t k, const std::uint8_t *a, std::int64_t lda,
                std::uint8_t a0, const std::int8_t *b, std::int64_t ldb, std::int8_t b0, std::int32_t *c,
                std::int64_t ldc)
{
    const std::int32_t zero = 0;
    const dnnl_status_t st =
        dnnl_gemm_u8s8s32('N', 'N', 'F', m, n, k, 1.0f, a, lda, a0, b, ldb, b0, 0.0f, c, ldc, &zero);
    return st == dnnl_success ? Status::ok() : Status::internal("oneDNN u8s8s32 GEMM failed");
}

// c += 64·high, both [m][n] (strides ldc and n).
void addHigh(std::int64_t m, std::int64_t n, const std::vector<std::int32_t> &high, std::int32_t *c,
             std::int64_t ldc)
{
    parallelFor(
        m,
        [&](std::int64_t i) {
            for (std::int64_t j = 0; j < n; ++j)
                c[i * ldc + j] = wrapAdd(c[i * ldc + j], std::int64_t(high[std::size_t(i * n + j)]) * 64);
        },
        std::max<std::int64_t>(1, 16384 / n));
}

// The path the weights can take: ones prepared before a forced change lack the split halves.
Int8GemmPath pathFor(bool hasSplit)
{
    const Int8GemmPath path = int8GemmPath();
    return path == Int8GemmPath::Split && !hasSplit ? Int8GemmPath::Reference : path;
}

bool oneZeroPoint(std::int64_t channels, const WeightZero &zeroPoint)
{
    for (std::int64_t o = 1; o < channels; ++o)
        if (zeroPoint(o) != zeroPoint(0))
            return false;
    return true;
}

// The per-channel shift s (see intgemm.h) of channel o over k values.
std::int32_t shiftOf(std::int64_t o, std::int64_t k, bool unsignedW, const WeightValue &value, std::int32_t z)
{
    for (std::int64_t p = 0; p < k; ++p) {
        const std::int32_t v = value(o, p) - z;
        if (v < -128 || v > 127)
            return unsignedW ? 128 : 0;
    }
    return z;
}

} // namespace

Int8GemmPath int8GemmPath()
{
    const int forced = g_forced.load(std::memory_order_relaxed);
    if (forced >= 0)
        return Int8GemmPath(forced);
    static const Int8GemmPath detected = detectPath();
    return detected;
}

void forceInt8GemmPath(std::optional<Int8GemmPath> path)
{
    g_forced.store(path ? int(*path) : -1, std::memory_order_relaxed);
}

const char *int8GemmPathName(Int8GemmPath path)
{
    switch (path) {
    case Int8GemmPath::Vnni:
        return "vnni";
    case Int8GemmPath::Split:
        return "split";
    case Int8GemmPath::Reference:
        break;
    }
    return "reference";
}

Int8LeftWeights prepareLeftWeights(std::int64_t m, std::int64_t k, bool unsignedW, const WeightValue &value,
                                   const WeightZero &zeroPoint)
{
    Int8LeftWeights w;
    w.m = m;
    w.k = k;
    w.w.resize(std::size_t(m * k));
    const std::int32_t toUnsigned = unsignedW ? 0 : 128;
    if (oneZeroPoint(m, zeroPoint)) {
        w.offset = zeroPoint(0) + toUnsigned;
        for (std::int64_t o = 0; o < m; ++o)
            for (std::int64_t p = 0; p < k; ++p)
                w.w[std::size_t(o * k + p)] = static_cast<std::uint8_t>(value(o, p) + toUnsigned);
    } else {
        std::vector<std::int32_t> d(std::size_t(m), 0);
        bool anyD = false;
        for (std::int64_t o = 0; o < m; ++o) {
            const std::int32_t z = zeroPoint(o), s = shiftOf(o, k, unsignedW, value, z);
            d[std::size_t(o)] = s - z;
            anyD = anyD || s != z;
            for (std::int64_t p = 0; p < k; ++p)
                w.w[std::size_t(o * k + p)] = static_cast<std::uint8_t>(value(o, p) - s + 128);
        }
        if (anyD)
            w.d = std::move(d);
    }
    if (int8GemmPath() == Int8GemmPath::Split) {
        w.hi.resize(w.w.size());
        w.lo.resize(w.w.size());
        for (std::size_t i = 0; i < w.w.size(); ++i) {
            w.hi[i] = static_cast<std::uint8_t>(w.w[i] >> 6);
            w.lo[i] = static_cast<std::uint8_t>(w.w[i] & 63);
        }
    }
    return w;
}

Status gemmLeftExact(const Int8LeftWeights &w, std::int64_t n, const std::int8_t *x, std::int64_t ldx,
                     std::int8_t xZero, std::int32_t *c, std::int64_t ldc)
{
    const std::int64_t m = w.m, k = w.k;
    if (m == 0 || n == 0)
        return Status::ok();
    const Int8GemmPath path = pathFor(!w.hi.empty());
    if (k == 0 || path == Int8GemmPath::Reference) {
        // Σ (w − w0)(x − x0) directly: w − offset + d = w − w0.
        parallelFor(
            m,
            [&](std::int64_t i) {
                std::vector<std::int32_t> row(static_cast<std::size_t>(k));
                const std::int32_t di = w.d.empty() ? 0 : w.d[std::size_t(i)];
                for (std::int64_t p = 0; p < k; ++p)
                    row[std::size_t(p)] = std::int32_t(w.w[std::size_t(i * k + p)]) - w.offset + di;
                referenceLeftRow(n, k, row.data(), x, ldx, xZero, reinterpret_cast<std::uint32_t *>(c + i * ldc));
            },
            1);
        return Status::ok();
    }
    if (path == Int8GemmPath::Vnni) {
        OPSCOPE_TRY(dnnlGemm(m, n, k, w.w.data(), k, std::uint8_t(w.offset), x, ldx, xZero, c, ldc));
    } else {
        // w − offset = 64·(hi − offset/64) + (lo − offset%64): two GEMMs with their own offsets.
        std::vector<std::int32_t> high(static_cast<std::size_t>(m * n));
        OPSCOPE_TRY(dnnlGemm(m, n, k, w.lo.data(), k, std::uint8_t(w.offset & 63), x, ldx, xZero, c, ldc));
        OPSCOPE_TRY(dnnlGemm(m, n, k, w.hi.data(), k, std::uint8_t(w.offset >> 6), x, ldx, xZero, high.data(), n));
        addHigh(m, n, high, c, ldc);
    }
    if (w.d.empty())
        return Status::ok();
    // + d[i]·Σ_k (x − x0) per column.
    // uint32 arithmetic wraps like the int32 accumulators; locals and __restrict let it vectorize
    // (int8 pointers may alias anything).
    std::vector<std::uint32_t> colSums(static_cast<std::size_t>(n), static_cast<std::uint32_t>(-std::int64_t(xZero) * k));
    std::uint32_t *__restrict sums = colSums.data();
    for (std::int64_t p = 0; p < k; ++p) {
        const std::int8_t *__restrict xrow = x + p * ldx;
        for (std::int64_t j = 0; j < n; ++j)
            sums[j] += static_cast<std::uint32_t>(std::int32_t(xrow[j]));
    }
    parallelFor(
        m,
        [&](std::int64_t i) {
            const auto di = static_cast<std::uint32_t>(w.d[std::size_t(i)]);
            auto *__restrict crow = reinterpret_cast<std::uint32_t *>(c + i * ldc);
            const std::uint32_t *__restrict s = colSums.data();
            if (di != 0)
                for (std::int64_t j = 0; j < n; ++j)
                    crow[j] += di * s[j];
        },
        1);
    return Status::ok();
}

Int8RightWeights prepareRightWeights(std::int64_t k, std::int64_t n, bool unsignedW, const WeightValue &value,
                                     const WeightZero &zeroPoint)
{
    Int8RightWeights w;
    w.k = k;
    w.n = n;
    w.w.resize(std::size_t(k * n));
    w.colSum.assign(std::size_t(n), 0);
    const std::int32_t toSigned = unsignedW ? 128 : 0;
    const bool one = oneZeroPoint(n, zeroPoint);
    std::vector<std::int32_t> d(std::size_t(n), 0);
    bool anyD = false;
    if (one)
        w.offset = zeroPoint(0) - toSigned;
    for (std::int64_t j = 0; j < n; ++j) {
        const std::int32_t z = zeroPoint(j), s = one ? toSigned : shiftOf(j, k, unsignedW, value, z);
        if (!one) {
            d[std::size_t(j)] = s - z;
            anyD = anyD || s != z;
        }
        for (std::int64_t p = 0; p < k; ++p) {
            const std::int32_t v = value(j, p) - s;
            w.w[std::size_t(p * n + j)] = static_cast<std::int8_t>(v);
            w.colSum[std::size_t(j)] += v - w.offset;
        }
    }
    if (anyD)
        w.d = std::move(d);
    if (int8GemmPath() == Int8GemmPath::Split) {
        w.hi.resize(w.w.size());
        w.lo.resize(w.w.size());
        for (std::size_t i = 0; i < w.w.size(); ++i) {
            const int hi = (int(w.w[i]) + 32) >> 6; // the nearest multiple of 64: |hi| ≤ 2
            w.hi[i] = static_cast<std::int8_t>(hi);
            w.lo[i] = static_cast<std::int8_t>(int(w.w[i]) - 64 * hi); // −32 ≤ lo ≤ 31
        }
    }
    return w;
}

Status gemmRightExact(std::int64_t m, const std::uint8_t *a, std::int64_t lda, std::uint8_t a0,
                      const std::int32_t *rowZero, const Int8RightWeights &w, std::int32_t *c, std::int64_t ldc)
{
    const std::int64_t n = w.n, k = w.k;
    if (m == 0 || n == 0)
        return Status::ok();
    const Int8GemmPath path = pathFor(!w.hi.empty());
    // The GEMMs take one zero point; per-row ones come back below through the column sums.
    const std::uint8_t ao = rowZero ? 0 : a0;
    if (k == 0 || path == Int8GemmPath::Reference) {
        parallelFor(
            m,
            [&](std::int64_t i) {
                referenceRightRow(n, k, a + i * lda, rowZero ? rowZero[i] : a0, w.w.data(), w.offset,
                                  reinterpret_cast<std::uint32_t *>(c + i * ldc));
            },
            std::max<std::int64_t>(1, 65536 / std::max<std::int64_t>(n * k, 1)));
    } else if (path == Int8GemmPath::Vnni) {
        OPSCOPE_TRY(dnnlGemm(m, n, k, a, lda, ao, w.w.data(), n, std::int8_t(w.offset), c, ldc));
    } else {
        // w − offset = 64·(hi − h0) + (lo − l0) with offset = 64·h0 + l0 split like w.
        const int h0 = (w.offset + 32) >> 6, l0 = w.offset - 64 * h0;
        std::vector<std::int32_t> high(static_cast<std::size_t>(m * n));
        OPSCOPE_TRY(dnnlGemm(m, n, k, a, lda, ao, w.lo.data(), n, std::int8_t(l0), c, ldc));
        OPSCOPE_TRY(dnnlGemm(m, n, k, a, lda, ao, w.hi.data(), n, std::int8_t(h0), high.data(), n));
        addHigh(m, n, high, c, ldc);
    }
    const bool perRowFix = rowZero && k > 0 && path != Int8GemmPath::Reference;
    if (w.d.empty() && !perRowFix)
        return Status::ok();
    // + d[j]·Σ_k (A − a0ᵢ) − a0ᵢ·Σ_k (w − offset) where the GEMM ran with a0 = 0.
    parallelFor(
        m,
        [&](std::int64_t i) {
            const std::int32_t z = rowZero ? rowZero[i] : a0;
            std::int64_t rowSum = -std::int64_t(z) * k;
            for (std::int64_t p = 0; p < k; ++p)
                rowSum += a[i * lda + p];
            std::int32_t *crow = c + i * ldc;
            for (std::int64_t j = 0; j < n; ++j) {
                std::int64_t add = w.d.empty() ? 0 : std::int64_t(w.d[std::size_t(j)]) * rowSum;
                if (perRowFix)
                    add -= std::int64_t(z) * w.colSum[std::size_t(j)];
                crow[j] = wrapAdd(crow[j], add);
            }
        },
        std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(n + k, 1)));
    return Status::ok();
}

} // namespace opscope::kernels
