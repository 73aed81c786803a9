// MaxPool and AveragePool on the plain NCHW layout against a direct reference (every window,
// every tap, as the ONNX spec defines them): the runtime's separable kernels — a plane at a time
// for unit strides, a row at a time otherwise — must give the reference's values exactly for
// max and to float rounding for averages, across pads, dilations, ceil_mode, count_include_pad,
// short and long rows (the widths around vector lengths) and NaN inputs; the axis-at-a-time N-d
// kernel (poolseparable.h: Indices asked for, double and int8 data, 1-D and 3-D) on the same
// geometries and on random ones of every rank; windows far larger than the input. Indices must
// name the first maximum in row-major window order, as ONNX Runtime does.

#include "runtime/kernels/kernelutil.h"
#include "runtime/session.h"
#include "support/passtest.h"
#include "support/testsupport.h"

#include <QTest>

#include <cmath>
#include <limits>
#include <random>

using namespace opscope;
using namespace opscope::test;

namespace {

struct PoolCase
{
    bool max = true;
    std::int64_t C = 3, H = 9, W = 9;
    std::vector<std::int64_t> kernel{3, 3}, strides{1, 1}, dilations{1, 1}, pads{1, 1, 1, 1};
    bool ceil = false, includePad = false, nan = false;
    // MaxPool's Indices output asked for, or double data: the runtime's general N-d loop
    // instead of the 2-D float row kernels.
    bool indices = false, asDouble = false;
    bool asHalf = false; // float16 data: pooled in float through the row kernels
    bool asInt8 = false; // int8 data (many equal values: Indices must name the first maximum)
};

std::int64_t outDim(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d, std::int64_t pb, std::int64_t pe,
                    bool ceil)
{
    const std::int64_t num = in + pb + pe - ((k - 1) * d + 1);
    std::int64_t o = (ceil ? (num + s - 1) / s : num / s) + 1;
    if (ceil && (o - 1) * s >= in + pb) // the last window must start inside the input or its begin pad
        --o;
    return o;
}

// Taps i in [0, k) of a window starting at s, d apart, with s + i·d in [s, hi): the window's
// cells inside the padded extent (AveragePool's count_include_pad divisor).
std::int64_t tapsBelow(std::int64_t s, std::int64_t hi, std::int64_t k, std::int64_t d)
{
    return hi <= s ? 0 : std::min(k, (hi - s + d - 1) / d);
}

// One output cell, straight from the definition: the input cells that are taps of its window
// (a cell h is tap i when h = start + i·d, 0 <= i < k). Walking the input instead of the taps
// keeps windows of 2^31 taps cheap to check.
float reference(const PoolCase &c, const float *x, std::int64_t oh, std::int64_t ow, std::int64_t *firstMax = nullptr)
{
    float best = -std::numeric_limits<float>::infinity();
    std::int64_t bestAt = -1, firstNan = -1;
    double sum = 0;
    std::int64_t inside = 0;
    bool sawNan = false;
    const std::int64_t sh = oh * c.strides[0] - c.pads[0], sw = ow * c.strides[1] - c.pads[1];
    const auto isTap = [](std::int64_t at, std::int64_t start, std::int64_t k, std::int64_t d) {
        return at >= start && (at - start) % d == 0 && (at - start) / d < k;
    };
    for (std::int64_t h = 0; h < c.H; ++h)
        for (std::int64_t w = 0; w < c.W; ++w) {
            if (!isTap(h, sh, c.kernel[0], c.dilations[0]) || !isTap(w, sw, c.kernel[1], c.dilations[1]))
                continue;
            const float v = x[h * c.W + w];
            ++inside;
            sum += v;
            sawNan |= std::isnan(v);
            if (std::isnan(v) && firstNan < 0)
                firstNan = h * c.W + w;
            if (v > best || bestAt < 0) { // the first maximum in row-major order
                best = std::max(best, v);
                bestAt = h * c.W + w;
            }
        }
    if (firstMax)
        *firstMax = sawNan ? firstNan : bestAt;
    if (c.max)
        return sawNan ? std::numeric_limits<float>::quiet_NaN() : best;
    const double padded = double(tapsBelow(sh, c.H + c.pads[2], c.kernel[0], c.dilations[0])) *
                          double(tapsBelow(sw, c.W + c.pads[3], c.kernel[1], c.dilations[1]));
    const double count = c.includePad ? padded : double(std::max<std::int64_t>(inside, 1));
    return float(sum / count);
}


// ---- Any number of spatial dims ----

struct NdCase
{
    enum Kind { Max, Average, Lp } kind = Max;
    std::vector<std::int64_t> in, kernel, strides, dilations, pads; // pads: begins, then ends
    bool ceil = false, includePad = false, indices = false, asDouble = false;
    std::int64_t p = 2;
};

// The output cell `out` of one plane straight from the definition: every tap of the window in
// row-major order (which is the input's order), padding skipped or counted.
double ndReference(const NdCase &c, const std::vector<double> &x, const std::vector<std::int64_t> &out,
                   std::int64_t *firstMax)
{
    const std::size_t sp = c.in.size();
    std::vector<std::int64_t> tap(sp, 0);
    double best = -std::numeric_limits<double>::infinity(), sum = 0;
    std::int64_t bestAt = -1, inside = 0, padded = 0;
    for (;;) {
        bool in = true, inPadded = true;
        std::int64_t flat = 0;
        for (std::size_t d = 0; d < sp; ++d) {
            const std::int64_t pos = out[d] * c.strides[d] - c.pads[d] + tap[d] * c.dilations[d];
            in &= pos >= 0 && pos < c.in[d];
            inPadded &= pos >= -c.pads[d] && pos < c.in[d] + c.pads[sp + d];
            flat = flat * c.in[d] + pos;
        }
        padded += inPadded;
        if (in) {
            const double v = x[std::size_t(flat)];
            ++inside;
            sum += c.kind == NdCase::Lp ? std::pow(std::abs(v), double(c.p)) : v;
            const bool bestIsNan = bestAt >= 0 && std::isnan(best);
            if (bestAt < 0 || (!bestIsNan && (v > best || std::isnan(v)))) {
                best = v;
                bestAt = flat;
            }
        }
        std::size_t d = sp;
        while (d > 0 && ++tap[d - 1] == c.kernel[d - 1])
            tap[--d] = 0;
        if (d == 0)
            break;
    }
    *firstMax = bestAt;
    if (c.kind == NdCase::Max)
        return best;
    if (c.kind == NdCase::Lp)
        return std::pow(sum, 1.0 / double(c.p));
    return sum / double(std::max<std::int64_t>(c.includePad ? padded : inside, 1));
}

// One run of `model` on x, without memory planning (the kernels' own outputs).
Expected<std::vector<RuntimeTensor>> runUnplanned(const Model &model, const RuntimeTensor &x)
{
    SessionOptions so;
    so.planMemory = false;
    Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model, so);
    if (!s)
        return s.status();
    return (*s)->run({{"x", x}});
}

} // namespace

