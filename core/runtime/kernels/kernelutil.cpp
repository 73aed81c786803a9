#include "runtime/kernels/kernelutil.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include <algorithm>

namespace opscope::kernels {

float halfToFloat(std::uint16_t h)
{
    const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
    std::uint32_t exp = (h >> 10) & 0x1f;
    std::uint32_t mant = h & 0x3ff;
    std::uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { // subnormal: normalize
            exp = 127 - 15 + 1;
            while (!(mant & 0x400)) {
                mant <<= 1;
                --exp;
            }
            bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000 | (mant << 13);
    } else {
        bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(bits);
}

std::uint16_t floatToHalf(float f)
{
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
    const std::uint32_t absx = x & 0x7fffffff;
    if (absx >= 0x7f800000) // inf or nan
        return sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0);
    if (absx >= 0x477ff000) // rounds to >= 65520: overflow to inf
        return sign | 0x7c00;
    if (absx < 0x38800000) {                                                 // subnormal half (or zero)
        const float magic = std::bit_cast<float>(std::uint32_t(0x3f000000)); // 0.5: shifts into place
        const float v = std::bit_cast<float>(absx) + magic;
        return sign | static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) -
                                                 std::bit_cast<std::uint32_t>(magic));
    }
    // normal: rebias the exponent, round to nearest even on the 13 dropped mantissa bits
    std::uint32_t r = (((absx >> 23) - 112) << 10) | ((absx >> 13) & 0x3ff);
    const std::uint32_t rem = absx & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
        ++r; // a carry into the exponent is still correct
    return sign | static_cast<std::uint16_t>(r);
}

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

__attribute__((target("avx,f16c"))) void floatsToHalvesF16c(const float *src, std::uint16_t *dst, std::int64_t n)
{
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i)
        dst[i] = floatToHalf(src[i]);
}

__attribute__((target("avx,f16c"))) void halvesToFloatsF16c(const std::uint16_t *src, float *dst, std::int64_t n)
{
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i))));
    for (; i < n; ++i)
        dst[i] = halfToFloat(src[i]);
}

bool hasF16c()
{
    // F16C from CPUID itself: clang's __builtin_cpu_supports does not know "f16c" (gcc's does).
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) && __builtin_cpu_supports("avx");
    }();
    return has;
}

} // namespace
#endif

void floatsToHalves(const float *src, std::uint16_t *dst, std::int64_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (hasF16c()) {
        parallelFor((n + 4095) / 4096, [&](std::int64_t b) {
            floatsToHalvesF16c(src + b * 4096, dst + b * 4096, std::min<std::int64_t>(4096, n - b * 4096));
        }, 64);
        return;
    }
#endif
    for (std::int64_t i = 0; i < n; ++i)
        dst[i] = floatToHalf(src[i]);
}

void halvesToFloats(const std::uint16_t *src, float *dst, std::int64_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (hasF16c()) {
        parallelFor((n + 4095) / 4096, [&](std::int64_t b) {
            halvesToFloatsF16c(src + b * 4096, dst + b * 4096, std::min<std::int64_t>(4096, n - b * 4096));
        }, 64);
        return;
    }
#endif
    for (std::int64_t i = 0; i < n; ++i)
        dst[i] = halfToFloat(src[i]);
}

std::uint16_t floatToBFloat16(float f)
{
    std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    if ((x & 0x7fffffff) > 0x7f800000)
        return static_cast<std::uint16_t>((x >> 16) | 0x40); // quiet nan
    x += 0x7fff + ((x >> 16) & 1);
    return static_cast<std::uint16_t>(x >> 16);
}

Expected<RuntimeTensor> toFloat32(const RuntimeTensor &t)
{
    Expected<RuntimeTensor> out = RuntimeTensor::allocate(DataType::Float, t.shape());
    if (!out)
        return out;
    const auto *src = t.data<std::uint16_t>();
    float *dst = out->mutableData<float>();
    if (t.dtype() == DataType::Float16) {
        halvesToFloats(src, dst, t.elementCount());
        return out;
    }
    for (std::int64_t i = 0; i < t.elementCount(); ++i)
        dst[i] = bfloat16ToFloat(src[i]);
    return out;
}

