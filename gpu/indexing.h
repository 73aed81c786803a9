#pragma once
// Index arithmetic of the CUDA kernels, as plain functions that compile for the host too: the
// kernels call them per element, the tests call them on the host and compare with the CPU
// runtime's results (no GPU needed to test broadcasting, transposes or concatenation offsets).
// C++17 and no core headers: nvcc compiles this.

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define OPSCOPE_HD __host__ __device__
#else
#define OPSCOPE_HD
#endif

namespace opscope::gpu {

constexpr int kMaxDims = 8;

// Output linear index → operand offset. `outStrides` are the output's row-major strides,
// `inStrides` the operand's, 0 along dims it broadcasts (or, for a transpose, its strides in the
// output's dim order). Dims of the output are collapsed where possible before this is built, so
// rank is small in practice.
struct IndexMap
{
    int rank = 0;
    std::int64_t outStrides[kMaxDims] = {};
    std::int64_t inStrides[kMaxDims] = {};
};

OPSCOPE_HD inline std::int64_t mapIndex(const IndexMap &m, std::int64_t index)
{
    std::int64_t offset = 0;
    for (int d = 0; d < m.rank; ++d) {
        const std::int64_t c = index / m.outStrides[d];
        index -= c * m.outStrides[d];
        offset += c * m.inStrides[d];
    }
    return offset;
}

// How Concat and Split move `rows` rows of `width` bytes between buffers whose rows lie
// `dstPitch` and `srcPitch` bytes apart. cudaMemcpy2D refuses a pitch above the device's
// cudaDevAttrMaxPitch (2^31−1 bytes on current GPUs: a Concat of rows wider than 2 GiB), so such
// a copy is one flat block where the rows are contiguous, one copy per row where there are few
// rows, and else not the device's to do (the node runs on the host).
enum class RowCopy
{
    Nothing, // no bytes
    Flat,    // one contiguous block of width × rows
    Strided, // one cudaMemcpy2D
    ByRow,   // a cudaMemcpy per row
    TooMany, // pitches past the limit and too many rows to copy one by one
};

inline RowCopy planRowCopy(std::size_t dstPitch, std::size_t srcPitch, std::size_t width, std::size_t rows,
                           std::size_t maxPitch, std::size_t maxRowCopies = 4096)
{
    if (width == 0 || rows == 0)
        return RowCopy::Nothing;
    if (rows == 1 || (dstPitch == width && srcPitch == width))
        return RowCopy::Flat;
    if (dstPitch <= maxPitch && srcPitch <= maxPitch)
        return RowCopy::Strided;
    return rows <= maxRowCopies ? RowCopy::ByRow : RowCopy::TooMany;
}

inline std::vector<std::int64_t> rowMajorStrides(const std::vector<std::int64_t> &shape)
{
    std::vector<std::int64_t> s(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;)
        s[i - 1] = s[i] * shape[i];
    return s;
}

// The multidirectional (numpy) broadcast of shapes; false when they do not broadcast.
inline bool broadcastShape(const std::vector<std::vector<std::int64_t>> &shapes, std::vector<std::int64_t> &out)
{
    std::size_t rank = 0;
    for (const auto &s : shapes)
        rank = s.size() > rank ? s.size() : rank;
    out.assign(rank, 1);
    for (const auto &s : shapes)
        for (std::size_t i = 0; i < s.size(); ++i) {
            std::int64_t &o = out[rank - s.size() + i];
            const std::int64_t d = s[i];
            if (o == 1)
                o = d;
            else if (d != 1 && d != o)
                return false;
        }
    return true;
}

// Maps for operands broadcast to `out`. Output dims where every operand either broadcasts or is
// contiguous with the next dim are merged, so [8,197,768] + [768] is a rank-2 map. False when
// the merged rank exceeds kMaxDims.
inline bool broadcastMaps(const std::vector<std::int64_t> &out, const std::vector<std::vector<std::int64_t>> &operands,
                          std::vector<IndexMap> &maps)
{
    const std::size_t rank = out.size();
    const std::size_t n = operands.size();
    // Each operand's strides in output dims (0 where it broadcasts).
    std::vector<std::vector<std::int64_t>> strides(n, std::vector<std::int64_t>(rank, 0));
    for (std::size_t k = 0; k < n; ++k) {
        const auto &s = operands[k];
        const std::vector<std::int64_t> rs = rowMajorStrides(s);
        for (std::size_t i = 0; i < s.size(); ++i)
            if (s[i] != 1)
                strides[k][rank - s.size() + i] = rs[i];
    }
    // Merge dim d into d+1 (from the right) when, for every operand, stride[d] == stride[d+1] *
    // out[d+1] (contiguous) or both are 0 (broadcast along both).
    std::vector<std::int64_t> dims;
    std::vector<std::vector<std::int64_t>> merged(n);
    for (std::size_t i = rank; i-- > 0;) {
        if (out[i] == 1)
            continue;
        bool canMerge = !dims.empty();
        for (std::size_t k = 0; k < n && canMerge; ++k) {
            const std::int64_t inner = merged[k].back();
            const std::int64_t s = strides[k][i];
            canMerge = (s == 0 && inner == 0) || (s != 0 && inner != 0 && s == inner * dims.back());
        }
        if (canMerge) {
            // The merged dim keeps the inner stride; its size grows.
            dims.back() *= out[i];
            continue;
        }
        dims.push_back(out[i]);
        for (std::size_t k = 0; k < n; ++k)
            merged[k].push_back(strides[k][i]);
    }
    if (dims.size() > std::size_t(kMaxDims))
        return false;
    maps.assign(n, IndexMap{});
    // dims are innermost first: reverse into row-major order.
    const int r = int(dims.size());
    std::int64_t outStride = 1;
    for (int j = 0; j < r; ++j) {
        const int d = r - 1 - j;
        for (std::size_t k = 0; k < n; ++k) {
            maps[k].rank = r;
            maps[k].outStrides[d] = outStride;
            maps[k].inStrides[d] = merged[k][std::size_t(j)];
        }
        outStride *= dims[std::size_t(j)];
    }
    return true;
}

// Transpose of `in` by `perm`: output index → input offset. False when the rank exceeds kMaxDims.
inline bool transposeMap(const std::vector<std::int64_t> &in, const std::vector<std::int64_t> &perm, IndexMap &map)
{
    if (in.size() > std::size_t(kMaxDims) || perm.size() != in.size())
        return false;
    const std::vector<std::int64_t> inStrides = rowMajorStrides(in);
    std::vector<std::int64_t> out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i)
        out[i] = in[std::size_t(perm[i])];
    const std::vector<std::int64_t> outStrides = rowMajorStrides(out);
    map = IndexMap{};
    map.rank = int(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        map.outStrides[i] = outStrides[i];
        map.inStrides[i] = inStrides[std::size_t(perm[i])];
    }
    return true;
}

