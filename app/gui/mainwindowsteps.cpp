// MainWindow's pass pipeline: running it in the background, stepping through the passes that
// changed the graph (BEFORE | AFTER with what replaced what), pattern matches, and saving a step.

#include "mainwindow.h"
#include "graphpane.h"
#include "inspectormodel.h"
#include "inspect/inspection.h"
#include "inspect/tensorvalues.h"
#include "ir/summary.h"
#include "layoutservice.h"
#include "modelsummarymodel.h"
#include "onnx/modelio.h"
#include "passes/restorenames.h"
#include "passes/passutil.h"
#include "passes/pipeline.h"
#include "passes/registry.h"
#include "passpanel.h"
#include "profilepanel.h"
#include "timelineview.h"
#include "valuespanel.h"
#include <QApplication>
#include <QTableView>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QInputDialog>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QShortcut>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QTreeView>
#include <QtConcurrent/QtConcurrentRun>
#include <set>

namespace opscope {

void MainWindow::runPipeline()
{
    std::vector<std::string> list = m_passes->model()->enabledPasses();
    const QString target = m_passes->target();
    if (target == QStringLiteral("onnx"))
        list.emplace_back("lower-to-onnx");
    else if (target == QStringLiteral("ort"))
        list.emplace_back("lower-to-ort");
    runPasses(list, {});
}

void MainWindow::partitionForDevices(int devices)
{
    passes::PassOptions options;
    options.devices = devices;
    runPasses({"partition-for-devices"}, options);
}

void MainWindow::runPasses(std::vector<std::string> list, passes::PassOptions passOptions)
{
    if (!m_model || m_optimizing)
        return;
    m_optimizing = true;
    m_passes->setRunning(true);
    m_cancelPipeline = std::make_shared<std::atomic<bool>>(false);
    setBusy(tr("Optimizing…"), true);
    auto cancel = m_cancelPipeline;
    auto model = m_model;
    auto *watcher = new QFutureWatcher<std::shared_ptr<passes::PipelineResult>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
        watcher->deleteLater();
        m_optimizing = false;
        m_passes->setRunning(false);
        m_result = watcher->result();
        m_passes->model()->setResult(*m_result);
        const auto steps = changingSteps();
        m_passes->setStatus(m_result->status
                                ? tr("%1 → %2 nodes in %3 ms; %4 changed the graph")
                                      .arg(m_result->initial->graph.nodeCountWithSubgraphs()) // as nodesAfter counts
                                      .arg(m_result->passes.empty() ? 0 : m_result->passes.back().nodesAfter)
                                      .arg(m_result->totalMs, 0, 'f', 1)
                                      .arg(steps.size() == 1 ? tr("1 pass") : tr("%1 passes").arg(steps.size()))
                                : QString::fromStdString(m_result->status.message()));
        if (!m_result->status && m_result->status.message().find("cancelled") == std::string::npos)
            showError(tr("Optimization stopped"), QString::fromStdString(m_result->status.message()));
        else if (!m_result->warnings.empty()) {
            QStringList lines;
            for (const std::string &w : m_result->warnings)
                lines << QString::fromStdString(w);
            showError(tr("Passes skipped"), lines.join(QStringLiteral("\n\n")));
        }
        // Cancelled: the passes that ran are listed, but nothing new starts (no step layout).
        const bool cancelled = !m_result->status && m_result->status.message().find("cancelled") != std::string::npos;
        if (!steps.empty() && !cancelled)
            showStep(steps.front());
        emit pipelineFinished();
        updateBusy();
    });
    watcher->setFuture(QtConcurrent::run([model, list, cancel, passOptions]() {
        auto result = std::make_shared<passes::PipelineResult>();
        Model working = *model;
        passes::PipelineOptions options;
        options.passOptions = passOptions;
        options.verify = true; // a pass that breaks the graph is rolled back, named, and skipped
        options.onFailure = passes::OnPassFailure::SkipPass;
        options.cancel = cancel.get();
        *result = passes::runPipeline(working, list, options);
        return result;
    }));
}

std::vector<int> MainWindow::changingSteps() const
{
    std::vector<int> out;
    if (m_result)
        for (std::size_t i = 0; i < m_result->passes.size(); ++i)
            if (m_result->passes[i].changed && m_result->passes[i].snapshot)
                out.push_back(int(i));
    return out;
}

std::shared_ptr<const Model> MainWindow::modelBefore(int record) const
{
    std::shared_ptr<const Model> m = m_result->initial;
    for (int i = 0; i < record; ++i)
        if (m_result->passes[std::size_t(i)].snapshot)
            m = m_result->passes[std::size_t(i)].snapshot;
    return m;
}

