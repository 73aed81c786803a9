// The CUDA kernels' index arithmetic (gpu/indexing.h), on the host: broadcasting, dim merging,
// transposes and row/column splits, against a naive per-element reference. No GPU or CUDA needed;
// the kernels call the same functions per element.

#include "indexing.h"

#include <QTest>

#include <numeric>
#include <random>

using namespace opscope::gpu;

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
};

QTEST_GUILESS_MAIN(TestCudaIndexing)
#include "tst_cudaindexing.moc"
