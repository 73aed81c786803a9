// Kernels over rows and reduced axes: Softmax, every Reduce*, ArgMax/ArgMin, CumSum, LayerNorm and
// BatchNorm. One block per row or output, float accumulation for the half types.

#include "cudaops_common.cuh"

namespace opscope::gpu {
namespace {

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

} // namespace

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

} // namespace opscope::gpu