std::shared_ptr<const Model> MainWindow::modelAfter(int record) const
{
    if (record < 0) {
        std::shared_ptr<const Model> m = m_result->initial;
        for (const auto &p : m_result->passes)
            if (p.snapshot)
                m = p.snapshot;
        return m;
    }
    const auto &snap = m_result->passes[std::size_t(record)].snapshot;
    return snap ? snap : modelBefore(record);
}

void MainWindow::showStep(int record)
{
    if (!m_result || record >= int(m_result->passes.size()))
        return;
    m_step = record;
    m_match = -1;
    const auto before = record < 0 ? m_result->initial : modelBefore(record);
    const auto after = modelAfter(record);
    // What replaced what: a replacement named after a matched node ("<name>_NhwcConv") takes that
    // node's slot; otherwise the first replacement takes the slot of the match's anchor.
    std::unordered_map<std::string, std::string> alias;
    if (record >= 0)
        for (const passes::PatternMatch &m : m_result->passes[std::size_t(record)].changes.matches) {
            if (!m.graphPath.empty() || m.matchedNames.empty() || m.replacementNames.empty())
                continue;
            std::set<std::string> taken;
            auto slot = [&](const std::string &replacement, const std::string &matched) {
                if (taken.count(matched) || before->graph.findNode(replacement).valid() ||
                    after->graph.findNode(matched).valid())
                    return;
                alias.emplace(replacement, matched);
                taken.insert(matched);
            };
            for (const std::string &r : m.replacementNames)
                for (const std::string &n : m.matchedNames)
                    if (r.size() > n.size() && r.compare(0, n.size(), n) == 0 && r[n.size()] == '_' &&
                        !alias.count(r))
                        slot(r, n);
            if (!alias.count(m.replacementNames[0]))
                slot(m.replacementNames[0], m.matchedNames[0]);
        }
    // Original vs final: the export lowering renamed what it rebuilt; match by tensor identity.
    if (record < 0)
        alias = matchRenamedNodes(before->graph, after->graph);
    m_graph->showComparison(before, &before->graph, after, &after->graph,
                            m_passes->overlay() ? GraphPane::Mode::Overlay : GraphPane::Mode::SideBySide,
                            std::move(alias), record < 0);
    const int row = record < 0 ? -1 : m_passes->model()->rowOfRecord(record);
    m_passes->model()->setCurrentRow(row);
    if (row >= 0) // the table's current row too: the "What does this pass do" panel follows it
        m_passes->table()->setCurrentIndex(m_passes->model()->index(row, 0));
    const auto steps = changingSteps();
    m_passes->setStepEnabled(!steps.empty() && (record < 0 || record > steps.front()),
                             !steps.empty() && record < steps.back());
    const GraphDiff &d = m_graph->diff();
    const QString what = record < 0 ? tr("original vs final")
                                    : QString::fromStdString(m_result->passes[std::size_t(record)].name);
    // Constant nodes are drawn inside their readers: removed, they leave nothing red to see.
    std::size_t inside = 0;
    for (const std::string &name : d.removed)
        inside += m_graph->presentation().inlined.count(name);
    m_diffSummary = diffSummary(what);
    if (inside > 0)
        m_diffSummary += tr(" (%n of the removed: Constant node(s) drawn inside their readers)", nullptr, int(inside));
    m_statusText->setText(m_diffSummary);
}

QString MainWindow::diffSummary(const QString &what) const
{
    const GraphDiff &d = m_graph->diff();
    return tr("%1: %2 removed, %3 added, %4 modified")
        .arg(what)
        .arg(d.removed.size())
        .arg(d.added.size())
        .arg(d.modified.size());
}

void MainWindow::stepNext()
{
    for (int s : changingSteps())
        if (s > m_step) {
            showStep(s);
            return;
        }
}

void MainWindow::stepPrevious()
{
    const auto steps = changingSteps();
    for (auto it = steps.rbegin(); it != steps.rend(); ++it)
        if (*it < m_step || m_step < 0) {
            showStep(*it);
            return;
        }
}

void MainWindow::nextMatch()
{
    if (!m_result || m_step < 0)
        return;
    const auto &matches = m_result->passes[std::size_t(m_step)].changes.matches;
    if (matches.empty())
        return;
    m_match = (m_match + 1) % int(matches.size());
    const auto &m = matches[std::size_t(m_match)];
    std::vector<std::string> names = m.matchedNames;
    names.insert(names.end(), m.replacementNames.begin(), m.replacementNames.end());
    m_graph->focusNodes(names);
    m_statusText->setText(
        tr("change %1 of %2: %3").arg(m_match + 1).arg(matches.size()).arg(QString::fromStdString(m.rule)));
}

