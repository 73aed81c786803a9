// RNN, GRU and LSTM (ONNX semantics): forward/reverse/bidirectional, configurable activations,
// clip, sequence_lens, initial states, LSTM peepholes and input_forget, GRU linear_before_reset,
// and layout=1 (batch first). Float32; the per-step products go through sgemm.

#include "runtime/kernels/elementwise.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernelutil.h"
#include "util/cpuclones.h"

#include <cstring>
#include <functional>

namespace opscope {
namespace kernels {
namespace {

// A scalar function, or a vectorized block form for the two every exported RNN uses.
struct Activation
{
    std::function<float(float)> f;
    void (*block)(const float *, float *, std::int64_t) = nullptr;
    // v[0..n) in place. A gate row is short (hidden values) and is activated every step: per
    // element libm calls were most of an LSTM step, and a oneDNN call per row (its primitive
    // lookup and dispatch) still cost more than the row at hidden 128.
    void apply(float *v, std::int64_t n) const
    {
        if (block) {
            block(v, v, n);
            return;
        }
        for (std::int64_t i = 0; i < n; ++i)
            v[i] = f(v[i]);
    }
};

Expected<Activation> makeActivation(const KernelContext &ctx, const std::string &name, float alpha,
                                    float beta)
{
    if (name == "Sigmoid")
        return Activation{{}, sigmoidF32};
    if (name == "Tanh")
        return Activation{{}, tanhF32};
    if (name == "Relu")
        return Activation{[](float v) { return std::max(v, 0.0f); }};
    if (name == "Affine")
        return Activation{[=](float v) { return alpha * v + beta; }};
    if (name == "LeakyRelu")
        return Activation{[=](float v) { return v >= 0 ? v : alpha * v; }};
    if (name == "ThresholdedRelu")
        return Activation{[=](float v) { return v > alpha ? v : 0.0f; }};
    if (name == "ScaledTanh")
        return Activation{[=](float v) { return alpha * std::tanh(beta * v); }};
    if (name == "HardSigmoid")
        return Activation{[=](float v) { return std::clamp(alpha * v + beta, 0.0f, 1.0f); }};
    if (name == "Elu")
        return Activation{[=](float v) { return v >= 0 ? v : alpha * (std::exp(v) - 1.0f); }};
    if (name == "Softsign")
        return Activation{[](float v) { return v / (1.0f + std::abs(v)); }};
    if (name == "Softplus")
        return Activation{[](float v) { return std::log1p(std::exp(v)); }};
    return ctx.unsupported("activation '" + name + "'");
}

// y[0..rows) = Σ_k x[k]·Wt[k·ld + r]: the recurrent product of a batch-1 step (h·Rᵀ, a 512×128
// matrix-vector product per step) from Rᵀ, whose rows are contiguous in the output index, so
// the loop is independent multiply-adds that vectorize without a horizontal sum. sgemm's
// per-call setup outweighed the work at this size.
OPSCOPE_CPU_CLONES void matVecTransposedF32(const float *Wt, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                                            const float *x, float *y)
{
    // 64 outputs held in eight vector accumulators across all of k: only W streams from memory.
    std::int64_t r = 0;
    for (; r + 64 <= rows; r += 64) {
        F32x8 a[8] = {};
        for (std::int64_t k = 0; k < cols; ++k) {
            const float *w = Wt + k * ld + r;
            const float xk = x[k];
            for (int v = 0; v < 8; ++v) {
                F32x8 wv;
                std::memcpy(&wv, w + 8 * v, sizeof wv);
                a[v] += xk * wv;
            }
        }
        for (int v = 0; v < 8; ++v)
            std::memcpy(y + r + 8 * v, &a[v], sizeof a[v]);
    }
    for (; r < rows; ++r) {
        float acc = 0.0f;
        for (std::int64_t k = 0; k < cols; ++k)
            acc += x[k] * Wt[k * ld + r];
        y[r] = acc;
    }
}

enum class Cell
{
    Rnn,
    Gru,
    Lstm
};

template<Cell K>
Status recurrentKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(3));
    const RuntimeTensor &xIn = ctx.in(0), &w = ctx.in(1), &r = ctx.in(2);
    if (xIn.dtype() != DataType::Float)
        return ctx.unsupported("recurrent ops are implemented for float32");
    const RuntimeTensor *b = ctx.input(3), *seqLens = ctx.input(4), *h0 = ctx.input(5);
    const RuntimeTensor *c0 = K == Cell::Lstm ? ctx.input(6) : nullptr;
    const RuntimeTensor *peep = K == Cell::Lstm ? ctx.input(7) : nullptr;
    const std::int64_t layout = ctx.attrInt("layout", 0);
    if (layout != 0 && layout != 1)
        return ctx.fail("layout " + std::to_string(layout) + " is not 0 (sequence first) or 1 (batch first)");
    const bool batchFirst = layout == 1;
    if (xIn.rank() != 3 || w.rank() != 3 || r.rank() != 3)
        return ctx.fail("X, W and R must have rank 3 (got " + xIn.shapeText() + ", " + w.shapeText() + ", " +
                        r.shapeText() + ")");
    const std::int64_t seq = batchFirst ? xIn.dim(1) : xIn.dim(0),
                       batch = batchFirst ? xIn.dim(0) : xIn.dim(1);
    // hidden_size is read from R's last dim and the attribute must agree: an attribute alone (a
    // model can say 2^63 − 1) would size every buffer below.
    const std::int64_t input = xIn.dim(2), hidden = r.dim(2);
    if (ctx.hasAttr("hidden_size") && ctx.attrInt("hidden_size", 0) != hidden)
        return ctx.fail("hidden_size " + std::to_string(ctx.attrInt("hidden_size", 0)) +
                        " does not match R " + r.shapeText());
    const std::string direction = ctx.attrString("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
        return ctx.fail("direction '" + direction + "' is not forward, reverse or bidirectional");
    const std::int64_t dirs = direction == "bidirectional" ? 2 : 1;
    const std::int64_t gates = K == Cell::Rnn ? 1 : K == Cell::Gru ? 3 : 4;
    if (w.dim(0) != dirs || w.dim(1) != gates * hidden || w.dim(2) != input)
        return ctx.fail("W " + w.shapeText() + " does not match the direction, gates and hidden size");
    if (r.dim(0) != dirs || r.dim(1) != gates * hidden)
        return ctx.fail("R " + r.shapeText() + " does not match the direction, gates and hidden size");
    // The optional inputs are indexed by those sizes: each must have exactly its shape.
    const auto expect = [&](const RuntimeTensor *t, const char *name,
                            const std::vector<std::int64_t> &shape) -> Status {
        if (!t)
            return Status::ok();
        if (t->shape() != shape)
            return ctx.fail(std::string(name) + " " + t->shapeText() + " should be " +
                            opscope::shapeText(shape));
        if (t->dtype() != (t == seqLens ? DataType::Int32 : DataType::Float))
            return ctx.fail(std::string(name) + " has the wrong element type");
        return Status::ok();
    };
    if (w.dtype() != DataType::Float || r.dtype() != DataType::Float)
        return ctx.fail("W and R must be float32 like X");
    const std::vector<std::int64_t> state =
        batchFirst ? std::vector<std::int64_t>{batch, dirs, hidden} : std::vector<std::int64_t>{dirs, batch, hidden};
    OPSCOPE_TRY(expect(b, "B", {dirs, 2 * gates * hidden}));
    OPSCOPE_TRY(expect(seqLens, "sequence_lens", {batch}));
    if (seqLens)
        for (std::int64_t n = 0; n < batch; ++n)
            if (const std::int64_t len = seqLens->valueAsInt(n); len < 0 || len > seq)
                return ctx.fail("sequence_lens[" + std::to_string(n) + "] is " + std::to_string(len) +
                                "; every length must lie in 0.." + std::to_string(seq) + " (the sequence's length)");
    OPSCOPE_TRY(expect(h0, "initial_h", state));
    OPSCOPE_TRY(expect(c0, "initial_c", state));
    OPSCOPE_TRY(expect(peep, "P", {dirs, 3 * hidden}));
    const float clip = ctx.attrFloat("clip", 0.0f);
    const bool hasClip = ctx.hasAttr("clip");
    const bool inputForget = ctx.attrInt("input_forget", 0) != 0;
    const bool linearBeforeReset = ctx.attrInt("linear_before_reset", 0) != 0;

    // Activations: per direction, f/g(/h) in ONNX order.
    std::vector<std::string> names = ctx.attrStrings("activations");
    const std::vector<float> alphas = ctx.attrFloats("activation_alpha"),
                             betas = ctx.attrFloats("activation_beta");
    const std::size_t perDir = K == Cell::Rnn ? 1 : K == Cell::Gru ? 2 : 3;
    if (names.empty())
        for (std::int64_t d = 0; d < dirs; ++d) {
            if (K == Cell::Rnn)
                names.push_back("Tanh");
            else if (K == Cell::Gru)
                names.insert(names.end(), {"Sigmoid", "Tanh"});
            else
                names.insert(names.end(), {"Sigmoid", "Tanh", "Tanh"});
        }
    // The schema's default lists two directions' worth; a one-way cell uses the first.
    if (names.size() < perDir * std::size_t(dirs))
        return ctx.fail("expected " + std::to_string(perDir * std::size_t(dirs)) + " activations, got " +
                        std::to_string(names.size()));
    names.resize(perDir * std::size_t(dirs));
    std::vector<Activation> acts;
    for (std::size_t i = 0; i < names.size(); ++i) {
        const float defaultAlpha = names[i] == "LeakyRelu" ? 0.01f : names[i] == "HardSigmoid" ? 0.2f : 1.0f;
        const float defaultBeta = names[i] == "HardSigmoid" ? 0.5f : 0.0f;
        Expected<Activation> a = makeActivation(ctx, names[i], i < alphas.size() ? alphas[i] : defaultAlpha,
                                                i < betas.size() ? betas[i] : defaultBeta);
        if (!a)
            return a.status();
        acts.push_back(std::move(*a));
    }

    // The step buffers are the call's workspace (the arena's bytes under memory planning): fresh
    // vectors per call were new pages every run (X·Wᵀ alone is seq × 4·hidden floats).
    const std::int64_t gh = gates * hidden;
    // Sizes come from dims a model chooses (X [2^61, 1, 0] has no elements): every product and
    // the sum are checked, else the byte count could wrap and the buffer be too small.
    std::uint64_t floats = 0;
    const auto countFloats = [&](std::initializer_list<std::int64_t> factors, std::int64_t &out) {
        std::uint64_t n = 1;
        for (std::int64_t f : factors)
            if (f < 0 || __builtin_mul_overflow(n, std::uint64_t(f), &n))
                return false;
        out = std::int64_t(n);
        return !__builtin_add_overflow(floats, n, &floats) && floats <= (std::uint64_t(1) << 60);
    };
    std::int64_t nx = 0, ny = 0, nxw = 0, nhr = 0, nh = 0, rest = 0;
    // x, y, xw, hr, then h and c (batch × hidden each), then a gate row and GRU's r ⊙ h.
    if (!countFloats({seq, batch, input}, nx) || !countFloats({seq, dirs, batch, hidden}, ny) ||
        !countFloats({seq, batch, gh}, nxw) || !countFloats({batch, gh}, nhr) || !countFloats({batch, hidden}, nh) ||
        !countFloats({batch, hidden}, nh) || !countFloats({gh + hidden}, rest))
        return ctx.fail("X " + xIn.shapeText() + " with hidden size " + std::to_string(hidden) +
                        " needs more step buffers than any machine has");
    float *x = reinterpret_cast<float *>(ctx.workspace(floats * sizeof(float)));
    if (!x && floats > 0)
        return Status::io("out of memory for the step buffers of " + ctx.node().name);
    float *const y = x + nx, *const xw = y + ny, *const hr = xw + nxw, *const h = hr + nhr, *const c = h + nh,
                 *const row = c + nh, *const rh = row + gh;
    // X as [seq, batch, input].
    for (std::int64_t t = 0; t < seq; ++t)
        for (std::int64_t n = 0; n < batch; ++n)
            for (std::int64_t i = 0; i < input; ++i)
                x[(t * batch + n) * input + i] =
                    xIn.data<float>()[batchFirst ? (n * seq + t) * input + i : (t * batch + n) * input + i];
    std::fill_n(y, ny, 0.0f);
    std::vector<float> yh(std::size_t(dirs * batch * hidden)), yc(std::size_t(dirs * batch * hidden));
    // Rᵀ [hidden, gates·hidden] per direction for the batch-1 products: made once per node when R
    // is an initializer, else once per run (the transpose is strided stores, as slow as the
    // run's products).
    std::shared_ptr<const std::vector<float>> transposedR;
    if (batch <= 2) {
        const auto make = [&] {
            auto all = std::make_shared<std::vector<float>>(std::size_t(dirs * gh * hidden));
            for (std::int64_t dd = 0; dd < dirs; ++dd)
                for (std::int64_t gi = 0; gi < gh; ++gi)
                    for (std::int64_t k = 0; k < hidden; ++k)
                        (*all)[std::size_t((dd * hidden + k) * gh + gi)] =
                            r.data<float>()[(dd * gh + gi) * hidden + k];
            return all;
        };
        if (ctx.isConstantInput(2)) {
            std::lock_guard lock(ctx.cache().mutex);
            transposedR = std::static_pointer_cast<const std::vector<float>>(ctx.cache().state);
            if (!transposedR) {
                transposedR = make();
                ctx.cache().state = std::const_pointer_cast<std::vector<float>>(transposedR);
            }
        } else {
            transposedR = make();
        }
    }
    for (std::int64_t d = 0; d < dirs; ++d) {
        const float *W = w.data<float>() + d * gh * input;
        const float *R = r.data<float>() + d * gh * hidden;
        const float *Wb = b ? b->data<float>() + d * 2 * gh : nullptr;
        const float *Rb = Wb ? Wb + gh : nullptr;
        const float *P = peep ? peep->data<float>() + d * 3 * hidden : nullptr;
        const Activation &f = acts[std::size_t(d) * perDir],
                         &g = acts[std::size_t(d) * perDir + (perDir > 1 ? 1 : 0)];
        const Activation &hAct = acts[std::size_t(d) * perDir + (perDir > 2 ? 2 : 0)];
        std::fill_n(h, nh, 0.0f);
        std::fill_n(c, nh, 0.0f);
        if (h0 && !batchFirst)
            std::copy_n(h0->data<float>() + d * batch * hidden, batch * hidden, h);
        if (h0 && batchFirst)
            for (std::int64_t n = 0; n < batch; ++n)
                std::copy_n(h0->data<float>() + (n * dirs + d) * hidden, hidden, h + n * hidden);
        if (c0) {
            for (std::int64_t n = 0; n < batch; ++n)
                std::copy_n(c0->data<float>() + (batchFirst ? (n * dirs + d) : (d * batch + n)) * hidden,
                            hidden, c + n * hidden);
        }
        const float *Rt = transposedR ? transposedR->data() + d * gh * hidden : nullptr;
        // X·Wᵀ for every step at once, with the biases added once here rather than per step: Wb of
        // every gate, and Rb of every gate but GRU's h̃ under linear_before_reset, where the
        // reset gate multiplies (R·h + Rb) and Rb must stay apart.
        OPSCOPE_TRY(gemmF32(false, true, seq * batch, gh, input, 1.0f, x, input, W, input, 0.0f,
                            xw, gh));
        std::vector<float> rbh; // GRU's h̃ recurrent bias under linear_before_reset (zeros without B)
        if (K == Cell::Gru && linearBeforeReset)
            rbh.assign(std::size_t(hidden), 0.0f);
        if (Wb) {
            std::vector<float> bsum(static_cast<std::size_t>(gh));
            for (std::int64_t i = 0; i < gh; ++i) {
                const bool apart = K == Cell::Gru && linearBeforeReset && i >= 2 * hidden;
                bsum[std::size_t(i)] = Wb[i] + (apart ? 0.0f : Rb[i]);
                if (apart)
                    rbh[std::size_t(i - 2 * hidden)] = Rb[i];
            }
            for (std::int64_t step = 0; step < seq * batch; ++step) {
                float *xr = xw + step * gh;
                for (std::int64_t i = 0; i < gh; ++i)
                    xr[i] += bsum[std::size_t(i)];
            }
        }
        const auto clipRow = [&](float *v, std::int64_t count) {
            if (hasClip)
                for (std::int64_t j = 0; j < count; ++j)
                    v[j] = std::min(std::max(v[j], -clip), clip);
        };
        const bool reverse = direction == "reverse" || d == 1;
        for (std::int64_t s = 0; s < seq; ++s) {
            const std::int64_t t = reverse ? seq - 1 - s : s;
            if (batch <= 2)
                for (std::int64_t n = 0; n < batch; ++n)
                    matVecTransposedF32(Rt, gh, gh, hidden, h + n * hidden, hr + n * gh);
            else
                OPSCOPE_TRY(gemmF32(false, true, batch, gh, hidden, 1.0f, h, hidden, R, hidden, 0.0f,
                                    hr, gh));
            for (std::int64_t n = 0; n < batch; ++n) {
                const std::int64_t len = seqLens ? seqLens->valueAsInt(n) : seq;
                if (t >= len)
                    continue; // past this sequence's end: the state stays, the output stays 0
                const float *xg = &xw[std::size_t((t * batch + n) * gh)];
                const float *hg = &hr[std::size_t(n * gh)];
                float *hn = &h[std::size_t(n * hidden)];
                float *cn = &c[std::size_t(n * hidden)];
                // Each gate's pre-activations as a row, then its activation over the row at once.
                if constexpr (K == Cell::Rnn) {
                    for (std::int64_t j = 0; j < hidden; ++j)
                        row[std::size_t(j)] = xg[j] + hg[j];
                    clipRow(row, hidden);
                    f.apply(row, hidden);
                    std::copy_n(row, hidden, hn);
                } else if constexpr (K == Cell::Gru) {
                    // ONNX gate order z, r, h̃.
                    float *z = row, *rr = z + hidden, *hh = rr + hidden;
                    for (std::int64_t j = 0; j < 2 * hidden; ++j)
                        z[j] = xg[j] + hg[j];
                    clipRow(z, 2 * hidden);
                    f.apply(z, 2 * hidden);
                    if (linearBeforeReset) {
                        for (std::int64_t j = 0; j < hidden; ++j)
                            hh[j] = xg[2 * hidden + j] + rr[j] * (hg[2 * hidden + j] + rbh[std::size_t(j)]);
                    } else {
                        // (r ⊙ H)·Rhᵀ: from Rᵀ at batch 1–2, else sgemm (the scalar dot products
                        // were 6x ONNX Runtime).
                        for (std::int64_t j = 0; j < hidden; ++j)
                            rh[std::size_t(j)] = rr[j] * hn[j];
                        if (batch <= 2)
                            matVecTransposedF32(Rt + 2 * hidden, gh, hidden, hidden, rh, hh);
                        else
                            OPSCOPE_TRY(gemmF32(false, true, 1, hidden, hidden, 1.0f, rh, hidden,
                                                R + 2 * hidden * hidden, hidden, 0.0f, hh, hidden));
                        for (std::int64_t j = 0; j < hidden; ++j)
                            hh[j] += xg[2 * hidden + j];
                    }
                    clipRow(hh, hidden);
                    g.apply(hh, hidden);
                    for (std::int64_t j = 0; j < hidden; ++j)
                        hn[j] = (1.0f - z[j]) * hh[j] + z[j] * hn[j];
                } else {
                    // ONNX gate order i, o, f, c; peepholes read c before (i, f) and after (o) the update.
                    float *gi = row, *go = gi + hidden, *gf = go + hidden, *gc = gf + hidden;
                    for (std::int64_t j = 0; j < hidden; ++j) {
                        gi[j] = xg[j] + hg[j];
                        gf[j] = xg[2 * hidden + j] + hg[2 * hidden + j];
                        gc[j] = xg[3 * hidden + j] + hg[3 * hidden + j];
                    }
                    if (P)
                        for (std::int64_t j = 0; j < hidden; ++j) {
                            gi[j] += P[j] * cn[j];
                            gf[j] += P[2 * hidden + j] * cn[j];
                        }
                    clipRow(gi, hidden);
                    clipRow(gf, hidden);
                    clipRow(gc, hidden);
                    f.apply(gi, hidden);
                    if (inputForget)
                        for (std::int64_t j = 0; j < hidden; ++j)
                            gf[j] = 1.0f - gi[j];
                    else
                        f.apply(gf, hidden);
                    g.apply(gc, hidden);
                    for (std::int64_t j = 0; j < hidden; ++j) {
                        cn[j] = gf[j] * cn[j] + gi[j] * gc[j];
                        go[j] = xg[hidden + j] + hg[hidden + j] + (P ? P[hidden + j] * cn[j] : 0.0f);
                        gc[j] = cn[j];
                    }
                    clipRow(go, hidden);
                    f.apply(go, hidden);
                    hAct.apply(gc, hidden);
                    for (std::int64_t j = 0; j < hidden; ++j)
                        hn[j] = go[j] * gc[j];
                }
                std::copy_n(hn, hidden, &y[std::size_t(((t * dirs + d) * batch + n) * hidden)]);
            }
        }
        for (std::int64_t n = 0; n < batch; ++n)
            for (std::int64_t j = 0; j < hidden; ++j) {
                const std::size_t at =
                    std::size_t(batchFirst ? (n * dirs + d) * hidden + j : (d * batch + n) * hidden + j);
                yh[at] = h[std::size_t(n * hidden + j)];
                yc[at] = c[std::size_t(n * hidden + j)];
            }
    }
    if (ctx.wantsOutput(0)) {
        const Shape64 shape =
            batchFirst ? Shape64{batch, seq, dirs, hidden} : Shape64{seq, dirs, batch, hidden};
        Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType::Float, shape);
        if (!out)
            return out.status();
        float *dst = (*out)->mutableData<float>();
        for (std::int64_t t = 0; t < seq; ++t)
            for (std::int64_t d = 0; d < dirs; ++d)
                for (std::int64_t n = 0; n < batch; ++n)
                    std::copy_n(&y[std::size_t(((t * dirs + d) * batch + n) * hidden)], hidden,
                                dst +
                                    (batchFirst ? ((n * seq + t) * dirs + d) : ((t * dirs + d) * batch + n)) *
                                        hidden);
    }
    const Shape64 stateShape = batchFirst ? Shape64{batch, dirs, hidden} : Shape64{dirs, batch, hidden};
    if (ctx.wantsOutput(1))
        ctx.setOutput(1, RuntimeTensor::fromValues(DataType::Float, stateShape, yh));
    if (K == Cell::Lstm && ctx.wantsOutput(2))
        ctx.setOutput(2, RuntimeTensor::fromValues(DataType::Float, stateShape, yc));
    return Status::ok();
}

} // namespace
} // namespace kernels

void registerRecurrentKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("RNN", recurrentKernel<Cell::Rnn>);
    r.add("GRU", recurrentKernel<Cell::Gru>);
    r.add("LSTM", recurrentKernel<Cell::Lstm>);
}

} // namespace opscope
