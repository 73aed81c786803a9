#include "profilepanel.h"

#include "optotalsmodel.h"
#include "profiledialog.h"
#include "passes/pipeline.h"
#include "passes/registry.h"
#include "timelineview.h"
#include "trace/chrometrace.h"
#include "util/systemload.h"

#include <algorithm>

#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QDir>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace opscope {

ProfilePanel::ProfilePanel(QWidget *parent)
    : QWidget(parent), m_timeline(new TimelineView(this)), m_totals(new OpTotalsModel(this)),
      m_table(new QTableView(this)), m_status(new QLabel(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto *bar = new QHBoxLayout;
    auto *profileButton = new QPushButton(tr("Profile…"), this);
    auto *openButton = new QPushButton(tr("Open trace…"), this);
    auto *saveButton = new QPushButton(tr("Save trace…"), this);
    auto *clearButton = new QPushButton(tr("Clear"), this);
    bar->addWidget(profileButton);
    bar->addWidget(openButton);
    bar->addWidget(saveButton);
    bar->addWidget(clearButton);
    // A long note must not widen the panel: the label clips, its tooltip has the whole text.
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    bar->addWidget(m_status, 1);
    layout->addLayout(bar);
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_timeline);
    m_table->setModel(m_totals);
    m_table->verticalHeader()->hide();
    // Sized by fitTotals, draggable by the user; names too long for their column elide (the
    // tooltips carry them whole).
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_table->setTextElideMode(Qt::ElideMiddle);
    split->addWidget(m_table);
    split->setStretchFactor(0, 4);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);

    connect(profileButton, &QPushButton::clicked, this, &ProfilePanel::showProfileDialog);
    connect(openButton, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open trace"), QFileInfo(suggestedTraceName()).path(),
                                         tr("Chrome traces (*.json)"));
        if (path.isEmpty())
            return;
        if (Status s = openTrace(path); !s)
            QMessageBox::critical(this, tr("Cannot open trace"), QString::fromStdString(s.message()));
    });
    connect(saveButton, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Save trace"), suggestedTraceName(), tr("Chrome traces (*.json)"));
        if (path.isEmpty())
            return;
        if (Status s = saveTrace(path); !s)
            QMessageBox::critical(this, tr("Cannot save trace"), QString::fromStdString(s.message()));
        else
            m_tracePath = path;
    });
    connect(clearButton, &QPushButton::clicked, this, &ProfilePanel::clearRuns);
    connect(m_timeline, &TimelineView::spanClicked, this,
            [this](const QString &node) { emit spanClicked(node); });
}

QString ProfilePanel::suggestedTraceName() const
{
    if (!m_tracePath.isEmpty())
        return m_tracePath;
    const QString source = currentSource ? currentSource() : QString();
    if (source.isEmpty() || source.startsWith(QLatin1Char(':'))) // a bundled sample: no folder of its own
        return QStringLiteral("trace.json");
    const QFileInfo model(source);
    return model.dir().filePath(model.completeBaseName() + QStringLiteral(".trace.json"));
}

void ProfilePanel::showProfileDialog()
{
    const std::shared_ptr<const Model> model = currentModel ? currentModel() : nullptr;
    if (!model || m_running)
        return;
    ProfileDialog dialog(model, this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    Expected<schedule::ProfileOptions> options = dialog.options();
    if (!options) {
        QMessageBox::critical(this, tr("Cannot profile"), QString::fromStdString(options.status().message()));
        return;
    }
    profile(model, *options);
}

void ProfilePanel::profile(std::shared_ptr<const Model> model, const schedule::ProfileOptions &options)
{
    if (m_running || !model)
        return;
    m_running = true;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_status->setText(tr("Profiling…"));
    emit started();
    schedule::ProfileOptions o = options;
    o.cancel = m_cancel.get();
    QPointer<ProfilePanel> self(this);
    o.progress = [self](const std::string &text) {
        QMetaObject::invokeMethod(
            self,
            [self, text] {
                if (self) {
                    self->m_status->setText(tr("Profiling: %1").arg(QString::fromStdString(text)));
                    emit self->progress(QString::fromStdString(text));
                }
            },
            Qt::QueuedConnection);
    };
    auto cancel = m_cancel;
    struct Result
    {
        Expected<std::vector<schedule::ProfileRun>> runs = std::vector<schedule::ProfileRun>{};
        std::map<std::string, std::vector<std::string>> origins; // fused node → the nodes it replaced
        std::vector<std::string> notes;                          // what makes the times doubtful
    };
    auto *watcher = new QFutureWatcher<Result>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_running = false;
        Result result = watcher->result();
        Expected<std::vector<schedule::ProfileRun>> &r = result.runs;
        if (!r) {
            m_status->setText(QString::fromStdString(r.status().message()));
            emit finished(QString::fromStdString(r.status().message()));
            return;
        }
        m_origins = std::move(result.origins);
        for (schedule::ProfileRun &run : *r)
            m_runs.push_back(std::move(run));
        showRuns();
        QString status = tr("%1 runs in this session").arg(m_runs.size());
        QStringList notes;
        for (const std::string &n : result.notes)
            notes << QString::fromStdString(n);
        if (!notes.isEmpty())
            status += QStringLiteral(" — ") + tr("note: %1").arg(notes.front()) +
                      (notes.size() > 1 ? tr(" (+%1 more, see the tooltip)").arg(notes.size() - 1) : QString());
        m_status->setText(status);
        m_status->setToolTip(notes.join(QStringLiteral("\n")));
        emit finished({});
    });
    watcher->setFuture(QtConcurrent::run([model, o, cancel]() -> Result {
        Model optimized = *model;
        passes::PipelineOptions po;
        po.keepSnapshots = false;
        po.cancel = cancel.get(); // Cancel also stops the optimization before the runs
        // Verified after every pass like `opscope-cli run`: a pass that breaks the graph is skipped.
        Model candidate = optimized;
        Result result;
        if (const passes::PipelineResult pr = passes::optimizeForExecution(candidate, "extended", po); pr.status) {
            optimized = std::move(candidate);
            result.origins = passes::replacementOrigins(pr);
        }
        result.runs = schedule::profileModel(optimized, o);
        if (result.runs)
            result.notes = schedule::timingNotes(*result.runs, o.iterations, loadAverage(), usableCores());
        return result;
    }));
}

