// Quantized arithmetic is integer arithmetic: ConvInteger, MatMulInteger, DynamicQuantizeLinear and
// QuantizeLinear against naive references written here (int64 sums, an explicit round-half-even),
// bit for bit, including a chain of quantized convolutions where a one-step difference compounds.
// Every check runs on each exact GEMM path (intgemm.h): the detected one, then Split and Reference
// forced. CTest runs this binary again with DNNL_MAX_CPU_ISA=AVX2 and AVX512_CORE, where oneDNN's
// own int8 kernels lack VNNI and saturate (oneDnnWithoutVnniSaturates shows they do).

#include "onnx/modelio.h"
#include "passes/pipeline.h"
#include "passes/registry.h"
#include "runtime/kernels/intgemm.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QTest>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <oneapi/dnnl/dnnl.h>
#include <optional>
#include <random>

using namespace opscope;
using kernels::Int8GemmPath;

namespace {

// ---- Models built in code ----

onnx::TensorProto tensorProto(const std::string &name, int type, const std::vector<std::int64_t> &dims,
                              const void *data, std::size_t bytes)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(type);
    for (std::int64_t d : dims)
        t.add_dims(d);
    t.set_raw_data(data, bytes);
    return t;
}

// Values as `type` (UINT8, INT8, INT32 or FLOAT) from ints or floats.
template<class V>
onnx::TensorProto tensorOf(const std::string &name, int type, const std::vector<std::int64_t> &dims,
                           const std::vector<V> &v)
{
    std::string bytes;
    for (V x : v) {
        if (type == onnx::TensorProto::UINT8 || type == onnx::TensorProto::INT8)
            bytes.push_back(static_cast<char>(static_cast<std::int32_t>(x)));
        else if (type == onnx::TensorProto::INT32) {
            const auto i = static_cast<std::int32_t>(x);
            bytes.append(reinterpret_cast<const char *>(&i), 4);
        } else {
            const auto f = static_cast<float>(x);
            bytes.append(reinterpret_cast<const char *>(&f), 4);
        }
    }
    return tensorProto(name, type, dims, bytes.data(), bytes.size());
}

void addInts(onnx::NodeProto &n, const std::string &name, const std::vector<std::int64_t> &v)
{
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t x : v)
        a->add_ints(x);
}

void addInt(onnx::NodeProto &n, const std::string &name, std::int64_t v)
{
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}

onnx::ModelProto emptyModel(int opset)
{
    onnx::ModelProto m;
    m.set_ir_version(opset >= 21 ? 10 : 8);
    m.add_opset_import()->set_version(opset);
    m.mutable_graph()->set_name("quantized");
    return m;
}

Model load(const onnx::ModelProto &proto)
{
    const std::string bytes = proto.SerializeAsString();
    Expected<ImportResult> r = loadModelFromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())), ".");
    if (!r)
        QTest::qFail(r.status().message().c_str(), __FILE__, __LINE__);
    return r ? r->model : Model{};
}

RuntimeTensor tensorFrom(DataType type, const std::vector<std::int64_t> &shape, const std::vector<std::int32_t> &v)
{
    Expected<RuntimeTensor> t = RuntimeTensor::allocate(type, shape);
    for (std::size_t i = 0; i < v.size(); ++i)
        if (type == DataType::UInt8)
            t->mutableData<std::uint8_t>()[i] = std::uint8_t(v[i]);
        else
            t->mutableData<std::int8_t>()[i] = std::int8_t(v[i]);
    return std::move(*t);
}

std::vector<RuntimeTensor> runOrFail(const Model &model, const Feeds &feeds)
{
    Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
    if (!s) {
        QTest::qFail(s.status().message().c_str(), __FILE__, __LINE__);
        return {};
    }
    Expected<std::vector<RuntimeTensor>> r = (*s)->run(feeds);
    if (!r)
        QTest::qFail(r.status().message().c_str(), __FILE__, __LINE__);
    return r ? std::move(*r) : std::vector<RuntimeTensor>{};
}

Model optimized(Model m)
{
    passes::PipelineSpec spec;
    spec.level = "all";
    const Expected<std::vector<std::string>> names = passes::resolvePipeline(spec);
    if (names) {
        const passes::PipelineResult r = passes::runPipeline(m, *names);
        if (!r.status)
            QTest::qFail(r.status.message().c_str(), __FILE__, __LINE__);
    }
    return m;
}

// ---- References ----

// Round half to even without the FPU's rounding mode.
float roundHalfEven(float v)
{
    const float f = std::floor(v), d = v - f;
    if (d > 0.5f || (d == 0.5f && std::fmod(f, 2.0f) != 0.0f))
        return f + 1.0f;
    return f;
}

std::int32_t quantizeRef(float x, float scale, std::int32_t zp, std::int32_t lo, std::int32_t hi)
{
    const float q = roundHalfEven(x / scale) + float(zp);
    return std::int32_t(std::clamp(q, float(lo), float(hi)));
}

struct Dql
{
    std::vector<std::int32_t> q;
    float scale = 1;
    std::int32_t zp = 0;
};

// ONNX DynamicQuantizeLinear: the range including 0, scale (max − min)/255, zp = round(−min/scale).
Dql dqlRef(const std::vector<float> &x)
{
    float lo = 0, hi = 0;
    for (float v : x) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    Dql d;
    d.scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    d.zp = std::int32_t(roundHalfEven(std::clamp(0.0f - lo / d.scale, 0.0f, 255.0f)));
    for (float v : x)
        d.q.push_back(quantizeRef(v, d.scale, d.zp, 0, 255));
    return d;
}

