// Transpose's copy. Axes of size 1 are dropped and runs of axes that stay adjacent are merged
// first: what is left is what the copy really does, and it is one of two shapes —
//
//   innermost run kept       [..., L] ← source rows of L contiguous elements: memcpy per row
//   (heads 0213, most Reshape-like permutes)
//
//   innermost axis moved     out [.., A, .., B]  with  A the source's contiguous axis: a batch of
//   (NCHW↔NHWC, Kᵀ, a YOLO   2-D transposes, a row at a time where B rows' cache lines fit L1,
//   head's [3,85,1600]→      else in 16×16 tiles so that both the rows read and the rows written
//   [3,1600,85])             stay there (NHWC→NCHW [1,56,56,64]: 0.13 → 0.07 ms)

#include "runtime/kernels/kernelutil.h"

#include <algorithm>
#include <cstring>

namespace opscope::kernels {

namespace {

struct MergedPermutation
{
    Shape64 dims;      // output axes, unit axes dropped and adjacent runs merged
    Shape64 srcStride; // the source stride of each
};

MergedPermutation merged(const Shape64 &inShape, const std::vector<std::int64_t> &perm)
{
    const Shape64 inStrides = stridesOf(inShape);
    MergedPermutation m;
    for (std::size_t d = 0; d < perm.size(); ++d) {
        const std::int64_t dim = inShape[std::size_t(perm[d])], stride = inStrides[std::size_t(perm[d])];
        if (dim == 1)
            continue;
        // The previous output axis is the source axis right outside this one: one axis.
        if (!m.dims.empty() && m.srcStride.back() == dim * stride) {
            m.dims.back() *= dim;
            m.srcStride.back() = stride;
            continue;
        }
        m.dims.push_back(dim);
        m.srcStride.push_back(stride);
    }
    return m;
}

// Offsets of the outer index `i` over `dims` (outermost first), in the source and the output.
inline void offsetsOf(std::int64_t i, const Shape64 &dims, const Shape64 &src, const Shape64 &dst, std::int64_t &s,
                      std::int64_t &o)
{
    s = 0;
    o = 0;
    for (std::size_t d = dims.size(); d-- > 0;) {
        const std::int64_t k = i % dims[d];
        i /= dims[d];
        s += k * src[d];
        o += k * dst[d];
    }
}

template<class T>
void copyPermuted(const T *src, T *dst, const MergedPermutation &m)
{
    const std::size_t rank = m.dims.size();
    if (rank == 0) {
        dst[0] = src[0];
        return;
    }
    const Shape64 dstStride = stridesOf(m.dims);
    const std::int64_t last = m.dims.back();
    constexpr std::int64_t kWork = 32768; // elements below which threads cost more than they save
    // Rows read with a stride: each output row touches `last` cache lines, and the next row the
    // same lines one element on. Up to 256 of them (16 KiB) stay in L1 and a row at a time is the
    // fastest copy (a YOLO head's [3,85,1600]→[3,1600,85], NCHW→NHWC at 64 channels); beyond,
    // every row misses and 16×16 tiles are twice as fast (NHWC→NCHW: 3136 lines per row).
    // Rows read whole (stride 1) are a memcpy each.
    const std::size_t j = std::size_t(std::find(m.srcStride.begin(), m.srcStride.end(), 1) - m.srcStride.begin());
    if (last <= 256 || j + 1 >= rank) { // j == rank: no contiguous source axis, impossible for a dense tensor
        const Shape64 outer(m.dims.begin(), m.dims.end() - 1), outerSrc(m.srcStride.begin(), m.srcStride.end() - 1),
            outerDst(dstStride.begin(), dstStride.end() - 1);
        const std::int64_t stride = m.srcStride.back();
        parallelFor(
            product(outer),
            [&](std::int64_t r) {
                std::int64_t s, o;
                offsetsOf(r, outer, outerSrc, outerDst, s, o);
                if (stride == 1) {
                    std::memcpy(dst + o, src + s, std::size_t(last) * sizeof(T));
                    return;
                }
                for (std::int64_t k = 0; k < last; ++k)
                    dst[o + k] = src[s + k * stride];
            },
            std::max<std::int64_t>(1, kWork / last));
        return;
    }
    const std::int64_t rowsA = m.dims[j], dstStrideA = dstStride[j], srcStrideB = m.srcStride.back();
    Shape64 rest, restSrc, restDst; // every axis but j and the last
    for (std::size_t d = 0; d + 1 < rank; ++d)
        if (d != j) {
            rest.push_back(m.dims[d]);
            restSrc.push_back(m.srcStride[d]);
            restDst.push_back(dstStride[d]);
        }
    constexpr std::int64_t kTile = 16;
    const std::int64_t bands = (rowsA + kTile - 1) / kTile;
    parallelFor(
        product(rest) * bands,
        [&](std::int64_t task) {
            std::int64_t s, o;
            offsetsOf(task / bands, rest, restSrc, restDst, s, o);
            const std::int64_t a0 = (task % bands) * kTile, a1 = std::min(rowsA, a0 + kTile);
            for (std::int64_t b0 = 0; b0 < last; b0 += kTile) {
                const std::int64_t b1 = std::min(last, b0 + kTile);
                for (std::int64_t a = a0; a < a1; ++a) {
                    T *row = dst + o + a * dstStrideA;
                    const T *col = src + s + a;
                    for (std::int64_t b = b0; b < b1; ++b)
                        row[b] = col[b * srcStrideB];
                }
            }
        },
        std::max<std::int64_t>(1, kWork / (kTile * last)));
}

} // namespace

Status permuteCopy(const RuntimeTensor &x, const std::vector<std::int64_t> &perm, RuntimeTensor &out)
{
    if (x.elementCount() == 0)
        return Status::ok();
    if (x.dtype() == DataType::String) {
        const std::size_t rank = x.rank();
        const Shape64 inStrides = stridesOf(x.shape());
        Broadcast b;
        b.outShape = out.shape();
        b.strides = {Shape64(rank)};
        for (std::size_t d = 0; d < rank; ++d)
            b.strides[0][d] = inStrides[std::size_t(perm[d])];
        forEachBroadcast(b, [&](std::int64_t o, const std::int64_t *i) {
            out.mutableStrings()[std::size_t(o)] = x.strings()[std::size_t(i[0])];
        });
        return Status::ok();
    }
    const MergedPermutation m = merged(x.shape(), perm);
    return dispatchBySize(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        copyPermuted(x.data<T>(), out.mutableData<T>(), m);
        return Status::ok();
    });
}

} // namespace opscope::kernels
