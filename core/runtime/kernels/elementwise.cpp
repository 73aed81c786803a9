// Elementwise math with multidirectional broadcasting: arithmetic, comparison, logic, bit
// shifts, variadic Sum/Mean/Max/Min, Where, and unary math functions.

#include "runtime/kernels/dnnleltwise.h"
#include "runtime/kernels/elementwise.h"
#include "runtime/kernels/wrapping.h"
#include "util/cpuclones.h"

#include <algorithm>
#include <atomic>
#include <limits>

namespace opscope {
namespace kernels {
namespace {

Status sameType(const KernelContext &ctx, const RuntimeTensor &a, const RuntimeTensor &b)
{
    if (a.dtype() != b.dtype())
        return ctx.fail("input types differ: " + std::string(dataTypeName(a.dtype())) + " and " +
                        std::string(dataTypeName(b.dtype())));
    return Status::ok();
}

enum class Arith
{
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min
};

template<class T>
T arith(Arith k, T x, T y)
{
    using C = ComputeType<T>;
    const C a = x, b = y;
    switch (k) {
    case Arith::Add: return static_cast<T>(wrapAdd<C>(a, b));
    case Arith::Sub: return static_cast<T>(wrapSub<C>(a, b));
    case Arith::Mul: return static_cast<T>(wrapMul<C>(a, b));
    case Arith::Div:
        if constexpr (!isFloatLike<T>) {
            if (b == 0)
                return T{}; // integer division by zero is defined as 0 here rather than a crash
            if constexpr (std::is_signed_v<C>) {
                // MIN / -1 overflows (SIGFPE on x86); the two's-complement result wraps to MIN.
                if (b == -1)
                    return static_cast<T>(static_cast<std::make_unsigned_t<C>>(0) -
                                          static_cast<std::make_unsigned_t<C>>(a));
            }
        }
        return static_cast<T>(static_cast<C>(a / b));
    case Arith::Max:
    case Arith::Min:
        if constexpr (isFloatLike<T>) {
            if (std::isnan(a) || std::isnan(b))
                return static_cast<T>(std::numeric_limits<C>::quiet_NaN());
        }
        return static_cast<T>(k == Arith::Max ? std::max(a, b) : std::min(a, b));
    }
    return T{};
}

// The op is a template parameter so the inner loops compile to straight (vectorizable) code.
template<Arith K>
Expected<RuntimeTensor> arithApply(KernelContext &ctx, const RuntimeTensor &a, const RuntimeTensor &b, int output = -1)
{
    OPSCOPE_TRY(sameType(ctx, a, b));
    Expected<RuntimeTensor> result = Status::internal("unset");
    const Status st = dispatchNumeric(a.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
            return ctx.unsupported("arithmetic on bool");
        } else {
            result = binaryApply<T, T, T>(ctx, a, b, a.dtype(), [](T x, T y) { return arith(K, x, y); }, output);
            return result.status();
        }
    });
    if (!st.isOk())
        return st;
    return result;
}

template<Arith K>
Status arithKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    Expected<RuntimeTensor> r = arithApply<K>(ctx, ctx.in(0), ctx.in(1), 0);
    if (!r)
        return r.status();
    ctx.setOutput(0, std::move(*r));
    return Status::ok();
}

// Sum, Mean, Max, Min over any number of inputs, folding pairwise with broadcasting.
template<Arith K, bool IsMean = false>
Status variadicKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(std::max<std::size_t>(1, ctx.inputCount()))); // none may be omitted
    RuntimeTensor acc = ctx.in(0);
    for (std::size_t i = 1; i < ctx.inputCount(); ++i) {
        Expected<RuntimeTensor> r = arithApply<K>(ctx, acc, ctx.in(i));
        if (!r)
            return r.status();
        acc = std::move(*r);
    }
    if constexpr (IsMean) {
        const auto count = static_cast<double>(ctx.inputCount());
        OPSCOPE_TRY(dispatchFloat(acc.dtype(), [&](auto tag) -> Status {
            using T = decltype(tag);
            Expected<RuntimeTensor> out = RuntimeTensor::allocate(acc.dtype(), acc.shape());
            if (!out)
                return out.status();
            for (std::int64_t j = 0; j < acc.elementCount(); ++j)
                out->mutableData<T>()[j] =
                    static_cast<T>(static_cast<float>(acc.data<T>()[j]) / static_cast<float>(count));
            acc = std::move(*out);
            return Status::ok();
        }));
    }
    ctx.setOutput(0, std::move(acc));
    return Status::ok();
}

