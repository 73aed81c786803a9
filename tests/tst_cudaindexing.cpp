// The CUDA kernels' index arithmetic (gpu/indexing.h), on the host: broadcasting, dim merging,
// transposes and row/column splits against a naive per-element reference; reductions over any
// axes, ArgMax/ArgMin's parallel combination, Pad, Tile, Trilu and CumSum emulated as the kernels
// compute them and compared with the CPU runtime's own kernels on the same node. No GPU or CUDA
// needed; the kernels call the same functions per element.

#include "indexing.h"
#include "runtime/session.h"
#include "support/passtest.h"
#include "support/testsupport.h"

#include <QTest>

#include <cmath>
#include <numeric>
#include <random>

using namespace opscope::gpu;
using opscope::DataType;
using opscope::RuntimeTensor;

namespace {

using Shape = std::vector<std::int64_t>;

std::int64_t count(const Shape &s)
{
    return std::accumulate(s.begin(), s.end(), std::int64_t(1), std::multiplies<>());
}

// The element of `in` (right-aligned, size-1 dims broadcast) that output index i reads.
std::int64_t naiveBroadcast(const Shape &out, const Shape &in, std::int64_t i)
{
    std::int64_t offset = 0, stride = 1;
    for (std::size_t k = 0; k < out.size(); ++k) {
        const std::size_t d = out.size() - 1 - k;
        const std::int64_t c = i % out[d];
        i /= out[d];
        if (k < in.size()) {
            const std::size_t e = in.size() - 1 - k;
            if (in[e] != 1)
                offset += c * stride;
            stride *= in[e];
        }
    }
    return offset;
}

onnx::TensorProto int64Tensor(const std::string &name, const std::vector<std::int64_t> &values, bool scalar = false)
{
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    if (!scalar)
        t.add_dims(std::int64_t(values.size()));
    for (std::int64_t v : values)
        t.add_int64_data(v);
    return t;
}

// Output 0 of one node on the CPU runtime, its input "x" fed with `x`, the other inputs initializers.
RuntimeTensor runOnCpu(const onnx::NodeProto &n, const RuntimeTensor &x, const std::vector<onnx::TensorProto> &weights,
                       int opset = 18)
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset);
    onnx::GraphProto *g = m.mutable_graph();
    g->set_name("g");
    *g->add_node() = n;
    *g->add_input() = opscope::test::tensorInfo("x", onnx::TensorProto::FLOAT, x.shape());
    for (const auto &w : weights)
        *g->add_initializer() = w;
    g->add_output()->set_name(n.output(0));
    const opscope::Model model = opscope::test::modelOrFail(m);
    auto session = opscope::InferenceSession::create(model);
    if (!session)
        qFatal("%s", session.status().message().c_str());
    auto out = (*session)->run({{"x", x}});
    if (!out)
        qFatal("%s", out.status().message().c_str());
    return (*out)[0];
}

// Floats drawn from `values` (NaN allowed), or normal ones when empty.
RuntimeTensor tensorOf(const Shape &shape, std::uint32_t seed, const std::vector<float> &values = {})
{
    RuntimeTensor t = *RuntimeTensor::allocate(DataType::Float, shape);
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    for (std::int64_t i = 0; i < t.elementCount(); ++i)
        t.mutableData<float>()[i] = values.empty() ? normal(rng) : values[rng() % values.size()];
    return t;
}

