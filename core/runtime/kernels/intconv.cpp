// Integer convolution, exact: im2col into int8 columns (x − 128 for uint8 activations, so the
// weights can be the uint8 side of oneDNN's u8·s8 GEMM and the output comes out in NCHW), one
// GEMM per group and block of output rows (intgemm.h); depthwise convolutions (one input and one
// output channel per group) as a direct loop instead, whose GEMMs would be 1 × 9.

#include "runtime/kernels/intconv.h"

#include "util/cpuclones.h"

#include "runtime/kernels/convgeometry.h"
#include "runtime/kernels/dnnlengine.h"
#include "runtime/kernels/intgemm.h"

#include <cstring>
#include <mutex>

namespace opscope::kernels {

namespace {

struct PreparedConv
{
    std::vector<Int8LeftWeights> groups;   // GEMM path: [mg][cg·k] per group
    std::vector<std::int32_t> depthwise;   // direct path: w − w0, [M][taps]
};

bool isDepthwise(const RuntimeTensor &x, const RuntimeTensor &w, std::int64_t g)
{
    return x.rank() == 4 && g > 1 && x.dim(1) == g && w.dim(0) == g;
}

std::shared_ptr<const PreparedConv> prepareConv(const RuntimeTensor &w, const RuntimeTensor *wzp, std::int64_t g,
                                                bool depthwise)
{
    auto p = std::make_shared<PreparedConv>();
    const std::int64_t m = w.dim(0), mg = m / g, kDim = product(w.shape(), 1);
    const bool perChannel = wzp && wzp->elementCount() > 1;
    const auto zero = [&](std::int64_t o) -> std::int32_t {
        return wzp ? std::int32_t(wzp->valueAsInt(perChannel ? o : 0)) : 0;
    };
    const auto value = [&](std::int64_t i) -> std::int32_t {
        return w.dtype() == DataType::UInt8 ? std::int32_t(w.data<std::uint8_t>()[i])
                                            : std::int32_t(w.data<std::int8_t>()[i]);
    };
    if (depthwise) {
        p->depthwise.resize(std::size_t(w.elementCount()));
        for (std::int64_t i = 0; i < w.elementCount(); ++i)
            p->depthwise[std::size_t(i)] = value(i) - zero(i / kDim);
        return p;
    }
    for (std::int64_t gi = 0; gi < g; ++gi)
        p->groups.push_back(prepareLeftWeights(
            mg, kDim, w.dtype() == DataType::UInt8,
            [&](std::int64_t o, std::int64_t kk) { return value((gi * mg + o) * kDim + kk); },
            [&](std::int64_t o) { return zero(gi * mg + o); }));
    return p;
}

// Direct depthwise 2-D convolution of one channel plane, exact in int32.
template<class T>
void depthwisePlane(const T *in, const std::int32_t *w, std::int32_t x0, const ConvGeometry &geo, std::int64_t IH,
                    std::int64_t IW, std::int64_t OH, std::int64_t OW, std::int32_t *out)
{
    const std::int64_t KH = geo.kernel[0], KW = geo.kernel[1];
    const std::int64_t sh = geo.strides[0], sw = geo.strides[1], dh = geo.dilations[0], dw = geo.dilations[1];
    std::vector<std::uint32_t> acc(static_cast<std::size_t>(OW));
    for (std::int64_t oh = 0; oh < OH; ++oh) {
        std::fill(acc.begin(), acc.end(), 0u);
        for (std::int64_t kh = 0; kh < KH; ++kh) {
            const std::int64_t ih = oh * sh - geo.padBegin[0] + kh * dh;
            if (ih < 0 || ih >= IH)
                continue; // padding: (x0 − x0)·w
            const T *row = in + ih * IW;
            for (std::int64_t kw = 0; kw < KW; ++kw) {
                const std::int32_t wv = w[kh * KW + kw];
                const std::int64_t off = kw * dw - geo.padBegin[1];
                // Output columns whose input column lies inside the row: [lo, hi).
                const std::int64_t lo = std::min(OW, off >= 0 ? 0 : (-off + sw - 1) / sw);
                const std::int64_t hi = std::max(lo, std::min(OW, IW - 1 - off < 0 ? 0 : (IW - 1 - off) / sw + 1));
                if (wv == 0)
                    continue;
                // Locals and __restrict: byte pointers may alias anything, which would keep the
                // compiler from vectorizing.
                std::uint32_t *__restrict a = acc.data();
                const T *__restrict src = row + off;
                const std::uint32_t bias = static_cast<std::uint32_t>(-wv * x0), mul = static_cast<std::uint32_t>(wv);
                if (sw == 1)
                    for (std::int64_t ow = lo; ow < hi; ++ow)
                        a[ow] += mul * static_cast<std::uint32_t>(std::int32_t(src[ow])) + bias;
                else
                    for (std::int64_t ow = lo; ow < hi; ++ow)
                        a[ow] += mul * static_cast<std::uint32_t>(std::int32_t(src[ow * sw])) + bias;
            }
        }
        std::memcpy(out + oh * OW, acc.data(), std::size_t(OW) * sizeof(std::int32_t));
    }
}

// Columns [cg·k][len] for output positions [o0, o0 + len) of 2-D convolution rows, bytes XOR
// `flip` (0x80: uint8 → x − 128), padding = pad (already flipped).
// d[i] = src[2·i] ^ f: stride-2 convolutions' columns (every downsampling layer of a CNN). With
// the stride a constant the compiler deinterleaves whole vectors; through the general loop's
// runtime stride it was a scalar load, multiply and store per byte, half of a small QLinearConv
// model's time.
OPSCOPE_CPU_CLONES void copyStride2Flipped(const std::uint8_t *__restrict src, std::uint8_t *__restrict d,
                                           std::int64_t n, std::uint8_t f)
{
    for (std::int64_t i = 0; i < n; ++i)
        d[i] = src[2 * i] ^ f;
}

void im2col2d(const std::uint8_t *xg, std::int64_t cg, const ConvGeometry &geo, std::int64_t IH, std::int64_t IW,
              std::int64_t OW, std::int64_t oh0, std::int64_t rows, std::int64_t ow0, std::int64_t ow1,
              std::uint8_t flip, std::uint8_t pad, std::uint8_t *cols)
{
    // Output columns [ow0, ow1) of each row: a row's columns may be cut into pieces (below).
    const std::int64_t KH = geo.kernel[0], KW = geo.kernel[1], kSize = KH * KW, W = ow1 - ow0, len = rows * W;
    const std::int64_t sh = geo.strides[0], sw = geo.strides[1];
    parallelFor(
        cg * kSize,
        [&](std::int64_t r) {
            const std::int64_t ci = r / kSize, kh = (r % kSize) / KW, kw = r % KW;
            const std::uint8_t *plane = xg + ci * IH * IW;
            std::uint8_t *col = cols + r * len;
            const std::int64_t off = kw * geo.dilations[1] - geo.padBegin[1];
            // Columns whose tap lands inside the input row, clamped to this piece.
            const std::int64_t lo =
                std::clamp<std::int64_t>(std::min(OW, off >= 0 ? 0 : (-off + sw - 1) / sw), ow0, ow1);
            const std::int64_t hi = std::clamp<std::int64_t>(
                std::min(OW, IW - 1 - off < 0 ? 0 : (IW - 1 - off) / sw + 1), lo, ow1);
            for (std::int64_t i = 0; i < rows; ++i) {
                const std::int64_t ih = (oh0 + i) * sh - geo.padBegin[0] + kh * geo.dilations[0];
                std::uint8_t *crow = col + i * W;
                if (ih < 0 || ih >= IH) {
                    std::memset(crow, pad, std::size_t(W));
                    continue;
                }
                // Locals and __restrict: byte pointers may alias anything (even `flip`), which
                // would keep the compiler from vectorizing the copy. d[ow] is column ow0 + ow.
                const std::uint8_t *__restrict src = plane + ih * IW + off + ow0 * sw;
                std::uint8_t *__restrict d = crow;
                const std::uint8_t f = flip;
                const std::int64_t a = lo - ow0, b = hi - ow0;
                std::memset(d, pad, std::size_t(a));
                if (sw == 1)
                    for (std::int64_t ow = a; ow < b; ++ow)
                        d[ow] = src[ow] ^ f;
                else if (sw == 2)
                    copyStride2Flipped(src + 2 * a, d + a, b - a, f);
                else
                    for (std::int64_t ow = a; ow < b; ++ow)
                        d[ow] = src[ow * sw] ^ f;
                std::memset(d + b, pad, std::size_t(W - b));
            }
        },
        1);
}

// The input offsets (−1: padding) of output positions [o0, o0 + len) for every kernel tap,
// [kSize][len]: built per chunk of outputs, so that it stays as bounded as the chunk's columns.
void srcIndexChunk(const ConvGeometry &geo, const Shape64 &inSp, const Shape64 &outSp, std::int64_t o0,
                   std::int64_t len, std::int64_t *table)
{
    const std::size_t sp = geo.kernel.size();
    const std::int64_t kSize = product(geo.kernel);
    const Shape64 kStr = stridesOf(geo.kernel), inStr = stridesOf(inSp), outStr = stridesOf(outSp);
    for (std::int64_t kk = 0; kk < kSize; ++kk)
        for (std::int64_t j = 0; j < len; ++j) {
            const std::int64_t o = o0 + j;
            std::int64_t off = 0;
            bool inside = true;
            for (std::size_t d = 0; d < sp && inside; ++d) {
                const std::int64_t pos = ((o / outStr[d]) % outSp[d]) * geo.strides[d] - geo.padBegin[d] +
                                         ((kk / kStr[d]) % geo.kernel[d]) * geo.dilations[d];
                inside = pos >= 0 && pos < inSp[d];
                off += pos * inStr[d];
            }
            table[kk * len + j] = inside ? off : -1;
        }
}

// The columns [cg·k][len] of one chunk of output positions through its table of input offsets.
void im2colNd(const std::uint8_t *xg, std::int64_t cg, std::int64_t inSize, const std::int64_t *table,
              std::int64_t kSize, std::int64_t len, std::uint8_t flip, std::uint8_t pad, std::uint8_t *cols)
{
    for (std::int64_t r = 0; r < cg * kSize; ++r) {
        const std::int64_t ci = r / kSize, kk = r % kSize;
        const std::int64_t *idx = table + kk * len;
        const std::uint8_t *plane = xg + ci * inSize;
        std::uint8_t *col = cols + r * len;
        for (std::int64_t j = 0; j < len; ++j)
            col[j] = idx[j] >= 0 ? std::uint8_t(plane[idx[j]] ^ flip) : pad;
    }
}

} // namespace

namespace {

Expected<RuntimeTensor> integerConvWith(const KernelContext &ctx, const RuntimeTensor &x, const RuntimeTensor &w,
                                        const RuntimeTensor *xzp, const RuntimeTensor *wzp, bool cacheWeights,
                                        const Expected<ConvGeometry> &geo, bool asOutput);

} // namespace

Expected<RuntimeTensor> integerConv(const KernelContext &ctx, const RuntimeTensor &x, const RuntimeTensor &w,
                                    const RuntimeTensor *xzp, const RuntimeTensor *wzp, bool cacheWeights, bool asOutput)
{
    for (const RuntimeTensor *t : {&x, &w})
        if (t->dtype() != DataType::UInt8 && t->dtype() != DataType::Int8)
            return ctx.unsupported("integer convolution of " + std::string(dataTypeName(t->dtype())));
    Expected<ConvGeometry> geo = convGeometry(ctx, x.shape(), w.shape(), false);
    if (!geo || geo->kernel.size() != 1)
        return integerConvWith(ctx, x, w, xzp, wzp, cacheWeights, geo, asOutput);
    // 1-D as 2-D of height 1, so that its im2col columns are cut into bounded pieces as 2-D ones
    // are (the general N-d path holds a whole image's columns: pads of 2^31 − 1, 8 GiB).
    ConvGeometry &g = *geo;
    g.kernel.insert(g.kernel.begin(), 1);
    g.strides.insert(g.strides.begin(), 1);
    g.dilations.insert(g.dilations.begin(), 1);
    g.padBegin.insert(g.padBegin.begin(), 0);
    g.padEnd.insert(g.padEnd.begin(), 0);
    const Shape64 outShape = g.outShape;
    g.outShape.insert(g.outShape.begin() + 2, 1);
    const RuntimeTensor x2 = x.reshaped({x.dim(0), x.dim(1), 1, x.dim(2)});
    const RuntimeTensor w2 = w.reshaped({w.dim(0), w.dim(1), 1, w.dim(2)});
    Expected<RuntimeTensor> out = integerConvWith(ctx, x2, w2, xzp, wzp, cacheWeights, geo, asOutput);
    if (!out)
        return out;
    return out->reshaped(outShape);
}

namespace {

Expected<RuntimeTensor> integerConvWith(const KernelContext &ctx, const RuntimeTensor &x, const RuntimeTensor &w,
                                        const RuntimeTensor *xzp, const RuntimeTensor *wzp, bool cacheWeights,
                                        const Expected<ConvGeometry> &geo, bool asOutput)
{
    if (!geo)
        return geo.status();
    const std::int64_t n = x.dim(0), c = x.dim(1), mOut = w.dim(0), g = geo->group;
    if (xzp)
        OPSCOPE_TRY(requireOneValue(*xzp, "the input zero point", ctx));
    if (wzp && wzp->elementCount() != 1 && wzp->elementCount() != mOut)
        return ctx.fail("the weight zero point needs 1 or " + std::to_string(mOut) + " values, not " +
                        std::to_string(wzp->elementCount()));
    Expected<RuntimeTensor> out = asOutput ? ctx.newOutputTensor(0, DataType::Int32, geo->outShape)
                                           : RuntimeTensor::allocate(DataType::Int32, geo->outShape);
    if (!out || out->elementCount() == 0)
        return out;
    const bool depthwise = isDepthwise(x, w, g);
    std::shared_ptr<const PreparedConv> prep;
    if (cacheWeights) {
        std::lock_guard lock(ctx.cache().mutex);
        prep = std::static_pointer_cast<const PreparedConv>(ctx.cache().state);
        if (!prep) {
            prep = prepareConv(w, wzp, g, depthwise);
            ctx.cache().state = std::const_pointer_cast<PreparedConv>(prep);
        }
    } else {
        prep = prepareConv(w, wzp, g, depthwise);
    }
    const std::int64_t cg = c / g, mg = mOut / g, kSize = product(geo->kernel), kDim = cg * kSize;
    const Shape64 inSp(x.shape().begin() + 2, x.shape().end()), outSp(geo->outShape.begin() + 2, geo->outShape.end());
    const std::int64_t inSize = product(inSp), outSize = product(outSp);
    const bool unsignedX = x.dtype() == DataType::UInt8;
    const std::int32_t x0 = xzp ? std::int32_t(xzp->valueAsInt(0)) : 0;
    std::int32_t *dst = out->mutableData<std::int32_t>();
    const auto *xbytes = reinterpret_cast<const std::uint8_t *>(x.bytes());

    if (depthwise) {
        parallelFor(
            n * c,
            [&](std::int64_t nc) {
                const std::int32_t *wk = &prep->depthwise[std::size_t((nc % c) * kSize)];
                std::int32_t *y = dst + nc * outSize;
                if (unsignedX)
                    depthwisePlane(x.data<std::uint8_t>() + nc * inSize, wk, x0, *geo, inSp[0], inSp[1], outSp[0],
                                   outSp[1], y);
                else
                    depthwisePlane(x.data<std::int8_t>() + nc * inSize, wk, x0, *geo, inSp[0], inSp[1], outSp[0],
                                   outSp[1], y);
            },
            1);
        return out;
    }

    // int8 columns: uint8 activations move by −128 (a byte XOR), int8 ones stay.
    const std::uint8_t flip = unsignedX ? 0x80 : 0x00;
    const auto xZero = static_cast<std::int8_t>(unsignedX ? x0 - 128 : x0);
    const auto pad = static_cast<std::uint8_t>(xZero);
    const auto columns = [&](std::size_t bytes) -> std::uint8_t * {
        // A per-thread scratch buffer: a fresh multi-megabyte vector per call cost page faults and
        // a memset each time.
        return reinterpret_cast<std::uint8_t *>(threadScratch(0, bytes));
    };
    const Status noMemory = Status::io("out of memory allocating the im2col columns of " + ctx.node().name);
    constexpr std::int64_t kMaxColumnBytes = std::int64_t(4) << 20;
    if (inSp.size() != 2) {
        // 3-D and up: chunks of output positions, each with its own table of input offsets and
        // columns on one thread, both bounded (a whole image's table and columns were 9·k bytes
        // per output position: gigabytes for a large volume). The table is reused for every
        // image and group of the chunk.
        const std::int64_t perPosition = kDim + kSize * std::int64_t(sizeof(std::int64_t));
        const std::int64_t byBytes = std::max<std::int64_t>(kMaxColumnBytes / perPosition, 1);
        const std::int64_t byThreads = (outSize + 2 * ctx.threads() - 1) / (2 * ctx.threads());
        const std::int64_t chunk = std::clamp<std::int64_t>(std::min(byBytes, byThreads), 1, outSize);
        const std::int64_t chunks = (outSize + chunk - 1) / chunk;
        // Few chunks (a small output) and many images or groups: those split too, or the whole op
        // would be one serial task. Each task builds its chunk's table for its images and groups.
        const std::int64_t images = n * g;
        const std::int64_t spread = chunks >= 2 * ctx.threads()
                                        ? 1
                                        : std::min(images, (2 * ctx.threads() + chunks - 1) / chunks);
        std::mutex failureMutex;
        Status failure = Status::ok();
        parallelFor(
            chunks * spread,
            [&](std::int64_t task) {
                const std::int64_t ck = task / spread, part = task % spread;
                const std::int64_t o0 = ck * chunk, len = std::min(chunk, outSize - o0);
                auto *table = reinterpret_cast<std::int64_t *>(
                    threadScratch(1, std::uint64_t(kSize * len) * sizeof(std::int64_t)));
                std::uint8_t *cols = columns(std::size_t(kDim * len));
                Status st = table && cols ? Status::ok() : noMemory;
                if (st)
                    srcIndexChunk(*geo, inSp, outSp, o0, len, table);
                for (std::int64_t ng = images * part / spread; ng < images * (part + 1) / spread && st; ++ng) {
                    const std::int64_t ni = ng / g, gi = ng % g;
                    im2colNd(xbytes + (ni * c + gi * cg) * inSize, cg, inSize, table, kSize, len, flip, pad, cols);
                    st = gemmLeftExact(prep->groups[std::size_t(gi)], len, reinterpret_cast<const std::int8_t *>(cols),
                                       len, xZero, dst + (ni * mOut + gi * mg) * outSize + o0, outSize);
                }
                if (!st) {
                    std::lock_guard lock(failureMutex);
                    if (failure)
                        failure = st;
                }
            },
            1);
        if (!failure)
            return failure;
        return out;
    }
    // 2-D: blocks of output rows, each im2col + GEMM on one thread with its own columns (~1 MB,
    // cache-sized), all blocks in one parallel loop. A parallel region per im2col and per GEMM
    // cost a barrier each, which on a busy machine waits for a descheduled thread every time.
    // A row whose columns alone pass kMaxColumnBytes (pads of 2^31 − 1 make one 8 GiB, found by
    // fuzzing) is cut into pieces of columns: the scratch stays bounded whatever the output's width.
    const std::int64_t OH = outSp[0], OW = outSp[1];
    const std::int64_t piece = std::clamp<std::int64_t>(kMaxColumnBytes / std::max<std::int64_t>(kDim, 1), 1, OW);
    const std::int64_t pieces = (OW + piece - 1) / piece;
    const std::int64_t bySize = (std::int64_t(1) << 20) / std::max<std::int64_t>(kDim * OW, 1);
    const std::int64_t byThreads = (OH + 2 * ctx.threads() - 1) / (2 * ctx.threads());
    const std::int64_t rowsPerBlock = pieces > 1 ? 1 : std::clamp<std::int64_t>(std::min(bySize, byThreads), 1, OH);
    const std::int64_t blocks = (OH + rowsPerBlock - 1) / rowsPerBlock;
    std::mutex failureMutex;
    Status failure = Status::ok();
    parallelFor(
        n * g * blocks * pieces,
        [&](std::int64_t task) {
            const std::int64_t p = task % pieces, b = (task / pieces) % blocks, gi = (task / (pieces * blocks)) % g,
                               ni = task / (pieces * blocks * g);
            const std::int64_t ow0 = p * piece, ow1 = std::min(OW, ow0 + piece), width = ow1 - ow0;
            const std::int64_t oh0 = b * rowsPerBlock, rows = std::min(rowsPerBlock, OH - oh0), len = rows * width;
            std::uint8_t *cols = columns(std::size_t(kDim * rowsPerBlock * width));
            Status st = noMemory;
            if (cols) {
                im2col2d(xbytes + (ni * c + gi * cg) * inSize, cg, *geo, inSp[0], inSp[1], OW, oh0, rows, ow0, ow1,
                         flip, pad, cols);
                st = gemmLeftExact(prep->groups[std::size_t(gi)], len, reinterpret_cast<const std::int8_t *>(cols),
                                   len, xZero, dst + (ni * mOut + gi * mg) * outSize + oh0 * OW + ow0, outSize);
            }
            if (!st) {
                std::lock_guard lock(failureMutex);
                if (failure)
                    failure = st;
            }
        },
        2);
    if (!failure)
        return failure;
    return out;
}

} // namespace

} // namespace opscope::kernels