Status powKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &a = ctx.in(0), &b = ctx.in(1);
    // Common constant exponents avoid libm's pow (x² in every decomposed LayerNorm).
    if (a.dtype() == DataType::Float && b.elementCount() == 1) {
        const double e = b.valueAsDouble(0);
        if (e == 2.0 || e == 1.0 || e == 0.5 || e == 3.0) {
            Expected<RuntimeTensor *> out = ctx.allocateOutput(0, a.dtype(), a.shape());
            if (!out)
                return out.status();
            const float *x = a.data<float>();
            float *y = (*out)->mutableData<float>();
            const std::int64_t n = a.elementCount();
            if (e == 2.0)
                parallelFor(n, [&](std::int64_t i) { y[i] = x[i] * x[i]; });
            else if (e == 3.0)
                parallelFor(n, [&](std::int64_t i) { y[i] = x[i] * x[i] * x[i]; });
            else if (e == 0.5)
                parallelFor(n, [&](std::int64_t i) { y[i] = std::sqrt(x[i]); });
            else
                parallelFor(n, [&](std::int64_t i) { y[i] = x[i]; });
            return Status::ok();
        }
    }
    return dispatchNumeric(a.dtype(), [&](auto ta) -> Status {
        using A = decltype(ta);
        return dispatchNumeric(b.dtype(), [&](auto tb) -> Status {
            using B = decltype(tb);
            if constexpr (std::is_same_v<A, bool> || std::is_same_v<B, bool>) {
                return ctx.unsupported("Pow on bool");
            } else {
                return binaryKernel<A, B, A>(ctx, a, b, a.dtype(), [](A x, B y) {
                    const double base = static_cast<double>(static_cast<ComputeType<A>>(x));
                    const double ex = static_cast<double>(static_cast<ComputeType<B>>(y));
                    if constexpr (isFloatLike<A>)
                        return static_cast<A>(static_cast<ComputeType<A>>(std::pow(base, ex)));
                    else
                        return static_cast<A>(std::llround(std::pow(base, ex)));
                });
            }
        });
    });
}

Status modKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &a = ctx.in(0), &b = ctx.in(1);
    OPSCOPE_TRY(sameType(ctx, a, b));
    const bool fmod = ctx.attrInt("fmod", 0) != 0;
    return dispatchNumeric(a.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
            return ctx.unsupported("Mod on bool");
        } else if constexpr (isFloatLike<T>) {
            if (!fmod)
                return ctx.fail("Mod on floating-point inputs requires fmod=1");
            return binaryKernel<T, T, T>(ctx, a, b, a.dtype(), [](T x, T y) {
                return static_cast<T>(
                    std::fmod(static_cast<ComputeType<T>>(x), static_cast<ComputeType<T>>(y)));
            });
        } else {
            return binaryKernel<T, T, T>(ctx, a, b, a.dtype(), [fmod](T x, T y) -> T {
                if (y == 0)
                    return T{};
                if constexpr (std::is_signed_v<T>) {
                    if (y == -1) // MIN % -1 traps on x86; every x % -1 is 0
                        return T{};
                }
                T r = static_cast<T>(x % y);
                if constexpr (std::is_signed_v<T>) {
                    if (!fmod && r != 0 && ((r < 0) != (y < 0))) // Python semantics: sign of the divisor
                        r = static_cast<T>(r + y);
                }
                return r;
            });
        }
    });
}