struct ConvSpec
{
    int n = 1, c = 4, h = 9, w = 9, m = 6, kh = 3, kw = 3, group = 1, stride = 1, dilation = 1;
    std::vector<std::int64_t> pads{1, 1, 1, 1}; // top, left, bottom, right (1-D: left, right)
    bool oneD = false;
    int oh() const { return oneD ? 1 : (h + int(pads[0] + pads[2]) - dilation * (kh - 1) - 1) / stride + 1; }
    int ow() const
    {
        const int l = int(oneD ? pads[0] : pads[1]), r = int(oneD ? pads[1] : pads[3]);
        return (w + l + r - dilation * (kw - 1) - 1) / stride + 1;
    }
};

// (x − x0) ⊛ (w − w0[m]) with padding that holds x0, in int64, as int32.
std::vector<std::int32_t> convRef(const ConvSpec &s, const std::vector<std::int32_t> &x, std::int32_t x0,
                                  const std::vector<std::int32_t> &w, const std::vector<std::int32_t> &w0)
{
    const int cg = s.c / s.group, mg = s.m / s.group, OH = s.oh(), OW = s.ow();
    const int padT = s.oneD ? 0 : int(s.pads[0]), padL = int(s.oneD ? s.pads[0] : s.pads[1]);
    const int h = s.oneD ? 1 : s.h;
    std::vector<std::int32_t> y(static_cast<std::size_t>(s.n * s.m * OH * OW));
    for (int n = 0; n < s.n; ++n)
        for (int m = 0; m < s.m; ++m)
            for (int oh = 0; oh < OH; ++oh)
                for (int ow = 0; ow < OW; ++ow) {
                    std::int64_t acc = 0;
                    const int g = m / mg;
                    for (int ci = 0; ci < cg; ++ci)
                        for (int kh = 0; kh < s.kh; ++kh)
                            for (int kw = 0; kw < s.kw; ++kw) {
                                const int ih = oh * s.stride - padT + kh * s.dilation;
                                const int iw = ow * s.stride - padL + kw * s.dilation;
                                const int c = g * cg + ci;
                                const std::int32_t xv = ih < 0 || ih >= h || iw < 0 || iw >= s.w
                                                            ? x0
                                                            : x[std::size_t(((n * s.c + c) * h + ih) * s.w + iw)];
                                const std::int32_t wv = w[std::size_t(((m * cg + ci) * s.kh + kh) * s.kw + kw)];
                                acc += std::int64_t(xv - x0) * (wv - w0[std::size_t(m)]);
                            }
                    y[std::size_t(((n * s.m + m) * OH + oh) * OW + ow)] = std::int32_t(acc);
                }
    return y;
}

// A 3-D convolution: pads are the three begins, then the three ends.
struct Conv3Spec
{
    int n = 1, c = 3, m = 4, group = 1;
    std::array<int, 3> in{5, 6, 7}, k{3, 2, 3}, stride{1, 1, 1}, dilation{1, 1, 1};
    std::array<int, 6> pads{1, 0, 1, 1, 1, 0};
    int out(int d) const
    {
        return (in[d] + pads[d] + pads[d + 3] - dilation[d] * (k[d] - 1) - 1) / stride[d] + 1;
    }
};

std::vector<std::int32_t> conv3Ref(const Conv3Spec &s, const std::vector<std::int32_t> &x, std::int32_t x0,
                                   const std::vector<std::int32_t> &w, const std::vector<std::int32_t> &w0)
{
    const int cg = s.c / s.group, mg = s.m / s.group, O0 = s.out(0), O1 = s.out(1), O2 = s.out(2);
    std::vector<std::int32_t> y;
    for (int n = 0; n < s.n; ++n)
        for (int m = 0; m < s.m; ++m)
            for (int o0 = 0; o0 < O0; ++o0)
                for (int o1 = 0; o1 < O1; ++o1)
                    for (int o2 = 0; o2 < O2; ++o2) {
                        std::int64_t acc = 0;
                        for (int ci = 0; ci < cg; ++ci)
                            for (int k0 = 0; k0 < s.k[0]; ++k0)
                                for (int k1 = 0; k1 < s.k[1]; ++k1)
                                    for (int k2 = 0; k2 < s.k[2]; ++k2) {
                                        const int i0 = o0 * s.stride[0] - s.pads[0] + k0 * s.dilation[0];
                                        const int i1 = o1 * s.stride[1] - s.pads[1] + k1 * s.dilation[1];
                                        const int i2 = o2 * s.stride[2] - s.pads[2] + k2 * s.dilation[2];
                                        const int c = (m / mg) * cg + ci;
                                        const bool inside = i0 >= 0 && i0 < s.in[0] && i1 >= 0 && i1 < s.in[1] &&
                                                            i2 >= 0 && i2 < s.in[2];
                                        const std::int32_t xv =
                                            inside ? x[std::size_t(((n * s.c + c) * s.in[0] + i0) * s.in[1] * s.in[2] +
                                                                   i1 * s.in[2] + i2)]
                                                   : x0;
                                        const std::int32_t wv =
                                            w[std::size_t((((m * cg + ci) * s.k[0] + k0) * s.k[1] + k1) * s.k[2] + k2)];
                                        acc += std::int64_t(xv - x0) * (wv - w0[std::size_t(m)]);
                                    }
                        y.push_back(std::int32_t(acc));
                    }
    return y;
}

// ---- Paths ----

std::vector<std::optional<Int8GemmPath>> paths()
{
    return {std::nullopt, Int8GemmPath::Split, Int8GemmPath::Reference};
}

struct ForcedPath
{
    explicit ForcedPath(std::optional<Int8GemmPath> p) { kernels::forceInt8GemmPath(p); }
    ~ForcedPath() { kernels::forceInt8GemmPath(std::nullopt); }
};

std::vector<std::int32_t> randomInts(std::mt19937 &rng, std::size_t count, int lo, int hi, bool extremes)
{
    std::vector<std::int32_t> v(count);
    std::uniform_int_distribution<int> d(lo, hi);
    for (auto &x : v)
        x = extremes ? (rng() % 2 ? hi : lo) : d(rng);
    return v;
}

