// The Memory dock: the memory plan of the model on screen (a pass step's model after the pass,
// with the one before it for comparison), planned in the background by one sizing run with random
// inputs; clicking a tensor selects its producer in the graph.

#include "mainwindow.h"

#include "graphpane.h"
#include "graphscene.h"
#include "memoryview.h"
#include "passes/pipeline.h"
#include "runtime/memoryreport.h"

#include <QDockWidget>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

namespace opscope {

namespace {

struct PlannedPair
{
    Expected<MemoryReport> after = Status::internal("not planned");
    std::optional<Expected<MemoryReport>> before;
    std::shared_ptr<const Model> planned; // the model `after` plans (optimized here when "as run")
    QString subject;                      // which model that is, for the dock's first line
};

} // namespace

void MainWindow::planMemoryOnScreen()
{
    if (!m_model)
        return;
    // "As run runs it" plans the loaded model after the level-all passes (as run, profile and the
    // CLI's memory do); otherwise the model on screen, so its bytes can colour the graph.
    const bool asRun = m_memory->plansAsRun();
    const bool step = !asRun && m_result && m_step >= 0;
    const std::shared_ptr<const Model> after = step ? modelAfter(m_step) : m_model;
    const std::shared_ptr<const Model> before = step ? modelBefore(m_step) : nullptr;
    QString subject =
        step ? tr("After pass %1 (%2), beside the model before it.")
                   .arg(m_step + 1)
                   .arg(QString::fromStdString(m_result->passes[std::size_t(m_step)].name))
             : tr("The model as loaded, not optimized: opscope-cli memory MODEL --optimize none prints these "
                  "figures (\"As run runs it\" plans it optimized, as the CLI does by default).");
    // The symbolic dims of the model's inputs, sized in the panel (1 until the user says otherwise).
    std::vector<std::string> symbols;
    for (ValueId v : after->graph.inputs()) {
        const Value &value = after->graph.value(v);
        if (value.initializer || !value.type.shape)
            continue;
        for (const Dim &d : value.type.shape->dims)
            if (d.isSymbolic() && std::find(symbols.begin(), symbols.end(), d.symbol) == symbols.end())
                symbols.push_back(d.symbol);
    }
    m_memory->setSymbolicDims(symbols);
    const std::map<std::string, std::int64_t> dims = m_memory->dims();
    if (m_cancelMemory)
        m_cancelMemory->store(true);
    m_cancelMemory = std::make_shared<std::atomic<bool>>(false);
    m_memoryDock->show();
    m_memoryDock->raise();
    m_memory->setMessage(tr("Planning memory: one run with random inputs sizes every tensor…"));
    setBusy(tr("Planning memory…"), true);
    auto *watcher = new QFutureWatcher<PlannedPair>(this);
    const auto cancel = m_cancelMemory;
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, cancel] {
        watcher->deleteLater();
        if (m_cancelMemory != cancel)
            return; // superseded by a newer request
        m_cancelMemory.reset();
        updateBusy();
        if (cancel->load()) {
            m_memory->setMessage(tr("Memory planning cancelled."));
            return;
        }
        PlannedPair r = watcher->result();
        if (!r.after) {
            m_memory->setPlan(nullptr, nullptr);
            m_memory->setMessage(tr("No memory plan: %1").arg(QString::fromStdString(r.after.status().message())));
            // Not "Profile ▸ Plan memory shows …" under the error (that is what just failed).
            m_memory->view()->setPlaceholder(
                tr("No plan to draw: the run that sizes every tensor failed (above). Random inputs do not suit "
                   "every model (a sample rate, token ids); plan with real ones: opscope-cli memory MODEL "
                   "--input NAME=FILE.npy"));
            return;
        }
        std::shared_ptr<const MemoryPlan> was;
        if (r.before && *r.before)
            was = (*r.before)->plan;
        m_memory->view()->setPlaceholder({});
        m_memory->setPlan(r.after->plan, r.planned, was, r.subject);
        applyBytesHeat();
    });
    watcher->setFuture(QtConcurrent::run([after, before, cancel, dims, asRun, subject] {
        MemoryReportOptions options;
        options.cancel = cancel.get();
        options.random.dims = dims;
        PlannedPair r;
        r.planned = after;
        r.subject = subject;
        if (asRun) {
            auto optimized = std::make_shared<Model>(*after);
            passes::PipelineOptions passOptions;
            passOptions.keepSnapshots = false;
            passOptions.cancel = cancel.get();
            const passes::PipelineResult p = passes::optimizeForExecution(*optimized, "all", passOptions);
            if (p.status) {
                r.planned = optimized;
                r.subject = QObject::tr("As run runs it: the loaded model optimized at level all (%1 → %2 nodes), "
                                        "as opscope-cli memory plans it.")
                                .arg(after->graph.nodeCountWithSubgraphs())
                                .arg(optimized->graph.nodeCountWithSubgraphs());
            } else {
                r.subject = QObject::tr("Optimizing failed (%1): the model as loaded is planned, as run would run it.")
                                .arg(QString::fromStdString(p.status.message()));
            }
        }
        r.after = planModelMemory(*r.planned, options);
        if (before && !cancel->load())
            r.before = planModelMemory(*before, options);
        return r;
    }));
}

void MainWindow::applyBytesHeat()
{
    const bool on = m_bytesHeatAction && m_bytesHeatAction->isChecked();
    for (int side = 0; side < 2; ++side) {
        GraphScene *scene = m_graph->scene(side);
        if (!scene || (on && m_graph->model(side) != m_memory->model()))
            continue;
        scene->applyHeat(on ? m_memory->bytesPerNode() : std::map<std::string, double>{});
    }
}

} // namespace opscope