// ArgMax/ArgMin as the kernel computes it with `threads` threads per output: each scans its share
// in order, then the block halves pairwise (threads a power of two).
std::int64_t emulateArg(const float *x, const ReduceMap &m, std::int64_t o, bool isMax, bool last, int threads)
{
    const std::int64_t base = mapIndex(m.kept, o);
    const auto at = [&](std::int64_t j) { return x[base + mapIndex(m.reduced, j)]; };
    if (std::isnan(at(0)))
        return 0;
    std::vector<float> value(std::size_t(threads), 0.0f);
    std::vector<std::int64_t> index(std::size_t(threads), -1);
    for (int t = 0; t < threads; ++t)
        for (std::int64_t j = t; j < m.count; j += threads)
            if (argBetter(at(j), j, value[std::size_t(t)], index[std::size_t(t)], isMax, last))
                value[std::size_t(t)] = at(j), index[std::size_t(t)] = j;
    for (int half = threads / 2; half > 0; half /= 2)
        for (int t = 0; t < half; ++t) {
            const auto u = std::size_t(t + half), w = std::size_t(t);
            if (index[u] >= 0 && argBetter(value[u], index[u], value[w], index[w], isMax, last))
                value[w] = value[u], index[w] = index[u];
        }
    return index[0];
}

} // namespace

class TestCudaIndexing : public QObject
{
    Q_OBJECT
private slots:
    void broadcast_data()
    {
        QTest::addColumn<Shape>("a");
        QTest::addColumn<Shape>("b");
        QTest::newRow("same") << Shape{2, 3, 4} << Shape{2, 3, 4};
        QTest::newRow("bias") << Shape{8, 197, 768} << Shape{768};
        QTest::newRow("per-channel") << Shape{2, 16, 7, 7} << Shape{16, 1, 1};
        QTest::newRow("scalar") << Shape{3, 5} << Shape{};
        QTest::newRow("both-ways") << Shape{4, 1, 6} << Shape{1, 5, 1};
        QTest::newRow("mask") << Shape{2, 12, 64, 64} << Shape{2, 1, 1, 64};
        QTest::newRow("rank-up") << Shape{5} << Shape{3, 2, 1};
        QTest::newRow("ones") << Shape{1, 1, 1} << Shape{1};
        QTest::newRow("empty") << Shape{0, 3} << Shape{3};
        QTest::newRow("rank-9-merges") << Shape{2, 1, 2, 1, 2, 1, 2, 1, 3} << Shape{3};
    }
    void broadcast()
    {
        QFETCH(Shape, a);
        QFETCH(Shape, b);
        Shape out;
        QVERIFY(broadcastShape({a, b}, out));
        std::vector<IndexMap> maps;
        QVERIFY(broadcastMaps(out, {a, b}, maps));
        QCOMPARE(maps.size(), std::size_t(2));
        QVERIFY(maps[0].rank <= kMaxDims);
        for (std::int64_t i = 0; i < count(out); ++i) {
            QCOMPARE(mapIndex(maps[0], i), naiveBroadcast(out, a, i));
            QCOMPARE(mapIndex(maps[1], i), naiveBroadcast(out, b, i));
        }
    }

    void mergingKeepsTheRankSmall()
    {
        // A bias over the last dim is a 2-D problem however many leading dims there are.
        Shape out{2, 3, 4, 5, 6};
        std::vector<IndexMap> maps;
        QVERIFY(broadcastMaps(out, {out, Shape{6}}, maps));
        QCOMPARE(maps[0].rank, 2);
        QVERIFY(broadcastMaps(out, {out, out}, maps));
        QCOMPARE(maps[0].rank, 1);
    }

    void incompatibleShapesDoNotBroadcast()
    {
        Shape out;
        QVERIFY(!broadcastShape({{2, 3}, {4, 3}}, out));
        QVERIFY(!broadcastShape({{3}, {2, 4}}, out));
    }