enum class Cmp
{
    Equal,
    Greater,
    GreaterOrEqual,
    Less,
    LessOrEqual
};

template<Cmp K>
Status compareKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &a = ctx.in(0), &b = ctx.in(1);
    OPSCOPE_TRY(sameType(ctx, a, b));
    if (a.dtype() == DataType::String) {
        if (K != Cmp::Equal)
            return ctx.unsupported("ordering comparison of strings");
        const Expected<Broadcast> bc = Broadcast::of({&a.shape(), &b.shape()}, ctx);
        if (!bc)
            return bc.status();
        Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Bool, bc->outShape);
        if (!out)
            return out.status();
        auto *po = (*out)->mutableData<bool>();
        forEachBroadcast(*bc, [&](std::int64_t o, const std::int64_t *idx) {
            po[o] = a.strings()[std::size_t(idx[0])] == b.strings()[std::size_t(idx[1])];
        });
        return Status::ok();
    }
    return dispatchNumeric(a.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        return binaryKernel<T, T, bool>(ctx, a, b, DataType::Bool, [](T x, T y) {
            const C p = x, q = y;
            switch (K) {
            case Cmp::Equal: return p == q;
            case Cmp::Greater: return p > q;
            case Cmp::GreaterOrEqual: return p >= q;
            case Cmp::Less: return p < q;
            case Cmp::LessOrEqual: return p <= q;
            }
            return false;
        });
    });
}

enum class Logic
{
    And,
    Or,
    Xor
};

template<Logic K>
Status logicKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &a = ctx.in(0), &b = ctx.in(1);
    if (a.dtype() != DataType::Bool || b.dtype() != DataType::Bool)
        return ctx.fail("inputs must be bool");
    return binaryKernel<bool, bool, bool>(ctx, a, b, DataType::Bool, [](bool x, bool y) {
        return K == Logic::And ? (x && y) : K == Logic::Or ? (x || y) : (x != y);
    });
}

Status bitShiftKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &a = ctx.in(0), &b = ctx.in(1);
    OPSCOPE_TRY(sameType(ctx, a, b));
    const bool left = ctx.attrString("direction") == "LEFT";
    return dispatchAll(a.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (!std::is_unsigned_v<T> || std::is_same_v<T, bool>) {
            return ctx.fail("BitShift needs unsigned integers");
        } else {
            return binaryKernel<T, T, T>(ctx, a, b, a.dtype(), [left](T x, T y) -> T {
                if (y >= sizeof(T) * 8)
                    return T{};
                return static_cast<T>(left ? x << y : x >> y);
            });
        }
    });
}

