#pragma once
// Exact integer GEMM for ConvInteger, MatMulInteger, QLinearConv and QLinearMatMul: every result
// is Σ_k (w − w0)·(x − x0) in int32 (wrapping like ONNX Runtime's MLAS), never through float and
// never with a saturating intermediate.
//
// One operand is the weights, prepared once. One zero point for all of them is the GEMM's offset
// for that operand (oneDNN subtracts it exactly). Zero points per channel: w − s per channel, where
// the shift s is the channel's zero point when every w − w0 fits 8 bits, else 128 (uint8) or 0
// (int8); the rest, d = s − w0, is added back exactly as d·Σ_k (x − x0). The other operand is the activations,
// whatever their zero point (int8 ones are moved by 128 to uint8 or back: the differences stay).
//
// oneDNN's u8·s8 GEMM is exact only where it multiplies with VNNI (vpdpbusd, int32 sums). Without
// VNNI its kernels pair products in int16 with saturation (vpmaddubsw: 255·127·2 > 32767), so the
// weights are split into 64·hi + lo with small parts that cannot saturate, and two GEMMs are
// combined in int32. The path follows oneDNN's effective ISA (which DNNL_MAX_CPU_ISA lowers), not
// the CPU's flags.

#include "util/status.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace opscope::kernels {

enum class Int8GemmPath
{
    Vnni,      // one oneDNN u8s8 GEMM (VNNI or AMX)
    Split,     // two oneDNN u8s8 GEMMs on split weights (AVX2 / AVX-512 without VNNI)
    Reference, // plain int32 loops (older CPUs)
};

// The path this process takes; `force` overrides it for tests (nullopt: back to detection).
// Weights prepared under one path still run exactly under another (the loops take them).
Int8GemmPath int8GemmPath();
void forceInt8GemmPath(std::optional<Int8GemmPath> path);
const char *int8GemmPathName(Int8GemmPath path);

// value(o, kk): the stored weight (uint8 or int8, `unsignedW`) of output channel o at reduction
// index kk; zeroPoint(o): its zero point.
using WeightValue = std::function<std::int32_t(std::int64_t o, std::int64_t kk)>;
using WeightZero = std::function<std::int32_t(std::int64_t o)>;

// Weights on the left, C[m][n] = Σ_k (W − w0)[m][k] · (X[k][n] − x0), X int8 [k][n] row-major:
// the convolution form (W [M][C·k], X the im2col columns, C in NCHW order).
struct Int8LeftWeights
{
    std::int64_t m = 0, k = 0;
    std::vector<std::uint8_t> w;      // uint8 [m][k]: w − s + 128, or w (+128 for int8) with one zero point
    std::vector<std::uint8_t> hi, lo; // Split path: w = 64·hi + lo, hi ≤ 3, lo ≤ 63
    std::vector<std::int32_t> d;      // per row; empty when all 0
    std::int32_t offset = 128;        // the GEMM's offset for w: w − offset + d = the weight − w0
};
Int8LeftWeights prepareLeftWeights(std::int64_t m, std::int64_t k, bool unsignedW, const WeightValue &value,
                                   const WeightZero &zeroPoint);
// X holds (x − 128) for uint8 activations, x for int8 ones; xZero likewise (x0 − 128 or x0).
Status gemmLeftExact(const Int8LeftWeights &w, std::int64_t n, const std::int8_t *x, std::int64_t ldx,
                     std::int8_t xZero, std::int32_t *c, std::int64_t ldc);

// Weights on the right, C[m][n] = Σ_k (A[m][k] − a0[m]) · (W − w0)[k][n], A uint8 [m][k]: the
// matmul form. value(o, kk) and zeroPoint(o) are indexed by the output column o = n.
struct Int8RightWeights
{
    std::int64_t k = 0, n = 0;
    std::vector<std::int8_t> w;       // int8 [k][n]: w − s, or w (−128 for uint8) with one zero point
    std::vector<std::int8_t> hi, lo;  // Split path: w = 64·hi + lo, |hi| ≤ 2, |lo| ≤ 32
    std::vector<std::int32_t> d;      // per column; empty when all 0
    std::int32_t offset = 0;          // the GEMM's offset for w: w − offset + d = the weight − w0
    std::vector<std::int32_t> colSum; // Σ_k (w − offset)[k][n], for zero points per row of A
};
Int8RightWeights prepareRightWeights(std::int64_t k, std::int64_t n, bool unsignedW, const WeightValue &value,
                                     const WeightZero &zeroPoint);
// A holds uint8 activations (int8 ones moved by +128, a0 likewise); rowZero: a0 per row, or null
// for a0 everywhere.
Status gemmRightExact(std::int64_t m, const std::uint8_t *a, std::int64_t lda, std::uint8_t a0,
                      const std::int32_t *rowZero, const Int8RightWeights &w, std::int32_t *c, std::int64_t ldc);

} // namespace opscope::kernels