Q_DECLARE_METATYPE(PoolCase)
Q_DECLARE_METATYPE(NdCase)

class TestPooling : public QObject
{
    Q_OBJECT

private slots:
    void matchesTheDefinition_data()
    {
        QTest::addColumn<PoolCase>("c");
        auto row = [](const char *name, PoolCase c) { QTest::newRow(name) << c; };
        PoolCase c;
        row("max 3x3 s1 pad1 28 wide (Inception)", (c = {}, c.C = 5, c.H = 28, c.W = 28, c));
        row("max 3x3 s1 pad1 7 wide", (c = {}, c.H = 7, c.W = 7, c));
        row("max 3x3 s1 pad1 17 wide", (c = {}, c.H = 6, c.W = 17, c));
        row("max 3x3 s1 pad1 33 wide", (c = {}, c.H = 5, c.W = 33, c));
        row("max 5x5 s1 pad2 (SPPF)", (c = {}, c.kernel = {5, 5}, c.pads = {2, 2, 2, 2}, c.H = 10, c.W = 20, c));
        row("max 3x3 s1 no pad", (c = {}, c.pads = {0, 0, 0, 0}, c));
        row("max 3x3 s1 asymmetric pads", (c = {}, c.pads = {0, 1, 2, 0}, c.H = 8, c.W = 11, c));
        row("max 3x2 s1 dilated 2x3", (c = {}, c.kernel = {3, 2}, c.dilations = {2, 3}, c.pads = {2, 1, 2, 1}, c.H = 12, c.W = 19, c));
        row("max 3x3 s1 NaN inputs", (c = {}, c.nan = true, c.H = 10, c.W = 21, c));
        row("max 3x3 s1 one column", (c = {}, c.W = 1, c.kernel = {3, 1}, c.pads = {1, 0, 1, 0}, c));
        row("max 3x3 s2 pad1 (rows)", (c = {}, c.strides = {2, 2}, c.H = 15, c.W = 15, c));
        row("max 3x3 s1x2 (rows)", (c = {}, c.strides = {1, 2}, c.H = 9, c.W = 20, c));
        row("max 3x3 s2x1 (rows)", (c = {}, c.strides = {2, 1}, c.H = 11, c.W = 20, c));
        row("max 2x2 s2 ceil", (c = {}, c.kernel = {2, 2}, c.strides = {2, 2}, c.pads = {0, 0, 0, 0}, c.ceil = true, c.H = 7, c.W = 9, c));
        row("avg 3x3 s1 pad1 exclude", (c = {}, c.max = false, c.H = 28, c.W = 28, c));
        row("avg 3x3 s1 pad1 include", (c = {}, c.max = false, c.includePad = true, c.H = 14, c.W = 30, c));
        row("avg 5x3 s1 pads 2,1 include", (c = {}, c.max = false, c.includePad = true, c.kernel = {5, 3}, c.pads = {2, 1, 2, 1}, c));
        row("avg 3x3 s1 asymmetric exclude", (c = {}, c.max = false, c.pads = {1, 0, 0, 2}, c.H = 6, c.W = 13, c));
        row("avg 3x3 s2 include (rows)", (c = {}, c.max = false, c.includePad = true, c.strides = {2, 2}, c.H = 13, c.W = 13, c));
        // float16, through the float row kernels (converted in and out).
        row("max 3x3 s1 pad1 float16", (c = {}, c.H = 14, c.W = 30, c.asHalf = true, c));
        row("max 3x3 s2 NaN float16", (c = {}, c.nan = true, c.strides = {2, 2}, c.H = 11, c.W = 21, c.asHalf = true, c));
        row("avg 3x3 s1 pad1 include float16", (c = {}, c.max = false, c.includePad = true, c.H = 14, c.W = 30, c.asHalf = true, c));
        // The general loop, on the same geometries.
        row("max 3x3 s1 pad1 Indices", (c = {}, c.indices = true, c));
        row("max 3x2 s1 dilated 2x3 Indices", (c = {}, c.kernel = {3, 2}, c.dilations = {2, 3}, c.pads = {2, 1, 2, 1}, c.H = 12, c.W = 19, c.indices = true, c));
        row("max 2x2 s2 ceil Indices", (c = {}, c.kernel = {2, 2}, c.strides = {2, 2}, c.pads = {0, 0, 0, 0}, c.ceil = true, c.H = 7, c.W = 9, c.indices = true, c));
        row("max 3x3 s1 NaN inputs double", (c = {}, c.nan = true, c.H = 10, c.W = 21, c.asDouble = true, c));
        row("avg 3x3 s1 pad1 include double", (c = {}, c.max = false, c.includePad = true, c.H = 14, c.W = 30, c.asDouble = true, c));
        row("avg 3x3 s2 asymmetric exclude double", (c = {}, c.max = false, c.pads = {1, 0, 0, 2}, c.strides = {2, 2}, c.H = 6, c.W = 13, c.asDouble = true, c));
        row("avg 2x2 s2 ceil include double", (c = {}, c.max = false, c.includePad = true, c.kernel = {2, 2}, c.strides = {2, 2}, c.pads = {1, 1, 0, 0}, c.ceil = true, c.H = 7, c.W = 9, c.asDouble = true, c));
        // Equal maxima in a window: Indices name the first in row-major order, whichever axis the
        // kernel reduces first (the one that shrinks most: rows here, columns in the next).
        row("max 3x3 s2x1 int8 ties Indices", (c = {}, c.strides = {2, 1}, c.H = 13, c.W = 11, c.asInt8 = true, c.indices = true, c));
        row("max 4x3 s1x3 int8 ties Indices", (c = {}, c.kernel = {4, 3}, c.strides = {1, 3}, c.pads = {1, 0, 2, 2}, c.H = 9, c.W = 16, c.asInt8 = true, c.indices = true, c));
        row("max 3x3 s1 NaN inputs Indices", (c = {}, c.nan = true, c.H = 10, c.W = 21, c.indices = true, c));
        row("max 3x3 s2 int8 no Indices", (c = {}, c.strides = {2, 2}, c.H = 12, c.W = 17, c.asInt8 = true, c));
        // Windows far wider or taller than the input, as SAME padding makes kernel_shape 2^31 - 1
        // fit (found by fuzzing: the row kernels padded each row to 8 GiB and walked every tap,
        // minutes per run): the cost is what the input holds, the values the definition's.
        const std::int64_t big = 2147483647, half = (big - 1) / 2;
        row("max 2x(2^31-1) SAME", (c = {}, c.kernel = {2, big}, c.pads = {0, half, 1, half}, c.H = 5, c.W = 32, c));
        row("avg 2x(2^31-1) SAME include", (c = {}, c.max = false, c.includePad = true, c.kernel = {2, big}, c.pads = {0, half, 1, half}, c.H = 5, c.W = 32, c));
        row("avg (2^31-1)x3 SAME exclude", (c = {}, c.max = false, c.kernel = {big, 3}, c.pads = {half, 1, half, 1}, c.H = 6, c.W = 9, c));
        row("max 3x(2^31-1) s2 Indices", (c = {}, c.kernel = {3, big}, c.strides = {2, 2}, c.pads = {1, half, 1, half}, c.H = 7, c.W = 10, c.indices = true, c));
        // A window spanning the whole input in both axes: every output clamps to the same taps,
        // computed once per plane (outputs × input taps would be 10^12 at 1000×1000).
        row("max whole-input (2^31-1)^2 SAME Indices", (c = {}, c.kernel = {big, big}, c.pads = {half, half, half, half}, c.H = 40, c.W = 50, c.indices = true, c));
        row("avg whole-input (2^31-1)^2 SAME include double", (c = {}, c.max = false, c.includePad = true, c.kernel = {big, big}, c.pads = {half, half, half, half}, c.H = 30, c.W = 20, c.asDouble = true, c));
        row("avg whole-input (2^31-1)^2 SAME exclude double", (c = {}, c.max = false, c.kernel = {big, big}, c.pads = {half, half, half, half}, c.H = 30, c.W = 20, c.asDouble = true, c));
        row("max 3x(2^20) dilated 2", (c = {}, c.kernel = {3, 1 << 20}, c.dilations = {1, 2}, c.pads = {1, (1 << 20) - 1, 1, (1 << 20) - 1}, c.H = 4, c.W = 40, c));
    }

