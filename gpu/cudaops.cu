// The CUDA backend's own kernels (cudaops.h says what each computes). Grid-stride loops over
// elements, one block per row for row-wise ops; float accumulation for half types.

#include "cudaops.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace opscope::gpu {
namespace {

constexpr int kThreads = 256;

unsigned gridFor(std::int64_t n)
{
    const std::int64_t blocks = (n + kThreads - 1) / kThreads;
    return unsigned(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

// Loads and stores through float for every floating type.
template<class T>
__device__ __forceinline__ float toF(T v)
{
    return float(v);
}
template<>
__device__ __forceinline__ float toF<__half>(__half v)
{
    return __half2float(v);
}
template<>
__device__ __forceinline__ float toF<__nv_bfloat16>(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}
template<class T>
__device__ __forceinline__ T fromF(float v)
{
    return T(v);
}
template<>
__device__ __forceinline__ __half fromF<__half>(float v)
{
    return __float2half_rn(v);
}
template<>
__device__ __forceinline__ __nv_bfloat16 fromF<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

__device__ __forceinline__ float sigmoidF(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

__device__ float unaryF(Unary op, float x, const UnaryParams &p)
{
    switch (op) {
    case Unary::Relu: return x > 0.0f ? x : 0.0f;
    case Unary::Sigmoid: return sigmoidF(x);
    case Unary::Tanh: return tanhf(x);
    case Unary::Exp: return expf(x);
    case Unary::Log: return logf(x);
    case Unary::Sqrt: return sqrtf(x);
    case Unary::Neg: return -x;
    case Unary::Abs: return fabsf(x);
    case Unary::Erf: return erff(x);
    case Unary::Reciprocal: return 1.0f / x;
    case Unary::Floor: return floorf(x);
    case Unary::Ceil: return ceilf(x);
    case Unary::Round: return rintf(x); // half to even, as ONNX
    case Unary::Sign: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : (x == 0.0f ? 0.0f : x));
    case Unary::Sin: return sinf(x);
    case Unary::Cos: return cosf(x);
    case Unary::Softplus: return x > 20.0f ? x : log1pf(expf(x));
    case Unary::Softsign: return x / (1.0f + fabsf(x));
    case Unary::LeakyRelu: return x >= 0.0f ? x : p.alpha * x;
    case Unary::Elu: return x >= 0.0f ? x : p.alpha * expm1f(x);
    case Unary::Selu: return x > 0.0f ? p.gamma * x : p.gamma * (p.alpha * expf(x) - p.alpha);
    case Unary::HardSigmoid: return fmaxf(0.0f, fminf(1.0f, p.alpha * x + p.beta));
    case Unary::HardSwish: return x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f));
    case Unary::GeluErf: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case Unary::GeluTanh: {
        const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.0f + tanhf(u));
    }
    case Unary::Clip: return x != x ? x : fminf(fmaxf(x, p.alpha), p.beta);
    case Unary::Swish: return x * sigmoidF(p.alpha * x);
    case Unary::Identity: return x;
    }
    return x;
}

template<class T>
__global__ void unaryKernel(Unary op, const T *x, T *y, std::int64_t n, UnaryParams p)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = fromF<T>(unaryF(op, toF(x[i]), p));
}

// Integer Relu/Neg/Abs/Sign: exact, no float round trip.
template<class T>
__global__ void unaryIntKernel(Unary op, const T *x, T *y, std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const T v = x[i];
        switch (op) {
        case Unary::Relu: y[i] = v > T(0) ? v : T(0); break;
        case Unary::Neg: y[i] = T(-v); break;
        case Unary::Abs: y[i] = v < T(0) ? T(-v) : v; break;
        case Unary::Sign: y[i] = v > T(0) ? T(1) : (v < T(0) ? T(-1) : T(0)); break;
        default: y[i] = v; break;
        }
    }
}

template<class T>
__device__ __forceinline__ T binaryT(Binary op, T a, T b)
{
    switch (op) {
    case Binary::Add: return a + b;
    case Binary::Sub: return a - b;
    case Binary::Mul: return a * b;
    case Binary::Div: return b == T(0) ? T(0) : T(a / b); // integer: the CPU runtime's choice too
    case Binary::Max: return a > b ? a : b;
    case Binary::Min: return a < b ? a : b;
    case Binary::PRelu: return a < T(0) ? T(a * b) : a;
    default: return a;
    }
}

