// The CPU runtime's machinery: plans (serial and multi-queue), sessions (feed checks, unsupported
// ops up front, the memory guard), kernel errors naming their node, .npy I/O, random feeds.

#include "onnx/modelio.h"
#include "runtime/backend.h"
#include "runtime/conformance.h"
#include "runtime/executionplan.h"
#include "runtime/kernels/depthwiseconv.h"
#include "runtime/npy.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

using namespace opscope;
using test::sessionOrFail;

namespace {

RuntimeTensor floats(std::vector<std::int64_t> shape, std::vector<float> values)
{
    return RuntimeTensor::fromValues(DataType::Float, std::move(shape), values);
}

bool contains(const std::string &s, const char *needle)
{
    return s.find(needle) != std::string::npos;
}

// x[2,3] → Relu(x + bias); the test model of testsupport.
Model smallModel()
{
    return test::modelOrFail(test::smallModel());
}

} // namespace

class TestRuntime : public QObject
{
    Q_OBJECT
private slots:
    // Random integers a Gather reads as indices stay inside what it gathers from (an embedding's
    // vocabulary of 4 rows: indices up to 9 were out of range, a failed run of a valid model).
    void randomIndicesStayInsideWhatTheyGather_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("axis");
        QTest::addColumn<int>("bound");
        QTest::newRow("Gather axis 0") << "Gather" << 0 << 4;
        QTest::newRow("Gather axis -1") << "Gather" << -1 << 3;
        QTest::newRow("GatherElements axis 1") << "GatherElements" << 1 << 3;
    }
    void randomIndicesStayInsideWhatTheyGather()
    {
        QFETCH(QString, op);
        QFETCH(int, axis);
        QFETCH(int, bound);
        onnx::ModelProto m = test::emptyModel();
        onnx::GraphProto *g = m.mutable_graph();
        *g->add_initializer() = test::floatTensor("table", {4, 3}, std::vector<float>(12, 1.0f));
        const bool elements = op == "GatherElements";
        *g->add_input() = test::tensorInfo("ids", onnx::TensorProto::INT64, elements ? std::vector<std::int64_t>{4, 200}
                                                                                      : std::vector<std::int64_t>{200});
        onnx::NodeProto n = test::node(op.toStdString(), {"table", "ids"}, {"y"});
        auto *a = n.add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(axis);
        *g->add_node() = n;
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {});
        const Model model = test::modelOrFail(m);
        Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
        QVERIFY(s);
        Expected<Feeds> feeds = randomFeeds(**s, {}, RandomInputOptions{});
        QVERIFY(feeds);
        const RuntimeTensor &ids = feeds->front().second;
        std::int64_t most = 0;
        for (std::int64_t i = 0; i < ids.elementCount(); ++i)
            most = std::max(most, ids.data<std::int64_t>()[i]);
        QCOMPARE(most, std::int64_t(bound - 1)); // 200 draws reach the top, never past it
        QVERIFY((*s)->run(*feeds));
    }

    void runsSmallModel()
    {
        auto s = sessionOrFail(smallModel());
        QVERIFY(s);
        const auto out = s->run({{"x", floats({2, 3}, {-1, 0, 1, 2, 3, -4})}});
        QVERIFY2(out, out.status().message().c_str());
        const float *y = (*out)[0].data<float>();
        const std::vector<float> expected{0, 0, 3, 2.5f, 2, 0}; // relu(x + [0.5, -1, 2])
        for (std::size_t i = 0; i < expected.size(); ++i)
            QCOMPARE(y[i], expected[i]);
    }

    void padMatchesAReferenceInEveryMode_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("pads");
        for (const char *mode : {"constant", "edge", "reflect", "wrap"}) {
            QTest::addRow("%s, last axis", mode) << mode << "0,0,1,0,0,2";
            QTest::addRow("%s, every axis", mode) << mode << "1,2,1,1,0,2";
            QTest::addRow("%s, with a crop", mode) << mode << "0,-1,2,1,1,-1";
        }
    }

    void padMatchesAReferenceInEveryMode()
    {
        // x[2,3,4] padded; the reference maps every output index through the mode by hand.
        QFETCH(QString, mode);
        QFETCH(QString, pads);
        std::vector<std::int64_t> p;
        for (const QString &v : pads.split(','))
            p.push_back(v.toLongLong());
        onnx::ModelProto m = test::smallModel();
        m.mutable_opset_import(0)->set_version(19);
        auto *g = m.mutable_graph();
        g->clear_node();
        g->clear_initializer();
        g->clear_input();
        g->clear_output();
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3, 4});
        onnx::TensorProto padsTensor;
        padsTensor.set_name("pads");
        padsTensor.set_data_type(onnx::TensorProto::INT64);
        padsTensor.add_dims(6);
        for (std::int64_t v : p)
            padsTensor.add_int64_data(v);
        *g->add_initializer() = padsTensor;
        *g->add_initializer() = test::floatTensor("value", {}, {-7.0f});
        onnx::NodeProto node = test::node("Pad", {"x", "pads", "value"}, {"y"});
        onnx::AttributeProto *a = node.add_attribute();
        a->set_name("mode");
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(mode.toStdString());
        *g->add_node() = node;
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {});
        g->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
        auto s = sessionOrFail(test::modelOrFail(m));
        QVERIFY(s);
        std::vector<float> xs(24);
        for (std::size_t i = 0; i < xs.size(); ++i)
            xs[i] = float(i);
        const auto out = s->run({{"x", floats({2, 3, 4}, xs)}});
        QVERIFY2(out, out.status().message().c_str());
        const std::int64_t in[3] = {2, 3, 4};
        std::int64_t dims[3];
        for (int d = 0; d < 3; ++d)
            dims[d] = in[d] + p[std::size_t(d)] + p[std::size_t(d + 3)];
        QCOMPARE((*out)[0].shape(), (std::vector<std::int64_t>{dims[0], dims[1], dims[2]}));
        const auto source = [&](std::int64_t i, int d) -> std::int64_t {
            const std::int64_t n = in[d], c = i - p[std::size_t(d)];
            if (c >= 0 && c < n)
                return c;
            if (mode == QLatin1String("constant"))
                return -1;
            if (mode == QLatin1String("edge"))
                return c < 0 ? 0 : n - 1;
            if (mode == QLatin1String("reflect"))
                return c < 0 ? -c : 2 * (n - 1) - c;
            return ((c % n) + n) % n;
        };
        const float *y = (*out)[0].data<float>();
        for (std::int64_t i = 0; i < dims[0]; ++i)
            for (std::int64_t j = 0; j < dims[1]; ++j)
                for (std::int64_t k = 0; k < dims[2]; ++k) {
                    const std::int64_t a0 = source(i, 0), a1 = source(j, 1), a2 = source(k, 2);
                    const float want = a0 < 0 || a1 < 0 || a2 < 0 ? -7.0f : xs[std::size_t((a0 * 3 + a1) * 4 + a2)];
                    QCOMPARE(y[(i * dims[1] + j) * dims[2] + k], want);
                }
    }

    void serialPlanIsValid()
    {
        const ImportResult r = test::loadOrFail(test::samplePath("inception_block.onnx"));
        const auto plan = serialPlan(r.model.graph);
        QVERIFY(plan);
        QCOMPARE(plan->queues.size(), 1u);
        QCOMPARE(plan->queues[0].steps.size(), r.model.graph.nodeCount());
        QVERIFY(validatePlan(r.model.graph, *plan).isOk());
    }

    void twoQueuePlanMatchesSerial()
    {
        // The inception block's branches on two queues, with explicit cross-queue waits.
        const ImportResult r = test::loadOrFail(test::samplePath("inception_block.onnx"));
        const Graph &g = r.model.graph;
        auto s = sessionOrFail(r.model);
        ExecutionPlan plan = *serialPlan(g);
        ExecutionPlan two;
        two.name = "two queues";
        two.devices = {"cpu:0", "cpu:1"};
        two.queues.resize(2);
        two.queues[1].device = 1;
        std::vector<StepRef> where(g.nodeSlots());
        for (const PlanStep &step : plan.queues[0].steps) {
            const std::string &name = g.node(step.node).name;
            const std::uint32_t q =
                name.find("branch3x3") != std::string::npos || name.find("branch5x5") != std::string::npos
                    ? 1
                    : 0;
            PlanStep copy{step.node, {}};
            for (ValueId in : g.node(step.node).inputs)
                if (in.valid() && g.producer(in).valid() && where[g.producer(in).index].queue != q)
                    copy.waitFor.push_back(where[g.producer(in).index]);
            where[step.node.index] = {q, std::uint32_t(two.queues[q].steps.size())};
            two.queues[q].steps.push_back(copy);
        }
        QVERIFY2(validatePlan(g, two).isOk(), validatePlan(g, two).message().c_str());
        QVERIFY(two.queues[1].steps.size() >= 4);

        RandomInputOptions opts;
        opts.seed = 7;
        const Feeds feeds = *randomFeeds(*s, {}, opts);
        const auto serial = s->run(feeds);
        const auto parallel = s->run(feeds, &two);
        QVERIFY(serial && parallel);
        double err = 0;
        QVERIFY(compareTensors((*parallel)[0], (*serial)[0], 0, 0, err).isOk());

        // A plan that drops a wait is refused by the validator.
        for (PlanQueue &q : two.queues)
            for (PlanStep &st : q.steps)
                st.waitFor.clear();
        QVERIFY(contains(validatePlan(g, two).message(), "may run before its input"));
    }

    void backends()
    {
        const auto cpu = makeBackend("cpu:3", 2);
        QVERIFY(cpu);
        QCOMPARE((*cpu)->name(), std::string("cpu:3"));
        QCOMPARE((*cpu)->threads(), 2);
        QVERIFY((*cpu)->kernelFor("", "Conv", 13));
        QVERIFY(!(*cpu)->kernelFor("com.acme", "Conv", 1));
        const auto t = (*cpu)->allocate(DataType::Float, {2, 2});
        QVERIFY(t && t->byteSize() == 16);
        QVERIFY((*cpu)->copyOut(*(*cpu)->copyIn(*t))->bytes() == t->bytes()); // host memory: shared, no copy
        const auto gpu = makeBackend("tpu:0", 1);
        QVERIFY(!gpu);
        QVERIFY(contains(gpu.status().message(), "device 'tpu:0' is not available"));
    }

    void convPathsAgree()
    {
        // Constant weights go through the per-node layout timing (blocked vs plain, the faster is
        // kept); weights fed at run time take the untimed path. Both must compute the same thing.
        std::vector<float> wv(16 * 8 * 3 * 3), xv(2 * 8 * 20 * 20);
        for (std::size_t i = 0; i < wv.size(); ++i)
            wv[i] = float((i * 37) % 17) / 17.0f - 0.5f;
        for (std::size_t i = 0; i < xv.size(); ++i)
            xv[i] = float((i * 11) % 23) / 23.0f - 0.5f;
        const auto model = [&](bool constantWeights) {
            onnx::ModelProto m;
            m.set_ir_version(8);
            m.add_opset_import()->set_version(13);
            auto *g = m.mutable_graph();
            g->set_name("conv");
            *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {2, 8, 20, 20});
            if (constantWeights)
                *g->add_initializer() = test::floatTensor("w", {16, 8, 3, 3}, wv);
            else
                *g->add_input() = test::tensorInfo("w", onnx::TensorProto::FLOAT, {16, 8, 3, 3});
            auto *n = g->add_node();
            *n = test::node("Conv", {"x", "w"}, {"y"}, "conv");
            auto *pads = n->add_attribute();
            pads->set_name("pads");
            pads->set_type(onnx::AttributeProto::INTS);
            for (int k = 0; k < 4; ++k)
                pads->add_ints(1);
            *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {2, 16, 20, 20});
            return test::modelOrFail(m);
        };
        auto timed = sessionOrFail(model(true));
        auto fed = sessionOrFail(model(false));
        const RuntimeTensor x = floats({2, 8, 20, 20}, xv);
        const auto a = timed->run({{"x", x}});
        const auto a2 = timed->run({{"x", x}}); // steady state, after the timing
        const auto b = fed->run({{"x", x}, {"w", floats({16, 8, 3, 3}, wv)}});
        QVERIFY(a && a2 && b);
        double err = 0;
        QVERIFY(compareTensors((*a)[0], (*b)[0], 1e-5, 1e-5, err).isOk());
        QVERIFY(compareTensors((*a2)[0], (*b)[0], 1e-5, 1e-5, err).isOk());
    }

    // QLinearConv with constant weights takes oneDNN's int8 convolution (weights centred into s8
    // once); weights fed at run time take the im2col + integer GEMM path. Integer outputs must be
    // identical: same accumulators, same float32 requantization with ties to even.
    // The direct depthwise loop (timed against oneDNN per node) against the definition: every
    // output a sum over the taps that land inside the input, then the activation and post affine.
    void depthwiseMatchesDefinition_data()
    {
        QTest::addColumn<int>("spatial");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("dilation");
        QTest::addColumn<int>("padBegin");
        QTest::addColumn<int>("padEnd");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("taps");
        for (int sp : {1, 2})
            for (int st : {1, 2})
                for (int d : {1, 2})
                    QTest::addRow("%dD stride %d dilation %d", sp, st, d) << sp << st << d << 2 << 1 << true << 9 << 5;
        QTest::newRow("1D no padding, no bias") << 1 << 1 << 1 << 0 << 0 << false << 9 << 5;
        QTest::newRow("2D kernel wider than the input") << 2 << 1 << 1 << 4 << 4 << true << 9 << 5;
        QTest::newRow("2D stride 3, pad 3/0") << 2 << 3 << 1 << 3 << 0 << true << 9 << 5;
        // Long rows and kernels: the register-blocked interior (32- and 8-wide blocks and its tail)
        // between the bounded edges.
        QTest::newRow("1D k31 pads 15/15 (conformer)") << 1 << 1 << 1 << 15 << 15 << true << 200 << 31;
        QTest::newRow("1D k9 dilation 2 pads 3/7") << 1 << 1 << 2 << 3 << 7 << false << 83 << 9;
        QTest::newRow("1D k31 no padding, 39 wide") << 1 << 1 << 1 << 0 << 0 << true << 69 << 31;
        QTest::newRow("2D k9 pads 20/3 (wider than the kernel)") << 2 << 1 << 1 << 20 << 3 << true << 77 << 9;
        QTest::newRow("1D k31 stride 2 (bounded loop)") << 1 << 2 << 1 << 15 << 15 << true << 101 << 31;
    }
    void depthwiseMatchesDefinition()
    {
        QFETCH(int, spatial);
        QFETCH(int, stride);
        QFETCH(int, dilation);
        QFETCH(int, padBegin);
        QFETCH(int, padEnd);
        QFETCH(bool, bias);
        QFETCH(int, width);
        QFETCH(int, taps);
        using namespace opscope::kernels;
        const std::int64_t n = 2, c = 5, ih = spatial == 2 ? 7 : 1, iw = width, kh = spatial == 2 ? 3 : 1, kw = taps;
        ConvGeometry g;
        g.group = c;
        const auto out = [&](std::int64_t in, std::int64_t k) {
            return (in + padBegin + padEnd - dilation * (k - 1) - 1) / stride + 1;
        };
        const std::int64_t oh = spatial == 2 ? out(ih, kh) : 1, ow = out(iw, kw);
        QVERIFY(oh > 0 && ow > 0);
        Shape64 x{n, c}, w{c, 1};
        g.outShape = {n, c};
        const auto axis = [&](std::int64_t in, std::int64_t k, std::int64_t o) {
            x.push_back(in);
            w.push_back(k);
            g.kernel.push_back(k);
            g.strides.push_back(stride);
            g.dilations.push_back(dilation);
            g.padBegin.push_back(padBegin);
            g.padEnd.push_back(padEnd);
            g.outShape.push_back(o);
        };
        if (spatial == 2)
            axis(ih, kh, oh);
        axis(iw, kw, ow);
        QVERIFY(depthwiseApplies(g, x, w));
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> xs(static_cast<std::size_t>(n * c * ih * iw));
        std::vector<float> ws(static_cast<std::size_t>(c * kh * kw)), bs(static_cast<std::size_t>(c));
        for (float &v : xs)
            v = u(rng);
        for (float &v : ws)
            v = u(rng);
        for (float &v : bs)
            v = u(rng);
        FusedActivation act;
        act.kind = FusedActivation::Kind::LeakyRelu;
        act.alpha = 0.1f;
        act.postScale = 0.5f;
        act.postShift = -0.25f;
        std::vector<float> y(std::size_t(n * c * oh * ow), 99.0f);
        depthwiseConv(g, x, xs.data(), ws.data(), bias ? bs.data() : nullptr, y.data(), act);
        for (std::int64_t p = 0; p < n * c; ++p)
            for (std::int64_t r = 0; r < oh; ++r)
                for (std::int64_t o = 0; o < ow; ++o) {
                    double sum = bias ? bs[std::size_t(p % c)] : 0.0;
                    for (std::int64_t i = 0; i < kh; ++i)
                        for (std::int64_t j = 0; j < kw; ++j) {
                            const std::int64_t yy = r * (spatial == 2 ? stride : 1) -
                                                    (spatial == 2 ? padBegin : 0) +
                                                    i * (spatial == 2 ? dilation : 1),
                                               xx = o * stride - padBegin + j * dilation;
                            if (yy >= 0 && yy < ih && xx >= 0 && xx < iw)
                                sum += double(ws[std::size_t((p % c) * kh * kw + i * kw + j)]) *
                                       xs[std::size_t((p * ih + yy) * iw + xx)];
                        }
                    const double a = sum >= 0 ? sum : 0.1 * sum;
                    const double expect = 0.5 * a - 0.25;
                    const float got = y[std::size_t((p * oh + r) * ow + o)];
                    QVERIFY2(std::abs(got - expect) < 1e-5,
                             qPrintable(QStringLiteral("plane %1 (%2, %3): %4 vs %5")
                                            .arg(p)
                                            .arg(r)
                                            .arg(o)
                                            .arg(got)
                                            .arg(expect)));
                }
    }

    void qlinearConvPathsAgree_data()
    {
        QTest::addColumn<bool>("unsignedWeights"); // u8 around 128, else s8 with zero point 0
        QTest::addColumn<bool>("perChannel");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<int>("group");
        for (bool u : {false, true})
            for (bool pc : {false, true})
                for (bool b : {false, true})
                    QTest::addRow("%s weights, %s scale, %s", u ? "u8" : "s8",
                                  pc ? "per-channel" : "per-tensor", b ? "bias" : "no bias")
                        << u << pc << b << 1;
        QTest::newRow("depthwise") << true << true << true << 8;
    }
    void qlinearConvPathsAgree()
    {
        QFETCH(bool, unsignedWeights);
        QFETCH(bool, perChannel);
        QFETCH(bool, bias);
        QFETCH(int, group);
        const int cin = 8, cout = 8, perGroup = cin / group;
        const auto raw = [](const std::string &name, int type, std::vector<std::int64_t> dims,
                            const void *data, std::size_t bytes) {
            onnx::TensorProto t;
            t.set_name(name);
            t.set_data_type(type);
            for (std::int64_t d : dims)
                t.add_dims(d);
            t.set_raw_data(data, bytes);
            return t;
        };
        const int wType = unsignedWeights ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
        std::vector<std::uint8_t> w(std::size_t(cout * perGroup * 9));
        for (std::size_t i = 0; i < w.size(); ++i) // s8 in [-100, 100], or u8 in [28, 228]
            w[i] = std::uint8_t(int((i * 53) % 201) - 100 + (unsignedWeights ? 128 : 0));
        std::vector<std::uint8_t> x(std::size_t(2 * cin * 10 * 10));
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] = std::uint8_t((i * 29) % 256);
        std::vector<float> wScale(perChannel ? cout : 1);
        for (std::size_t i = 0; i < wScale.size(); ++i)
            wScale[i] = 0.002f + 0.0005f * float(i);
        std::vector<std::int32_t> b(cout);
        for (int i = 0; i < cout; ++i)
            b[std::size_t(i)] = (i * 977) % 3001 - 1500;
        const std::uint8_t x0 = 120, y0 = 100, w0 = unsignedWeights ? 128 : 0;
        const float xs = 0.02f, ys = 0.05f;
        const auto model = [&](bool constantWeights) {
            onnx::ModelProto m;
            m.set_ir_version(8);
            m.add_opset_import()->set_version(13);
            auto *g = m.mutable_graph();
            g->set_name("qconv");
            *g->add_input() = test::tensorInfo("x", onnx::TensorProto::UINT8, {2, cin, 10, 10});
            if (constantWeights)
                *g->add_initializer() = raw("w", wType, {cout, perGroup, 3, 3}, w.data(), w.size());
            else
                *g->add_input() = test::tensorInfo("w", wType, {cout, perGroup, 3, 3});
            *g->add_initializer() = raw("xs", onnx::TensorProto::FLOAT, {}, &xs, 4);
            *g->add_initializer() = raw("x0", onnx::TensorProto::UINT8, {}, &x0, 1);
            *g->add_initializer() = raw("ws", onnx::TensorProto::FLOAT, {std::int64_t(wScale.size())},
                                        wScale.data(), 4 * wScale.size());
            *g->add_initializer() = raw("w0", wType, {}, &w0, 1);
            *g->add_initializer() = raw("ys", onnx::TensorProto::FLOAT, {}, &ys, 4);
            *g->add_initializer() = raw("y0", onnx::TensorProto::UINT8, {}, &y0, 1);
            std::vector<std::string> inputs{"x", "xs", "x0", "w", "ws", "w0", "ys", "y0"};
            if (bias) {
                *g->add_initializer() = raw("b", onnx::TensorProto::INT32, {cout}, b.data(), 4 * b.size());
                inputs.push_back("b");
            }
            auto *n = g->add_node();
            *n = test::node("QLinearConv", inputs, {"y"}, "qconv");
            auto *pads = n->add_attribute();
            pads->set_name("pads");
            pads->set_type(onnx::AttributeProto::INTS);
            for (int k = 0; k < 4; ++k)
                pads->add_ints(1);
            auto *grp = n->add_attribute();
            grp->set_name("group");
            grp->set_type(onnx::AttributeProto::INT);
            grp->set_i(group);
            *g->add_output() = test::tensorInfo("y", onnx::TensorProto::UINT8, {2, cout, 10, 10});
            return test::modelOrFail(m);
        };
        auto dnnl = sessionOrFail(model(true));
        auto im2col = sessionOrFail(model(false));
        Expected<RuntimeTensor> xt = RuntimeTensor::allocate(DataType::UInt8, {2, cin, 10, 10});
        QVERIFY(xt);
        std::memcpy(xt->mutableBytes(), x.data(), x.size());
        Expected<RuntimeTensor> wt = RuntimeTensor::allocate(
            unsignedWeights ? DataType::UInt8 : DataType::Int8, {cout, perGroup, 3, 3});
        QVERIFY(wt);
        std::memcpy(wt->mutableBytes(), w.data(), w.size());
        const auto a = dnnl->run({{"x", *xt}});
        const auto c = im2col->run({{"x", *xt}, {"w", *wt}});
        QVERIFY2(a && c, (a ? c.status() : a.status()).message().c_str());
        const auto *pa = (*a)[0].data<std::uint8_t>(), *pc = (*c)[0].data<std::uint8_t>();
        int differing = 0, saturated = 0;
        for (std::int64_t i = 0; i < (*a)[0].elementCount(); ++i) {
            differing += pa[i] != pc[i];
            saturated += pc[i] == 0 || pc[i] == 255;
        }
        QCOMPARE(differing, 0);
        QVERIFY(saturated < (*a)[0].elementCount() / 4); // the data exercises the range, not just its ends
    }

    // Large float Softmax/LogSoftmax go through oneDNN; checked against a double-precision
    // reference, including −∞ entries (masked scores), both opset semantics of `axis`.
    void softmaxAgreesWithReference_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("opset");
        QTest::addColumn<int>("axis");
        for (const char *op : {"Softmax", "LogSoftmax"}) {
            QTest::addRow("%s opset13 last axis", op) << QString(op) << 13 << -1;
            QTest::addRow("%s opset13 middle axis", op) << QString(op) << 13 << 1;
            QTest::addRow("%s opset11 coerced 2-D", op) << QString(op) << 11 << 1;
        }
    }
    void softmaxAgreesWithReference()
    {
        QFETCH(QString, op);
        QFETCH(int, opset);
        QFETCH(int, axis);
        const std::vector<std::int64_t> dims{3, 40, 50};
        std::vector<float> xv(3 * 40 * 50);
        for (std::size_t i = 0; i < xv.size(); ++i)
            xv[i] = i % 97 == 5 ? -std::numeric_limits<float>::infinity()
                                : float((i * 7919) % 1000) / 100.0f - 5.0f;
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(opset);
        auto *g = m.mutable_graph();
        g->set_name("softmax");
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, dims);
        auto *n = g->add_node();
        *n = test::node(op.toStdString(), {"x"}, {"y"}, "sm");
        auto *a = n->add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(axis);
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, dims);
        auto session = sessionOrFail(test::modelOrFail(m));
        const auto got = session->run({{"x", floats(dims, xv)}});
        QVERIFY(got);
        // Reference: groups of `len` elements `inner` apart.
        const std::int64_t a0 = axis < 0 ? 2 : axis;
        const std::int64_t outer = opset < 13 ? 3 : (a0 == 1 ? 3 : 120),
                           len = opset < 13 ? 2000 : (a0 == 1 ? 40 : 50),
                           inner = opset < 13 ? 1 : (a0 == 1 ? 50 : 1);
        const float *y = (*got)[0].data<float>();
        double worst = 0;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t i = 0; i < inner; ++i) {
                double mx = -1e300, sum = 0;
                for (std::int64_t k = 0; k < len; ++k)
                    mx = std::max(mx, double(xv[std::size_t((o * len + k) * inner + i)]));
                for (std::int64_t k = 0; k < len; ++k)
                    sum += std::exp(double(xv[std::size_t((o * len + k) * inner + i)]) - mx);
                for (std::int64_t k = 0; k < len; ++k) {
                    const std::size_t at = std::size_t((o * len + k) * inner + i);
                    const double shifted = double(xv[at]) - mx;
                    const double want = op == "Softmax" ? std::exp(shifted) / sum : shifted - std::log(sum);
                    if (std::isinf(want)) {
                        QVERIFY2(std::isinf(y[at]) && y[at] < 0, "log of a masked entry must be -inf");
                        continue;
                    }
                    worst = std::max(worst, std::abs(double(y[at]) - want) / std::max(1.0, std::abs(want)));
                }
            }
        QVERIFY2(worst < 1e-5, QByteArray::number(worst).constData());
    }

    void badFeeds_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("missing input") << 0 << "input 'x' (float32[2,3]) is missing";
        QTest::newRow("extra input") << 1 << "the model has no input 'bogus' (its inputs: x)";
        QTest::newRow("wrong dtype") << 2 << "input 'x' must be float32, got int64";
        QTest::newRow("wrong rank") << 3 << "input 'x' must have rank 2 [2,3], got [6]";
        QTest::newRow("contradicting dim")
            << 4 << "input 'x' dimension 1 must be 3 (model shape [2,3]), got [2,4]";
    }

    void badFeeds()
    {
        QFETCH(int, kind);
        QFETCH(QString, expected);
        auto s = sessionOrFail(smallModel());
        Feeds feeds;
        switch (kind) {
        case 0: break;
        case 1: feeds = {{"x", floats({2, 3}, std::vector<float>(6))}, {"bogus", floats({1}, {1})}}; break;
        case 2:
            feeds = {{"x", RuntimeTensor::fromValues(DataType::Int64, {2, 3}, std::vector<std::int64_t>(6))}};
            break;
        case 3: feeds = {{"x", floats({6}, std::vector<float>(6))}}; break;
        case 4: feeds = {{"x", floats({2, 4}, std::vector<float>(8))}}; break;
        }
        const auto out = s->run(feeds);
        QVERIFY(!out);
        QVERIFY2(contains(out.status().message(), expected.toUtf8().constData()),
                 out.status().message().c_str());
    }

    void symbolicDimsMustAgree()
    {
        const ImportResult r = test::loadOrFail(test::samplePath("transformer_block.onnx"));
        auto s = sessionOrFail(r.model);
        const auto out = s->run({{"hidden_states", floats({2, 16, 64}, std::vector<float>(2 * 16 * 64))},
                                 {"attention_mask", floats({3, 1, 1, 16}, std::vector<float>(48))}});
        QVERIFY(!out);
        QVERIFY2(contains(out.status().message(),
                          "dimension 'batch' is 2 in one input and 3 in input 'attention_mask'"),
                 out.status().message().c_str());
    }

    void nanAndInfRun()
    {
        auto s = sessionOrFail(smallModel());
        const float inf = std::numeric_limits<float>::infinity(),
                    nan = std::numeric_limits<float>::quiet_NaN();
        const auto out = s->run({{"x", floats({2, 3}, {nan, inf, -inf, 0, 1, 2})}});
        QVERIFY(out);
        QVERIFY(std::isnan((*out)[0].data<float>()[0]));
        QCOMPARE((*out)[0].data<float>()[1], inf);
    }

    void unsupportedOpsAreListedUpFront()
    {
        onnx::ModelProto m = test::smallModel();
        auto *op = m.add_opset_import();
        op->set_domain("com.acme");
        op->set_version(2);
        auto *n1 = m.mutable_graph()->add_node();
        *n1 = test::node("Frobnicate", {"y"}, {"z"}, "frob");
        n1->set_domain("com.acme");
        *m.mutable_graph()->add_node() = test::node("StringNormalizer", {"y"}, {"w"}, "norm");
        *m.mutable_graph()->add_output() = test::tensorInfo("z", onnx::TensorProto::FLOAT, {2, 3});
        const auto s = InferenceSession::create(test::modelOrFail(m));
        QVERIFY(!s);
        QCOMPARE(s.status().kind(), ErrorKind::Unsupported);
        const std::string msg = s.status().message();
        QVERIFY2(contains(msg, "com.acme::Frobnicate (opset 2, node 'frob')") &&
                     contains(msg, "StringNormalizer (opset 13, node 'norm')"),
                 msg.c_str());
    }

    void kernelErrorsNameTheNode_data()
    {
        QTest::addColumn<int>("kind");
        QTest::addColumn<QString>("expected");
        QTest::newRow("impossible reshape")
            << 0 << "node 'reshape' (Reshape): cannot reshape [2,3] (6 elements) to [4,2]";
        QTest::newRow("gather out of range")
            << 1 << "node 'gather' (Gather): Gather index 7 is out of range [-2, 2)";
        // A target shape from data whose element count overflows: the broadcast's strides were
        // multiplied out first (fuzz_run, UBSan).
        QTest::newRow("expand past 64 bits")
            << 2 << "node 'expand' (Expand): broadcasting to [3715740281308446720,2,3]: more elements than 64 bits can count";
        // Tile's repeats from data: dim × repeat past 64 bits before the allocation (fuzz_run, UBSan).
        QTest::newRow("tile past 64 bits") << 3 << "node 'tile' (Tile): repeats [7208303673699467267,1]";
    }

    void kernelErrorsNameTheNode()
    {
        QFETCH(int, kind);
        QFETCH(QString, expected);
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(13);
        auto *g = m.mutable_graph();
        g->set_name("errors");
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {2, 3});
        const std::vector<std::int64_t> values = kind == 0   ? std::vector<std::int64_t>{4, 2}
                                                 : kind == 1 ? std::vector<std::int64_t>{0, 7}
                                                 : kind == 2 ? std::vector<std::int64_t>{3715740281308446720, 2, 3}
                                                             : std::vector<std::int64_t>{7208303673699467267, 1};
        Feeds feeds{{"x", floats({2, 3}, std::vector<float>(6))}};
        if (kind >= 2) { // fed, so that inference cannot see (and refuse) the shape at load
            const std::int64_t n = std::int64_t(values.size());
            *g->add_input() = test::tensorInfo("k", onnx::TensorProto::INT64, {n});
            RuntimeTensor k = *RuntimeTensor::allocate(DataType::Int64, {n});
            std::copy(values.begin(), values.end(), k.mutableData<std::int64_t>());
            feeds.emplace_back("k", std::move(k));
        } else {
            auto *idx = g->add_initializer();
            idx->set_name("k");
            idx->set_data_type(onnx::TensorProto::INT64);
            idx->add_dims(std::int64_t(values.size()));
            idx->set_raw_data(values.data(), values.size() * 8);
        }
        *g->add_node() = kind == 0   ? test::node("Reshape", {"x", "k"}, {"y"}, "reshape")
                         : kind == 1 ? test::node("Gather", {"x", "k"}, {"y"}, "gather")
                         : kind == 2 ? test::node("Expand", {"x", "k"}, {"y"}, "expand")
                                     : test::node("Tile", {"x", "k"}, {"y"}, "tile");
        onnx::ValueInfoProto y;
        y.set_name("y");
        y.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
        *g->add_output() = y;
        auto s = sessionOrFail(test::modelOrFail(m));
        const auto out = s->run(feeds);
        QVERIFY(!out);
        QVERIFY2(contains(out.status().message(), expected.toUtf8().constData()),
                 out.status().message().c_str());
    }

    void memoryGuardRefusesUpFront()
    {
        // Expand to 2^40 floats: 4 TiB, refused before any allocation.
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(13);
        auto *g = m.mutable_graph();
        g->set_name("huge");
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1});
        auto *shape = g->add_initializer();
        shape->set_name("shape");
        shape->set_data_type(onnx::TensorProto::INT64);
        shape->add_dims(1);
        const std::int64_t n = 1LL << 40;
        shape->set_raw_data(&n, 8);
        *g->add_node() = test::node("Expand", {"x", "shape"}, {"y"}, "expand");
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {n});
        auto s = sessionOrFail(test::modelOrFail(m));
        const auto out = s->run({{"x", floats({1}, {1})}});
        QVERIFY(!out);
        QVERIFY2(contains(out.status().message(), "the run needs about 4096.0 GiB"),
                 out.status().message().c_str());
    }

    void oversizedTensorIsAStatus()
    {
        // Larger than memory and swap: a Status, not a null from malloc or a sanitizer abort.
        // Feeds and inputs with a declared dimension of 2^31 - 1 reached this point.
        const auto t = RuntimeTensor::allocate(DataType::Float, {(1LL << 31) - 1, 1024});
        QVERIFY(!t);
        QVERIFY2(contains(t.status().message(), "more than this machine's"), t.status().message().c_str());
        QVERIFY(RuntimeTensor::allocate(DataType::Float, {1024, 1024}));
    }

    void peakEstimateFollowsLiveness()
    {
        // A chain of 10 Relus on 1024 floats keeps two intermediates alive at a time.
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(13);
        auto *g = m.mutable_graph();
        g->set_name("chain");
        *g->add_input() = test::tensorInfo("x", onnx::TensorProto::FLOAT, {1024});
        std::string prev = "x";
        for (int i = 0; i < 10; ++i) {
            const std::string out = i == 9 ? "y" : "t" + std::to_string(i);
            *g->add_node() = test::node("Relu", {prev}, {out});
            prev = out;
        }
        *g->add_output() = test::tensorInfo("y", onnx::TensorProto::FLOAT, {1024});
        auto s = sessionOrFail(test::modelOrFail(m));
        const Feeds feeds{{"x", floats({1024}, std::vector<float>(1024, 1.0f))}};
        QCOMPARE(*s->estimatePeakBytes(feeds), std::uint64_t(2 * 4096));
        QVERIFY(s->run(feeds));
    }

    void npyRoundTripAndErrors()
    {
        QTemporaryDir tmp;
        const std::filesystem::path p = tmp.filePath("a.npy").toStdString();
        const RuntimeTensor t =
            RuntimeTensor::fromValues(DataType::Int64, {2, 3}, std::vector<std::int64_t>{1, 2, 3, 4, 5, 6});
        QVERIFY(writeNpy(p, t).isOk());
        const auto back = readNpy(p);
        QVERIFY(back);
        QCOMPARE(back->shape(), (std::vector<std::int64_t>{2, 3}));
        QCOMPARE(back->data<std::int64_t>()[5], std::int64_t(6));
        test::writeBytes(tmp.filePath("bad.npy").toStdString(), "not numpy at all");
        QVERIFY(contains(readNpy(tmp.filePath("bad.npy").toStdString()).status().message(),
                         "is not a .npy file"));
        // Header claims 6 int64 but the data is short.
        std::ifstream in(p, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        test::writeBytes(tmp.filePath("short.npy").toStdString(), bytes.substr(0, bytes.size() - 8));
        QVERIFY(contains(readNpy(tmp.filePath("short.npy").toStdString()).status().message(),
                         "holds 40 bytes of data"));
    }

    void randomFeedsAreSeeded()
    {
        const ImportResult r = test::loadOrFail(test::samplePath("transformer_block.onnx"));
        auto s = sessionOrFail(r.model);
        RandomInputOptions opts;
        opts.seed = 42;
        opts.dims["batch"] = 3;
        const Feeds a = *randomFeeds(*s, {}, opts), b = *randomFeeds(*s, {}, opts);
        QCOMPARE(a.size(), 2u);
        QCOMPARE(a[0].second.shape(), (std::vector<std::int64_t>{3, 16, 64}));
        double err = 0;
        QVERIFY(compareTensors(a[0].second, b[0].second, 0, 0, err).isOk());
        opts.seed = 43;
        QVERIFY(!compareTensors(a[0].second, (*randomFeeds(*s, {}, opts))[0].second, 0, 0, err).isOk());
    }
};

QTEST_GUILESS_MAIN(TestRuntime)
#include "tst_runtime.moc"
