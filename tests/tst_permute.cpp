// Transpose's copy (runtime/kernels/permute.cpp) against the definition, element by element: the
// shapes models have (NCHW↔NHWC, attention heads, Kᵀ, a YOLO head's anchors), unit axes that
// merge away, the identity, scalars and empty tensors, every element size (1 to 16 bytes and
// strings), rows of up to 256 elements (a row at a time) and longer (16×16 tiles, cut), and
// random permutations of every rank up to 6.

#include "runtime/kernels/kernelutil.h"
#include "runtime/runtimetensor.h"

#include <QTest>

#include <cstring>
#include <numeric>
#include <random>

using namespace opscope;

Q_DECLARE_METATYPE(std::vector<std::int64_t>)
Q_DECLARE_METATYPE(opscope::DataType)

namespace {

// The definition: out[i0, …, in-1] = x[i_perm⁻¹…], read one element at a time.
std::vector<std::int64_t> referenceSourceIndex(const std::vector<std::int64_t> &shape,
                                               const std::vector<std::int64_t> &perm)
{
    std::vector<std::int64_t> inStrides(shape.size(), 1), outShape(shape.size());
    for (std::size_t d = shape.size(); d-- > 1;)
        inStrides[d - 1] = inStrides[d] * shape[d];
    for (std::size_t d = 0; d < perm.size(); ++d)
        outShape[d] = shape[std::size_t(perm[d])];
    const std::int64_t n = std::accumulate(shape.begin(), shape.end(), std::int64_t(1), std::multiplies<>());
    std::vector<std::int64_t> from(std::size_t(std::max<std::int64_t>(n, 0)));
    for (std::int64_t o = 0; o < n; ++o) {
        std::int64_t rem = o, src = 0;
        for (std::size_t d = outShape.size(); d-- > 0;) {
            src += (rem % outShape[d]) * inStrides[std::size_t(perm[d])];
            rem /= outShape[d];
        }
        from[std::size_t(o)] = src;
    }
    return from;
}

} // namespace

