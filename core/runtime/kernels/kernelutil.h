#pragma once
// Shared kernel helpers: dtype dispatch, multidirectional broadcasting, axis normalization,
// float16/bfloat16 conversion, and an OpenMP-parallel loop (the same runtime oneDNN uses).

#include "runtime/kernel.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <type_traits>
#include <vector>

namespace opscope::kernels {

using Shape64 = std::vector<std::int64_t>;

// Eight floats as one GCC/clang vector: explicit vector code where the compiler does not
// vectorize lane arrays by itself (a max's select, a matrix-vector product's accumulators). One
// AVX2 register (half an AVX-512 one, two SSE). Never wider than the narrowest ISA a clone
// targets: GCC lowers a 16-wide vector on AVX2 to scalar code, 12-22x slower (ReduceMax ran 5x
// ONNX Runtime on an AVX2 machine, fine on AVX-512 ones).
typedef float F32x8 __attribute__((vector_size(32)));

// exp(x) for float32 in straight-line arithmetic that vectorizes inside a loop (no libm call, no
// oneDNN call per block): x = n·ln2 + r with |r| <= ln2/2 (ln2 split in two for an exact r),
// e^r by Cephes' degree-7 polynomial (relative error < 2e-7), 2^n built in the exponent bits.
// x is clamped to [-87.3, 88.7]: below, the result is 2^-126 instead of a subnormal or 0, which
// callers that add it to 1 (tanh, erf) do not see; NaN is the caller's to keep (it is computed
// as 0 here: a NaN exponent converted to int32 is undefined behaviour, even when discarded).
[[gnu::always_inline]] inline float expApproxF32(float x)
{
    x = x != x ? 0.0f : x;
    x = std::min(std::max(x, -87.33654f), 88.72283f);
    const float n = std::floor(x * 1.44269504088896341f + 0.5f);
    const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const float er = p * r * r + r + 1.0f;
    // n in [-126, 128]: 128 (x near 88.7) is 2^127 · 2, split so the exponent stays finite.
    const std::int32_t k = static_cast<std::int32_t>(n);
    const std::int32_t half = k >> 1;
    const float a = std::bit_cast<float>((half + 127) << 23), b = std::bit_cast<float>((k - half + 127) << 23);
    return er * a * b;
}

// ---- float16 / bfloat16 ----------------------------------------------------------------------
float halfToFloat(std::uint16_t h);
// Whole arrays, with the CPU's F16C conversions where it has them (IEEE round to nearest even,
// the same values as floatToHalf/halfToFloat; NaN payloads may differ): the scalar bit
// arithmetic does not vectorize and made Cast to float16 7x ONNX Runtime.
void floatsToHalves(const float *src, std::uint16_t *dst, std::int64_t n);
void halvesToFloats(const std::uint16_t *src, float *dst, std::int64_t n);
std::uint16_t floatToHalf(float f);
inline float bfloat16ToFloat(std::uint16_t b)
{
    return std::bit_cast<float>(std::uint32_t(b) << 16);
}
std::uint16_t floatToBFloat16(float f); // round to nearest even

// Converts a float16/bfloat16 tensor to float32 and back, so float kernels serve them too.
Expected<RuntimeTensor> toFloat32(const RuntimeTensor &t);
Expected<RuntimeTensor> fromFloat32(const RuntimeTensor &t, DataType target);

// Storage types that compute in float: every float kernel template serves them too.
struct Half
{
    std::uint16_t bits = 0;
    Half() = default;
    Half(float f) : bits(floatToHalf(f)) {}
    operator float() const { return halfToFloat(bits); }
};
struct BFloat16
{
    std::uint16_t bits = 0;
    BFloat16() = default;
    BFloat16(float f) : bits(floatToBFloat16(f)) {}
    operator float() const { return bfloat16ToFloat(bits); }
};
template<class T>
constexpr bool isFloatLike =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
// The type arithmetic happens in: float for the half types, T otherwise.
template<class T>
using ComputeType = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

// ---- dispatch ---------------------------------------------------------------------------------
// Calls f(T{}) with the C++ type of `dtype`; Bool maps to bool (1 byte).
template<class F>
Status dispatchAll(DataType dtype, F &&f)
{
    switch (dtype) {
    case DataType::Float: return f(float{});
    case DataType::Double: return f(double{});
    case DataType::Int64: return f(std::int64_t{});
    case DataType::Int32: return f(std::int32_t{});
    case DataType::Int16: return f(std::int16_t{});
    case DataType::Int8: return f(std::int8_t{});
    case DataType::UInt8: return f(std::uint8_t{});
    case DataType::UInt16: return f(std::uint16_t{});
    case DataType::UInt32: return f(std::uint32_t{});
    case DataType::UInt64: return f(std::uint64_t{});
    case DataType::Bool: return f(bool{});
    default:
        return Status::unsupported("data type " + std::string(dataTypeName(dtype)) +
                                   " is not supported here");
    }
}

// dispatchAll plus the half types.
template<class F>
Status dispatchNumeric(DataType dtype, F &&f)
{
    switch (dtype) {
    case DataType::Float16: return f(Half{});
    case DataType::BFloat16: return f(BFloat16{});
    default: return dispatchAll(dtype, std::forward<F>(f));
    }
}

template<class F>
Status dispatchFloat(DataType dtype, F &&f)
{
    switch (dtype) {
    case DataType::Float: return f(float{});
    case DataType::Double: return f(double{});
    case DataType::Float16: return f(Half{});
    case DataType::BFloat16: return f(BFloat16{});
    default:
        return Status::unsupported("data type " + std::string(dataTypeName(dtype)) +
                                   " is not supported here");
    }
}

// 16-byte elements (complex128) moved as raw bytes.
struct Bytes16
{
    std::uint64_t lo, hi;
};

// Bitwise copy of any fixed-size element type (for data movement ops).
template<class F>
Status dispatchBySize(DataType dtype, F &&f)
{
    switch (dataTypeSize(dtype)) {
    case 1: return f(std::uint8_t{});
    case 2: return f(std::uint16_t{});
    case 4: return f(std::uint32_t{});
    case 8: return f(std::uint64_t{});
    case 16: return f(Bytes16{});
    default:
        return Status::unsupported("data type " + std::string(dataTypeName(dtype)) +
                                   " is not supported here");
    }
}

// ---- shapes -----------------------------------------------------------------------------------
std::int64_t product(const Shape64 &shape, std::size_t from = 0, std::size_t to = SIZE_MAX);
Shape64 stridesOf(const Shape64 &shape);
// Normalizes a possibly negative axis into [0, rank); fails for out-of-range axes and scalars.
Expected<std::int64_t> normalizeAxis(std::int64_t axis, std::int64_t rank, const KernelContext &ctx);
// Fails unless `t` is at least 2-D, (N, C, ...) as the normalizations and losses read it: their
// dim(1) of a scalar or a vector read past its shape. `what` names it ("input", "scores").
Status requireBatchAndChannels(const RuntimeTensor &t, const char *what, const KernelContext &ctx);
// Fails unless `t` holds exactly one value (a scalar or any shape of one element), as a per-tensor
// scale or zero point, a bound or a start is read: valueAsDouble(0) of an empty [0] tensor reads
// past its buffer. `what` names it ("y_scale").
Status requireOneValue(const RuntimeTensor &t, const std::string &what, const KernelContext &ctx);

// Multidirectional (numpy) broadcasting of several shapes.
struct Broadcast
{
    Shape64 outShape;
    std::vector<Shape64> strides; // per input, aligned to outShape, 0 where broadcast
    bool allSame = false;         // every input already has outShape