Status whereKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    const RuntimeTensor &c = ctx.in(0), &x = ctx.in(1), &y = ctx.in(2);
    if (c.dtype() != DataType::Bool)
        return ctx.fail("condition must be bool");
    OPSCOPE_TRY(sameType(ctx, x, y));
    const Expected<Broadcast> bc = Broadcast::of({&c.shape(), &x.shape(), &y.shape()}, ctx);
    if (!bc)
        return bc.status();
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, x.dtype(), bc->outShape);
    if (!out)
        return out.status();
    if (x.dtype() == DataType::String) {
        auto &po = (*out)->mutableStrings();
        forEachBroadcast(*bc, [&](std::int64_t o, const std::int64_t *i) {
            po[std::size_t(o)] =
                c.data<std::uint8_t>()[i[0]] != 0 ? x.strings()[std::size_t(i[1])] : y.strings()[std::size_t(i[2])];
        });
        return Status::ok();
    }
    // Rows of the coalesced broadcast, each input read with stride 1 or 0 along a row (an
    // attention mask [1,1,1,L] against scores [1,H,L,L]): per-element index arithmetic made
    // Where 3.6x ONNX Runtime. Long single rows are cut into chunks so they still parallelize.
    const BroadcastRows br = BroadcastRows::of(*bc);
    const std::int64_t chunk = br.rows == 1 ? std::min<std::int64_t>(br.rowLength, 16384) : br.rowLength;
    const std::int64_t perRow = chunk == 0 ? 1 : (br.rowLength + chunk - 1) / chunk;
    const std::int64_t pieces = chunk == 0 ? 0 : br.rows * perRow;
    return dispatchBySize(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        T *po = (*out)->template mutableData<T>();
        // Bools are read as bytes: the schema check guarantees a bool tensor, and a byte other
        // than 0/1 (never made by opscope, but bytes are bytes) selects like any non-zero.
        const std::uint8_t *pc = c.data<std::uint8_t>();
        const T *px = x.data<T>(), *py = y.data<T>();
        parallelFor(
            pieces,
            [&](std::int64_t piece) {
                const std::int64_t row = piece / perRow, begin = (piece % perRow) * chunk;
                const std::int64_t len = std::min(chunk, br.rowLength - begin);
                const std::int64_t sc = br.innerStride[0], sx = br.innerStride[1], sy = br.innerStride[2];
                const std::uint8_t *rc = pc + br.offset(row, 0) + sc * begin;
                const T *rx = px + br.offset(row, 1) + sx * begin, *ry = py + br.offset(row, 2) + sy * begin;
                T *o = po + row * br.rowLength + begin;
                if (sc && sx && sy) {
                    for (std::int64_t j = 0; j < len; ++j)
                        o[j] = rc[j] != 0 ? rx[j] : ry[j];
                } else if (sc && sx) {
                    const T vy = ry[0];
                    for (std::int64_t j = 0; j < len; ++j)
                        o[j] = rc[j] != 0 ? rx[j] : vy;
                } else if (sc && sy) {
                    const T vx = rx[0];
                    for (std::int64_t j = 0; j < len; ++j)
                        o[j] = rc[j] != 0 ? vx : ry[j];
                } else {
                    for (std::int64_t j = 0; j < len; ++j)
                        o[j] = rc[j * sc] != 0 ? rx[j * sx] : ry[j * sy];
                }
            },
            (*out)->elementCount() < 32768 ? pieces + 1 : 1);
        return Status::ok();
    });
}

// ---- unary --------------------------------------------------------------------------------------

#define OPSCOPE_UNARY_FLOAT(Name, expr)                                                                      \
    Status Name##Kernel(KernelContext &ctx)                                                                  \
    {                                                                                                        \
        return unaryFloat(ctx, [](auto x) { return expr; });                                                 \
    }

OPSCOPE_UNARY_FLOAT(sqrt, std::sqrt(x))
Status expKernel(KernelContext &ctx)
{
    if (Status st; fastEltwise(ctx, FastEltwise::Exp, 0.0f, &st))
        return st;
    return unaryFloat(ctx, [](auto x) { return std::exp(x); });
}
OPSCOPE_UNARY_FLOAT(reciprocal, decltype(x)(1) / x)
OPSCOPE_UNARY_FLOAT(sin, std::sin(x))
OPSCOPE_UNARY_FLOAT(cos, std::cos(x))
OPSCOPE_UNARY_FLOAT(tan, std::tan(x))
OPSCOPE_UNARY_FLOAT(asin, std::asin(x))
OPSCOPE_UNARY_FLOAT(acos, std::acos(x))
OPSCOPE_UNARY_FLOAT(atan, std::atan(x))
OPSCOPE_UNARY_FLOAT(sinh, std::sinh(x))
OPSCOPE_UNARY_FLOAT(cosh, std::cosh(x))
OPSCOPE_UNARY_FLOAT(asinh, std::asinh(x))
OPSCOPE_UNARY_FLOAT(acosh, std::acosh(x))
OPSCOPE_UNARY_FLOAT(atanh, std::atanh(x))
// erf of float32 blocks without a libm call per element (scalar std::erf was 4.4x ONNX Runtime):
// below 0.5 its odd Taylor series to x^11 (truncation < 2e-8 relative), above it Abramowitz &
// Stegun 7.1.26, 1 - p(t)·exp(-x²) with t = 1/(1 + 0.3275911·|x|) (absolute error < 1.5e-7, so
// < 3e-7 relative where it is used), exp(-x²) from expApproxF32. Straight-line arithmetic the
// compiler vectorizes; a oneDNN exp call per 1024-value block cost more than the block (2.6x ORT
// on an AVX2 machine).
OPSCOPE_CPU_CLONES void erfBlockF32(const float *x, float *y, std::int64_t n)
{
    constexpr float twoOverSqrtPi = 1.1283791670955126f;
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = x[i], a = std::fabs(v), s = v * v;
        const float series =
            twoOverSqrtPi * v *
            (1.0f + s * (-1.0f / 3 + s * (1.0f / 10 + s * (-1.0f / 42 + s * (1.0f / 216 + s * (-1.0f / 1320))))));
        const float t = 1.0f / (1.0f + 0.3275911f * a);
        const float poly =
            t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
        const float tail = std::copysign(1.0f - poly * expApproxF32(-s), v);
        y[i] = v != v ? v : a < 0.5f ? series : tail;
    }
}