__device__ __forceinline__ float binaryF(Binary op, float a, float b)
{
    switch (op) {
    case Binary::Add: return a + b;
    case Binary::Sub: return a - b;
    case Binary::Mul: return a * b;
    case Binary::Div: return a / b;
    case Binary::Pow: return powf(a, b);
    case Binary::Max: return (a != a || b != b) ? a + b : fmaxf(a, b); // NaN propagates, as ONNX
    case Binary::Min: return (a != a || b != b) ? a + b : fminf(a, b);
    case Binary::PRelu: return a < 0.0f ? a * b : a;
    default: return a;
    }
}

template<class T>
__device__ __forceinline__ bool compareT(Binary op, T a, T b)
{
    switch (op) {
    case Binary::Equal: return a == b;
    case Binary::Less: return a < b;
    case Binary::Greater: return a > b;
    case Binary::LessOrEqual: return a <= b;
    case Binary::GreaterOrEqual: return a >= b;
    default: return false;
    }
}

template<class T, bool Floating>
__global__ void binaryKernel(Binary op, const T *a, IndexMap ma, const T *b, IndexMap mb, T *y, std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const T va = a[mapIndex(ma, i)];
        const T vb = b[mapIndex(mb, i)];
        if constexpr (Floating)
            y[i] = fromF<T>(binaryF(op, toF(va), toF(vb)));
        else
            y[i] = binaryT<T>(op, va, vb);
    }
}

template<class T, bool Floating>
__global__ void compareKernel(Binary op, const T *a, IndexMap ma, const T *b, IndexMap mb, std::uint8_t *y,
                              std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const T va = a[mapIndex(ma, i)];
        const T vb = b[mapIndex(mb, i)];
        if constexpr (Floating)
            y[i] = compareT<float>(op, toF(va), toF(vb)) ? 1 : 0;
        else
            y[i] = compareT<T>(op, va, vb) ? 1 : 0;
    }
}

__global__ void logicKernel(Binary op, const std::uint8_t *a, IndexMap ma, const std::uint8_t *b, IndexMap mb,
                            std::uint8_t *y, std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const bool va = a[mapIndex(ma, i)] != 0;
        const bool vb = b[mapIndex(mb, i)] != 0;
        y[i] = op == Binary::And ? (va && vb) : op == Binary::Or ? (va || vb) : (va != vb);
    }
}

template<class E>
__global__ void whereKernel(const std::uint8_t *c, IndexMap mc, const E *x, IndexMap mx, const E *y, IndexMap my,
                            E *out, std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = c[mapIndex(mc, i)] ? x[mapIndex(mx, i)] : y[mapIndex(my, i)];
}

template<class E>
__global__ void gatherMapKernel(const E *in, IndexMap m, E *out, std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[mapIndex(m, i)];
}

template<class From, class To>
__device__ __forceinline__ To convert(From v)
{
    if constexpr (std::is_same_v<To, __half> || std::is_same_v<To, __nv_bfloat16>)
        return fromF<To>(float(toF(v)));
    else if constexpr (std::is_same_v<From, __half> || std::is_same_v<From, __nv_bfloat16>)
        return To(toF(v));
    else if constexpr (std::is_same_v<To, std::uint8_t> && std::is_floating_point_v<From>)
        return To(v); // uint8 from float: truncation, as static_cast (bool handled by the caller)
    else
        return To(v);
}

template<class From, class To>
__global__ void castKernel(const From *x, To *y, std::int64_t n, bool toBool)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        if constexpr (std::is_same_v<To, std::uint8_t>) {
            if (toBool) {
                y[i] = toF(x[i]) != 0.0f ? 1 : 0;
                continue;
            }
        }
        y[i] = convert<From, To>(x[i]);
    }
}

// max that propagates NaN, as ONNX's ReduceMax/MaxPool and numpy do (fmaxf drops it).
__device__ __forceinline__ float nanMax(float a, float b)
{
    return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
}

