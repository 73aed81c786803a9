// The app's save paths as a user meets them, dialogs included: "Save model at this step" asks
// before writing ops only opscope runs, proposes a name beside the model, and asks before
// replacing the model that is open. Each modal dialog is answered by a script as it opens
// (Qt's own widget dialogs, so the test sees what a user sees).

#include "ir/model.h"
#include "mainwindow.h"
#include "onnx/modelio.h"
#include "passpanel.h"
#include "testsupport.h"
#include "waitidle.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QFile>
#include <QDialog>
#include <QFileDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QPointer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <deque>
#include <functional>

using namespace opscope;

namespace {

// Answers modal dialogs in the order they open, one step each; records what each one said.
class DialogScript : public QObject
{
public:
    using Step = std::function<void(QWidget *)>;
    explicit DialogScript(std::deque<Step> steps) : m_steps(std::move(steps))
    {
        connect(&m_timer, &QTimer::timeout, this, [this] {
            QWidget *dialog = QApplication::activeModalWidget();
            if (!dialog || !dialog->isVisible())
                return;
            if (m_steps.empty()) {
                // A dialog the script did not expect: closed (the test fails, it does not hang).
                auto *box = qobject_cast<QMessageBox *>(dialog);
                m_unexpected += QStringLiteral("%1 '%2'; ").arg(dialog->metaObject()->className(),
                                                                box ? box->text() : dialog->windowTitle());
                if (auto *d = qobject_cast<QDialog *>(dialog))
                    d->reject();
                return;
            }
            Step step = std::move(m_steps.front());
            m_steps.pop_front();
            ++m_answered;
            // Outside this timer's slot: an answer may open the next dialog (Qt's "already
            // exists" question inside QFileDialog::accept), and a timer never fires inside its
            // own slot.
            m_timer.stop();
            QTimer::singleShot(0, this, [this, step, d = QPointer<QWidget>(dialog)] {
                m_timer.start(30);
                if (d)
                    step(d);
            });
        });
        m_timer.start(30);
    }
    int answered() const { return m_answered; }
    bool done() const { return m_steps.empty(); }
    const QString &unexpected() const { return m_unexpected; }

private:
    std::deque<Step> m_steps;
    QTimer m_timer;
    int m_answered = 0;
    QString m_unexpected;
};

QAction *saveAction(const MainWindow &w)
{
    for (QAction *a : w.findChildren<QAction *>())
        if (a->text().contains(QStringLiteral("Save model at this step")))
            return a;
    return nullptr;
}

DialogScript::Step answer(QMessageBox::StandardButton button, const QString &mustSay, QString *said = nullptr)
{
    return [=](QWidget *d) {
        auto *box = qobject_cast<QMessageBox *>(d);
        QVERIFY2(box, qPrintable(QStringLiteral("expected a question, got %1").arg(d->metaObject()->className())));
        if (said)
            *said = box->text();
        QVERIFY2(box->text().contains(mustSay), qPrintable(box->text()));
        box->button(button)->click();
    };
}

DialogScript::Step chooseFile(const QString &path, QString *proposed = nullptr)
{
    return [=](QWidget *d) {
        auto *dialog = qobject_cast<QFileDialog *>(d);
        QVERIFY2(dialog, qPrintable(QStringLiteral("expected a file dialog, got %1").arg(d->metaObject()->className())));
        if (proposed && !dialog->selectedFiles().isEmpty())
            *proposed = dialog->selectedFiles().front();
        // As a user does: the path typed into the name field, then Save.
        auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit"));
        QVERIFY(name);
        name->setText(path);
        static_cast<QDialog *>(dialog)->accept(); // public there; QFileDialog::accept reads the field
    };
}

int opscopeOps(const QString &path)
{
    Expected<ImportResult> loaded = loadModel(path.toStdString());
    if (!loaded)
        return -1;
    int n = 0;
    for (NodeId id : loaded->model.graph.nodeIds())
        n += loaded->model.graph.node(id).domain == "ai.opscope";
    return n;
}

} // namespace

class TestSaveDialogs : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase() { QApplication::setAttribute(Qt::AA_DontUseNativeDialogs); }

    void savingAStepAsksFirstAndNeverReplacesTheModelUnasked()
    {
        QTemporaryDir dir;
        const QString model = dir.filePath(QStringLiteral("inception.onnx"));
        QVERIFY(QFile::copy(QString::fromStdString(test::samplePath("inception_block.onnx").string()), model));
        const QByteArray original = [&] {
            QFile f(model);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        QVERIFY(!original.isEmpty());
        MainWindow w;
        w.show();
        w.openFile(model);
        QVERIFY(test::waitIdle(w));
        QSignalSpy optimized(&w, &MainWindow::pipelineFinished);
        w.runPipeline();
        QVERIFY(optimized.wait(60000));
        QVERIFY(test::waitIdle(w));
        for (std::size_t i = 0; i < w.pipelineResult()->passes.size(); ++i)
            if (w.pipelineResult()->passes[i].name == "conv-activation-fusion")
                w.showStep(int(i));
        QVERIFY(test::waitIdle(w));
        QAction *save = saveAction(w);
        QVERIFY(save);
        const QString out = dir.filePath(QStringLiteral("step.onnx"));

        // Target none: the question names the ops; No writes nothing and opens no file dialog.
        w.passPanel()->setTarget(QStringLiteral("none"));
        {
            DialogScript script({answer(QMessageBox::No, QStringLiteral("FusedConv"))});
            save->trigger();
            QCOMPARE(script.answered(), 1);
            QVERIFY2(script.unexpected().isEmpty(), qPrintable(script.unexpected()));
        }
        QVERIFY(!QFile::exists(out));
        // Yes: the file dialog proposes model.step.onnx beside the model; the file keeps FusedConv.
        {
            QString proposed;
            DialogScript script({answer(QMessageBox::Yes, QStringLiteral("only opscope runs")), chooseFile(out, &proposed)});
            save->trigger();
            QVERIFY2(script.done() && script.unexpected().isEmpty(), qPrintable(script.unexpected()));
            QCOMPARE(proposed, dir.filePath(QStringLiteral("inception.conv-activation-fusion.onnx")));
        }
        QVERIFY2(QFile::exists(out), qPrintable(w.lastError() + QStringLiteral(" | ") + w.statusText()));
        QVERIFY(opscopeOps(out) > 0);
        QVERIFY2(w.statusText().contains(out), qPrintable(w.statusText()));

        // Target onnx: no question, standard ONNX written over the earlier file (Qt asks first).
        w.passPanel()->setTarget(QStringLiteral("onnx"));
        {
            DialogScript script({chooseFile(out), answer(QMessageBox::Yes, QStringLiteral("already exists"))});
            save->trigger();
            QVERIFY2(script.done() && script.unexpected().isEmpty(), qPrintable(script.unexpected()));
        }
        QCOMPARE(opscopeOps(out), 0);

        // The model that is open, chosen as the target: asked again, No leaves it byte for byte.
        {
            DialogScript script({chooseFile(model), answer(QMessageBox::Yes, QStringLiteral("already exists")),
                                 answer(QMessageBox::No, QStringLiteral("is the model you opened"))});
            save->trigger();
            QVERIFY2(script.done() && script.unexpected().isEmpty(), qPrintable(script.unexpected()));
        }
        QFile f(model);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), original);
    }
};

QTEST_MAIN(TestSaveDialogs)
#include "tst_savedialogs.moc"