    void transpose_data()
    {
        QTest::addColumn<Shape>("in");
        QTest::addColumn<Shape>("perm");
        QTest::newRow("2d") << Shape{3, 5} << Shape{1, 0};
        QTest::newRow("heads") << Shape{2, 7, 4, 8} << Shape{0, 2, 1, 3};
        QTest::newRow("nchw-nhwc") << Shape{2, 3, 4, 5} << Shape{0, 2, 3, 1};
        QTest::newRow("identity") << Shape{4, 4} << Shape{0, 1};
        QTest::newRow("5d") << Shape{2, 3, 1, 4, 2} << Shape{4, 2, 0, 3, 1};
    }
    void transpose()
    {
        QFETCH(Shape, in);
        QFETCH(Shape, perm);
        IndexMap m;
        QVERIFY(transposeMap(in, perm, m));
        Shape out(in.size());
        for (std::size_t i = 0; i < in.size(); ++i)
            out[i] = in[std::size_t(perm[i])];
        const Shape inStrides = rowMajorStrides(in);
        // Reference: decompose the output index, gather the input coordinates through perm.
        for (std::int64_t i = 0; i < count(out); ++i) {
            std::int64_t rest = i, offset = 0;
            for (std::size_t d = out.size(); d-- > 0;) {
                const std::int64_t c = rest % out[d];
                rest /= out[d];
                offset += c * inStrides[std::size_t(perm[d])];
            }
            QCOMPARE(mapIndex(m, i), offset);
        }
    }

    void rowsAndCols()
    {
        const RowsCols rc = rowsCols({2, 3, 4, 5}, 2);
        QCOMPARE(rc.rows, std::int64_t(6));
        QCOMPARE(rc.cols, std::int64_t(20));
        QCOMPARE(rowsCols({7}, 0).rows, std::int64_t(1));
        QCOMPARE(rowsCols({7}, 0).cols, std::int64_t(7));
    }

    // Concat and Split copy rows with cudaMemcpy2D, which refuses pitches above the device's
    // limit (2^31−1 B on current GPUs): a concatenation of rows wider than that failed with
    // cudaErrorInvalidPitchValue. Contiguous rows are one flat copy, few rows one copy each, and
    // only many rows past the limit are left to the host.
    void rowCopies_data()
    {
        QTest::addColumn<quint64>("dstPitch");
        QTest::addColumn<quint64>("srcPitch");
        QTest::addColumn<quint64>("width");
        QTest::addColumn<quint64>("rows");
        QTest::addColumn<int>("plan");
        const quint64 limit = (quint64(1) << 31) - 1, big = quint64(3) << 30;
        QTest::newRow("nothing to copy") << quint64(64) << quint64(32) << quint64(0) << quint64(4)
                                         << int(RowCopy::Nothing);
        QTest::newRow("one row past the limit") << big << big << big << quint64(1) << int(RowCopy::Flat);
        QTest::newRow("contiguous rows past the limit") << big << big << big << quint64(3) << int(RowCopy::Flat);
        QTest::newRow("strided within the limit") << quint64(64) << quint64(32) << quint64(32) << quint64(1000)
                                                  << int(RowCopy::Strided);
        QTest::newRow("at the limit") << limit << quint64(32) << quint64(32) << quint64(2) << int(RowCopy::Strided);
        QTest::newRow("few rows past the limit") << big << quint64(1) << quint64(1) << quint64(8) << int(RowCopy::ByRow);
        QTest::newRow("many rows past the limit") << big << quint64(1) << quint64(1) << quint64(100000)
                                                  << int(RowCopy::TooMany);
    }
    void rowCopies()
    {
        QFETCH(quint64, dstPitch);
        QFETCH(quint64, srcPitch);
        QFETCH(quint64, width);
        QFETCH(quint64, rows);
        QFETCH(int, plan);
        const std::size_t limit = (std::size_t(1) << 31) - 1;
        QCOMPARE(int(planRowCopy(dstPitch, srcPitch, width, rows, limit)), plan);
    }

