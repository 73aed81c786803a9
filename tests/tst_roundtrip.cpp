// The ONNX backend test suite (Debian's libonnx-testdata, 1072 models): every model imports,
// exports (embedded and with external data) so that onnx::checker accepts it, and re-imports to
// a structurally identical graph.

#include "ir/compare.h"
#include "ir/verifier.h"
#include "onnx/modelio.h"
#include "testsupport.h"

#include <QDirIterator>
#include <QTemporaryDir>
#include <QTest>
#include <onnx/checker.h>

using namespace opscope;
namespace fs = std::filesystem;

class TestRoundTrip : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_tmp;

    static QStringList models()
    {
        QStringList paths;
        for (const char *suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
            QDirIterator it(QString(OPSCOPE_ONNX_TESTDATA) + "/" + suite, {"model.onnx"}, QDir::Files,
                            QDirIterator::Subdirectories);
            while (it.hasNext())
                paths << it.next();
        }
        paths.sort();
        return paths;
    }

    Status roundTrip(const Model &original, ExternalDataMode mode, const fs::path &out)
    {
        SaveOptions options;
        options.mode = mode;
        options.threshold = 16;
        const Expected<SaveResult> saved = saveModel(original, out, options);
        if (!saved)
            return saved.status().withContext("export");
        try {
            onnx::checker::check_model(out.string());
        } catch (const std::exception &e) {
            return Status::invalid(std::string("onnx::checker rejects the export: ") + e.what());
        }
        LoadOptions load;
        load.runChecker = false; // just ran it
        const Expected<ImportResult> back = loadModel(out, load);
        if (!back)
            return back.status().withContext("re-import");
        OPSCOPE_TRY(verifyGraph(back->model.graph));
        return compareModels(original, back->model);
    }

private slots:
    void initTestCase()
    {
        if (!QDir(OPSCOPE_ONNX_TESTDATA).exists())
            QSKIP("libonnx-testdata is not installed (scripts/setup.sh installs it)");
        QVERIFY(m_tmp.isValid());
        QCOMPARE(models().size(), 1072);
    }

    void backendSuite_data()
    {
        QTest::addColumn<QString>("path");
        for (const QString &p : models()) {
            const QString name = p.section('/', -3, -2);
            QTest::newRow(qPrintable(name)) << p;
        }
    }

    void backendSuite()
    {
        QFETCH(QString, path);
        const Expected<ImportResult> original = loadModel(path.toStdString());
        QVERIFY2(original, original.status().message().c_str());
        if (!original->warnings.empty()) // QVERIFY2 evaluates its message even on success
            QFAIL(original->warnings.front().c_str());

        const fs::path dir = m_tmp.path().toStdString();
        const Status embedded = roundTrip(original->model, ExternalDataMode::Embed, dir / "embedded.onnx");
        QVERIFY2(embedded.isOk(), ("embedded: " + embedded.message()).c_str());
        const Status external = roundTrip(original->model, ExternalDataMode::External, dir / "external.onnx");
        QVERIFY2(external.isOk(), ("external data: " + external.message()).c_str());
    }
};

QTEST_GUILESS_MAIN(TestRoundTrip)
#include "tst_roundtrip.moc"