    void matchesTheDefinition()
    {
        QFETCH(PoolCase, c);
        onnx::NodeProto n = node(c.max ? "MaxPool" : "AveragePool", {"x"}, {"y"});
        *n.add_attribute() = intsAttr("kernel_shape", c.kernel);
        *n.add_attribute() = intsAttr("strides", c.strides);
        *n.add_attribute() = intsAttr("pads", c.pads);
        if (c.dilations != std::vector<std::int64_t>{1, 1})
            *n.add_attribute() = intsAttr("dilations", c.dilations);
        if (c.ceil)
            *n.add_attribute() = intAttr("ceil_mode", 1);
        if (c.includePad)
            *n.add_attribute() = intAttr("count_include_pad", 1);
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(19);
        onnx::GraphProto *g = m.mutable_graph();
        g->set_name("g");
        if (c.indices)
            n.add_output("i");
        *g->add_node() = n;
        *g->add_input() = tensorInfo("x", c.asDouble ? onnx::TensorProto::DOUBLE
                                          : c.asHalf ? onnx::TensorProto::FLOAT16
                                          : c.asInt8 ? onnx::TensorProto::INT8
                                                     : onnx::TensorProto::FLOAT,
                                     {2, c.C, c.H, c.W});
        g->add_output()->set_name("y");
        if (c.indices)
            g->add_output()->set_name("i");
        const Model model = modelOrFail(m);

        RuntimeTensor x = *RuntimeTensor::allocate(DataType::Float, {2, c.C, c.H, c.W});
        std::mt19937 rng(7);
        std::normal_distribution<float> dist;
        for (std::int64_t i = 0; i < x.elementCount(); ++i)
            x.mutableData<float>()[i] = c.nan && i % 17 == 5 ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
        RuntimeTensor feed = x;
        if (c.asHalf) { // the reference sees the values float16 holds
            feed = *RuntimeTensor::allocate(DataType::Float16, x.shape());
            kernels::floatsToHalves(x.data<float>(), feed.mutableData<std::uint16_t>(), x.elementCount());
            kernels::halvesToFloats(feed.data<std::uint16_t>(), x.mutableData<float>(), x.elementCount());
        }
        if (c.asInt8) { // small integers: windows hold equal maxima
            feed = *RuntimeTensor::allocate(DataType::Int8, x.shape());
            for (std::int64_t i = 0; i < x.elementCount(); ++i) {
                x.mutableData<float>()[i] = std::round(x.data<float>()[i] * 1.5f);
                feed.mutableData<std::int8_t>()[i] = std::int8_t(x.data<float>()[i]);
            }
        }
        if (c.asDouble) {
            feed = *RuntimeTensor::allocate(DataType::Double, x.shape());
            for (std::int64_t i = 0; i < x.elementCount(); ++i)
                feed.mutableData<double>()[i] = x.data<float>()[i];
        }

        const Expected<std::vector<RuntimeTensor>> y = runUnplanned(model, feed);
        QVERIFY2(y, y ? "" : y.status().message().c_str());
        const std::int64_t OH = outDim(c.H, c.kernel[0], c.strides[0], c.dilations[0], c.pads[0], c.pads[2], c.ceil);
        const std::int64_t OW = outDim(c.W, c.kernel[1], c.strides[1], c.dilations[1], c.pads[1], c.pads[3], c.ceil);
        const RuntimeTensor &out = (*y)[0];
        QCOMPARE(out.shape(), (std::vector<std::int64_t>{2, c.C, OH, OW}));
        for (std::int64_t p = 0; p < 2 * c.C; ++p)
            for (std::int64_t oh = 0; oh < OH; ++oh)
                for (std::int64_t ow = 0; ow < OW; ++ow) {
                    std::int64_t firstMax = -1;
                    const float want = reference(c, x.data<float>() + p * c.H * c.W, oh, ow, &firstMax);
                    const std::int64_t at = (p * OH + oh) * OW + ow;
                    // Read each element as the output's own type: a float read of a
                    // float16 tensor runs past its end (ASan caught this in CI).
                    const float got = c.asDouble ? float(out.data<double>()[at])
                                      : c.asInt8 ? float(out.data<std::int8_t>()[at])
                                      : c.asHalf ? kernels::halfToFloat(out.data<std::uint16_t>()[at])
                                                 : out.data<float>()[at];
                    const float want16 = c.asHalf ? kernels::halfToFloat(kernels::floatToHalf(want)) : want;
                    if (c.indices) {
                        // Indices: the flat index of the first maximum (or NaN) in row-major
                        // window order, as ONNX Runtime gives, counted over the whole input.
                        const std::int64_t i = (*y)[1].data<std::int64_t>()[at];
                        QCOMPARE(i, firstMax < 0 ? -1 : p * c.H * c.W + firstMax);
                    }
                    // float16 averages: one rounding of the float result (2^-11 relative).
                    const float tolerance = c.asHalf ? 1e-3f : 1e-6f;
                    const bool same = std::isnan(want) ? std::isnan(got)
                                      : c.max      ? got == want16
                                                   : std::fabs(got - want) <= tolerance * (1 + std::fabs(want));
                    if (!same)
                        QFAIL(qPrintable(QString("plane %1 (%2,%3): got %4, want %5").arg(p).arg(oh).arg(ow).arg(got).arg(want)));
                }
    }