// tanh of float32 the same way (oneDNN's tanh is a slow polynomial on AVX2, 3.9x ORT): below
// 0.55 the odd Taylor series to x^17 (truncation < 1e-8 relative), above it (1 - e)/(1 + e) with
// e = exp(-2|x|) <= 0.33, where 1 - e has no cancellation.
OPSCOPE_CPU_CLONES void tanhBlockF32(const float *x, float *y, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = x[i], a = std::fabs(v), s = v * v;
        const float series =
            v * (1.0f + s * (-1.0f / 3 + s * (2.0f / 15 + s * (-17.0f / 315 + s * (62.0f / 2835 +
                 s * (-1382.0f / 155925 + s * (21844.0f / 6081075 + s * (-929569.0f / 638512875 +
                 s * (6404582.0f / 10854718875.0f)))))))));
        const float e = expApproxF32(-2.0f * a);
        const float tail = std::copysign((1.0f - e) / (1.0f + e), v);
        y[i] = v != v ? v : a < 0.55f ? series : tail;
    }
}

// 1 / (1 + e^−x) the same way, from e = e^−|x|, which never overflows: 1 / (1 + e) for x ≥ 0 and
// e / (1 + e) below, which keeps its relative accuracy far into the negative tail (1 − r would
// round to 0 there). Below −87.3 it gives ~1e-38 instead of a subnormal (expApproxF32's clamp).
OPSCOPE_CPU_CLONES void sigmoidBlockF32(const float *x, float *y, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        const float e = expApproxF32(-std::fabs(v));
        const float r = 1.0f / (1.0f + e);
        const float s = v >= 0.0f ? r : e * r;
        y[i] = v != v ? v : s;
    }
}

// GELU's tanh form, 0.5·x·(1 + tanh(u)) with u = √(2/π)·(x + 0.044715·x³), as ONNX and ONNX
// Runtime compute it, through tanhBlockF32 (oneDNN's gelu_tanh on AVX2 was 4x ORT). Three passes
// over a block of at most 4096 values, which stays in L1; written as one loop of x / (1 + e^−2u)
// it ran at half this speed.
OPSCOPE_CPU_CLONES void geluTanhArgF32(const float *x, float *u, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i)
        u[i] = 0.7978845608028654f * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
}

OPSCOPE_CPU_CLONES void geluTanhFinishF32(const float *x, const float *t, float *y, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i) // y may be x: each x[i] is read before y[i] is written
        y[i] = 0.5f * x[i] * (1.0f + t[i]);
}

void geluTanhBlockImpl(const float *x, float *y, std::int64_t n)
{
    float u[4096];
    for (std::int64_t i0 = 0; i0 < n; i0 += 4096) {
        const std::int64_t m = std::min<std::int64_t>(4096, n - i0);
        geluTanhArgF32(x + i0, u, m);
        tanhBlockF32(u, u, m);
        geluTanhFinishF32(x + i0, u, y + i0, m);
    }
}