    void randomBroadcastsMatchTheReference()
    {
        std::mt19937 rng(7);
        for (int trial = 0; trial < 300; ++trial) {
            const int rank = int(rng() % 6);
            Shape out(static_cast<std::size_t>(rank), 0);
            for (auto &d : out)
                d = 1 + std::int64_t(rng() % 4);
            Shape a = out, b;
            for (int i = 0; i < rank; ++i)
                if (rng() % 2)
                    b.push_back(rng() % 3 ? out[std::size_t(i)] : 1);
                else if (!b.empty() || rng() % 2)
                    b.push_back(1);
            // Right-align b against out by trimming to the trailing dims.
            while (b.size() > out.size())
                b.erase(b.begin());
            for (std::size_t k = 0; k < b.size(); ++k)
                if (b[b.size() - 1 - k] != 1)
                    b[b.size() - 1 - k] = out[out.size() - 1 - k];
            Shape o;
            QVERIFY(broadcastShape({a, b}, o));
            QCOMPARE(o, out);
            std::vector<IndexMap> maps;
            QVERIFY(broadcastMaps(o, {a, b}, maps));
            for (std::int64_t i = 0; i < count(o); ++i)
                QCOMPARE(mapIndex(maps[1], i), naiveBroadcast(o, b, i));
        }
    }