    // 1-D, 2-D and 3-D windows of every shape the attributes allow, drawn at random: MaxPool
    // (Indices, ties, NaN), AveragePool (with and without the padding) and LpPool through the
    // axis-at-a-time kernel, float and double, against the definition.
    void anyRankMatchesTheDefinition_data()
    {
        QTest::addColumn<NdCase>("c");
        std::mt19937 rng(2026);
        const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
        for (int i = 0; i < 120; ++i) {
            NdCase c;
            c.kind = NdCase::Kind(i % 3);
            const int sp = 1 + (i / 3) % 3;
            for (int d = 0; d < sp; ++d) {
                c.kernel.push_back(pick(1, 4));
                c.dilations.push_back(c.kind == NdCase::Max ? pick(1, 2) : 1); // AveragePool-19 has them; LpPool-18 too, keep 1
                c.strides.push_back(pick(1, 3));
                const std::int64_t extent = (c.kernel.back() - 1) * c.dilations.back() + 1;
                c.in.push_back(extent - 1 + pick(1, 6));
            }
            for (int d = 0; d < 2 * sp; ++d) // pads smaller than the window
                c.pads.push_back(pick(0, int(c.kernel[std::size_t(d % sp)]) - 1));
            c.ceil = pick(0, 3) == 0;
            c.includePad = c.kind == NdCase::Average && pick(0, 1);
            c.indices = c.kind == NdCase::Max && pick(0, 1);
            c.asDouble = pick(0, 1);
            c.p = pick(1, 3);
            QTest::addRow("%d: %s %d-D", i, c.kind == NdCase::Max ? "max" : c.kind == NdCase::Average ? "avg" : "lp", sp) << c;
        }
        // An empty input whose pads still make windows ([2,2,3,0] padded by 2 on the empty axis):
        // every window holds padding only. The kernel returned early and left its output as the
        // buffer held it; the fuzzer's run from the memory plan saw it differ from the sizing run.
        const auto emptyInput = [](NdCase::Kind kind, bool indices, bool includePad) {
            NdCase c;
            c.kind = kind;
            c.in = {3, 0};
            c.kernel = {3, 3};
            c.strides = {1, 1};
            c.dilations = {1, 1};
            c.pads = {1, 2, 1, 2};
            c.indices = indices;
            c.includePad = includePad;
            return c;
        };
        QTest::newRow("empty input, windows of padding: max") << emptyInput(NdCase::Max, false, false);
        QTest::newRow("empty input, windows of padding: max with Indices") << emptyInput(NdCase::Max, true, false);
        QTest::newRow("empty input, windows of padding: avg") << emptyInput(NdCase::Average, false, false);
        QTest::newRow("empty input, windows of padding: avg counting pads") << emptyInput(NdCase::Average, false, true);
        QTest::newRow("empty input, windows of padding: lp") << emptyInput(NdCase::Lp, false, false);
    }

