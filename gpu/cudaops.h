#pragma once
// The CUDA backend's own kernels, as launch functions over raw device pointers: no core headers,
// so that nvcc (C++17) compiles the kernels and the backend (C++20, g++) calls them. Each launch
// is asynchronous on `stream`; the returned error is the launch's (cudaGetLastError), not the
// kernel's outcome. Types: float32 and float16 compute in float; integer and bool types where
// models use them (casts, comparisons, copies).

#include "indexing.h"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

namespace opscope::gpu {

enum class DType : int { F32, F16, BF16, F64, I64, I32, I8, U8 }; // U8: uint8 and bool

enum class Unary : int {
    Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Neg, Abs, Erf, Reciprocal, Floor, Ceil, Round, Sign, Sin, Cos,
    Softplus, Softsign, LeakyRelu, Elu, Selu, HardSigmoid, HardSwish, GeluErf, GeluTanh, Clip, Swish,
    Identity,
};

struct UnaryParams
{
    float alpha = 0.0f; // LeakyRelu, Elu, Selu, HardSigmoid, Swish (x·sigmoid(αx)); Clip's min
    float beta = 0.0f;  // HardSigmoid; Clip's max
    float gamma = 0.0f; // Selu
};

cudaError_t launchUnary(Unary op, DType type, const void *x, void *y, std::int64_t n, UnaryParams p,
                        cudaStream_t stream);

enum class Binary : int {
    Add, Sub, Mul, Div, Pow, Max, Min, PRelu,
    // float/int inputs, bool output
    Equal, Less, Greater, LessOrEqual, GreaterOrEqual,
    // bool inputs and output
    And, Or, Xor,
};

// y[i] = a[map(ma, i)] op b[map(mb, i)] for i < n. Comparisons write bool (one byte).
cudaError_t launchBinary(Binary op, DType type, const void *a, const IndexMap &ma, const void *b,
                         const IndexMap &mb, void *y, std::int64_t n, cudaStream_t stream);

// out[i] = cond[mc(i)] ? x[mx(i)] : y[my(i)], elements of `elementBytes`.
cudaError_t launchWhere(std::size_t elementBytes, const std::uint8_t *cond, const IndexMap &mc, const void *x,
                        const IndexMap &mx, const void *y, const IndexMap &my, void *out, std::int64_t n,
                        cudaStream_t stream);

// out[i] = in[map(i)], elements of 1, 2, 4 or 8 bytes: Transpose, Expand.
cudaError_t launchGatherMap(std::size_t elementBytes, const void *in, const IndexMap &map, void *out, std::int64_t n,
                            cudaStream_t stream);

// toBool: y = (x != 0) into U8 (Cast to bool); else a value conversion.
cudaError_t launchCast(DType from, DType to, const void *x, void *y, std::int64_t n, cudaStream_t stream,
                       bool toBool);

// Row-wise over [rows, cols] (one block per row, float accumulation).
cudaError_t launchSoftmax(DType type, bool log, const void *x, void *y, std::int64_t rows, std::int64_t cols,
                          cudaStream_t stream);

enum class RowReduce : int { Sum, Mean, Max, Min, SumSquare, L2, LogSumExp, Prod, L1, LogSum };
// Over any axes (indexing.h's ReduceMap): y[o] reduces x at reduceOffset(m, o, j), j < m.count.
cudaError_t launchReduce(DType type, RowReduce op, const void *x, void *y, const ReduceMap &m, cudaStream_t stream);
// ArgMax/ArgMin over the map's reduced axis (one axis: j is the index along it), int64 indices.
cudaError_t launchArgReduce(DType type, bool isMax, bool selectLast, const void *x, std::int64_t *y,
                            const ReduceMap &m, cudaStream_t stream);
// Over rows of `cols` contiguous elements.
cudaError_t launchRowReduce(DType type, RowReduce op, const void *x, void *y, std::int64_t rows, std::int64_t cols,
                            cudaStream_t stream);

// y = (x − mean)/sqrt(var + ε) · scale + bias over rows of `cols`; scale and bias have `cols`
// elements (bias may be null). rms: no mean (RMSNorm).
cudaError_t launchLayerNorm(DType type, bool rms, const void *x, const void *scale, const void *bias, void *y,
                            std::int64_t rows, std::int64_t cols, float epsilon, cudaStream_t stream);

// NCHW… inference batch normalization: per channel c of `channels`, over `spatial` elements.
// Parameters are float32.
cudaError_t launchBatchNorm(DType type, const void *x, const float *scale, const float *bias, const float *mean,
                            const float *var, void *y, std::int64_t batch, std::int64_t channels,
                            std::int64_t spatial, float epsilon, cudaStream_t stream);

// out[o, j, i] = data[o, idx[j], i] for o < outer, j < count, i < inner; indices already
// normalized and checked on the host.
cudaError_t launchGather(std::size_t elementBytes, const void *data, const std::int64_t *indices, void *out,
                         std::int64_t outer, std::int64_t axisDim, std::int64_t count, std::int64_t inner,
                         cudaStream_t stream);

// Resize by separable per-dimension tap tables (core's kernels::resizeTaps): output coordinate c
// of dim d reads input indices idx[offset[d] + c·taps[d] + k] with weights w[…], k < taps[d]; an
// index of −1 writes `extrapolation`.
struct ResizeParams
{
    int rank = 0;
    std::int64_t outStrides[kMaxDims] = {};
    std::int64_t outDims[kMaxDims] = {};
    std::int64_t inStrides[kMaxDims] = {};
    std::int64_t offset[kMaxDims] = {};
    int taps[kMaxDims] = {};
    float extrapolation = 0.0f;
};
cudaError_t launchResize(DType type, const void *x, void *y, std::int64_t n, const ResizeParams &p,
                         const std::int64_t *indices, const float *weights, cudaStream_t stream);

// y = x + bias along rows (bias has `cols` elements) then the activation: a fused epilogue for
// convolutions and GEMMs whose library call does not fuse them.
cudaError_t launchBiasActivation(DType type, void *y, const void *bias, std::int64_t rows, std::int64_t cols,
                                 std::int64_t inner, Unary activation, UnaryParams p, cudaStream_t stream);

// CumSum along an axis of n (outer × n × inner), in order per line: float sums as the CPU's.
cudaError_t launchCumSum(DType type, const void *x, void *y, std::int64_t outer, std::int64_t n, std::int64_t inner,
                         bool exclusive, bool reverse, cudaStream_t stream);

// Pad (padSource), elements of 1, 2, 4 or 8 bytes; `valueBits`: the constant's bytes, low first.
cudaError_t launchPad(std::size_t elementBytes, const void *x, void *y, const PadMap &m, std::uint64_t valueBits,
                      std::int64_t n, cudaStream_t stream);
cudaError_t launchTile(std::size_t elementBytes, const void *x, void *y, const TileMap &m, std::int64_t n,
                       cudaStream_t stream);
// Trilu over the last two dims: elements outside the band become zero.
cudaError_t launchTrilu(std::size_t elementBytes, const void *x, void *y, std::int64_t rows, std::int64_t cols,
                        std::int64_t k, bool upper, std::int64_t n, cudaStream_t stream);

} // namespace opscope::gpu