Expected<RuntimeTensor> fromFloat32(const RuntimeTensor &t, DataType target)
{
    Expected<RuntimeTensor> out = RuntimeTensor::allocate(target, t.shape());
    if (!out)
        return out;
    const float *src = t.data<float>();
    auto *dst = out->mutableData<std::uint16_t>();
    if (target == DataType::Float16) {
        floatsToHalves(src, dst, t.elementCount());
        return out;
    }
    for (std::int64_t i = 0; i < t.elementCount(); ++i)
        dst[i] = floatToBFloat16(src[i]);
    return out;
}

std::int64_t product(const Shape64 &shape, std::size_t from, std::size_t to)
{
    std::int64_t p = 1;
    for (std::size_t i = from; i < std::min(to, shape.size()); ++i)
        p *= shape[i];
    return p;
}

Shape64 stridesOf(const Shape64 &shape)
{
    Shape64 s(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;)
        s[i - 1] = s[i] * shape[i];
    return s;
}

Status requireBatchAndChannels(const RuntimeTensor &t, const char *what, const KernelContext &ctx)
{
    if (t.rank() >= 2)
        return Status::ok();
    return ctx.fail(std::string(what) + " must be at least 2-D (N, C, ...), got " + t.shapeText());
}

Status requireOneValue(const RuntimeTensor &t, const std::string &what, const KernelContext &ctx)
{
    if (t.elementCount() == 1)
        return Status::ok();
    return ctx.fail(what + " must hold one value, got " + std::to_string(t.elementCount()) + " (shape " +
                    t.shapeText() + ")");
}