ProfilePanel::~ProfilePanel()
{
    cancel();
}

void ProfilePanel::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
}

void ProfilePanel::addRun(schedule::ProfileRun run)
{
    m_runs.push_back(std::move(run));
    showRuns();
}

void ProfilePanel::clearRuns()
{
    m_runs.clear();
    showRuns();
}

void ProfilePanel::showRuns()
{
    std::vector<TimelineRun> runs;
    std::vector<std::shared_ptr<const trace::Trace>> traces;
    for (const schedule::ProfileRun &r : m_runs) {
        auto t = std::make_shared<const trace::Trace>(r.trace);
        QString summary = QStringLiteral("makespan %1 ms").arg(r.makespanMs, 0, 'f', 3);
        if (r.predictedMs > 0)
            summary += QStringLiteral("  (predicted %1 ms)").arg(r.predictedMs, 0, 'f', 3);
        summary += QStringLiteral(" · idle %1 ms").arg(r.idleMs, 0, 'f', 3);
        for (const auto &[device, u] : r.utilization)
            summary +=
                QStringLiteral(" · %1 %2%").arg(QString::fromStdString(device)).arg(int(u * 100 + 0.5));
        if (r.transfers)
            summary += QStringLiteral(" · %1 transfers, %2% overlapped")
                           .arg(r.transfers)
                           .arg(int(r.overlap * 100 + 0.5));
        runs.push_back({t, summary});
        traces.push_back(t);
    }
    m_timeline->setRuns(std::move(runs));
    m_totals->setRuns(traces);
    fitTotals();
}

void ProfilePanel::fitTotals()
{
    // The per-op table gets the width its columns need, up to 45 % of the panel, so no run's
    // column is cut off; the timeline keeps the rest. Past 45 % (many runs side by side) a run's
    // column narrows to its numbers, its name eliding in the header, and the op column takes what
    // is left down to a short op's width; only then does the table scroll.
    m_table->resizeColumnsToContents();
    auto *split = static_cast<QSplitter *>(m_table->parentWidget());
    const int total = split->width();
    if (total <= 0)
        return;
    QHeaderView *header = m_table->horizontalHeader();
    const int frame = 2 * m_table->frameWidth() + m_table->verticalScrollBar()->sizeHint().width() + 2;
    const int cap = total * 45 / 100;
    if (header->length() + frame > cap && m_totals->columnCount() > 1) {
        int numbers = 0;
        for (int c = 1; c < m_totals->columnCount(); ++c) {
            const int w = std::max(static_cast<const QAbstractItemView *>(m_table)->sizeHintForColumn(c), // public there
                                   m_table->fontMetrics().horizontalAdvance(QStringLiteral("0000.000")));
            header->resizeSection(c, w);
            numbers += w;
        }
        const int shortOp = m_table->fontMetrics().horizontalAdvance(QStringLiteral("MaxPool__"));
        const int op = std::clamp(cap - frame - numbers, std::min(shortOp, header->sectionSize(0)),
                                  header->sectionSize(0));
        header->resizeSection(0, op);
    }
    const int table = std::min(header->length() + frame, cap);
    split->setSizes({total - table - split->handleWidth(), table});
}

void ProfilePanel::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    // Only ever widened here, so a splitter the user dragged wider stays where they put it.
    if (m_table->viewport()->width() < m_table->horizontalHeader()->length())
        fitTotals();
}

Status ProfilePanel::openTrace(const QString &path)
{
    Expected<trace::Trace> t = trace::readChromeTrace(path.toStdString());
    if (!t)
        return t.status();
    // A session the app saved reopens as the runs it held, each on its own clock.
    for (schedule::ProfileRun &run : schedule::splitSession(*t))
        m_runs.push_back(std::move(run));
    m_tracePath = path;
    showRuns();
    return Status::ok();
}

Status ProfilePanel::saveTrace(const QString &path) const
{
    return trace::writeChromeTrace(schedule::combinedTrace(m_runs, "opscope session"), path.toStdString());
}

std::map<std::string, double> ProfilePanel::timePerNode() const
{
    std::map<std::string, double> out;
    if (m_runs.empty())
        return out;
    // Spans name the nodes of the model that ran, optimized: a FusedConv's time is shared among the
    // Conv and Relu it replaced, so the heat overlay on the original graph is not blank there.
    const trace::Trace &t = m_runs.back().trace;
    for (const trace::Lane &l : t.lanes)
        for (const trace::Span &s : l.spans) {
            const std::string &name = t.strings[s.name];
            const auto origin = m_origins.find(name);
            if (origin == m_origins.end() || origin->second.empty()) {
                out[name] += s.end - s.start;
                continue;
            }
            for (const std::string &replaced : origin->second)
                out[replaced] += (s.end - s.start) / double(origin->second.size());
        }
    return out;
}

} // namespace opscope