    void anyRankMatchesTheDefinition()
    {
        QFETCH(NdCase, c);
        const std::size_t sp = c.in.size();
        const char *op = c.kind == NdCase::Max ? "MaxPool" : c.kind == NdCase::Average ? "AveragePool" : "LpPool";
        onnx::NodeProto n = node(op, {"x"}, {"y"});
        *n.add_attribute() = intsAttr("kernel_shape", c.kernel);
        *n.add_attribute() = intsAttr("strides", c.strides);
        *n.add_attribute() = intsAttr("pads", c.pads);
        if (c.kind == NdCase::Max)
            *n.add_attribute() = intsAttr("dilations", c.dilations);
        if (c.kind != NdCase::Lp && c.ceil)
            *n.add_attribute() = intAttr("ceil_mode", 1);
        if (c.includePad)
            *n.add_attribute() = intAttr("count_include_pad", 1);
        if (c.kind == NdCase::Lp)
            *n.add_attribute() = intAttr("p", c.p);
        if (c.indices)
            n.add_output("i");
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(17);
        onnx::GraphProto *g = m.mutable_graph();
        g->set_name("g");
        *g->add_node() = n;
        std::vector<std::int64_t> shape{2, 2};
        shape.insert(shape.end(), c.in.begin(), c.in.end());
        const auto type = c.asDouble ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT;
        *g->add_input() = tensorInfo("x", type, shape);
        g->add_output()->set_name("y");
        if (c.indices)
            g->add_output()->set_name("i");
        const Model model = modelOrFail(m);

        // Small integers, so that windows hold equal maxima; a few NaNs for MaxPool.
        std::mt19937 rng(11);
        const std::int64_t planeSize = kernels::product(c.in);
        std::vector<double> x(std::size_t(4 * planeSize));
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = c.kind == NdCase::Max && rng() % 23 == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                            : double(int(rng() % 7) - 3);
        RuntimeTensor feed = *RuntimeTensor::allocate(c.asDouble ? DataType::Double : DataType::Float, shape);
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (c.asDouble)
                feed.mutableData<double>()[i] = x[i];
            else
                feed.mutableData<float>()[i] = float(x[i]);
        }
        const Expected<std::vector<RuntimeTensor>> y = runUnplanned(model, feed);
        QVERIFY2(y, y ? "" : y.status().message().c_str());
        std::vector<std::int64_t> outSp;
        for (std::size_t d = 0; d < sp; ++d)
            outSp.push_back(outDim(c.in[d], c.kernel[d], c.strides[d], c.dilations[d], c.pads[d], c.pads[sp + d],
                                   c.kind != NdCase::Lp && c.ceil));
        std::vector<std::int64_t> outShape{2, 2};
        outShape.insert(outShape.end(), outSp.begin(), outSp.end());
        QCOMPARE((*y)[0].shape(), outShape);
        const std::int64_t outSize = kernels::product(outSp);
        std::vector<std::int64_t> at(sp, 0);
        for (std::int64_t plane = 0; plane < 4; ++plane)
            for (std::int64_t o = 0; o < outSize; ++o) {
                std::int64_t rest = o;
                for (std::size_t d = sp; d-- > 0;) {
                    at[d] = rest % outSp[d];
                    rest /= outSp[d];
                }
                const std::vector<double> planeX(x.begin() + plane * planeSize, x.begin() + (plane + 1) * planeSize);
                std::int64_t firstMax = -1;
                const double want = ndReference(c, planeX, at, &firstMax);
                const std::int64_t cell = plane * outSize + o;
                const double got = c.asDouble ? (*y)[0].data<double>()[cell] : double((*y)[0].data<float>()[cell]);
                const bool same = std::isnan(want) ? std::isnan(got) : got == want || std::fabs(got - want) <= 1e-5 * (1 + std::fabs(want));
                if (!same)
                    QFAIL(qPrintable(QString("plane %1 output %2: got %3, want %4").arg(plane).arg(o).arg(got).arg(want)));
                if (c.indices)
                    QCOMPARE((*y)[1].data<std::int64_t>()[cell], firstMax < 0 ? -1 : plane * planeSize + firstMax);
            }
    }
};

QTEST_GUILESS_MAIN(TestPooling)
#include "tst_pooling.moc"
