// Box pooling one axis at a time (see poolseparable.h).

#include "runtime/kernels/poolseparable.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace opscope::kernels {

std::pair<std::int64_t, std::int64_t> tapRange(std::int64_t start, std::int64_t limit, std::int64_t k, std::int64_t d)
{
    const std::int64_t lo = start < 0 ? std::min(k, (-start + d - 1) / d) : 0;
    const std::int64_t hi = start >= limit ? 0 : std::min(k, (limit - start + d - 1) / d);
    return std::pair(lo, std::max(lo, hi));
}

namespace {

// One axis of the box, per output position: its first tap inside the input, how many taps are
// inside, and its share of AveragePool's divisor (the box's divisor is the product of the axes').
struct AxisTaps
{
    std::vector<std::int64_t> first, count;
    std::vector<double> divisor;
    std::int64_t dilation = 1, stride = 1, padBegin = 0, kernel = 1;
    bool wide = false; // far wider than the input: only the per-output walk stays bounded
};

AxisTaps axisTaps(const ConvGeometry &g, std::size_t d, std::int64_t in, std::int64_t out, bool includePad)
{
    AxisTaps t;
    t.dilation = g.dilations[d];
    t.stride = g.strides[d];
    t.padBegin = g.padBegin[d];
    t.kernel = g.kernel[d];
    t.wide = g.kernel[d] > 4 * in + 64;
    for (std::int64_t o = 0; o < out; ++o) {
        const std::int64_t start = o * g.strides[d] - g.padBegin[d];
        const auto [lo, hi] = tapRange(start, in, g.kernel[d], g.dilations[d]);
        const auto [plo, phi] = tapRange(start + g.padBegin[d], in + g.padBegin[d] + g.padEnd[d], g.kernel[d],
                                         g.dilations[d]);
        t.first.push_back(start + lo * g.dilations[d]);
        t.count.push_back(hi - lo);
        t.divisor.push_back(double(std::max<std::int64_t>(includePad ? phi - plo : hi - lo, 1)));
    }
    return t;
}

// "No tap yet" in the index lane: larger than every offset, so that any real tap, even one
// holding the lowest value, beats it on the tie rule below.
constexpr std::int64_t kNoTap = std::numeric_limits<std::int64_t>::max();

// One tap into the running result (y, yi): the rules of reduceRows below.
template<PoolReduction R, bool kIndices, class V>
inline void combine(V v, std::int64_t vi, V &y, std::int64_t &yi)
{
    if constexpr (R != PoolReduction::Max) {
        y += v;
    } else if constexpr (!kIndices) {
        y = (v > y || v != v) ? v : y; // a NaN wins and stays, as in the ONNX reference
    } else {
        // The larger value; a NaN over any number; on equal values (or two NaNs) the smaller
        // input offset — the first in row-major window order, whatever order the axes are
        // reduced in.
        const bool take = v > y || (v == y && vi < yi) || (v != v && (y == y || vi < yi));
        y = take ? v : y;
        yi = take ? vi : yi;
    }
}

// The last axis (inner 1) of rows [r0, r1), taps outside and outputs inside: for each tap, the
// outputs whose tap lands in the input run as one strided loop (the per-output walk below has a
// loop of a few taps per output, which on a 1-D audio pool cost most of the time).
template<PoolReduction R, bool kIndices, class V, class S, class Load>
void reduceLastAxis(const S *src, const std::int64_t *srcIdx, const Load &load, std::int64_t in, const AxisTaps &t,
                    std::int64_t r0, std::int64_t r1, V empty, V *dst, std::int64_t *dstIdx)
{
    const std::int64_t out = std::int64_t(t.count.size()), st = t.stride;
    for (std::int64_t a = r0 / out; a * out < r1; ++a) {
        // Rows come whole: the callers split at multiples of `out` (see poolTyped).
        V *__restrict y = dst + a * out;
        std::int64_t *__restrict yi = kIndices ? dstIdx + a * out : nullptr;
        std::fill_n(y, out, R == PoolReduction::Max ? empty : V{});
        if constexpr (kIndices)
            std::fill_n(yi, out, kNoTap);
        const S *row = src + a * in;
        for (std::int64_t k = 0; k < t.kernel; ++k) {
            const std::int64_t off = k * t.dilation - t.padBegin; // input position of output o: o·st + off
            const std::int64_t lo = off >= 0 ? 0 : std::min(out, (-off + st - 1) / st);
            const std::int64_t hi = in - 1 - off < 0 ? lo : std::clamp((in - 1 - off) / st + 1, lo, out);
            for (std::int64_t o = lo; o < hi; ++o) {
                const std::int64_t pos = o * st + off;
                std::int64_t dummy = 0;
                combine<R, kIndices>(load(row[pos]), kIndices ? (srcIdx ? srcIdx[a * in + pos] : a * in + pos) : 0,
                                     y[o], kIndices ? yi[o] : dummy);
            }
        }
    }
}

// Reduces the middle axis of [outer][in][inner] to [outer][out][inner], rows [r0, r1) of
// [outer][out]. `src` is the input plane (first pass: `load` converts its type, LpPool raises to
// p) or the last pass's buffer; `srcIdx` the last pass's Indices lane (null: the first pass,
// where a cell's index is its offset). A row whose taps equal the previous row's (a window
// clamped to the same cells) copies it. The combines are selects, not branches: on real data a
// max's comparison is a coin toss, and a mispredicted branch per tap cost ~10 ns.
// Used for the inner axes and for windows far wider than the input (where the copy bounds it).
template<PoolReduction R, bool kIndices, class V, class S, class Load>
void reduceRows(const S *src, const std::int64_t *srcIdx, const Load &load, std::int64_t in, std::int64_t inner,
                const AxisTaps &t, std::int64_t r0, std::int64_t r1, V empty, V *dst, std::int64_t *dstIdx)
{
    const std::int64_t out = std::int64_t(t.count.size());
    for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t a = r / out, o = r % out;
        V *__restrict y = dst + r * inner;
        std::int64_t *__restrict yi = kIndices ? dstIdx + r * inner : nullptr;
        if (r > r0 && o > 0 && t.first[std::size_t(o)] == t.first[std::size_t(o - 1)] &&
            t.count[std::size_t(o)] == t.count[std::size_t(o - 1)]) {
            std::copy_n(y - inner, inner, y);
            if constexpr (kIndices)
                std::copy_n(yi - inner, inner, yi);
            continue;
        }
        std::fill_n(y, inner, R == PoolReduction::Max ? empty : V{});
        if constexpr (kIndices)
            std::fill_n(yi, inner, kNoTap);
        for (std::int64_t k = 0; k < t.count[std::size_t(o)]; ++k) {
            const std::int64_t base = (a * in + t.first[std::size_t(o)] + k * t.dilation) * inner;
            const S *__restrict s = src + base;
            if constexpr (kIndices) {
                const std::int64_t *si = srcIdx ? srcIdx + base : nullptr;
                for (std::int64_t j = 0; j < inner; ++j)
                    combine<R, true>(load(s[j]), si ? si[j] : base + j, y[j], yi[j]);
            } else {
                for (std::int64_t j = 0; j < inner; ++j) {
                    std::int64_t unused = 0;
                    combine<R, false>(load(s[j]), 0, y[j], unused);
                }
            }
        }
    }
}