// log of float32 in straight-line arithmetic (glibc's logf is a call per element, 1.7x ONNX
// Runtime's vectorized log): x = m·2^e with m in [√½, √2), log(1 + f) for f = m − 1 by Cephes'
// degree-9 polynomial (< 2e-7 relative), e·ln2 added in two parts so that log(x) near 1 keeps
// its relative accuracy. Subnormals are scaled by 2^23 first. Negative → NaN, ±0 → −∞, +∞ → +∞,
// NaN kept — as std::log, without its error path (negative inputs went through glibc's
// __math_invalidf, a quarter of the time on normally distributed input).
OPSCOPE_CPU_CLONES void logBlockF32(const float *x, float *y, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        const bool subnormal = v < 1.17549435e-38f;
        const float scaled = subnormal ? v * 8388608.0f : v;
        const std::int32_t bits = std::bit_cast<std::int32_t>(scaled);
        // scaled = m · 2^e with m in [0.5, 1) (garbage for the special values, selected away).
        float e = float(((bits >> 23) & 0xff) - 126) - (subnormal ? 23.0f : 0.0f);
        float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);
        const bool low = m < 0.707106781186547524f;
        e = low ? e - 1.0f : e;
        const float f = low ? m + m - 1.0f : m - 1.0f;
        const float z = f * f;
        float p = 7.0376836292e-2f;
        p = p * f - 1.1514610310e-1f;
        p = p * f + 1.1676998740e-1f;
        p = p * f - 1.2420140846e-1f;
        p = p * f + 1.4249322787e-1f;
        p = p * f - 1.6668057665e-1f;
        p = p * f + 2.0000714765e-1f;
        p = p * f - 2.4999993993e-1f;
        p = p * f + 3.3333331174e-1f;
        float r = p * f * z;
        r += -2.12194440e-4f * e;
        r += -0.5f * z;
        r = f + r + 0.693359375f * e;
        // One select per statement: GCC 12 turns a chain of ?: into branches (a scalar loop).
        r = v == std::numeric_limits<float>::infinity() ? v : r;
        r = v == 0.0f ? -std::numeric_limits<float>::infinity() : r;
        r = v < 0.0f ? std::numeric_limits<float>::quiet_NaN() : r;
        y[i] = v != v ? v : r;
    }
}

Status logKernel(KernelContext &ctx)
{
    return blockedUnary(ctx, logBlockF32, [](auto v) {
        return v < decltype(v)(0) ? std::numeric_limits<decltype(v)>::quiet_NaN() : std::log(v);
    });
}

Status erfKernel(KernelContext &ctx)
{
    return blockedUnary(ctx, erfBlockF32, [](auto v) { return std::erf(v); });
}

Status tanhKernel(KernelContext &ctx)
{
    return blockedUnary(ctx, tanhBlockF32, [](auto v) { return std::tanh(v); });
}
OPSCOPE_UNARY_FLOAT(ceil, std::ceil(x))
OPSCOPE_UNARY_FLOAT(floor, std::floor(x))
OPSCOPE_UNARY_FLOAT(round, std::nearbyint(x)) // half to even in the default rounding mode

// Abs, Neg, Sign also take integers.
template<class F>
Status unaryNumeric(KernelContext &ctx, F f)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const RuntimeTensor &x = ctx.in(0);
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        using C = ComputeType<T>;
        if constexpr (std::is_same_v<T, bool>)
            return ctx.unsupported("on bool");
        else
            return unaryKernel<T, T>(ctx, x, x.dtype(), [&f](T v) { return static_cast<T>(f(C(v))); });
    });
}

Status absKernel(KernelContext &ctx)
{
    return unaryNumeric(ctx, [](auto v) {
        if constexpr (std::is_unsigned_v<decltype(v)>)
            return v;
        else
            return v < 0 ? wrapNeg(v) : v; // |MIN| is MIN, as in two's complement
    });
}