// A reduction or normalization over a trailing block of dims is rows × cols: [rows, cols] with
// cols the product of dims from `axis` on. Softmax (opset 13) over a non-last axis is not.
struct RowsCols
{
    std::int64_t rows = 1;
    std::int64_t cols = 1;
};

inline RowsCols rowsCols(const std::vector<std::int64_t> &shape, std::size_t axis)
{
    RowsCols rc;
    for (std::size_t i = 0; i < shape.size(); ++i)
        (i < axis ? rc.rows : rc.cols) *= shape[i];
    return rc;
}

// ---- Reductions over any set of axes ---------------------------------------------------------
// Output element o (row-major over the kept dims) reduces x[mapIndex(kept, o) + offset(j)] for
// j < count, offset(j) = mapIndex(reduced, j). Adjacent dims of one kind merge and size-1 dims
// drop out, so a reduction of [N, C, H, W] over {0, 2, 3} has one kept dim and two reduced ones,
// and one over trailing axes is a contiguous row per output (`contiguous`: offset(j) = j).
struct ReduceMap
{
    IndexMap kept;
    IndexMap reduced;
    std::int64_t outputs = 1;
    std::int64_t count = 1;
    bool contiguous = true;
};

// False when the merged dims exceed kMaxDims on either side.
inline bool reduceMap(const std::vector<std::int64_t> &shape, const std::vector<bool> &reduce, ReduceMap &m)
{
    const std::vector<std::int64_t> strides = rowMajorStrides(shape);
    std::vector<std::int64_t> dims[2], steps[2]; // [0] kept, [1] reduced
    int last = -1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 1)
            continue;
        const int kind = i < reduce.size() && reduce[i] ? 1 : 0;
        if (kind == last) {
            // Row-major: the run so far is contiguous with this dim (size-1 dims between change no stride).
            dims[kind].back() *= shape[i];
            steps[kind].back() = strides[i];
        } else {
            dims[kind].push_back(shape[i]);
            steps[kind].push_back(strides[i]);
        }
        last = kind;
    }
    if (dims[0].size() > std::size_t(kMaxDims) || dims[1].size() > std::size_t(kMaxDims))
        return false;
    m = ReduceMap{};
    IndexMap *maps[2] = {&m.kept, &m.reduced};
    std::int64_t *counts[2] = {&m.outputs, &m.count};
    for (int k = 0; k < 2; ++k) {
        const std::vector<std::int64_t> out = rowMajorStrides(dims[k]);
        maps[k]->rank = int(dims[k].size());
        *counts[k] = 1;
        for (std::size_t d = 0; d < dims[k].size(); ++d) {
            maps[k]->outStrides[d] = out[d];
            maps[k]->inStrides[d] = steps[k][d];
            *counts[k] *= dims[k][d];
        }
    }
    m.contiguous = m.reduced.rank == 0 || (m.reduced.rank == 1 && m.reduced.inStrides[0] == 1);
    return true;
}