// Block-wide reduction of one float per thread (kThreads threads).
template<bool IsMax>
__device__ float blockReduce(float v, float *shared)
{
    for (int o = 16; o > 0; o >>= 1) {
        const float w = __shfl_xor_sync(0xffffffffu, v, o);
        v = IsMax ? nanMax(v, w) : v + w;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < int(blockDim.x / 32) ? shared[lane] : (IsMax ? -INFINITY : 0.0f);
        for (int o = 16; o > 0; o >>= 1) {
            const float w = __shfl_xor_sync(0xffffffffu, v, o);
            v = IsMax ? nanMax(v, w) : v + w;
        }
        if (lane == 0)
            shared[0] = v;
    }
    __syncthreads();
    const float r = shared[0];
    __syncthreads();
    return r;
}

template<class T>
__global__ void softmaxKernel(const T *x, T *y, std::int64_t cols, bool log)
{
    __shared__ float shared[32];
    const T *row = x + std::int64_t(blockIdx.x) * cols;
    T *out = y + std::int64_t(blockIdx.x) * cols;
    float m = -INFINITY;
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        m = fmaxf(m, toF(row[j]));
    m = blockReduce<true>(m, shared);
    float s = 0.0f;
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        s += expf(toF(row[j]) - m);
    s = blockReduce<false>(s, shared);
    if (log) {
        const float ls = logf(s);
        for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x)
            out[j] = fromF<T>(toF(row[j]) - m - ls);
    } else {
        const float inv = 1.0f / s;
        for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x)
            out[j] = fromF<T>(expf(toF(row[j]) - m) * inv);
    }
}

// One block per output; element j of output o is x[reduceOffset(m, o, j)] (a contiguous row when
// the reduced axes are trailing).
template<class T>
__global__ void reduceKernel(const T *x, T *y, ReduceMap m, RowReduce op)
{
    __shared__ float shared[32];
    const std::int64_t o = blockIdx.x, cols = m.count;
    const std::int64_t base = mapIndex(m.kept, o);
    const auto at = [&](std::int64_t j) { return toF(x[base + (m.contiguous ? j : mapIndex(m.reduced, j))]); };
    float r;
    if (op == RowReduce::Max || op == RowReduce::Min || op == RowReduce::LogSumExp) {
        const float sign = op == RowReduce::Min ? -1.0f : 1.0f;
        float mx = -INFINITY;
        for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x)
            mx = nanMax(mx, sign * at(j));
        mx = blockReduce<true>(mx, shared);
        if (op != RowReduce::LogSumExp) {
            r = sign * mx;
        } else {
            float s = 0.0f;
            for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x)
                s += expf(at(j) - mx);
            r = mx + logf(blockReduce<false>(s, shared));
        }
    } else if (op == RowReduce::Prod) {
        // Rare and small in models: one thread per row keeps the product exact in order.
        float p = 1.0f;
        if (threadIdx.x == 0)
            for (std::int64_t j = 0; j < cols; ++j)
                p *= at(j);
        r = p;
    } else {
        const bool square = op == RowReduce::SumSquare || op == RowReduce::L2;
        float s = 0.0f;
        for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            const float v = at(j);
            s += square ? v * v : op == RowReduce::L1 ? fabsf(v) : v;
        }
        s = blockReduce<false>(s, shared);
        r = op == RowReduce::Mean ? s / float(cols) : op == RowReduce::L2 ? sqrtf(s)
            : op == RowReduce::LogSum                ? logf(s)
                                                     : s;
    }
    if (threadIdx.x == 0)
        y[o] = fromF<T>(r);
}