    static Expected<Broadcast> of(const std::vector<const Shape64 *> &shapes, const KernelContext &ctx);
};

// The broadcast as rows: the innermost coalesced dim is the row (each input read with stride 1 or
// 0 along it); the other dims enumerate rows.
struct BroadcastRows
{
    std::int64_t rows = 1, rowLength = 1;
    std::vector<std::int64_t> innerStride; // per input: 1 or 0
    Shape64 outerShape;                    // coalesced dims before the row
    std::vector<Shape64> outerStrides;     // per input
    std::int64_t offset(std::int64_t row, std::size_t input) const
    {
        std::int64_t off = 0;
        for (std::size_t d = outerShape.size(); d-- > 0;) {
            off += (row % outerShape[d]) * outerStrides[input][d];
            row /= outerShape[d];
        }
        return off;
    }
    static BroadcastRows of(const Broadcast &b);
};

// Calls f(outIndex, inIndex[0..n)) for every output element, in order. Fast enough for the odd
// shapes; the hot same-shape and scalar cases are handled by callers.
template<class F>
void forEachBroadcast(const Broadcast &b, F &&f)
{
    const std::size_t rank = b.outShape.size();
    const std::size_t n = b.strides.size();
    const std::int64_t total = product(b.outShape);
    if (total == 0)
        return;
    std::vector<std::int64_t> counter(rank, 0);
    std::vector<std::int64_t> idx(n, 0);
    for (std::int64_t o = 0; o < total; ++o) {
        f(o, idx.data());
        for (std::size_t d = rank; d-- > 0;) {
            ++counter[d];
            for (std::size_t k = 0; k < n; ++k)
                idx[k] += b.strides[k][d];
            if (counter[d] < b.outShape[d])
                break;
            for (std::size_t k = 0; k < n; ++k)
                idx[k] -= b.strides[k][d] * counter[d];
            counter[d] = 0;
        }
    }
}

// Parallel loop over [0, n) in chunks; serial below `grain` elements.
// An exception may not leave an OpenMP region — it calls std::terminate: a std::bad_alloc from a
// kernel's scratch vector ended the whole process instead of failing the run with "out of
// memory". The first one thrown is kept and thrown again after the region, where the executor's
// handler turns it into an error. (A body that cannot throw compiles to the same loop as before.)
template<class F>
void parallelFor(std::int64_t n, F &&f, std::int64_t grain = 32768)
{
    if (n < grain) {
        for (std::int64_t i = 0; i < n; ++i)
            f(i);
        return;
    }
    std::exception_ptr failure;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        try {
            f(i);
        } catch (...) {
#pragma omp critical(opscope_parallel_for_failure)
            if (!failure)
                failure = std::current_exception();
        }
    }
    if (failure)
        std::rethrow_exception(failure);
}

// A tensor held in a layout-nhwc region's layout, which the op's name says: "Nhwc…" [N,H,W,C] or
// "Nchwc…" [N,C/b,H,W,b]; float32. `lanes`: the contiguous channels of one pixel (C or b).
struct RegionTensor
{
    bool nhwc = false;
    Shape64 logical; // N, C, H, W
    std::int64_t lanes = 0;
};
Expected<RegionTensor> regionTensor(const KernelContext &ctx, const RuntimeTensor &x);

// out[i0..] = x[i_perm(0)..]: the general strided copy (Transpose); `out` has the permuted shape.
Status permuteCopy(const RuntimeTensor &x, const std::vector<std::int64_t> &perm, RuntimeTensor &out);
// A new tensor with x's axes in the order `perm`.
Expected<RuntimeTensor> permuted(const RuntimeTensor &x, const std::vector<std::int64_t> &perm);

} // namespace opscope::kernels