OPSCOPE_HD inline std::int64_t reduceOffset(const ReduceMap &m, std::int64_t output, std::int64_t j)
{
    return mapIndex(m.kept, output) + (m.contiguous ? j : mapIndex(m.reduced, j));
}

// ArgMax/ArgMin as the CPU runtime scans an axis: the first element is the best so far, a later one
// replaces it when strictly better (or, with select_last_index, better or equal). NaN is never
// better, so a NaN first element stays the answer and a later NaN is passed over. A parallel scan
// combines partial bests with argCombine, which gives the sequential answer in any grouping
// (index < 0: no candidate yet; the first element is handled by the caller: a NaN there wins).
template<class V>
OPSCOPE_HD inline bool argBetter(V v, std::int64_t j, V best, std::int64_t bestIndex, bool isMax, bool selectLast)
{
    if (v != v)
        return false;
    if (bestIndex < 0)
        return true;
    if (v == best)
        return selectLast ? j > bestIndex : j < bestIndex;
    return isMax ? v > best : v < best;
}

// ---- Pad, Tile, Trilu, CumSum ---------------------------------------------------------------
enum class PadKind : int { Constant, Edge, Reflect, Wrap };

// Output element → input offset of a Pad, or −1 for the constant value. Per dim: the output's and
// input's sizes, the input's stride, the pad before (negative: cropped).
struct PadMap
{
    int rank = 0;
    std::int64_t outDims[kMaxDims] = {};
    std::int64_t inDims[kMaxDims] = {};
    std::int64_t inStrides[kMaxDims] = {};
    std::int64_t begin[kMaxDims] = {};
    PadKind mode = PadKind::Constant;
};

OPSCOPE_HD inline std::int64_t padAxisSource(std::int64_t i, std::int64_t begin, std::int64_t n, PadKind mode)
{
    const std::int64_t c = i - begin;
    if (c >= 0 && c < n)
        return c;
    if (mode == PadKind::Constant || n == 0)
        return -1;
    if (mode == PadKind::Edge)
        return c < 0 ? 0 : n - 1;
    if (mode == PadKind::Reflect)
        return c < 0 ? -c : 2 * (n - 1) - c;
    return ((c % n) + n) % n;
}

OPSCOPE_HD inline std::int64_t padSource(const PadMap &m, std::int64_t index)
{
    std::int64_t offset = 0;
    for (int d = m.rank - 1; d >= 0; --d) {
        const std::int64_t c = index % m.outDims[d];
        index /= m.outDims[d];
        const std::int64_t s = padAxisSource(c, m.begin[d], m.inDims[d], m.mode);
        if (s < 0)
            return -1;
        offset += s * m.inStrides[d];
    }
    return offset;
}

// Tile: output coordinate c of dim d reads the input's c mod inDims[d].
struct TileMap
{
    int rank = 0;
    std::int64_t outDims[kMaxDims] = {};
    std::int64_t inDims[kMaxDims] = {};
    std::int64_t inStrides[kMaxDims] = {};
};

OPSCOPE_HD inline std::int64_t tileSource(const TileMap &m, std::int64_t index)
{
    std::int64_t offset = 0;
    for (int d = m.rank - 1; d >= 0; --d) {
        const std::int64_t c = index % m.outDims[d];
        index /= m.outDims[d];
        offset += (c % m.inDims[d]) * m.inStrides[d];
    }
    return offset;
}

// Trilu over the last two dims ([…, rows, cols]): whether element `index` is kept (else zero).
OPSCOPE_HD inline bool triluKeeps(std::int64_t index, std::int64_t rows, std::int64_t cols, std::int64_t k,
                                  bool upper)
{
    const std::int64_t c = index % cols, r = (index / cols) % rows;
    return upper ? c - r >= k : c - r <= k;
}

// CumSum along an axis of n: line l of outer × inner, step s (reverse: from the end).
OPSCOPE_HD inline std::int64_t cumSumOffset(std::int64_t line, std::int64_t s, std::int64_t n, std::int64_t inner,
                                            bool reverse)
{
    const std::int64_t o = line / inner, i = line % inner, j = reverse ? n - 1 - s : s;
    return (o * n + j) * inner + i;
}

} // namespace opscope::gpu
