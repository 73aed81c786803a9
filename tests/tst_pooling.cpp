// MaxPool and AveragePool on the plain NCHW layout against a direct reference (every window,
// every tap, as the ONNX spec defines them): the runtime's separable kernels — a plane at a time
// for unit strides, a row at a time otherwise — must give the reference's values exactly for
// max and to float rounding for averages, across pads, dilations, ceil_mode, count_include_pad,
// short and long rows (the widths around vector lengths) and NaN inputs; the general N-d loop
// (Indices asked for, double data) on the same geometries; windows far larger than the input.

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
float reference(const PoolCase &c, const float *x, std::int64_t oh, std::int64_t ow)
{
    float best = -std::numeric_limits<float>::infinity();
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
            best = std::max(best, v);
        }
    if (c.max)
        return sawNan ? std::numeric_limits<float>::quiet_NaN() : best;
    const double padded = double(tapsBelow(sh, c.H + c.pads[2], c.kernel[0], c.dilations[0])) *
                          double(tapsBelow(sw, c.W + c.pads[3], c.kernel[1], c.dilations[1]));
    const double count = c.includePad ? padded : double(std::max<std::int64_t>(inside, 1));
    return float(sum / count);
}

} // namespace

Q_DECLARE_METATYPE(PoolCase)

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
        if (c.asDouble) {
            feed = *RuntimeTensor::allocate(DataType::Double, x.shape());
            for (std::int64_t i = 0; i < x.elementCount(); ++i)
                feed.mutableData<double>()[i] = x.data<float>()[i];
        }

        SessionOptions so;
        so.planMemory = false;
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model, so);
        QVERIFY2(s, s ? "" : s.status().message().c_str());
        Expected<std::vector<RuntimeTensor>> y = (*s)->run({{"x", feed}});
        QVERIFY2(y, y ? "" : y.status().message().c_str());
        const std::int64_t OH = outDim(c.H, c.kernel[0], c.strides[0], c.dilations[0], c.pads[0], c.pads[2], c.ceil);
        const std::int64_t OW = outDim(c.W, c.kernel[1], c.strides[1], c.dilations[1], c.pads[1], c.pads[3], c.ceil);
        const RuntimeTensor &out = (*y)[0];
        QCOMPARE(out.shape(), (std::vector<std::int64_t>{2, c.C, OH, OW}));
        for (std::int64_t p = 0; p < 2 * c.C; ++p)
            for (std::int64_t oh = 0; oh < OH; ++oh)
                for (std::int64_t ow = 0; ow < OW; ++ow) {
                    const float want = reference(c, x.data<float>() + p * c.H * c.W, oh, ow);
                    const std::int64_t at = (p * OH + oh) * OW + ow;
                    float got = c.asDouble ? float(out.data<double>()[at]) : out.data<float>()[at];
                    float want16 = want;
                    if (c.asHalf) {
                        got = kernels::halfToFloat(out.data<std::uint16_t>()[at]);
                        want16 = kernels::halfToFloat(kernels::floatToHalf(want));
                    }
                    if (c.indices && !std::isnan(want)) {
                        // Indices: the flat index of a cell holding the maximum, in this plane.
                        const std::int64_t i = (*y)[1].data<std::int64_t>()[at];
                        QVERIFY(i >= p * c.H * c.W && i < (p + 1) * c.H * c.W);
                        QCOMPARE(x.data<float>()[i], want);
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
};

QTEST_GUILESS_MAIN(TestPooling)
#include "tst_pooling.moc"
