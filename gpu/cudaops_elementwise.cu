// Elementwise kernels: unary activations, broadcast binary/compare/logic ops through index maps,
// Where, Cast, and a GEMM's bias + activation epilogue. Grid-stride loops over elements.

#include "cudaops_common.cuh"

namespace opscope::gpu {
namespace {

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
