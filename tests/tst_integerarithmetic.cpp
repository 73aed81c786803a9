// Integer arithmetic in the kernels, and exceptions in their parallel loops: what the fuzzers'
// UBSan runs and a review found (signed overflow is undefined in C++; an exception leaving an
// OpenMP region ends the process).

#include "runtime/kernels/kernelutil.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QTest>
#include <atomic>
#include <stdexcept>

using namespace opscope;
using test::sessionOrFail;

namespace {

// 1-D integer tensors from and to 64-bit values (each stored in the type as C++ converts it).
RuntimeTensor integers(DataType t, const QList<qlonglong> &v)
{
    RuntimeTensor r = *RuntimeTensor::allocate(t, {std::int64_t(v.size())});
    for (qsizetype i = 0; i < v.size(); ++i)
        switch (t) {
        case DataType::Int32: r.mutableData<std::int32_t>()[i] = std::int32_t(v[i]); break;
        case DataType::Int64: r.mutableData<std::int64_t>()[i] = std::int64_t(v[i]); break;
        case DataType::UInt16: r.mutableData<std::uint16_t>()[i] = std::uint16_t(v[i]); break;
        case DataType::UInt32: r.mutableData<std::uint32_t>()[i] = std::uint32_t(v[i]); break;
        default: r.mutableData<std::uint64_t>()[i] = std::uint64_t(v[i]); break;
        }
    return r;
}

qlonglong integerAt(const RuntimeTensor &r, std::int64_t i)
{
    switch (r.dtype()) {
    case DataType::Int32: return r.data<std::int32_t>()[i];
    case DataType::Int64: return r.data<std::int64_t>()[i];
    case DataType::UInt16: return r.data<std::uint16_t>()[i];
    case DataType::UInt32: return r.data<std::uint32_t>()[i];
    default: return qlonglong(r.data<std::uint64_t>()[i]);
    }
}


} // namespace