void MainWindow::previousMatch()
{
    if (!m_result || m_step < 0)
        return;
    const auto &matches = m_result->passes[std::size_t(m_step)].changes.matches;
    if (matches.empty())
        return;
    m_match = (m_match <= 0 ? int(matches.size()) : m_match) - 2;
    nextMatch();
}

Expected<std::shared_ptr<const Model>> MainWindow::exportableModel(QStringList *opscopeOnly) const
{
    if (!m_model)
        return Status::invalid("no model is open");
    std::shared_ptr<const Model> model = m_result ? modelAfter(m_step >= -1 ? m_step : -1) : m_model;
    // A mid-pipeline snapshot holds opscope's fused ops: for an onnx/ort target it is lowered as
    // the pipeline's last step would; for "none" the caller is told which ops only opscope runs.
    const QString target = m_passes->target();
    // Written back under the names of the nodes it was optimized from, as opscope-cli optimize
    // writes it (passes/restorenames.h).
    const auto named = [this](std::shared_ptr<const Model> m) -> std::shared_ptr<const Model> {
        if (!m_result || m == m_model)
            return m;
        auto copy = std::make_shared<Model>(*m);
        passes::restoreOriginalNames(copy->graph, m_model->graph, *m_result);
        return copy;
    };
    std::map<std::string, int> internal;
    for (NodeId id : model->graph.nodeIds())
        if (model->graph.node(id).domain == passes::kOpscopeDomain)
            ++internal[model->graph.node(id).opType];
    if (internal.empty())
        return named(model);
    if (target == QStringLiteral("onnx") || target == QStringLiteral("ort")) {
        Model lowered = *model;
        passes::PipelineOptions options;
        options.keepSnapshots = false;
        options.verify = true;
        const passes::PipelineResult r = passes::runPipeline(
            lowered, {target == QStringLiteral("onnx") ? "lower-to-onnx" : "lower-to-ort"}, options);
        if (!r.status)
            return r.status.withContext("lowering for " + target.toStdString());
        return named(std::make_shared<Model>(std::move(lowered)));
    }
    if (opscopeOnly)
        for (const auto &[op, n] : internal)
            *opscopeOnly << QStringLiteral("%1 ×%2").arg(QString::fromStdString(op)).arg(n);
    return model;
}

QString MainWindow::suggestedSaveName() const
{
    // Beside the input: model.hardswish-fusion.onnx, model.optimized.onnx (original vs final).
    const QString stepName = m_result && m_step >= 0
                                 ? QString::fromStdString(m_result->passes[std::size_t(m_step)].name)
                                 : QStringLiteral("optimized");
    if (m_source.isEmpty() || m_source.startsWith(QLatin1Char(':')))
        return stepName + QStringLiteral(".onnx");
    const QFileInfo source(m_source);
    return source.dir().filePath(source.completeBaseName() + QLatin1Char('.') + stepName + QStringLiteral(".onnx"));
}

void MainWindow::saveAtStep()
{
    QStringList opscopeOnly;
    Expected<std::shared_ptr<const Model>> model = exportableModel(&opscopeOnly);
    if (!model) {
        showError(tr("Cannot save"), QString::fromStdString(model.status().message()));
        return;
    }
    if (!opscopeOnly.isEmpty() &&
        QMessageBox::question(this, tr("Save opscope-only ops?"),
                              tr("This model uses ops only opscope runs (%1); ONNX Runtime and other tools "
                                 "will not load it. Choose target onnx or ort to save standard ONNX. Save anyway?")
                                  .arg(opscopeOnly.join(QStringLiteral(", ")))) != QMessageBox::Yes)
        return;
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save model"), suggestedSaveName(), tr("ONNX models (*.onnx)"));
    if (path.isEmpty())
        return;
    if (QFileInfo(path) == QFileInfo(m_source) &&
        QMessageBox::question(this, tr("Overwrite the input model?"),
                              tr("%1 is the model you opened. Replace it?").arg(path)) != QMessageBox::Yes)
        return;
    Expected<SaveResult> saved = saveModel(**model, path.toStdString());
    if (!saved)
        showError(tr("Cannot save"), QString::fromStdString(saved.status().message()));
    else
        m_statusText->setText(tr("Saved %1").arg(path));
}

} // namespace opscope