Status negKernel(KernelContext &ctx)
{
    return unaryNumeric(ctx, [](auto v) { return wrapNeg(v); });
}

Status signKernel(KernelContext &ctx)
{
    return unaryNumeric(ctx, [](auto v) { return decltype(v)((v > 0) - (v < 0)); });
}

Status isNanKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    return dispatchFloat(ctx.in(0).dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        return unaryKernel<T, bool>(ctx, ctx.in(0), DataType::Bool,
                                    [](T v) { return std::isnan(ComputeType<T>(v)); });
    });
}

Status isInfKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const bool pos = ctx.attrInt("detect_positive", 1) != 0;
    const bool neg = ctx.attrInt("detect_negative", 1) != 0;
    return dispatchFloat(ctx.in(0).dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        return unaryKernel<T, bool>(ctx, ctx.in(0), DataType::Bool, [pos, neg](T v) {
            const auto c = ComputeType<T>(v);
            return std::isinf(c) && ((c > 0 && pos) || (c < 0 && neg));
        });
    });
}

Status notKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    if (ctx.in(0).dtype() != DataType::Bool)
        return ctx.fail("input must be bool");
    return unaryKernel<bool, bool>(ctx, ctx.in(0), DataType::Bool, [](bool v) { return !v; });
}

} // namespace

void geluTanhBlockF32(const float *x, float *y, std::int64_t n)
{
    geluTanhBlockImpl(x, y, n);
}

void tanhF32(const float *x, float *y, std::int64_t n)
{
    tanhBlockF32(x, y, n);
}

void sigmoidF32(const float *x, float *y, std::int64_t n)
{
    sigmoidBlockF32(x, y, n);
}

} // namespace kernels

void registerElementwiseKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("Add", arithKernel<Arith::Add>);
    r.add("Sub", arithKernel<Arith::Sub>);
    r.add("Mul", arithKernel<Arith::Mul>);
    r.add("Div", arithKernel<Arith::Div>);
    r.add("Pow", powKernel);
    r.add("Mod", modKernel);
    r.add("Sum", variadicKernel<Arith::Add>);
    r.add("Mean", variadicKernel<Arith::Add, true>);
    r.add("Max", variadicKernel<Arith::Max>);
    r.add("Min", variadicKernel<Arith::Min>);
    r.add("Equal", compareKernel<Cmp::Equal>);
    r.add("Greater", compareKernel<Cmp::Greater>);
    r.add("GreaterOrEqual", compareKernel<Cmp::GreaterOrEqual>);
    r.add("Less", compareKernel<Cmp::Less>);
    r.add("LessOrEqual", compareKernel<Cmp::LessOrEqual>);
    r.add("And", logicKernel<Logic::And>);
    r.add("Or", logicKernel<Logic::Or>);
    r.add("Xor", logicKernel<Logic::Xor>);
    r.add("Not", notKernel);
    r.add("BitShift", bitShiftKernel);
    r.add("Where", whereKernel);
    r.add("Abs", absKernel);
    r.add("Neg", negKernel);
    r.add("Sign", signKernel);
    r.add("Sqrt", sqrtKernel);
    r.add("Exp", expKernel);
    r.add("Log", logKernel);
    r.add("Reciprocal", reciprocalKernel);
    r.add("Sin", sinKernel);
    r.add("Cos", cosKernel);
    r.add("Tan", tanKernel);
    r.add("Asin", asinKernel);
    r.add("Acos", acosKernel);
    r.add("Atan", atanKernel);
    r.add("Sinh", sinhKernel);
    r.add("Cosh", coshKernel);
    r.add("Asinh", asinhKernel);
    r.add("Acosh", acoshKernel);
    r.add("Atanh", atanhKernel);
    r.add("Erf", erfKernel);
    r.add("Tanh", tanhKernel);
    r.add("Ceil", ceilKernel);
    r.add("Floor", floorKernel);
    r.add("Round", roundKernel);
    r.add("IsNaN", isNanKernel);
    r.add("IsInf", isInfKernel);
}

} // namespace opscope
