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

} // namespace opscope::gpu