int typeOf(bool isSigned)
{
    return isSigned ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8;
}

} // namespace

Q_DECLARE_METATYPE(ConvSpec)
Q_DECLARE_METATYPE(Conv3Spec)

class TestQuantized : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        qInfo("oneDNN effective ISA 0x%x, int8 GEMM path: %s", unsigned(dnnl_get_effective_cpu_isa()),
              kernels::int8GemmPathName(kernels::int8GemmPath()));
    }

    // The hazard the Split path exists for: oneDNN's u8s8 GEMM without VNNI saturates int16 pairs.
    void oneDnnWithoutVnniSaturates()
    {
        if (kernels::int8GemmPath() != Int8GemmPath::Split)
            QSKIP("oneDNN multiplies with VNNI (or not at all) here; run with DNNL_MAX_CPU_ISA=AVX2");
        const std::int64_t k = 64;
        std::vector<std::uint8_t> a(std::size_t(k), 255);
        std::vector<std::int8_t> b(std::size_t(k), 127);
        std::int32_t c = 0, co = 0;
        QCOMPARE(dnnl_gemm_u8s8s32('N', 'N', 'F', 1, 1, k, 1.0f, a.data(), k, 0, b.data(), 1, 0, 0.0f, &c, 1, &co),
                 dnnl_success);
        QVERIFY2(c != 255 * 127 * k, "no saturation: the Split path would be unnecessary here");
    }

    void convInteger_data()
    {
        QTest::addColumn<ConvSpec>("spec");
        QTest::addColumn<bool>("xSigned");
        QTest::addColumn<bool>("wSigned");
        QTest::addColumn<int>("zeroPoints"); // 0 none, 1 per tensor, 2 weights per channel
        QTest::addColumn<bool>("extremes");
        ConvSpec s;
        for (bool xs : {false, true})
            for (bool ws : {false, true})
                for (int zp : {0, 1, 2}) {
                    QTest::addRow("%s x, %s w, zp %s", xs ? "s8" : "u8", ws ? "s8" : "u8",
                                  zp == 0 ? "none" : zp == 1 ? "per tensor" : "per channel")
                        << s << xs << ws << zp << false;
                }
        QTest::addRow("extreme values u8 u8 zp") << s << false << false << 1 << true;
        QTest::addRow("extreme values u8 u8 per channel") << s << false << false << 2 << true;
        ConvSpec g = s;
        g.group = 2;
        QTest::addRow("group 2") << g << false << false << 2 << false;
        ConvSpec dw = s;
        dw.c = dw.m = dw.group = 5;
        QTest::addRow("depthwise") << dw << false << false << 2 << false;
        QTest::addRow("depthwise s8") << dw << true << true << 1 << false;
        dw.stride = 2;
        dw.dilation = 2;
        dw.pads = {2, 1, 2, 2};
        QTest::addRow("depthwise stride 2 dilation 2 uneven pads") << dw << false << false << 2 << false;
        ConvSpec st = s;
        st.h = 17;
        st.w = 13;
        st.stride = 2;
        QTest::addRow("stride 2 odd 17x13") << st << false << false << 1 << false;
        ConvSpec dil = st;
        dil.stride = 1;
        dil.dilation = 2;
        dil.pads = {0, 2, 1, 0};
        QTest::addRow("dilation 2 uneven pads") << dil << false << true << 2 << false;
        ConvSpec pw = s;
        pw.kh = pw.kw = 1;
        pw.pads = {0, 0, 0, 0};
        pw.n = 2;
        QTest::addRow("pointwise batch 2") << pw << false << false << 2 << false;
        ConvSpec rect = s;
        rect.kh = 5;
        rect.kw = 3;
        rect.pads = {2, 1, 2, 1};
        QTest::addRow("5x3 kernel") << rect << false << false << 1 << false;
        ConvSpec big = s;
        big.c = 300; // K = 2700: sums past 2^24, where a float epilogue would round
        big.m = 8;
        big.h = big.w = 5;
        QTest::addRow("K 2700 extremes") << big << false << false << 2 << true;
        ConvSpec one = s;
        one.oneD = true;
        one.w = 23;
        one.kh = 1;
        one.kw = 5;
        one.pads = {2, 1};
        one.stride = 2;
        QTest::addRow("1-D stride 2") << one << false << false << 2 << false;
        // A row whose im2col columns pass the kernel's 4 MiB bound is cut into pieces of columns
        // (pads of 2^31 − 1 asked for one 8 GiB row, found by fuzzing): pieces meet mid-row, in
        // the padding and across strides.
        ConvSpec wide = s;
        wide.c = 32;
        wide.m = 4;
        wide.h = 2;
        wide.w = 16000; // 288 × 16000 B of columns per row
        QTest::addRow("row cut into column pieces") << wide << false << false << 1 << false;
        ConvSpec wide2 = wide;
        wide2.stride = 2;
        wide2.w = 33001;
        QTest::addRow("row cut into column pieces, stride 2") << wide2 << true << false << 2 << false;
        ConvSpec padded = wide;
        padded.w = 9;
        padded.pads = {1, 2, 1, 20000};
        QTest::addRow("row of mostly padding cut into pieces") << padded << false << true << 1 << false;
        // 1-D runs as 2-D of height 1 (so its columns are cut into pieces too), depthwise included.
        ConvSpec wide1 = one;
        wide1.c = 32;
        wide1.m = 4;
        wide1.w = 16000;
        wide1.kw = 9;
        wide1.pads = {4, 4};
        wide1.stride = 1;
        QTest::addRow("1-D cut into column pieces") << wide1 << false << true << 2 << false;
        ConvSpec dw1 = one;
        dw1.c = dw1.m = dw1.group = 8;
        dw1.w = 50;
        dw1.kw = 5;
        dw1.pads = {2, 2};
        QTest::addRow("1-D depthwise") << dw1 << true << false << 1 << false;
    }
    void convInteger()
    {
        QFETCH(ConvSpec, spec);
        QFETCH(bool, xSigned);
        QFETCH(bool, wSigned);
        QFETCH(int, zeroPoints);
        QFETCH(bool, extremes);
        std::mt19937 rng(7);
        const int xlo = xSigned ? -128 : 0, wlo = wSigned ? -128 : 0;
        const int cg = spec.c / spec.group;
        const std::vector<std::int64_t> xShape = spec.oneD ? std::vector<std::int64_t>{spec.n, spec.c, spec.w}
                                                           : std::vector<std::int64_t>{spec.n, spec.c, spec.h, spec.w};
        const std::vector<std::int64_t> wShape = spec.oneD ? std::vector<std::int64_t>{spec.m, cg, spec.kw}
                                                           : std::vector<std::int64_t>{spec.m, cg, spec.kh, spec.kw};
        const std::size_t xCount = std::size_t(spec.n * spec.c * (spec.oneD ? 1 : spec.h) * spec.w);
        const auto x = randomInts(rng, xCount, xlo, xlo + 255, extremes);
        const auto w = randomInts(rng, std::size_t(spec.m * cg * spec.kh * spec.kw), wlo, wlo + 255, extremes);
        const std::int32_t x0 = zeroPoints ? randomInts(rng, 1, xlo, xlo + 255, false)[0] : 0;
        auto w0 = randomInts(rng, std::size_t(spec.m), wlo, wlo + 255, false);
        if (zeroPoints == 0)
            std::fill(w0.begin(), w0.end(), 0);
        else if (zeroPoints == 1)
            std::fill(w0.begin(), w0.end(), w0[0]);
        const std::vector<std::int32_t> want = convRef(spec, x, x0, w, w0);
        for (bool constantWeights : {true, false})
            for (const auto &path : paths()) {
                ForcedPath forced(path);
                onnx::ModelProto m = emptyModel(13);
                auto *g = m.mutable_graph();
                *g->add_input() = test::tensorInfo("x", typeOf(xSigned), xShape);
                if (constantWeights)
                    *g->add_initializer() = tensorOf("w", typeOf(wSigned), wShape, w);
                else
                    *g->add_input() = test::tensorInfo("w", typeOf(wSigned), wShape);
                std::vector<std::string> inputs{"x", "w"};
                if (zeroPoints) {
                    *g->add_initializer() = tensorOf("x0", typeOf(xSigned), {}, std::vector<std::int32_t>{x0});
                    *g->add_initializer() =
                        zeroPoints == 1 ? tensorOf("w0", typeOf(wSigned), {}, std::vector<std::int32_t>{w0[0]})
                                        : tensorOf("w0", typeOf(wSigned), {spec.m}, w0);
                    inputs.insert(inputs.end(), {"x0", "w0"});
                }
                auto *n = g->add_node();
                *n = test::node("ConvInteger", inputs, {"y"});
                addInts(*n, "pads", spec.pads);
                addInts(*n, "strides", spec.oneD ? std::vector<std::int64_t>{spec.stride}
                                                 : std::vector<std::int64_t>{spec.stride, spec.stride});
                addInts(*n, "dilations", spec.oneD ? std::vector<std::int64_t>{spec.dilation}
                                                   : std::vector<std::int64_t>{spec.dilation, spec.dilation});
                addInt(*n, "group", spec.group);
                *g->add_output() = test::tensorInfo("y", onnx::TensorProto::INT32, {});
                Feeds feeds{{"x", tensorFrom(xSigned ? DataType::Int8 : DataType::UInt8, xShape, x)}};
                if (!constantWeights)
                    feeds.emplace_back("w", tensorFrom(wSigned ? DataType::Int8 : DataType::UInt8, wShape, w));
                const auto out = runOrFail(load(m), feeds);
                QVERIFY(!out.empty());
                QCOMPARE(out[0].elementCount(), std::int64_t(want.size()));
                const std::int32_t *got = out[0].data<std::int32_t>();
                for (std::size_t i = 0; i < want.size(); ++i)
                    if (got[i] != want[i])
                        QFAIL(qPrintable(QString("path %1, %2 weights: y[%3] = %4, want %5")
                                             .arg(path ? kernels::int8GemmPathName(*path) : "detected")
                                             .arg(constantWeights ? "constant" : "input")
                                             .arg(i)
                                             .arg(got[i])
                                             .arg(want[i])));
            }
    }

    // 3-D and up run through chunks of output positions, each with its own table of input offsets
    // (a whole volume's table and columns were 9·k bytes per output: gigabytes on a large one).
    void convInteger3d_data()
    {
        QTest::addColumn<Conv3Spec>("spec");
        QTest::addColumn<bool>("xSigned");
        QTest::addColumn<int>("zeroPoints");
        const Conv3Spec s;
        QTest::addRow("3x2x3 uneven pads u8") << s << false << 1;
        QTest::addRow("3x2x3 uneven pads s8 per channel") << s << true << 2;
        Conv3Spec sd = s;
        sd.n = 2;
        sd.stride = {2, 1, 2};
        sd.dilation = {1, 2, 2};
        sd.in = {7, 8, 9};
        QTest::addRow("batch 2 stride dilation") << sd << false << 2;
        Conv3Spec gr = s;
        gr.c = gr.m = 4;
        gr.group = 2;
        QTest::addRow("group 2") << gr << false << 2;
        // 16 channels × 27 taps: 648 bytes of columns and table per output, 6,472 per chunk.
        Conv3Spec big = s;
        big.c = 16;
        big.m = 3;
        big.k = {3, 3, 3};
        big.in = {18, 20, 22};
        big.pads = {1, 1, 1, 1, 1, 1};
        QTest::addRow("volume past one chunk") << big << false << 1;
        // One output position: the images and groups split across threads instead of the chunks.
        Conv3Spec tiny = s;
        tiny.n = 3;
        tiny.c = tiny.m = 4;
        tiny.group = 2;
        tiny.in = {3, 2, 3};
        tiny.pads = {0, 0, 0, 0, 0, 0};
        QTest::addRow("one output, batch 3, group 2") << tiny << false << 2;
        Conv3Spec padded = s;
        padded.in = {2, 2, 3};
        padded.pads = {1, 1, 0, 0, 1, 20000};
        QTest::addRow("mostly padding") << padded << true << 1;
    }
    void convInteger3d()
    {
        QFETCH(Conv3Spec, spec);
        QFETCH(bool, xSigned);
        QFETCH(int, zeroPoints);
        std::mt19937 rng(11);
        const int cg = spec.c / spec.group, xlo = xSigned ? -128 : 0;
        const std::vector<std::int64_t> xShape{spec.n, spec.c, spec.in[0], spec.in[1], spec.in[2]};
        const std::vector<std::int64_t> wShape{spec.m, cg, spec.k[0], spec.k[1], spec.k[2]};
        const auto x = randomInts(rng, std::size_t(spec.n * spec.c * spec.in[0] * spec.in[1] * spec.in[2]), xlo,
                                  xlo + 255, false);
        const auto w = randomInts(rng, std::size_t(spec.m * cg * spec.k[0] * spec.k[1] * spec.k[2]), 0, 255, false);
        const std::int32_t x0 = randomInts(rng, 1, xlo, xlo + 255, false)[0];
        auto w0 = randomInts(rng, std::size_t(spec.m), 0, 255, false);
        if (zeroPoints == 1)
            std::fill(w0.begin(), w0.end(), w0[0]);
        const std::vector<std::int32_t> want = conv3Ref(spec, x, x0, w, w0);
        for (const auto &path : paths()) {
            ForcedPath forced(path);
            onnx::ModelProto m = emptyModel(13);
            auto *g = m.mutable_graph();
            *g->add_input() = test::tensorInfo("x", typeOf(xSigned), xShape);
            *g->add_initializer() = tensorOf("w", onnx::TensorProto::UINT8, wShape, w);
            *g->add_initializer() = tensorOf("x0", typeOf(xSigned), {}, std::vector<std::int32_t>{x0});
            *g->add_initializer() = zeroPoints == 1
                                        ? tensorOf("w0", onnx::TensorProto::UINT8, {}, std::vector<std::int32_t>{w0[0]})
                                        : tensorOf("w0", onnx::TensorProto::UINT8, {spec.m}, w0);
            auto *n = g->add_node();
            *n = test::node("ConvInteger", {"x", "w", "x0", "w0"}, {"y"});
            addInts(*n, "pads", {spec.pads.begin(), spec.pads.end()});
            addInts(*n, "strides", {spec.stride.begin(), spec.stride.end()});
            addInts(*n, "dilations", {spec.dilation.begin(), spec.dilation.end()});
            addInt(*n, "group", spec.group);
            *g->add_output() = test::tensorInfo("y", onnx::TensorProto::INT32, {});
            const Feeds feeds{{"x", tensorFrom(xSigned ? DataType::Int8 : DataType::UInt8, xShape, x)}};
            const auto out = runOrFail(load(m), feeds);
            QVERIFY(!out.empty());
            QCOMPARE(out[0].shape(), (std::vector<std::int64_t>{spec.n, spec.m, spec.out(0), spec.out(1), spec.out(2)}));
            const std::int32_t *got = out[0].data<std::int32_t>();
            for (std::size_t i = 0; i < want.size(); ++i)
                if (got[i] != want[i])
                    QFAIL(qPrintable(QString("path %1: y[%2] = %3, want %4")
                                         .arg(path ? kernels::int8GemmPathName(*path) : "detected")
                                         .arg(i)
                                         .arg(got[i])
                                         .arg(want[i])));
        }
    }

    void matMulInteger_data()
    {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("batch"); // 0: 2-D operands
        QTest::addColumn<bool>("aSigned");
        QTest::addColumn<bool>("bSigned");
        QTest::addColumn<int>("aZero"); // 0 none, 1 scalar, 2 per row
        QTest::addColumn<int>("bZero"); // 0 none, 1 scalar, 2 per column
        QTest::addColumn<bool>("extremes");
        for (bool as : {false, true})
            for (bool bs : {false, true})
                QTest::addRow("%s·%s scalar zero points", as ? "s8" : "u8", bs ? "s8" : "u8")
                    << 7 << 33 << 9 << 0 << as << bs << 1 << 1 << false;
        QTest::addRow("no zero points") << 5 << 16 << 8 << 0 << false << false << 0 << 0 << false;
        QTest::addRow("per row and per column") << 6 << 40 << 11 << 0 << false << false << 2 << 2 << false;
        QTest::addRow("per column s8 B") << 6 << 40 << 11 << 0 << false << true << 1 << 2 << false;
        QTest::addRow("gemv m=1 extremes") << 1 << 1024 << 13 << 0 << false << false << 1 << 2 << true;
        QTest::addRow("batched per row and column") << 4 << 21 << 6 << 3 << false << false << 2 << 2 << false;
        QTest::addRow("k 3000 extremes") << 3 << 3000 << 5 << 0 << false << false << 1 << 1 << true;
    }
    void matMulInteger()
    {
        QFETCH(int, m);
        QFETCH(int, k);
        QFETCH(int, n);
        QFETCH(int, batch);
        QFETCH(bool, aSigned);
        QFETCH(bool, bSigned);
        QFETCH(int, aZero);
        QFETCH(int, bZero);
        QFETCH(bool, extremes);
        std::mt19937 rng(11);
        const int alo = aSigned ? -128 : 0, blo = bSigned ? -128 : 0, batches = std::max(batch, 1);
        const auto a = randomInts(rng, std::size_t(batches * m * k), alo, alo + 255, extremes);
        const auto b = randomInts(rng, std::size_t(batches * k * n), blo, blo + 255, extremes);
        auto a0 = randomInts(rng, std::size_t(batches * m), alo, alo + 255, false);
        auto b0 = randomInts(rng, std::size_t(batches * n), blo, blo + 255, false);
        if (aZero < 2)
            std::fill(a0.begin(), a0.end(), aZero ? a0[0] : 0);
        if (bZero < 2)
            std::fill(b0.begin(), b0.end(), bZero ? b0[0] : 0);
        std::vector<std::int32_t> want(static_cast<std::size_t>(batches * m * n));
        for (int bi = 0; bi < batches; ++bi)
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) {
                    std::int64_t acc = 0;
                    for (int p = 0; p < k; ++p)
                        acc += std::int64_t(a[std::size_t((bi * m + i) * k + p)] - a0[std::size_t(bi * m + i)]) *
                               (b[std::size_t((bi * k + p) * n + j)] - b0[std::size_t(bi * n + j)]);
                    want[std::size_t((bi * m + i) * n + j)] = std::int32_t(acc);
                }
        const auto dims = [&](std::vector<std::int64_t> d) {
            if (batch)
                d.insert(d.begin(), batch);
            return d;
        };
        for (bool constantB : {true, false})
            for (const auto &path : paths()) {
                ForcedPath forced(path);
                onnx::ModelProto mp = emptyModel(13);
                auto *g = mp.mutable_graph();
                *g->add_input() = test::tensorInfo("a", typeOf(aSigned), dims({m, k}));
                if (constantB)
                    *g->add_initializer() = tensorOf("b", typeOf(bSigned), dims({k, n}), b);
                else
                    *g->add_input() = test::tensorInfo("b", typeOf(bSigned), dims({k, n}));
                std::vector<std::string> inputs{"a", "b", "", ""};
                if (aZero) {
                    *g->add_initializer() = aZero == 1 ? tensorOf("a0", typeOf(aSigned), {}, std::vector{a0[0]})
                                            : batch    ? tensorOf("a0", typeOf(aSigned), dims({m, 1}), a0)
                                                       : tensorOf("a0", typeOf(aSigned), {m}, a0);
                    inputs[2] = "a0";
                }
                if (bZero) {
                    *g->add_initializer() = bZero == 1 ? tensorOf("b0", typeOf(bSigned), {}, std::vector{b0[0]})
                                            : batch    ? tensorOf("b0", typeOf(bSigned), dims({1, n}), b0)
                                                       : tensorOf("b0", typeOf(bSigned), {n}, b0);
                    inputs[3] = "b0";
                }
                while (inputs.back().empty())
                    inputs.pop_back();
                *g->add_node() = test::node("MatMulInteger", inputs, {"y"});
                *g->add_output() = test::tensorInfo("y", onnx::TensorProto::INT32, {});
                Feeds feeds{{"a", tensorFrom(aSigned ? DataType::Int8 : DataType::UInt8, dims({m, k}), a)}};
                if (!constantB)
                    feeds.emplace_back("b", tensorFrom(bSigned ? DataType::Int8 : DataType::UInt8, dims({k, n}), b));
                const auto out = runOrFail(load(mp), feeds);
                QVERIFY(!out.empty());
                QCOMPARE(out[0].elementCount(), std::int64_t(want.size()));
                for (std::size_t i = 0; i < want.size(); ++i)
                    if (out[0].data<std::int32_t>()[i] != want[i])
                        QFAIL(qPrintable(QString("path %1: y[%2] = %3, want %4")
                                             .arg(path ? kernels::int8GemmPathName(*path) : "detected")
                                             .arg(i)
                                             .arg(out[0].data<std::int32_t>()[i])
                                             .arg(want[i])));
            }
    }

    void dynamicQuantizeLinear_data()
    {
        QTest::addColumn<std::vector<float>>("x");
        std::mt19937 rng(3);
        std::normal_distribution<float> nd(0.3f, 2.0f);
        std::vector<float> random(5000);
        for (auto &v : random)
            v = nd(rng);
        QTest::addRow("random") << random;
        std::vector<float> large(300001);
        for (auto &v : large)
            v = nd(rng) * 7.0f;
        QTest::addRow("300001 values (parallel blocks)") << large;
        // Range 255 → scale 1: x.5 values are ties, and the zero point 2.5 rounds to 2, not 3.
        QTest::addRow("ties") << std::vector<float>{-2.5f, 252.5f, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 100.5f, 101.5f};
        QTest::addRow("all zero") << std::vector<float>(17, 0.0f);
        QTest::addRow("all positive") << std::vector<float>{0.25f, 3.0f, 7.75f, 1e-3f};
        QTest::addRow("all negative") << std::vector<float>{-0.25f, -3.0f, -7.75f, -1e-3f};
    }
    void dynamicQuantizeLinear()
    {
        QFETCH(std::vector<float>, x);
        const Dql want = dqlRef(x);
        onnx::ModelProto m = emptyModel(13);
        auto *g = m.mutable_graph();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {std::int64_t(x.size())});
        *g->add_node() = test::node("DynamicQuantizeLinear", {"x"}, {"q", "s", "z"});
        *g->add_output() = test::tensorInfo("q", onnx::TensorProto::UINT8, {std::int64_t(x.size())});
        *g->add_output() = test::tensorInfo("s", onnx::TensorProto::FLOAT, {});
        *g->add_output() = test::tensorInfo("z", onnx::TensorProto::UINT8, {});
        const auto out =
            runOrFail(load(m), {{"x", RuntimeTensor::fromValues(DataType::Float, {std::int64_t(x.size())}, x)}});
        QCOMPARE(out.size(), std::size_t(3));
        QCOMPARE(std::bit_cast<std::uint32_t>(out[1].data<float>()[0]), std::bit_cast<std::uint32_t>(want.scale));
        QCOMPARE(std::int32_t(out[2].data<std::uint8_t>()[0]), want.zp);
        for (std::size_t i = 0; i < x.size(); ++i)
            QCOMPARE(std::int32_t(out[0].data<std::uint8_t>()[i]), want.q[i]);
    }

    void quantizeLinear_data()
    {
        QTest::addColumn<bool>("isSigned");
        QTest::addColumn<int>("mode"); // 0 per tensor, 1 per axis 1, 2 blocked (opset 21, block 3 on axis 1)
        for (bool s : {false, true}) {
            QTest::addRow("%s per tensor", s ? "s8" : "u8") << s << 0;
            QTest::addRow("%s per axis", s ? "s8" : "u8") << s << 1;
            QTest::addRow("%s blocked", s ? "s8" : "u8") << s << 2;
        }
    }
    void quantizeLinear()
    {
        QFETCH(bool, isSigned);
        QFETCH(int, mode);
        const std::int64_t d0 = 2, d1 = 8, d2 = 5, blocks = (d1 + 2) / 3;
        std::vector<float> x(static_cast<std::size_t>(d0 * d1 * d2));
        for (std::size_t i = 0; i < x.size(); ++i) // ties (k + 0.5)·scale among others
            x[i] = (float(int(i * 37 % 101)) - 50.0f) * 0.25f + (i % 3 == 0 ? 0.125f : 0.0f);
        const std::vector<std::int64_t> pShape = mode == 0 ? std::vector<std::int64_t>{}
                                                 : mode == 1 ? std::vector<std::int64_t>{d1}
                                                             : std::vector<std::int64_t>{d0, blocks, d2};
        std::int64_t pCount = 1;
        for (std::int64_t d : pShape)
            pCount *= d;
        std::vector<float> scale(static_cast<std::size_t>(pCount));
        std::vector<std::int32_t> zp(static_cast<std::size_t>(pCount));
        for (std::int64_t i = 0; i < pCount; ++i) {
            scale[std::size_t(i)] = i % 2 ? 0.25f : 0.5f; // exact ties for the .125 values at 0.25
            zp[std::size_t(i)] = int(i * 13 % 40) - (isSigned ? 20 : -100);
        }
        const auto param = [&](std::size_t i) -> std::size_t {
            const std::int64_t a = std::int64_t(i) / d2 % d1;
            if (mode == 0)
                return 0;
            if (mode == 1)
                return std::size_t(a);
            return std::size_t((std::int64_t(i) / (d1 * d2) * blocks + a / 3) * d2 + std::int64_t(i) % d2);
        };
        onnx::ModelProto m = emptyModel(mode == 2 ? 21 : 13);
        auto *g = m.mutable_graph();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {d0, d1, d2});
        *g->add_initializer() = tensorOf("s", onnx::TensorProto::FLOAT, pShape, scale);
        *g->add_initializer() = tensorOf("z", typeOf(isSigned), pShape, zp);
        auto *n = g->add_node();
        *n = test::node("QuantizeLinear", {"x", "s", "z"}, {"q"});
        if (mode == 2)
            addInt(*n, "block_size", 3);
        *g->add_output() = test::tensorInfo("q", typeOf(isSigned), {d0, d1, d2});
        const std::string bytes = m.SerializeAsString();
        Expected<ImportResult> r = loadModelFromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())), ".");
        if (!r && mode == 2)
            QSKIP(qPrintable("opset 21 does not load here: " + QString::fromStdString(r.status().message())));
        QVERIFY2(r, r ? "" : r.status().message().c_str());
        const auto out = runOrFail(r->model, {{"x", RuntimeTensor::fromValues(DataType::Float, {d0, d1, d2}, x)}});
        QVERIFY(!out.empty());
        const int lo = isSigned ? -128 : 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
            const std::int32_t want = quantizeRef(x[i], scale[param(i)], zp[param(i)], lo, lo + 255);
            const std::int32_t got = isSigned ? out[0].data<std::int8_t>()[i] : out[0].data<std::uint8_t>()[i];
            QCOMPARE(got, want);
        }
    }

    // DynamicQuantizeLinear → ConvInteger → Cast → Mul(x_scale · w_scale) → Add(bias) → Relu, 24
    // times, the form ONNX Runtime's dynamic quantizer writes: every quantized tensor, every int32
    // accumulator and the final floats equal the reference bit for bit, optimized or not.
    void quantizedChain()
    {
        struct Layer
        {
            int cout, k, stride;
            bool depthwise, wSigned, perChannel;
        };
        std::vector<Layer> layers;
        for (int i = 0; i < 24; ++i)
            layers.push_back({8 + 4 * (i % 3), i % 5 == 4 ? 1 : 3, i % 7 == 3 ? 2 : 1, i % 6 == 2, i % 4 == 1,
                              i % 3 != 0});
        std::mt19937 rng(2026);
        std::normal_distribution<float> nd(0.0f, 1.0f);
        ConvSpec s;
        s.c = 3;
        s.h = 35;
        s.w = 33;
        std::vector<float> input(static_cast<std::size_t>(s.c * s.h * s.w));
        for (auto &v : input)
            v = nd(rng);
        onnx::ModelProto m = emptyModel(13);
        auto *g = m.mutable_graph();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1, s.c, s.h, s.w});
        std::vector<float> x = input;
        std::vector<std::vector<std::int32_t>> wantInts; // per layer: q, then accumulators
        std::string cur = "x";
        for (std::size_t li = 0; li < layers.size(); ++li) {
            const Layer &L = layers[li];
            ConvSpec c = s;
            c.m = L.depthwise ? s.c : L.cout;
            c.group = L.depthwise ? s.c : 1;
            c.kh = c.kw = L.k;
            c.stride = L.stride;
            const std::int64_t p = L.k / 2;
            c.pads = {p, p, p, p};
            const int cg = c.c / c.group, wlo = L.wSigned ? -128 : 0;
            const auto w = randomInts(rng, std::size_t(c.m * cg * L.k * L.k), wlo, wlo + 255, false);
            auto w0 = randomInts(rng, std::size_t(c.m), wlo, wlo + 255, false);
            if (!L.perChannel)
                std::fill(w0.begin(), w0.end(), w0[0]);
            // Scales that keep activations in range: ~1/(255·sqrt(fan-in)·spread).
            const float ws = 2.0f / (128.0f * std::sqrt(float(cg * L.k * L.k)));
            std::vector<float> bias(static_cast<std::size_t>(c.m));
            for (auto &b : bias)
                b = nd(rng) * 0.05f;
            const std::string id = std::to_string(li);
            *g->add_node() = test::node("DynamicQuantizeLinear", {cur}, {"q" + id, "s" + id, "z" + id});
            *g->add_initializer() = tensorOf("w" + id, typeOf(L.wSigned), {c.m, cg, L.k, L.k}, w);
            *g->add_initializer() = L.perChannel ? tensorOf("w0_" + id, typeOf(L.wSigned), {c.m}, w0)
                                                 : tensorOf("w0_" + id, typeOf(L.wSigned), {}, std::vector{w0[0]});
            *g->add_initializer() = tensorOf("ws" + id, onnx::TensorProto::FLOAT, {}, std::vector{ws});
            *g->add_initializer() = tensorOf("b" + id, onnx::TensorProto::FLOAT, {c.m, 1, 1}, bias);
            auto *conv = g->add_node();
            *conv = test::node("ConvInteger", {"q" + id, "w" + id, "z" + id, "w0_" + id}, {"acc" + id});
            addInts(*conv, "pads", c.pads);
            addInts(*conv, "strides", {c.stride, c.stride});
            addInt(*conv, "group", c.group);
            auto *cast = g->add_node();
            *cast = test::node("Cast", {"acc" + id}, {"f" + id});
            addInt(*cast, "to", onnx::TensorProto::FLOAT);
            *g->add_node() = test::node("Mul", {"s" + id, "ws" + id}, {"sw" + id});
            *g->add_node() = test::node("Mul", {"f" + id, "sw" + id}, {"r" + id});
            const bool last = li + 1 == layers.size();
            *g->add_node() = test::node("Add", {"r" + id, "b" + id}, {last ? "y" : "a" + id});
            if (!last)
                *g->add_node() = test::node("Relu", {"a" + id}, {"h" + id});
            *g->add_output() = test::tensorInfo("q" + id, onnx::TensorProto::UINT8, {});
            *g->add_output() = test::tensorInfo("acc" + id, onnx::TensorProto::INT32, {});
            cur = "h" + id;
            // The reference step.
            const Dql d = dqlRef(x);
            const std::vector<std::int32_t> acc = convRef(c, d.q, d.zp, w, w0);
            wantInts.push_back(d.q);
            wantInts.push_back(acc);
            const float sw = d.scale * ws;
            const int plane = c.oh() * c.ow();
            x.assign(acc.size(), 0.0f);
            for (std::size_t i = 0; i < acc.size(); ++i) {
                const float v = float(acc[i]) * sw + bias[i / std::size_t(plane)];
                x[i] = last || v > 0.0f ? v : 0.0f;
            }
            s.c = c.m;
            s.h = c.oh();
            s.w = c.ow();
        }
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {});
        const Model plain = load(m);
        const Model fused = optimized(plain);
        const Feeds feeds{{"x", RuntimeTensor::fromValues(DataType::Float, {1, 3, 35, 33}, input)}};
        for (const auto &path : paths())
            for (const Model *model : {&plain, &fused}) {
                ForcedPath forced(path);
                const auto out = runOrFail(*model, feeds);
                QCOMPARE(out.size(), wantInts.size() + 1);
                const QString where = QString("path %1, %2 model")
                                          .arg(path ? kernels::int8GemmPathName(*path) : "detected")
                                          .arg(model == &plain ? "plain" : "optimized");
                for (std::size_t t = 0; t < wantInts.size(); ++t) {
                    QCOMPARE(out[t].elementCount(), std::int64_t(wantInts[t].size()));
                    for (std::size_t i = 0; i < wantInts[t].size(); ++i) {
                        const std::int32_t got =
                            t % 2 == 0 ? out[t].data<std::uint8_t>()[i] : out[t].data<std::int32_t>()[i];
                        if (got != wantInts[t][i])
                            QFAIL(qPrintable(QString("%1: layer %2 %3[%4] = %5, want %6")
                                                 .arg(where)
                                                 .arg(t / 2)
                                                 .arg(t % 2 ? "accumulator" : "quantized input")
                                                 .arg(i)
                                                 .arg(got)
                                                 .arg(wantInts[t][i])));
                    }
                }
                const RuntimeTensor &y = out.back();
                QCOMPARE(y.elementCount(), std::int64_t(x.size()));
                for (std::size_t i = 0; i < x.size(); ++i)
                    if (std::bit_cast<std::uint32_t>(y.data<float>()[i]) != std::bit_cast<std::uint32_t>(x[i]))
                        QFAIL(qPrintable(QString("%1: y[%2] = %3, want %4").arg(where).arg(i).arg(y.data<float>()[i]).arg(x[i])));
            }
    }
};

QTEST_GUILESS_MAIN(TestQuantized)
#include "tst_quantized.moc"