// Few elements per output (a reduction over a short leading axis, [2, 10⁶] over 0): a thread per
// output, its elements in order; a block each would idle 250 of 256 threads.
template<class T>
__global__ void reduceSmallKernel(const T *x, T *y, ReduceMap m, RowReduce op)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t o = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < m.outputs; o += stride) {
        const std::int64_t base = mapIndex(m.kept, o);
        float r = op == RowReduce::Max || op == RowReduce::Min ? (op == RowReduce::Max ? -INFINITY : INFINITY)
                  : op == RowReduce::Prod                    ? 1.0f
                                                             : 0.0f;
        float mx = -INFINITY;
        if (op == RowReduce::LogSumExp)
            for (std::int64_t j = 0; j < m.count; ++j)
                mx = nanMax(mx, toF(x[base + mapIndex(m.reduced, j)]));
        for (std::int64_t j = 0; j < m.count; ++j) {
            const float v = toF(x[base + mapIndex(m.reduced, j)]);
            switch (op) {
            case RowReduce::Max: r = nanMax(r, v); break;
            case RowReduce::Min: r = -nanMax(-r, -v); break;
            case RowReduce::Prod: r *= v; break;
            case RowReduce::SumSquare:
            case RowReduce::L2: r += v * v; break;
            case RowReduce::L1: r += fabsf(v); break;
            case RowReduce::LogSumExp: r += expf(v - mx); break;
            default: r += v; break;
            }
        }
        if (op == RowReduce::Mean)
            r /= float(m.count);
        else if (op == RowReduce::L2)
            r = sqrtf(r);
        else if (op == RowReduce::LogSum)
            r = logf(r);
        else if (op == RowReduce::LogSumExp)
            r = mx + logf(r);
        y[o] = fromF<T>(r);
    }
}

// ArgMax/ArgMin: one block per output; each thread scans its share in order, the block combines
// the partial bests with argBetter (indexing.h), which gives the CPU's sequential answer.
template<class T, bool IsMax>
__global__ void argReduceKernel(const T *x, std::int64_t *y, ReduceMap m, bool selectLast)
{
    __shared__ float values[256];
    __shared__ std::int64_t indices[256];
    const std::int64_t o = blockIdx.x, base = mapIndex(m.kept, o);
    const auto at = [&](std::int64_t j) { return toF(x[base + mapIndex(m.reduced, j)]); };
    const float first = at(0);
    if (first != first) { // a NaN first element is never replaced
        if (threadIdx.x == 0)
            y[o] = 0;
        return;
    }
    float best = 0.0f;
    std::int64_t bestIndex = -1;
    for (std::int64_t j = threadIdx.x; j < m.count; j += blockDim.x) {
        const float v = at(j);
        if (argBetter(v, j, best, bestIndex, IsMax, selectLast))
            best = v, bestIndex = j;
    }
    values[threadIdx.x] = best;
    indices[threadIdx.x] = bestIndex;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            const float v = values[threadIdx.x + half];
            const std::int64_t j = indices[threadIdx.x + half];
            if (j >= 0 && argBetter(v, j, values[threadIdx.x], indices[threadIdx.x], IsMax, selectLast)) {
                values[threadIdx.x] = v;
                indices[threadIdx.x] = j;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        y[o] = indices[0];
}

// Accumulators of CumSum: float for the half types (as the CPU's ComputeType), the type itself else.
template<class T>
struct Accumulator
{
    using type = T;
};
template<>
struct Accumulator<__half>
{
    using type = float;
};
template<>
struct Accumulator<__nv_bfloat16>
{
    using type = float;
};

template<class T>
__device__ __forceinline__ typename Accumulator<T>::type widen(T v)
{
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
        return toF(v);
    else
        return v;
}
template<class T>
__device__ __forceinline__ T narrow(typename Accumulator<T>::type v)
{
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
        return fromF<T>(v);
    else
        return v;
}

// A thread per line along the axis, summed in order (the CPU's order, so float sums agree exactly).
template<class T>
__global__ void cumSumKernel(const T *x, T *y, std::int64_t lines, std::int64_t n, std::int64_t inner, bool exclusive,
                             bool reverse)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t l = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; l < lines; l += stride) {
        typename Accumulator<T>::type acc = 0;
        for (std::int64_t s = 0; s < n; ++s) {
            const std::int64_t at = cumSumOffset(l, s, n, inner, reverse);
            if (exclusive) {
                y[at] = narrow<T>(acc);
                acc += widen(x[at]);
            } else {
                acc += widen(x[at]);
                y[at] = narrow<T>(acc);
            }
        }
    }
}

template<class E>
__global__ void padKernel(const E *x, E *y, PadMap m, E value, std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const std::int64_t s = padSource(m, i);
        y[i] = s < 0 ? value : x[s];
    }
}

template<class E>
__global__ void tileKernel(const E *x, E *y, TileMap m, std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x[tileSource(m, i)];
}