    // A reduction over any axes is kept dims × reduced dims, each merged where adjacent; the sum it
    // gives is the CPU's ReduceSum (small integer values: exact in any order).
    void reduceOverAnyAxes_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<Shape>("axes");
        QTest::addColumn<int>("keptRank");
        QTest::addColumn<int>("reducedRank");
        QTest::newRow("trailing") << Shape{3, 4, 50} << Shape{2} << 1 << 1;
        QTest::newRow("trailing block") << Shape{2, 3, 4, 5} << Shape{-1, 2} << 1 << 1;
        QTest::newRow("leading") << Shape{6, 5, 4} << Shape{0} << 1 << 1;
        QTest::newRow("middle") << Shape{2, 7, 3, 5} << Shape{1, 2} << 2 << 1;
        QTest::newRow("alternating") << Shape{2, 3, 4, 5, 2} << Shape{0, 2, 4} << 2 << 3;
        QTest::newRow("all (no axes)") << Shape{3, 4, 5} << Shape{} << 0 << 1;
        QTest::newRow("size-1 dims drop out") << Shape{1, 4, 1, 6} << Shape{0, 3} << 1 << 1;
        QTest::newRow("short leading axis") << Shape{2, 3000} << Shape{0} << 1 << 1;
        QTest::newRow("nchw over n, h, w") << Shape{2, 8, 5, 5} << Shape{0, 2, 3} << 1 << 2;
    }
    void reduceOverAnyAxes()
    {
        QFETCH(Shape, shape);
        QFETCH(Shape, axes);
        QFETCH(int, keptRank);
        QFETCH(int, reducedRank);
        std::vector<bool> mask(shape.size(), axes.empty());
        for (std::int64_t a : axes)
            mask[std::size_t(a < 0 ? a + std::int64_t(shape.size()) : a)] = true;
        ReduceMap m;
        QVERIFY(reduceMap(shape, mask, m));
        QCOMPARE(m.kept.rank, keptRank);
        QCOMPARE(m.reduced.rank, reducedRank);
        QCOMPARE(m.outputs * m.count, count(shape));
        const RuntimeTensor x = tensorOf(shape, 3, {-2.0f, -1.0f, 0.0f, 1.0f, 2.0f, 3.0f});
        onnx::NodeProto n = opscope::test::node("ReduceSum", {"x", "axes"}, {"y"});
        *n.add_attribute() = opscope::test::intAttr("keepdims", 0);
        const RuntimeTensor cpu = runOnCpu(n, x, {int64Tensor("axes", axes)});
        QCOMPARE(cpu.elementCount(), m.outputs);
        for (std::int64_t o = 0; o < m.outputs; ++o) {
            float sum = 0.0f;
            for (std::int64_t j = 0; j < m.count; ++j)
                sum += x.data<float>()[reduceOffset(m, o, j)];
            QCOMPARE(sum, cpu.data<float>()[o]);
        }
    }

    // The kernel's parallel ArgMax/ArgMin (threads scan strided shares, pairs combine) gives the
    // CPU's sequential answer with ties, NaN first and later, and select_last_index.
    void argReduceCombinesAsTheCpuScans_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<int>("axis");
        QTest::newRow("last axis") << Shape{5, 300} << 1;
        QTest::newRow("first axis") << Shape{40, 6} << 0;
        QTest::newRow("middle axis") << Shape{3, 17, 4} << 1;
        QTest::newRow("size-1 axis") << Shape{3, 1, 4} << 1;
    }
    void argReduceCombinesAsTheCpuScans()
    {
        QFETCH(Shape, shape);
        QFETCH(int, axis);
        const float nan = std::nanf("");
        std::vector<bool> mask(shape.size(), false);
        mask[std::size_t(axis)] = true;
        ReduceMap m;
        QVERIFY(reduceMap(shape, mask, m));
        for (std::uint32_t seed = 1; seed <= 3; ++seed) {
            // Few distinct values: many ties; NaN now and then, first elements included.
            const RuntimeTensor x = tensorOf(shape, seed, {0.0f, 1.0f, 2.0f, -1.0f, nan});
            for (const char *op : {"ArgMax", "ArgMin"})
                for (int last : {0, 1}) {
                    onnx::NodeProto n = opscope::test::node(op, {"x"}, {"y"});
                    *n.add_attribute() = opscope::test::intAttr("axis", axis);
                    *n.add_attribute() = opscope::test::intAttr("select_last_index", last);
                    const RuntimeTensor cpu = runOnCpu(n, x, {});
                    QCOMPARE(cpu.elementCount(), m.outputs);
                    for (std::int64_t o = 0; o < m.outputs; ++o)
                        for (int threads : {1, 4, 256})
                            QCOMPARE(emulateArg(x.data<float>(), m, o, op[3] == 'M' && op[4] == 'a', last != 0, threads),
                                     cpu.data<std::int64_t>()[o]);
                }
        }
    }

    void padMatchesTheCpu_data()
    {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<Shape>("pads");
        QTest::addColumn<QString>("mode");
        QTest::newRow("constant") << Shape{2, 3} << Shape{1, 2, 0, 1} << "constant";
        QTest::newRow("constant, cropping") << Shape{4, 5} << Shape{-1, 2, 0, -2} << "constant";
        QTest::newRow("reflect") << Shape{3, 4} << Shape{2, 1, 1, 3} << "reflect";
        QTest::newRow("edge 3-d") << Shape{2, 3, 4} << Shape{0, 1, 2, 3, 0, 1} << "edge";
        QTest::newRow("wrap past the size") << Shape{3, 2} << Shape{4, 1, 2, 5} << "wrap";
        QTest::newRow("nchw spatial") << Shape{1, 2, 4, 4} << Shape{0, 0, 1, 1, 0, 0, 1, 1} << "reflect";
    }
    void padMatchesTheCpu()
    {
        QFETCH(Shape, shape);
        QFETCH(Shape, pads);
        QFETCH(QString, mode);
        const RuntimeTensor x = tensorOf(shape, 5);
        onnx::NodeProto n = opscope::test::node("Pad", {"x", "pads", "value"}, {"y"});
        *n.add_attribute() = opscope::test::stringAttr("mode", mode.toStdString());
        const RuntimeTensor cpu =
            runOnCpu(n, x, {int64Tensor("pads", pads), opscope::test::floatTensor("value", {}, {7.5f})});
        PadMap m;
        m.rank = int(shape.size());
        m.mode = mode == "reflect" ? PadKind::Reflect : mode == "edge" ? PadKind::Edge
                 : mode == "wrap"  ? PadKind::Wrap : PadKind::Constant;
        const Shape strides = rowMajorStrides(shape);
        for (std::size_t d = 0; d < shape.size(); ++d) {
            m.begin[d] = pads[d];
            m.inDims[d] = shape[d];
            m.inStrides[d] = strides[d];
            m.outDims[d] = shape[d] + pads[d] + pads[d + shape.size()];
            QCOMPARE(m.outDims[d], cpu.dim(d));
        }
        for (std::int64_t i = 0; i < cpu.elementCount(); ++i) {
            const std::int64_t s = padSource(m, i);
            QCOMPARE(s < 0 ? 7.5f : x.data<float>()[s], cpu.data<float>()[i]);
        }
    }

    void tileMatchesTheCpu()
    {
        for (const auto &[shape, repeats] : std::vector<std::pair<Shape, Shape>>{
                 {{2, 3}, {3, 2}}, {{1, 4, 2}, {2, 1, 3}}, {{5}, {1}}, {{2, 2, 2}, {1, 3, 1}}}) {
            const RuntimeTensor x = tensorOf(shape, 9);
            const RuntimeTensor cpu = runOnCpu(opscope::test::node("Tile", {"x", "r"}, {"y"}), x, {int64Tensor("r", repeats)});
            TileMap m;
            m.rank = int(shape.size());
            const Shape strides = rowMajorStrides(shape);
            for (std::size_t d = 0; d < shape.size(); ++d) {
                m.outDims[d] = shape[d] * repeats[d];
                m.inDims[d] = shape[d];
                m.inStrides[d] = strides[d];
            }
            QCOMPARE(cpu.elementCount(), count(shape) * count(repeats));
            for (std::int64_t i = 0; i < cpu.elementCount(); ++i)
                QCOMPARE(x.data<float>()[tileSource(m, i)], cpu.data<float>()[i]);
        }
    }

    void triluMatchesTheCpu()
    {
        const Shape shape{2, 4, 5};
        const RuntimeTensor x = tensorOf(shape, 11);
        for (std::int64_t k : {-2, -1, 0, 2, 7})
            for (int upper : {0, 1}) {
                onnx::NodeProto n = opscope::test::node("Trilu", {"x", "k"}, {"y"});
                *n.add_attribute() = opscope::test::intAttr("upper", upper);
                const RuntimeTensor cpu = runOnCpu(n, x, {int64Tensor("k", {k}, true)});
                for (std::int64_t i = 0; i < cpu.elementCount(); ++i)
                    QCOMPARE(triluKeeps(i, 4, 5, k, upper != 0) ? x.data<float>()[i] : 0.0f, cpu.data<float>()[i]);
            }
    }

    // In the CPU's order with a float accumulator: the sums agree to the bit.
    void cumSumMatchesTheCpu()
    {
        const Shape shape{3, 4, 5};
        const RuntimeTensor x = tensorOf(shape, 13);
        for (std::int64_t axis : {0, 1, 2, -1})
            for (int exclusive : {0, 1})
                for (int reverse : {0, 1}) {
                    onnx::NodeProto n = opscope::test::node("CumSum", {"x", "axis"}, {"y"});
                    *n.add_attribute() = opscope::test::intAttr("exclusive", exclusive);
                    *n.add_attribute() = opscope::test::intAttr("reverse", reverse);
                    const RuntimeTensor cpu = runOnCpu(n, x, {int64Tensor("axis", {axis}, true)});
                    const auto a = std::size_t(axis < 0 ? axis + 3 : axis);
                    const std::int64_t len = shape[a];
                    std::int64_t outer = 1, inner = 1;
                    for (std::size_t d = 0; d < shape.size(); ++d) {
                        if (d < a)
                            outer *= shape[d];
                        else if (d > a)
                            inner *= shape[d];
                    }
                    std::vector<float> y(std::size_t(count(shape)));
                    for (std::int64_t line = 0; line < outer * inner; ++line) {
                        float acc = 0.0f;
                        for (std::int64_t step = 0; step < len; ++step) {
                            const std::int64_t at = cumSumOffset(line, step, len, inner, reverse != 0);
                            if (exclusive) {
                                y[std::size_t(at)] = acc;
                                acc += x.data<float>()[at];
                            } else {
                                acc += x.data<float>()[at];
                                y[std::size_t(at)] = acc;
                            }
                        }
                    }
                    for (std::int64_t i = 0; i < cpu.elementCount(); ++i)
                        QCOMPARE(y[std::size_t(i)], cpu.data<float>()[i]);
                }
    }
};

QTEST_GUILESS_MAIN(TestCudaIndexing)
#include "tst_cudaindexing.moc"