class TestIntegerArithmetic : public QObject
{
    Q_OBJECT
private slots:
    // Integer results wrap around as two's complement, as in ONNX Runtime: in C++ a signed
    // overflow is undefined (UBSan: an int32 Mul in constant folding, found by fuzzing), uint16
    // promotes to signed int, and an int64 MatMul summed through double lost bits past 2^53.
    void integerArithmeticWraps_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<int>("type"); // onnx::TensorProto
        QTest::addColumn<QList<qlonglong>>("a");
        QTest::addColumn<QList<qlonglong>>("b");
        QTest::addColumn<QList<qlonglong>>("want");
        using L = QList<qlonglong>;
        const qlonglong i32max = INT32_MAX, i32min = INT32_MIN, i64max = INT64_MAX, i64min = INT64_MIN;
        const int i32 = onnx::TensorProto::INT32, i64 = onnx::TensorProto::INT64;
        QTest::newRow("Add int32") << "Add" << i32 << L{i32max, i32min} << L{1, -1} << L{i32min, i32max};
        QTest::newRow("Sub int64") << "Sub" << i64 << L{i64min, i64max} << L{1, -1} << L{i64max, i64min};
        QTest::newRow("Mul int32 (the fuzz input)") << "Mul" << i32 << L{1056964608, -65536} << L{1056964608, 65536}
                                                    << L{0, 0};
        QTest::newRow("Mul int64") << "Mul" << i64 << L{i64max, qlonglong(1) << 62} << L{3, 4}
                                   << L{i64max - 2, 0};
        QTest::newRow("Mul uint16") << "Mul" << int(onnx::TensorProto::UINT16) << L{65535, 300} << L{65535, 300}
                                    << L{1, 90000 % 65536};
        QTest::newRow("Mul uint32") << "Mul" << int(onnx::TensorProto::UINT32) << L{4294967295LL, 65536}
                                    << L{4294967295LL, 65536} << L{1, 0};
        QTest::newRow("Neg int32") << "Neg" << i32 << L{i32min, 5} << L{} << L{i32min, -5};
        QTest::newRow("Abs int64") << "Abs" << i64 << L{i64min, -7} << L{} << L{i64min, 7};
        QTest::newRow("Mul uint64") << "Mul" << int(onnx::TensorProto::UINT64) << L{-1, 3} << L{2, 5} << L{-2, 15};
        QTest::newRow("CumSum int32") << "CumSum" << i32 << L{i32max, 1, 1} << L{} << L{i32max, i32min, i32min + 1};
        QTest::newRow("MatMul int64 past 2^53") << "MatMul" << i64 << L{(qlonglong(1) << 53) + 1, 1}
                                                << L{1, 2} << L{(qlonglong(1) << 53) + 3};
        QTest::newRow("MatMul int32 wraps") << "MatMul" << i32 << L{i32max, i32max} << L{2, 1} << L{i32max - 2};
    }

    void integerArithmeticWraps()
    {
        QFETCH(QString, op);
        QFETCH(int, type);
        QFETCH(QList<qlonglong>, a);
        QFETCH(QList<qlonglong>, b);
        QFETCH(QList<qlonglong>, want);
        const DataType dt = type == onnx::TensorProto::INT32    ? DataType::Int32
                            : type == onnx::TensorProto::INT64  ? DataType::Int64
                            : type == onnx::TensorProto::UINT16 ? DataType::UInt16
                            : type == onnx::TensorProto::UINT32 ? DataType::UInt32
                                                                : DataType::UInt64;
        const bool matmul = op == "MatMul";
        onnx::ModelProto m;
        m.set_ir_version(8);
        m.add_opset_import()->set_version(14);
        auto *g = m.mutable_graph();
        g->set_name("wrap");
        const std::int64_t n = a.size();
        *g->add_input() = test::tensorInfo("a", type, matmul ? std::vector<std::int64_t>{1, n} : std::vector<std::int64_t>{n});
        std::vector<std::string> inputs{"a"};
        if (!b.isEmpty()) {
            *g->add_input() = test::tensorInfo("b", type, matmul ? std::vector<std::int64_t>{n, 1} : std::vector<std::int64_t>{n});
            inputs.push_back("b");
        }
        if (op == "CumSum") {
            auto *axis = g->add_initializer();
            axis->set_name("axis");
            axis->set_data_type(onnx::TensorProto::INT64);
            axis->add_int64_data(0);
            inputs.push_back("axis");
        }
        *g->add_node() = test::node(op.toStdString(), inputs, {"y"});
        onnx::ValueInfoProto y;
        y.set_name("y");
        y.mutable_type()->mutable_tensor_type()->set_elem_type(type);
        *g->add_output() = y;
        auto s = sessionOrFail(test::modelOrFail(m));
        QVERIFY(s);
        Feeds feeds{{"a", integers(dt, a)}};
        if (matmul)
            feeds[0].second = feeds[0].second.reshaped({1, n});
        if (!b.isEmpty())
            feeds.emplace_back("b", matmul ? integers(dt, b).reshaped({n, 1}) : integers(dt, b));
        const auto out = s->run(feeds);
        QVERIFY2(out, out ? "" : out.status().message().c_str());
        QCOMPARE((*out)[0].elementCount(), std::int64_t(want.size()));
        for (qsizetype i = 0; i < want.size(); ++i) {
            // The expected value as the output type holds it.
            const qlonglong expected = integerAt(integers(dt, {want[i]}), 0);
            QCOMPARE(integerAt((*out)[0], i), expected);
        }
    }

    // A kernel's scratch vector failing to allocate inside a parallel loop threw out of the OpenMP
    // region, which calls std::terminate (found in the pooling and integer-conv kernels): the
    // loop now hands the first exception back to its caller, whatever thread threw it, and the
    // executor's handler makes it an error.
    void anExceptionInAParallelLoopReachesTheCaller()
    {
        for (std::int64_t thrower : {std::int64_t(0), std::int64_t(77777), std::int64_t(99999)}) {
            std::atomic<std::int64_t> ran{0};
            bool caught = false;
            try {
                kernels::parallelFor(100000, [&](std::int64_t i) {
                    ++ran;
                    if (i == thrower || i == thrower / 2 + 1)
                        throw std::bad_alloc();
                });
            } catch (const std::bad_alloc &) {
                caught = true;
            }
            QVERIFY(caught);
            QCOMPARE(ran.load(), std::int64_t(100000)); // the other iterations still ran
        }
        int sum = 0; // below the grain: serial, thrown straight through
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, kernels::parallelFor(10, [&](std::int64_t i) {
            sum += int(i);
            if (i == 5)
                throw std::runtime_error("five");
        }));
        QCOMPARE(sum, 15);
    }

};

QTEST_GUILESS_MAIN(TestIntegerArithmetic)
#include "tst_integerarithmetic.moc"