template<class E>
__global__ void triluKernel(const E *x, E *y, std::int64_t rows, std::int64_t cols, std::int64_t k, bool upper,
                            std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = triluKeeps(i, rows, cols, k, upper) ? x[i] : E(0);
}

template<class T>
__global__ void layerNormKernel(const T *x, const T *scale, const T *bias, T *y, std::int64_t cols, float eps,
                                bool rms)
{
    __shared__ float shared[32];
    const T *row = x + std::int64_t(blockIdx.x) * cols;
    T *out = y + std::int64_t(blockIdx.x) * cols;
    float mean = 0.0f;
    if (!rms) {
        float s = 0.0f;
        for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x)
            s += toF(row[j]);
        mean = blockReduce<false>(s, shared) / float(cols);
    }
    // Two passes (mean, then squared deviations): the one-pass E[x²]−E[x]² cancels badly.
    float v = 0.0f;
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        const float d = toF(row[j]) - mean;
        v += d * d;
    }
    const float inv = rsqrtf(blockReduce<false>(v, shared) / float(cols) + eps);
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float r = (toF(row[j]) - mean) * inv * toF(scale[j]);
        if (bias)
            r += toF(bias[j]);
        out[j] = fromF<T>(r);
    }
}

template<class T>
__global__ void batchNormKernel(const T *x, const float *scale, const float *bias, const float *mean,
                                const float *var, T *y, std::int64_t n, std::int64_t channels, std::int64_t spatial,
                                float eps)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const std::int64_t c = (i / spatial) % channels;
        const float k = scale[c] * rsqrtf(var[c] + eps);
        y[i] = fromF<T>((toF(x[i]) - mean[c]) * k + bias[c]);
    }
}

template<class E>
__global__ void gatherKernel(const E *data, const std::int64_t *idx, E *out, std::int64_t outer, std::int64_t axisDim,
                             std::int64_t count, std::int64_t inner)
{
    const std::int64_t n = outer * count * inner;
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const std::int64_t in = i % inner;
        const std::int64_t j = (i / inner) % count;
        const std::int64_t o = i / (inner * count);
        out[i] = data[(o * axisDim + idx[j]) * inner + in];
    }
}

template<class T>
__global__ void biasActivationKernel(T *y, const T *bias, std::int64_t n, std::int64_t cols, std::int64_t inner,
                                     Unary act, UnaryParams p)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = toF(y[i]);
        if (bias)
            v += toF(bias[(i / inner) % cols]);
        y[i] = fromF<T>(unaryF(act, v, p));
    }
}

template<class T>
__global__ void resizeKernel(const T *x, T *y, std::int64_t n, ResizeParams p, const std::int64_t *idx,
                             const float *w)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        std::int64_t c[kMaxDims];
        std::int64_t rest = i;
        int combos = 1;
        for (int d = 0; d < p.rank; ++d) {
            c[d] = rest / p.outStrides[d];
            rest -= c[d] * p.outStrides[d];
            combos *= p.taps[d];
        }
        float acc = 0.0f;
        bool outside = false;
        for (int k = 0; k < combos && !outside; ++k) {
            int r = k;
            std::int64_t off = 0;
            float weight = 1.0f;
            for (int d = p.rank - 1; d >= 0; --d) {
                const int t = r % p.taps[d];
                r /= p.taps[d];
                const std::int64_t e = p.offset[d] + c[d] * p.taps[d] + t;
                const std::int64_t src = idx[e];
                if (src < 0) {
                    outside = true;
                    break;
                }
                off += src * p.inStrides[d];
                weight *= w[e];
            }
            if (!outside && weight != 0.0f)
                acc += weight * toF(x[off]);
        }
        y[i] = fromF<T>(outside ? p.extrapolation : acc);
    }
}