template<PoolReduction R, class T>
Status poolTyped(const RuntimeTensor &x, RuntimeTensor &y, std::int64_t *indices, const ConvGeometry &geo,
                 const SeparablePool &how)
{
    using C = ComputeType<T>;
    // Max compares in the type's own arithmetic (exact for int64); AveragePool sums float data in
    // float as ONNX Runtime does (a pass sums one axis's taps: a few, or one input row), doubles in
    // double; LpPool's powers in double.
    using V = std::conditional_t<R == PoolReduction::Max || (R == PoolReduction::Average && std::is_floating_point_v<C>),
                                 C, double>;
    const std::size_t sp = geo.kernel.size();
    const Shape64 inSp(x.shape().begin() + 2, x.shape().end()), outSp(geo.outShape.begin() + 2, geo.outShape.end());
    const std::int64_t inSize = product(inSp), outSize = product(outSp), planes = x.dim(0) * x.dim(1);
    std::vector<AxisTaps> taps;
    for (std::size_t d = 0; d < sp; ++d)
        taps.push_back(axisTaps(geo, d, inSp[d], outSp[d], how.includePad));
    // The axes that shrink most go first: then the sizes fall, then rise to the output's, and no
    // intermediate passes max(input, output). The first pass reads the input itself, so the
    // buffers hold only what the passes write: the largest of those (for a downsampling pool,
    // about the output).
    std::vector<std::size_t> order(sp);
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return double(outSp[a]) / double(inSp[a]) < double(outSp[b]) / double(inSp[b]);
    });
    std::int64_t cells = 0;
    {
        Shape64 cur = inSp;
        for (std::size_t d : order) {
            cur[d] = outSp[d];
            cells = std::max(cells, product(cur));
        }
    }
    const T *src = x.data<T>();
    T *dst = y.mutableData<T>();
    // Few planes (one large image): the rows of each pass in parallel instead of the planes.
    const int threads = std::max(how.threads, 1);
    const bool rowsInParallel = planes < 2 * threads;
    const bool withIndices = R == PoolReduction::Max && indices;
    const V empty = std::numeric_limits<V>::has_infinity ? -std::numeric_limits<V>::infinity()
                                                         : std::numeric_limits<V>::lowest();

    const auto poolPlane = [&](std::int64_t plane, std::vector<V> (&val)[2], std::vector<std::int64_t> (&idx)[2]) {
        const T *xp = src + plane * inSize;
        Shape64 cur = inSp;
        int from = -1; // -1: the input plane; else the buffer the last pass wrote
        for (std::size_t step = 0; step < sp; ++step) {
            const std::size_t d = order[step];
            const std::int64_t outer = product(cur, 0, d), inner = product(cur, d + 1), in = cur[d];
            const std::int64_t rows = outer * outSp[d];
            const bool lastAxis = inner == 1 && !taps[d].wide;
            const int to = from == 0 ? 1 : 0;
            const auto run = [&](std::int64_t r0, std::int64_t r1) {
                V *out = val[to].data();
                std::int64_t *outIdx = idx[to].data();
                const auto pass = [&](auto keepIndices) {
                    constexpr bool kIdx = decltype(keepIndices)::value;
                    if (from < 0) {
                        const auto load = [&](T t) -> V {
                            if constexpr (R == PoolReduction::Lp)
                                return std::pow(std::abs(V(C(t))), how.p);
                            return V(C(t));
                        };
                        if (lastAxis)
                            reduceLastAxis<R, kIdx>(xp, nullptr, load, in, taps[d], r0, r1, empty, out, outIdx);
                        else
                            reduceRows<R, kIdx>(xp, nullptr, load, in, inner, taps[d], r0, r1, empty, out, outIdx);
                    } else {
                        const auto same = [](V v) { return v; };
                        if (lastAxis)
                            reduceLastAxis<R, kIdx>(val[from].data(), idx[from].data(), same, in, taps[d], r0, r1,
                                                    empty, out, outIdx);
                        else
                            reduceRows<R, kIdx>(val[from].data(), idx[from].data(), same, in, inner, taps[d], r0, r1,
                                                empty, out, outIdx);
                    }
                };
                if (withIndices)
                    pass(std::true_type{});
                else
                    pass(std::false_type{});
            };
            if (rowsInParallel && rows > 1) {
                // The last-axis walk takes whole rows of outputs.
                const std::int64_t units = lastAxis ? outer : rows, per = lastAxis ? outSp[d] : 1;
                const std::int64_t tasks = std::min<std::int64_t>(units, 4 * threads);
                parallelFor(
                    tasks, [&](std::int64_t t) { run(units * t / tasks * per, units * (t + 1) / tasks * per); }, 1);
            } else {
                run(0, rows);
            }
            cur[d] = outSp[d];
            from = to;
        }
        // The box's divisor and the output's type; Indices as offsets into the whole input.
        const V *v = val[from].data();
        const std::int64_t *vi = idx[from].data();
        T *yp = dst + plane * outSize;
        if constexpr (R == PoolReduction::Max) {
            for (std::int64_t o = 0; o < outSize; ++o)
                yp[o] = static_cast<T>(v[o]);
            if (indices) {
                for (std::int64_t o = 0; o < outSize; ++o) {
                    std::int64_t flat = vi[o];
                    if (flat != kNoTap && how.colMajor && sp == 2)
                        flat = (flat % inSp[1]) * inSp[0] + flat / inSp[1];
                    indices[plane * outSize + o] = flat == kNoTap ? -1 : plane * inSize + flat;
                }
            }
        } else if constexpr (R == PoolReduction::Lp) {
            for (std::int64_t o = 0; o < outSize; ++o)
                yp[o] = static_cast<T>(static_cast<C>(std::pow(double(v[o]), 1.0 / how.p)));
        } else {
            // Row by row of the last axis: the other axes' divisors multiply once per row.
            const std::int64_t last = outSp[sp - 1];
            const std::vector<double> &lastDiv = taps[sp - 1].divisor;
            Shape64 at(sp, 0);
            for (std::int64_t r = 0; r < outSize / last; ++r) {
                double rowDiv = 1;
                for (std::size_t d = 0; d + 1 < sp; ++d)
                    rowDiv *= taps[d].divisor[std::size_t(at[d])];
                for (std::int64_t o = 0; o < last; ++o)
                    yp[r * last + o] = static_cast<T>(static_cast<C>(double(v[r * last + o]) / (rowDiv * lastDiv[std::size_t(o)])));
                for (std::size_t d = sp - 1; d-- > 0;) {
                    if (++at[d] < outSp[d])
                        break;
                    at[d] = 0;
                }
            }
        }
    };

    const auto buffers = [&](std::vector<V> (&val)[2], std::vector<std::int64_t> (&idx)[2]) {
        for (int b = 0; b < 2; ++b) {
            val[b].resize(std::size_t(cells));
            if (withIndices)
                idx[b].resize(std::size_t(cells));
        }
    };
    try {
        if (rowsInParallel) {
            std::vector<V> val[2];
            std::vector<std::int64_t> idx[2];
            buffers(val, idx);
            for (std::int64_t plane = 0; plane < planes; ++plane)
                poolPlane(plane, val, idx);
        } else {
            // A run of planes per thread, each with buffers of its own for this call only (kept
            // per thread, one large pool would hold them for the life of the process).
            const std::int64_t tasks = std::min<std::int64_t>(planes, threads);
            parallelFor(
                tasks,
                [&](std::int64_t t) {
                    std::vector<V> val[2];
                    std::vector<std::int64_t> idx[2];
                    buffers(val, idx);
                    for (std::int64_t plane = planes * t / tasks; plane < planes * (t + 1) / tasks; ++plane)
                        poolPlane(plane, val, idx);
                },
                1);
        }
    } catch (const std::bad_alloc &) { // from either path: parallelFor hands it back
        return Status::io("out of memory pooling " + std::to_string(cells) + " cells per plane");
    }
    return Status::ok();
}

template<PoolReduction R>
Status poolReduction(const RuntimeTensor &x, RuntimeTensor &y, std::int64_t *indices, const ConvGeometry &geo,
                     const SeparablePool &how)
{
    return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>)
            return Status::invalid("pooling needs numbers, not bool");
        else
            return poolTyped<R, T>(x, y, indices, geo, how);
    });
}

} // namespace

Status separablePool(const RuntimeTensor &x, RuntimeTensor &y, std::int64_t *indices, const ConvGeometry &geo,
                     const SeparablePool &how)
{
    switch (how.reduction) {
    case PoolReduction::Max: return poolReduction<PoolReduction::Max>(x, y, indices, geo, how);
    case PoolReduction::Average: return poolReduction<PoolReduction::Average>(x, y, nullptr, geo, how);
    case PoolReduction::Lp: return poolReduction<PoolReduction::Lp>(x, y, nullptr, geo, how);
    }
    return Status::invalid("unknown pooling");
}

} // namespace opscope::kernels