Expected<std::int64_t> normalizeAxis(std::int64_t axis, std::int64_t rank, const KernelContext &ctx)
{
    // A scalar has no axis: axis 0 of a rank-0 input was let through, and every kernel that then
    // read shape[axis] (Concat of a scalar, found by fuzzing) read past an empty shape.
    if (axis < -rank || axis >= rank)
        return ctx.fail(rank == 0 ? "axis " + std::to_string(axis) + " given for a scalar input (rank 0), which has no axes"
                                  : "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

Expected<Broadcast> Broadcast::of(const std::vector<const Shape64 *> &shapes, const KernelContext &ctx)
{
    Broadcast b;
    std::size_t rank = 0;
    for (const Shape64 *s : shapes)
        rank = std::max(rank, s->size());
    b.outShape.assign(rank, 1);
    for (const Shape64 *s : shapes) {
        const std::size_t off = rank - s->size();
        for (std::size_t d = 0; d < s->size(); ++d) {
            const std::int64_t v = (*s)[d];
            std::int64_t &o = b.outShape[off + d];
            if (o == 1)
                o = v;
            else if (v != 1 && v != o)
                return ctx.fail("shapes " + shapeText(*shapes[0]) + " and " + shapeText(*s) +
                                " cannot be broadcast together");
        }
    }
    // A zero-size dim wins over 1.
    for (const Shape64 *s : shapes) {
        const std::size_t off = rank - s->size();
        for (std::size_t d = 0; d < s->size(); ++d)
            if ((*s)[d] == 0)
                b.outShape[off + d] = 0;
    }
    // Shapes may come from data (Expand's target [3.7e18, 8]): before any stride is multiplied out,
    // the result must be countable (its non-zero dims' product in 64 bits, found by fuzzing as a
    // signed overflow in the strides). Every input's dims are 1, 0 or the output's, so theirs are too.
    if (const ElementCount n = countElements(b.outShape); !n.ok())
        return ctx.fail("broadcasting to " + shapeText(b.outShape) +
                        (n.negative ? ": a dimension is negative" : ": more elements than 64 bits can count"));
    b.allSame = true;
    for (const Shape64 *s : shapes) {
        const std::size_t off = rank - s->size();
        const Shape64 st = stridesOf(*s);
        Shape64 aligned(rank, 0);
        for (std::size_t d = 0; d < s->size(); ++d)
            aligned[off + d] = (*s)[d] == 1 && b.outShape[off + d] != 1 ? 0 : st[d];
        b.strides.push_back(std::move(aligned));
        b.allSame &= *s == b.outShape;
    }
    return b;
}

BroadcastRows BroadcastRows::of(const Broadcast &b)
{
    const std::size_t n = b.strides.size();
    // Coalesce from the innermost dim outward while every input keeps its pattern.
    Shape64 shape;
    std::vector<Shape64> strides(n);
    for (std::size_t d = 0; d < b.outShape.size(); ++d) {
        if (b.outShape[d] == 1)
            continue; // size-1 dims never matter
        bool merge = !shape.empty();
        for (std::size_t k = 0; k < n && merge; ++k)
            merge =
                strides[k].back() == b.strides[k][d] * b.outShape[d]; // contiguous continuation, or 0 == 0
        if (merge) {
            shape.back() *= b.outShape[d];
            for (std::size_t k = 0; k < n; ++k)
                strides[k].back() = b.strides[k][d];
        } else {
            shape.push_back(b.outShape[d]);
            for (std::size_t k = 0; k < n; ++k)
                strides[k].push_back(b.strides[k][d]);
        }
    }
    BroadcastRows r;
    r.innerStride.assign(n, 0);
    if (shape.empty())
        return r;
    r.rowLength = shape.back();
    for (std::size_t k = 0; k < n; ++k)
        r.innerStride[k] = strides[k].back();
    // A row must be read with stride 0 or 1; anything else (a transposing pattern) gets rows of 1.
    bool plain = true;
    for (std::size_t k = 0; k < n; ++k)
        plain &= r.innerStride[k] == 0 || r.innerStride[k] == 1;
    if (!plain) {
        shape.push_back(1);
        for (std::size_t k = 0; k < n; ++k)
            strides[k].push_back(0);
        r.rowLength = 1;
        r.innerStride.assign(n, 0);
    }
    r.outerShape.assign(shape.begin(), shape.end() - 1);
    for (std::size_t k = 0; k < n; ++k)
        r.outerStrides.push_back(Shape64(strides[k].begin(), strides[k].end() - 1));
    r.rows = product(r.outerShape);
    return r;
}

Expected<RuntimeTensor> permuted(const RuntimeTensor &x, const std::vector<std::int64_t> &perm)
{
    Shape64 shape;
    for (std::int64_t p : perm)
        shape.push_back(x.dim(static_cast<std::size_t>(p)));
    Expected<RuntimeTensor> out = RuntimeTensor::allocate(x.dtype(), shape);
    if (!out)
        return out;
    OPSCOPE_TRY(permuteCopy(x, perm, *out));
    return out;
}

Expected<RegionTensor> regionTensor(const KernelContext &ctx, const RuntimeTensor &x)
{
    RegionTensor r;
    r.nhwc = ctx.node().opType.rfind("Nhwc", 0) == 0;
    if (x.dtype() != DataType::Float || x.rank() != (r.nhwc ? 4u : 5u))
        return ctx.fail(ctx.node().opType + " needs float32 " + (r.nhwc ? "[N,H,W,C]" : "[N,C/b,H,W,b]") +
                        ", got " + x.shapeText());
    r.logical = r.nhwc ? Shape64{x.dim(0), x.dim(3), x.dim(1), x.dim(2)}
                       : Shape64{x.dim(0), x.dim(1) * x.dim(4), x.dim(2), x.dim(3)};
    r.lanes = r.nhwc ? x.dim(3) : x.dim(4);
    return r;
}

} // namespace opscope::kernels
