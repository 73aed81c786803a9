// ModelSummaryModel under QAbstractItemModelTester, on the bundled samples.

#include "ir/summary.h"
#include "modelsummarymodel.h"
#include "testsupport.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace opscope;

class TestModelSummaryModel : public QObject
{
    Q_OBJECT
private slots:
    // The largest initializers, cut to what tells them apart (elided on the left, every tf2onnx
    // convolution weight read "…onv2D_weights_fused_bn" in the inspector).
    void initializerNamesKeepWhatDiffers_data()
    {
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QStringList>("shown");
        QTest::newRow("tf2onnx") << QStringList{"model/conv2d_3/Conv2D_weights_fused_bn",
                                                "model/conv2d_4/Conv2D_weights_fused_bn", "model/dense/MatMul/ReadVariableOp:0"}
                                 << QStringList{"conv2d_3/Conv2D_weights_fused_bn", "conv2d_4/Conv2D_weights_fused_bn",
                                                "dense/MatMul/ReadVariableOp:0"};
        QTest::newRow("BERT") << QStringList{"/encoder/layer.3/attention/self/query/dense.weight",
                                             "/encoder/layer.3/attention/self/key/dense.weight",
                                             "/encoder/layer.4/attention/self/query/dense.weight"}
                              << QStringList{"layer.3/…/query/dense.weight", "layer.3/…/key/dense.weight",
                                             "layer.4/…/query/dense.weight"};
        QTest::newRow("flat names stay") << QStringList{"w1", "w2"} << QStringList{"w1", "w2"};
        QTest::newRow("one name stays") << QStringList{"a/b/c"} << QStringList{"a/b/c"};
    }
    void initializerNamesKeepWhatDiffers()
    {
        QFETCH(QStringList, names);
        QFETCH(QStringList, shown);
        const std::vector<QString> got = ModelSummaryModel::distinguishingNames({names.begin(), names.end()});
        QCOMPARE(QStringList(got.begin(), got.end()), shown);
    }

    void structureAndContent()
    {
        ModelSummaryModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);

        const ImportResult r = test::loadOrFail(test::samplePath("transformer_block.onnx"));
        model.setSummary(summarizeModel(r.model), {"something to look at"});
        QCOMPARE(model.rowCount(), 6); // Model, Inputs, Outputs, Operators, Largest initializers, Warnings
        const QModelIndex inputs = model.index(1, 0);
        QCOMPARE(inputs.data().toString(), QString("Inputs"));
        QCOMPARE(model.rowCount(inputs), 2);
        QCOMPARE(model.index(0, 1, inputs).data().toString(), QString("float32 [batch,16,64]"));

        const QModelIndex ops = model.index(3, 0);
        bool sawMatMul = false;
        for (int i = 0; i < model.rowCount(ops); ++i)
            if (model.index(i, 0, ops).data().toString() == "MatMul") {
                sawMatMul = true;
                QCOMPARE(model.index(i, 1, ops).data(ModelSummaryModel::SortValueRole).toULongLong(), 8ull);
            }
        QVERIFY(sawMatMul);
        QCOMPARE(model.parent(model.index(0, 1, ops)), ops);
        // Counts read as the CLI prints them: grouped by thousands.
        const QModelIndex top = model.index(0, 0);
        for (int i = 0; i < model.rowCount(top); ++i)
            if (model.index(i, 0, top).data().toString() == "Parameters") {
                const qulonglong n = model.index(i, 1, top).data(ModelSummaryModel::SortValueRole).toULongLong();
                QVERIFY(n >= 1000);
                QVERIFY2(model.index(i, 1, top).data().toString().contains(','),
                         qPrintable(model.index(i, 1, top).data().toString()));
            }

        model.setSummary(summarizeModel(test::loadOrFail(test::samplePath("inception_block.onnx")).model));
        QCOMPARE(model.rowCount(), 5);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestModelSummaryModel)
#include "tst_modelsummarymodel.moc"