class TestPermute : public QObject
{
    Q_OBJECT

private slots:
    void matchesTheDefinition_data()
    {
        QTest::addColumn<std::vector<std::int64_t>>("shape");
        QTest::addColumn<std::vector<std::int64_t>>("perm");
        QTest::addColumn<DataType>("dtype");
        using V = std::vector<std::int64_t>;
        QTest::newRow("NCHW→NHWC") << V{2, 64, 7, 9} << V{0, 2, 3, 1} << DataType::Float;
        QTest::newRow("NHWC→NCHW") << V{1, 7, 9, 33} << V{0, 3, 1, 2} << DataType::Float;
        // Rows over 256 elements: the 16×16 tiles (cut at both ends, and fewer than 16 rows).
        QTest::newRow("NHWC→NCHW, 400 per row") << V{1, 20, 20, 24} << V{0, 3, 1, 2} << DataType::Float;
        QTest::newRow("NHWC→NCHW, 5 rows of 323") << V{2, 17, 19, 5} << V{0, 3, 1, 2} << DataType::Float;
        QTest::newRow("merged to 37×900, int64") << V{3, 300, 37} << V{2, 0, 1} << DataType::Int64;
        QTest::newRow("heads 0213") << V{1, 20, 12, 64} << V{0, 2, 1, 3} << DataType::Float;
        QTest::newRow("K transposed 0132") << V{1, 12, 20, 64} << V{0, 1, 3, 2} << DataType::Float;
        QTest::newRow("YOLO head 01342") << V{1, 3, 85, 20, 20} << V{0, 1, 3, 4, 2} << DataType::Float;
        QTest::newRow("2-D, 17×31 (tiles cut)") << V{17, 31} << V{1, 0} << DataType::Float;
        QTest::newRow("2-D, 1×40 (a unit axis)") << V{1, 40} << V{1, 0} << DataType::Float;
        QTest::newRow("identity") << V{3, 4, 5} << V{0, 1, 2} << DataType::Float;
        QTest::newRow("unit axes moved only") << V{1, 6, 1, 5} << V{2, 0, 1, 3} << DataType::Float;
        QTest::newRow("reversed") << V{2, 3, 4, 5} << V{3, 2, 1, 0} << DataType::Float;
        QTest::newRow("scalar") << V{} << V{} << DataType::Float;
        QTest::newRow("empty") << V{3, 0, 4} << V{2, 0, 1} << DataType::Float;
        QTest::newRow("all ones") << V{1, 1, 1} << V{2, 1, 0} << DataType::Float;
        QTest::newRow("uint8") << V{5, 19, 23} << V{2, 0, 1} << DataType::UInt8;
        QTest::newRow("float16") << V{5, 19, 23} << V{0, 2, 1} << DataType::Float16;
        QTest::newRow("int64") << V{4, 18, 3, 17} << V{3, 1, 0, 2} << DataType::Int64;
        QTest::newRow("complex128") << V{6, 7, 5} << V{1, 2, 0} << DataType::Complex128;
        QTest::newRow("string") << V{3, 4, 2} << V{2, 0, 1} << DataType::String;
        std::mt19937 rng(11);
        for (int i = 0; i < 60; ++i) {
            const std::size_t rank = std::size_t(1 + i % 6);
            V shape(rank), perm(rank);
            for (std::int64_t &d : shape)
                d = std::uniform_int_distribution<int>(0, 3)(rng) == 0 ? 1 : std::uniform_int_distribution<int>(2, 21)(rng);
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), rng);
            const DataType types[] = {DataType::Float, DataType::UInt8, DataType::Int64, DataType::Float16};
            QTest::newRow(qPrintable(QStringLiteral("random %1").arg(i))) << shape << perm << types[i % 4];
        }
    }

    void matchesTheDefinition()
    {
        QFETCH(std::vector<std::int64_t>, shape);
        QFETCH(std::vector<std::int64_t>, perm);
        QFETCH(DataType, dtype);
        Expected<RuntimeTensor> x = RuntimeTensor::allocate(dtype, shape);
        QVERIFY(x);
        const std::int64_t n = x->elementCount();
        const std::size_t size = dtype == DataType::String ? 0 : dataTypeSize(dtype);
        // Every element distinct in every byte that matters: the bytes of its index.
        if (dtype == DataType::String) {
            for (std::int64_t i = 0; i < n; ++i)
                x->mutableStrings()[std::size_t(i)] = "s" + std::to_string(i);
        } else {
            auto *bytes = reinterpret_cast<unsigned char *>(x->mutableBytes());
            for (std::int64_t i = 0; i < n; ++i)
                for (std::size_t b = 0; b < size; ++b)
                    bytes[std::size_t(i) * size + b] = static_cast<unsigned char>((i >> (8 * (b % 8))) + b);
        }
        Expected<RuntimeTensor> out = kernels::permuted(*x, perm);
        QVERIFY2(out, out ? "" : out.status().message().c_str());
        for (std::size_t d = 0; d < perm.size(); ++d)
            QCOMPARE(out->dim(d), shape[std::size_t(perm[d])]);
        const std::vector<std::int64_t> from = referenceSourceIndex(shape, perm);
        for (std::int64_t o = 0; o < n; ++o) {
            const std::int64_t s = from[std::size_t(o)];
            if (dtype == DataType::String) {
                QCOMPARE(out->strings()[std::size_t(o)], x->strings()[std::size_t(s)]);
            } else {
                const auto *a = reinterpret_cast<const unsigned char *>(out->bytes()) + std::size_t(o) * size;
                const auto *b = reinterpret_cast<const unsigned char *>(x->bytes()) + std::size_t(s) * size;
                if (std::memcmp(a, b, size) != 0)
                    QFAIL(qPrintable(QStringLiteral("output element %1 is not input element %2").arg(o).arg(s)));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestPermute)
#include "tst_permute.moc"