// Dispatch on the floating types.
template<class F>
cudaError_t onFloat(DType t, F &&f)
{
    switch (t) {
    case DType::F32: f(float{}); break;
    case DType::F16: f(__half{}); break;
    case DType::BF16: f(__nv_bfloat16{}); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

template<class F>
cudaError_t onElementBytes(std::size_t bytes, F &&f)
{
    switch (bytes) {
    case 1: f(std::uint8_t{}); break;
    case 2: f(std::uint16_t{}); break;
    case 4: f(std::uint32_t{}); break;
    case 8: f(std::uint64_t{}); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

template<class F>
cudaError_t onAnyType(DType t, F &&f)
{
    switch (t) {
    case DType::F32: f(float{}); break;
    case DType::F16: f(__half{}); break;
    case DType::BF16: f(__nv_bfloat16{}); break;
    case DType::F64: f(double{}); break;
    case DType::I64: f(std::int64_t{}); break;
    case DType::I32: f(std::int32_t{}); break;
    case DType::I8: f(std::int8_t{}); break;
    case DType::U8: f(std::uint8_t{}); break;
    }
    return cudaSuccess;
}

template<class T>
constexpr bool isFloating()
{
    return std::is_floating_point_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
}

} // namespace

cudaError_t launchUnary(Unary op, DType type, const void *x, void *y, std::int64_t n, UnaryParams p,
                        cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (type == DType::I64 || type == DType::I32) {
        if (type == DType::I64)
            unaryIntKernel<<<gridFor(n), kThreads, 0, stream>>>(op, static_cast<const std::int64_t *>(x),
                                                                 static_cast<std::int64_t *>(y), n);
        else
            unaryIntKernel<<<gridFor(n), kThreads, 0, stream>>>(op, static_cast<const std::int32_t *>(x),
                                                                 static_cast<std::int32_t *>(y), n);
        return cudaGetLastError();
    }
    return onFloat(type, [&](auto t) {
        using T = decltype(t);
        unaryKernel<<<gridFor(n), kThreads, 0, stream>>>(op, static_cast<const T *>(x), static_cast<T *>(y), n, p);
    });
}

cudaError_t launchBinary(Binary op, DType type, const void *a, const IndexMap &ma, const void *b,
                         const IndexMap &mb, void *y, std::int64_t n, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    if (op == Binary::And || op == Binary::Or || op == Binary::Xor) {
        logicKernel<<<gridFor(n), kThreads, 0, stream>>>(op, static_cast<const std::uint8_t *>(a), ma,
                                                          static_cast<const std::uint8_t *>(b), mb,
                                                          static_cast<std::uint8_t *>(y), n);
        return cudaGetLastError();
    }
    const bool compare = op >= Binary::Equal && op <= Binary::GreaterOrEqual;
    cudaError_t err = cudaSuccess;
    onAnyType(type, [&](auto t) {
        using T = decltype(t);
        constexpr bool fl = isFloating<T>();
        if constexpr (std::is_same_v<T, double>) {
            err = cudaErrorInvalidValue; // float64 arithmetic is the host's (these compute in float)
        } else if (compare) {
            compareKernel<T, fl><<<gridFor(n), kThreads, 0, stream>>>(
                op, static_cast<const T *>(a), ma, static_cast<const T *>(b), mb, static_cast<std::uint8_t *>(y), n);
        } else {
            binaryKernel<T, fl><<<gridFor(n), kThreads, 0, stream>>>(
                op, static_cast<const T *>(a), ma, static_cast<const T *>(b), mb, static_cast<T *>(y), n);
        }
    });
    return err != cudaSuccess ? err : cudaGetLastError();
}

cudaError_t launchWhere(std::size_t elementBytes, const std::uint8_t *cond, const IndexMap &mc, const void *x,
                        const IndexMap &mx, const void *y, const IndexMap &my, void *out, std::int64_t n,
                        cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    return onElementBytes(elementBytes, [&](auto e) {
        using E = decltype(e);
        whereKernel<<<gridFor(n), kThreads, 0, stream>>>(cond, mc, static_cast<const E *>(x), mx,
                                                          static_cast<const E *>(y), my, static_cast<E *>(out), n);
    });
}

cudaError_t launchGatherMap(std::size_t elementBytes, const void *in, const IndexMap &map, void *out, std::int64_t n,
                            cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    return onElementBytes(elementBytes, [&](auto e) {
        using E = decltype(e);
        gatherMapKernel<<<gridFor(n), kThreads, 0, stream>>>(static_cast<const E *>(in), map, static_cast<E *>(out), n);
    });
}

cudaError_t launchCast(DType from, DType to, const void *x, void *y, std::int64_t n, cudaStream_t stream,
                       bool toBool)
{
    if (n == 0)
        return cudaSuccess;
    // Bool targets are U8 with toBool: the caller passes U8 for both, and says bool by `to`.
    onAnyType(from, [&](auto f) {
        using From = decltype(f);
        onAnyType(to, [&](auto t) {
            using To = decltype(t);
            castKernel<From, To><<<gridFor(n), kThreads, 0, stream>>>(static_cast<const From *>(x),
                                                                      static_cast<To *>(y), n, toBool);
        });
    });
    return cudaGetLastError();
}

cudaError_t launchSoftmax(DType type, bool log, const void *x, void *y, std::int64_t rows, std::int64_t cols,
                          cudaStream_t stream)
{
    if (rows == 0 || cols == 0)
        return cudaSuccess;
    if (rows > 2147483647)
        return cudaErrorInvalidValue;
    return onFloat(type, [&](auto t) {
        using T = decltype(t);
        softmaxKernel<<<unsigned(rows), kThreads, 0, stream>>>(static_cast<const T *>(x), static_cast<T *>(y), cols, log);
    });
}

cudaError_t launchReduce(DType type, RowReduce op, const void *x, void *y, const ReduceMap &m, cudaStream_t stream)
{
    if (m.outputs == 0)
        return cudaSuccess;
    if (m.count == 0 || (m.count > 32 && m.outputs > 2147483647))
        return cudaErrorInvalidValue;
    return onFloat(type, [&](auto t) {
        using T = decltype(t);
        const auto *in = static_cast<const T *>(x);
        auto *out = static_cast<T *>(y);
        // A block per output pays off from a few dozen elements; below, a thread per output.
        if (m.count <= 32)
            reduceSmallKernel<<<gridFor(m.outputs), kThreads, 0, stream>>>(in, out, m, op);
        else
            reduceKernel<<<unsigned(m.outputs), kThreads, 0, stream>>>(in, out, m, op);
    });
}

cudaError_t launchRowReduce(DType type, RowReduce op, const void *x, void *y, std::int64_t rows, std::int64_t cols,
                            cudaStream_t stream)
{
    if (rows == 0)
        return cudaSuccess;
    if (rows > 2147483647 || cols == 0)
        return cudaErrorInvalidValue;
    ReduceMap m;
    if (!reduceMap({rows, cols}, {false, true}, m))
        return cudaErrorInvalidValue;
    return launchReduce(type, op, x, y, m, stream);
}

cudaError_t launchArgReduce(DType type, bool isMax, bool selectLast, const void *x, std::int64_t *y,
                            const ReduceMap &m, cudaStream_t stream)
{
    if (m.outputs == 0)
        return cudaSuccess;
    if (m.count == 0 || m.outputs > 2147483647)
        return cudaErrorInvalidValue;
    return onFloat(type, [&](auto t) {
        using T = decltype(t);
        if (isMax)
            argReduceKernel<T, true><<<unsigned(m.outputs), kThreads, 0, stream>>>(static_cast<const T *>(x), y, m,
                                                                                   selectLast);
        else
            argReduceKernel<T, false><<<unsigned(m.outputs), kThreads, 0, stream>>>(static_cast<const T *>(x), y, m,
                                                                                    selectLast);
    });
}

cudaError_t launchCumSum(DType type, const void *x, void *y, std::int64_t outer, std::int64_t n, std::int64_t inner,
                         bool exclusive, bool reverse, cudaStream_t stream)
{
    const std::int64_t lines = outer * inner;
    if (lines == 0 || n == 0)
        return cudaSuccess;
    if (type == DType::I8 || type == DType::U8)
        return cudaErrorInvalidValue;
    onAnyType(type, [&](auto t) {
        using T = decltype(t);
        if constexpr (!std::is_same_v<T, std::int8_t> && !std::is_same_v<T, std::uint8_t>)
            cumSumKernel<<<gridFor(lines), kThreads, 0, stream>>>(static_cast<const T *>(x), static_cast<T *>(y), lines,
                                                                  n, inner, exclusive, reverse);
    });
    return cudaGetLastError();
}

cudaError_t launchPad(std::size_t elementBytes, const void *x, void *y, const PadMap &m, std::uint64_t valueBits,
                      std::int64_t n, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    return onElementBytes(elementBytes, [&](auto e) {
        using E = decltype(e);
        padKernel<<<gridFor(n), kThreads, 0, stream>>>(static_cast<const E *>(x), static_cast<E *>(y), m, E(valueBits), n);
    });
}

cudaError_t launchTile(std::size_t elementBytes, const void *x, void *y, const TileMap &m, std::int64_t n,
                       cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    return onElementBytes(elementBytes, [&](auto e) {
        using E = decltype(e);
        tileKernel<<<gridFor(n), kThreads, 0, stream>>>(static_cast<const E *>(x), static_cast<E *>(y), m, n);
    });
}

cudaError_t launchTrilu(std::size_t elementBytes, const void *x, void *y, std::int64_t rows, std::int64_t cols,
                        std::int64_t k, bool upper, std::int64_t n, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    return onElementBytes(elementBytes, [&](auto e) {
        using E = decltype(e);
        triluKernel<<<gridFor(n), kThreads, 0, stream>>>(static_cast<const E *>(x), static_cast<E *>(y), rows, cols, k,
                                                         upper, n);
    });
}

cudaError_t launchLayerNorm(DType type, bool rms, const void *x, const void *scale, const void *bias, void *y,
                            std::int64_t rows, std::int64_t cols, float epsilon, cudaStream_t stream)
{
    if (rows == 0 || cols == 0)
        return cudaSuccess;
    if (rows > 2147483647)
        return cudaErrorInvalidValue;
    return onFloat(type, [&](auto t) {
        using T = decltype(t);
        layerNormKernel<<<unsigned(rows), kThreads, 0, stream>>>(static_cast<const T *>(x), static_cast<const T *>(scale),
                                                                  static_cast<const T *>(bias), static_cast<T *>(y), cols,
                                                                  epsilon, rms);
    });
}

cudaError_t launchBatchNorm(DType type, const void *x, const float *scale, const float *bias, const float *mean,
                            const float *var, void *y, std::int64_t batch, std::int64_t channels,
                            std::int64_t spatial, float epsilon, cudaStream_t stream)
{
    const std::int64_t n = batch * channels * spatial;
    if (n == 0)
        return cudaSuccess;
    return onFloat(type, [&](auto t) {
        using T = decltype(t);
        batchNormKernel<<<gridFor(n), kThreads, 0, stream>>>(static_cast<const T *>(x), scale, bias, mean, var,
                                                              static_cast<T *>(y), n, channels, spatial, epsilon);
    });
}

cudaError_t launchGather(std::size_t elementBytes, const void *data, const std::int64_t *indices, void *out,
                         std::int64_t outer, std::int64_t axisDim, std::int64_t count, std::int64_t inner,
                         cudaStream_t stream)
{
    const std::int64_t n = outer * count * inner;
    if (n == 0)
        return cudaSuccess;
    return onElementBytes(elementBytes, [&](auto e) {
        using E = decltype(e);
        gatherKernel<<<gridFor(n), kThreads, 0, stream>>>(static_cast<const E *>(data), indices, static_cast<E *>(out),
                                                           outer, axisDim, count, inner);
    });
}

cudaError_t launchResize(DType type, const void *x, void *y, std::int64_t n, const ResizeParams &p,
                         const std::int64_t *indices, const float *weights, cudaStream_t stream)
{
    if (n == 0)
        return cudaSuccess;
    return onFloat(type, [&](auto t) {
        using T = decltype(t);
        resizeKernel<<<gridFor(n), kThreads, 0, stream>>>(static_cast<const T *>(x), static_cast<T *>(y), n, p, indices,
                                                           weights);
    });
}

cudaError_t launchBiasActivation(DType type, void *y, const void *bias, std::int64_t rows, std::int64_t cols,
                                 std::int64_t inner, Unary activation, UnaryParams p, cudaStream_t stream)
{
    const std::int64_t n = rows * cols * inner;
    if (n == 0)
        return cudaSuccess;
    return onFloat(type, [&](auto t) {
        using T = decltype(t);
        biasActivationKernel<<<gridFor(n), kThreads, 0, stream>>>(static_cast<T *>(y), static_cast<const T *>(bias), n,
                                                                   cols, inner, activation, p);
    });
}

} // namespace opscope::gpu
