// Data movement: gathers through index maps, Gather along an axis, Pad, Tile, Trilu and Resize.
// Each output element reads its source through the index functions of indexing.h.

#include "cudaops_common.cuh"

namespace opscope::gpu {
namespace {

template<class E>
__global__ void gatherMapKernel(const E *in, IndexMap m, E *out, std::int64_t n)
{
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[mapIndex(m, i)];
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

} // namespace

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

} // namespace opscope::gpu
