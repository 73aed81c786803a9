#include "mainwindow.h"

#include "graphpane.h"
#include "inspectormodel.h"
#include "inspect/groupsummary.h"
#include "inspect/inspection.h"
#include "inspect/tensorvalues.h"
#include "ir/summary.h"
#include "layoutservice.h"
#include "memoryview.h"
#include "modelsummarymodel.h"
#include "onnx/modelio.h"
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
#include <QStyledItemDelegate>
#include <optional>
#include <QTreeView>
#include <QtConcurrent/QtConcurrentRun>
#include <set>

// The bundled samples live in this static library's resources; Q_INIT_RESOURCE must be called from
// the global namespace.
static void initResources()
{
    Q_INIT_RESOURCE(opscope);
}

namespace opscope {

namespace {

constexpr int kMaxRecent = 8;
constexpr std::int64_t kStatsLimit = 4 << 20; // elements: bigger initializers skip statistics

// A loaded model with every node named (views and diffs key nodes by name).
Expected<std::shared_ptr<Model>> named(Expected<ImportResult> loaded)
{
    if (!loaded)
        return loaded.status();
    loaded->model.graph.assignNodeNames();
    return std::make_shared<Model>(std::move(loaded->model));
}

std::function<Expected<std::shared_ptr<Model>>()> fileLoader(const QString &path)
{
    return [p = path.toStdString()] { return named(loadModel(p)); };
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_layouts(new LayoutService(this)), m_graph(new GraphPane(m_layouts, this)),
      m_passes(new PassPanel(this)), m_profile(new ProfilePanel(this)), m_inspector(new InspectorModel(this)),
      m_summary(new ModelSummaryModel(this))
{
    initResources();
    setWindowTitle(QStringLiteral("opscope"));
    setAcceptDrops(true);
    setCentralWidget(m_graph);
    buildDocks();
    buildMenus();

    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 0);
    m_progress->setMaximumWidth(160);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_statusText = new QLabel(this);
    statusBar()->addWidget(m_statusText, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    m_progress->hide();
    m_cancel->hide();
    connect(m_cancel, &QPushButton::clicked, this, &MainWindow::cancelWork);

    connect(m_graph, &GraphPane::layoutStarted, this,
            [this](int items) { setBusy(tr("Laying out %1 items…").arg(items), true); });
    connect(m_graph, &GraphPane::layoutFinished, this, [this](double ms, int items, const QString &note) {
        const QString laidOut = note.isEmpty() ? tr("%1 items laid out in %2 ms").arg(items).arg(ms, 0, 'f', 0)
                                               : tr("%1 (%2 items)").arg(note).arg(items);
        // A comparison's or a step's summary stays: the layout landing after it replaced it.
        m_statusText->setText(m_diffSummary.isEmpty() ? laidOut : m_diffSummary + QStringLiteral(" · ") + laidOut);
        updateBusy();
    });
    connect(m_graph, &GraphPane::layoutFailed, this, [this](const QString &m) {
        showError(tr("Layout failed"), m);
        updateBusy();
    });
    connect(m_graph, &GraphPane::nodeSelected, this, [this](int side, const Graph *graph, NodeId node) {
        if (graph != m_inspectedGraph || node != m_inspectedNode)
            m_probeNote.clear(); // the last run's note was about another node
        m_inspectedModel = m_graph->model(side);
        m_inspectedGraph = graph;
        m_inspectedNode = node;
        inspectNode(*m_graph->model(side), *graph, node);
    });
    connect(m_graph, &GraphPane::tensorSelected, this, &MainWindow::inspectTensor);
    connect(m_graph, &GraphPane::groupSelected, this,
            [this](int, const Graph *graph, const QString &path, const std::vector<NodeId> &members, int children) {
                m_inspector->setSections(inspectNodeGroup(*graph, members, path.toStdString(), std::size_t(children)));
                m_values->setTensors({});
                if (m_inspectorTabs->currentWidget() != m_values)
                    m_inspectorTabs->setCurrentIndex(0);
            });

    m_profile->currentModel = [this] { return m_model; };
    m_profile->currentSource = [this] { return m_source; };
    connect(m_profile, &ProfilePanel::started, this, [this] { setBusy(tr("Profiling…"), true); });
    connect(m_profile, &ProfilePanel::progress, this,
            [this](const QString &t) { m_statusText->setText(tr("Profiling: %1").arg(t)); });
    connect(m_profile, &ProfilePanel::finished, this, [this](const QString &error) {
        if (!error.isEmpty() && !error.contains(QStringLiteral("cancelled")))
            showError(tr("Profiling failed"), error);
        if (m_heat)
            m_graph->scene(0)->applyHeat(m_profile->timePerNode());
        if (error.isEmpty())
            m_statusText->setText(tr("Profiled: %1 runs in this session").arg(m_profile->runs().size()));
        updateBusy();
    });
    connect(m_profile, &ProfilePanel::spanClicked, this, &MainWindow::selectNode);
    connect(m_graph, &GraphPane::nodeSelected, this, [this](int, const Graph *graph, NodeId node) {
        m_profile->timeline()->setHighlightedNode(QString::fromStdString(graph->node(node).name));
    });
    connect(m_passes, &PassPanel::runRequested, this, [this] { runPipeline(); });
    connect(m_passes, &PassPanel::cancelRequested, this, &MainWindow::cancelWork);
    connect(m_passes, &PassPanel::stepNext, this, &MainWindow::stepNext);
    connect(m_passes, &PassPanel::stepPrevious, this, &MainWindow::stepPrevious);
    connect(m_passes, &PassPanel::originalVsFinal, this, [this] { showStep(-1); });
    connect(m_passes, &PassPanel::nextMatch, this, &MainWindow::nextMatch);
    connect(m_passes, &PassPanel::previousMatch, this, &MainWindow::previousMatch);
    connect(m_passes, &PassPanel::rowActivated, this, [this](int row) {
        const int record = m_passes->model()->recordOf(row);
        if (record >= 0)
            showStep(record);
    });
    connect(m_passes, &PassPanel::overlayToggled, this, [this](bool overlay) {
        if (m_graph->graph(1))
            m_graph->setMode(overlay ? GraphPane::Mode::Overlay : GraphPane::Mode::SideBySide);
    });

    QSettings settings;
    resize(1400, 900);
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    m_restoredState = restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    rebuildRecentMenu();
}

MainWindow::~MainWindow()
{
    // Destroyed without a close event (tests, a parent going away): background work still stops
    // now rather than running on to the end with nobody to see it.
    stopBackgroundJobs();
}

void MainWindow::stopBackgroundJobs()
{
    m_profile->cancel();
    if (m_cancelProbe)
        m_cancelProbe->store(true);
    if (m_cancelPipeline)
        m_cancelPipeline->store(true);
    if (m_cancelMemory)
        m_cancelMemory->store(true);
    m_layouts->cancelAll();
}

namespace {

// Values read from their start ("float32[batch,3,…", "25 static, 0 symbolic, …"): only the
// property column elides on the left.
// How a column's text elides: always `forced` where given (the value column: right), else as the
// model says (ModelSummaryModel::ElideModeRole: names already cut to what differs), else the view's
// own mode (the property column: left, scoped names differ in their last parts).
class ElideDelegate : public QStyledItemDelegate
{
public:
    ElideDelegate(std::optional<Qt::TextElideMode> forced, QObject *parent)
        : QStyledItemDelegate(parent), m_forced(forced)
    {
    }

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        if (m_forced)
            option->textElideMode = *m_forced;
        else if (const QVariant mode = index.data(ModelSummaryModel::ElideModeRole); mode.isValid())
            option->textElideMode = Qt::TextElideMode(mode.toInt());
    }

private:
    std::optional<Qt::TextElideMode> m_forced;
};
// The property column fits its content up to 55 % of the view, the value column has the rest:
// on a narrow dock (a small screen at 2x) values stay readable. Before the first show the view has
// no width yet: then a 240 px cap.
void fitPropertyColumn(QTreeView *tree)
{
    tree->resizeColumnToContents(0);
    const int width = tree->viewport()->width();
    const int cap = tree->isVisible() && width > 0 ? std::max(60, int(width * 0.55)) : 240;
    tree->setColumnWidth(0, std::min(tree->columnWidth(0), cap));
}

// Refits when the dock is resized.
class PropertyColumnFitter : public QObject
{
public:
    explicit PropertyColumnFitter(QTreeView *tree) : QObject(tree), m_tree(tree) {}
    bool eventFilter(QObject *, QEvent *event) override
    {
        if (event->type() == QEvent::Resize || event->type() == QEvent::Show)
            fitPropertyColumn(m_tree);
        return false;
    }

private:
    QTreeView *m_tree;
};

} // namespace

void MainWindow::buildDocks()
{
    auto *inspectorDock = new QDockWidget(tr("Inspector"), this);
    inspectorDock->setObjectName(QStringLiteral("inspector"));
    m_inspectorTabs = new QTabWidget(inspectorDock);
    // The property column fits its content up to 55 % of the view, so long initializer names
    // (tf2onnx: hundreds of characters) never push the values off screen. They elide on the left:
    // scoped names differ in their last parts (/encoder/layer.3/…/dense.weight), and elided in the
    // middle every layer's weight read the same ("/encoder/la…nse.weight").
    auto propertyTree = [this](QAbstractItemModel *model) {
        auto *tree = new QTreeView(m_inspectorTabs);
        tree->setModel(model);
        tree->setAlternatingRowColors(true);
        tree->setTextElideMode(Qt::ElideLeft);
        tree->setItemDelegateForColumn(0, new ElideDelegate(std::nullopt, tree));
        tree->setItemDelegateForColumn(1, new ElideDelegate(Qt::ElideRight, tree));
        tree->header()->setSectionResizeMode(0, QHeaderView::Interactive);
        connect(model, &QAbstractItemModel::modelReset, tree, [tree, model] {
            tree->expandAll();
            // Section titles ("Initializer: /backbone/conv1.conv.weight") across both columns:
            // in the property column alone they elided to "…r: /backbone/conv1.conv.weight".
            for (int row = 0; row < model->rowCount(); ++row)
                if (model->hasChildren(model->index(row, 0)) && model->index(row, 1).data().toString().isEmpty())
                    tree->setFirstColumnSpanned(row, QModelIndex(), true);
            fitPropertyColumn(tree);
        });
        tree->viewport()->installEventFilter(new PropertyColumnFitter(tree));
        return tree;
    };
    auto *selection = propertyTree(m_inspector);
    auto *summary = propertyTree(m_summary);
    m_inspectorTabs->addTab(selection, tr("Selection"));
    m_inspectorTabs->addTab(summary, tr("Model"));
    m_values = new ValuesPanel(m_inspectorTabs);
    connect(m_values, &ValuesPanel::probeRequested, this, &MainWindow::probeInspectedNode);
    m_inspectorTabs->addTab(m_values, tr("Values"));
    inspectorDock->setWidget(m_inspectorTabs);
    addDockWidget(Qt::RightDockWidgetArea, inspectorDock);

    auto *timelineDock = new QDockWidget(tr("Timeline"), this);
    timelineDock->setObjectName(QStringLiteral("timeline"));
    timelineDock->setWidget(m_profile);
    addDockWidget(Qt::BottomDockWidgetArea, timelineDock);
    timelineDock->hide(); // until there is something to show: a profile, or an opened trace
    connect(m_profile, &ProfilePanel::started, timelineDock, &QWidget::show);
    m_timelineDock = timelineDock;

    auto *memoryDock = new QDockWidget(tr("Memory"), this);
    memoryDock->setObjectName(QStringLiteral("memory"));
    m_memory = new MemoryPanel(memoryDock);
    memoryDock->setWidget(m_memory);
    addDockWidget(Qt::BottomDockWidgetArea, memoryDock);
    tabifyDockWidget(timelineDock, memoryDock);
    memoryDock->hide(); // until a plan is asked for
    connect(m_memory, &MemoryPanel::nodeActivated, this, &MainWindow::selectNode);
    connect(m_memory, &MemoryPanel::planRequested, this, &MainWindow::planMemoryOnScreen);
    m_memoryDock = memoryDock;

    auto *passDock = new QDockWidget(tr("Passes"), this);
    passDock->setObjectName(QStringLiteral("passes"));
    passDock->setWidget(m_passes);
    addDockWidget(Qt::LeftDockWidgetArea, passDock);
    m_passDock = passDock;
    m_inspectorDock = inspectorDock;
}

void MainWindow::showEvent(QShowEvent *event)
{
    QMainWindow::showEvent(event);
    if (m_docksSized)
        return;
    m_docksSized = true;
    if (m_restoredState)
        return; // the user's own layout
    // The graph gets most of the window at any size and scale (a 13" laptop at 200 % is 1280
    // logical pixels wide): docks take a share of the width, within bounds, not fixed pixels.
    const int w = width(), h = height();
    resizeDocks({m_passDock, m_inspectorDock}, {std::clamp(w * 27 / 100, 240, 440), std::clamp(w * 25 / 100, 220, 400)},
                Qt::Horizontal);
    resizeDocks({m_timelineDock}, {std::clamp(h * 28 / 100, 140, 300)}, Qt::Vertical);
}

void MainWindow::buildMenus()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open ONNX model"), {},
                                                          tr("ONNX models (*.onnx);;All files (*)"));
        if (!path.isEmpty())
            openFile(path);
    });
    m_recentMenu = file->addMenu(tr("Open &recent"));
    QMenu *samples = file->addMenu(tr("Open &sample"));
    for (const char *name : {"inception_block.onnx", "transformer_block.onnx"})
        samples->addAction(QString::fromLatin1(name), this,
                           [this, name] { openBundledSample(QString::fromLatin1(name)); });
    file->addAction(tr("&Compare with…"), this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Compare with model"), {}, tr("ONNX models (*.onnx)"));
        if (!path.isEmpty())
            compareWith(path);
    });
    file->addSeparator();
    file->addAction(tr("&Save model at this step…"), QKeySequence::Save, this, &MainWindow::saveAtStep);
    file->addAction(tr("&Export graph as SVG/PNG…"), this, &MainWindow::exportGraph);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    // Ctrl+0 fits what has the focus: the timeline when it does, else the graph.
    view->addAction(tr("&Fit"), QKeySequence(Qt::CTRL | Qt::Key_0), this, [this] {
        TimelineView *timeline = m_profile->timeline();
        if (QWidget *f = QApplication::focusWidget(); f && (f == timeline || timeline->isAncestorOf(f)))
            timeline->fit();
        else
            m_graph->fit();
    });
    view->addAction(tr("Zoom &in"), QKeySequence(Qt::Key_Plus), m_graph, &GraphPane::zoomIn);
    view->addAction(tr("Zoom &out"), QKeySequence(Qt::Key_Minus), m_graph, &GraphPane::zoomOut);
    new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Equal), this, [this] { m_graph->zoomIn(); });
    QAction *labels = view->addAction(tr("Tensor &labels on edges"));
    labels->setCheckable(true);
    labels->setChecked(true);
    connect(labels, &QAction::toggled, m_graph, &GraphPane::setShowEdgeLabels);
    // The overlays fade over nodes; they can be hidden too, and stay as the user left them.
    auto overlayToggle = [this, view](const QString &text, const QString &key, void (GraphPane::*show)(bool)) {
        QAction *a = view->addAction(text);
        a->setCheckable(true);
        const bool on = QSettings().value(key, true).toBool();
        a->setChecked(on);
        (m_graph->*show)(on);
        connect(a, &QAction::toggled, this, [this, key, show](bool checked) {
            QSettings().setValue(key, checked);
            (m_graph->*show)(checked);
        });
    };
    overlayToggle(tr("Colour &legend"), QStringLiteral("view/legend"), &GraphPane::setShowLegend);
    overlayToggle(tr("&Minimap"), QStringLiteral("view/minimap"), &GraphPane::setShowMinimap);

    QAction *heat = view->addAction(tr("Colour nodes by measured &time"));
    heat->setCheckable(true);
    m_bytesHeatAction = view->addAction(tr("Colour nodes by planned &bytes"));
    m_bytesHeatAction->setCheckable(true);
    m_bytesHeatAction->setToolTip(tr("The bytes each node's outputs take in the last memory plan (Profile ▸ Plan memory)"));
    // One overlay at a time: each toggle turns the other off.
    connect(heat, &QAction::toggled, this, [this](bool on) {
        m_heat = on;
        if (on)
            m_bytesHeatAction->setChecked(false);
        m_graph->scene(0)->applyHeat(on ? m_profile->timePerNode() : std::map<std::string, double>{});
    });
    connect(m_bytesHeatAction, &QAction::toggled, this, [this, heat](bool on) {
        if (on) {
            heat->setChecked(false);
            if (!m_memory->plan())
                planMemoryOnScreen(); // applied when it is done
        }
        applyBytesHeat();
    });

    QMenu *profile = menuBar()->addMenu(tr("P&rofile"));
    profile->addAction(tr("&Profile…"), QKeySequence(Qt::CTRL | Qt::Key_P), m_profile,
                       &ProfilePanel::showProfileDialog);
    profile->addAction(tr("&Open trace…"), this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Open trace"), {}, tr("Chrome traces (*.json)"));
        if (path.isEmpty())
            return;
        if (Status s = openTrace(path); !s)
            showError(tr("Cannot open trace"), QString::fromStdString(s.message()));
    });
    profile->addAction(m_timelineDock->toggleViewAction());
    m_planMemory = profile->addAction(tr("Plan &memory"), QKeySequence(Qt::CTRL | Qt::Key_M), this,
                                      &MainWindow::planMemoryOnScreen);
    profile->addAction(m_memoryDock->toggleViewAction());
    profile->addAction(tr("P&artition for devices…"), this, [this] {
        bool ok = false;
        const int n =
            QInputDialog::getInt(this, tr("Partition for devices"), tr("CPU devices"), 2, 2, 64, 1, &ok);
        if (ok)
            partitionForDevices(n);
    });

    QMenu *passes = menuBar()->addMenu(tr("&Passes"));
    passes->addAction(tr("&Run pipeline"), QKeySequence(Qt::Key_F5), this, &MainWindow::runPipeline);
    passes->addAction(tr("&Next pass"), QKeySequence(Qt::Key_PageDown), this, &MainWindow::stepNext);
    passes->addAction(tr("&Previous pass"), QKeySequence(Qt::Key_PageUp), this, &MainWindow::stepPrevious);
    passes->addAction(tr("Original vs &final"), this, [this] { showStep(-1); });

    QToolBar *bar = addToolBar(tr("Search"));
    bar->setObjectName(QStringLiteral("search"));
    m_search = new QLineEdit(bar);
    m_search->setPlaceholderText(tr("Find node, op or tensor (Ctrl+F)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(320);
    m_searchStatus = new QLabel(bar);
    bar->addWidget(m_search);
    auto showPosition = [this] {
        m_searchStatus->setText(m_graph->currentHit() < 0
                                    ? QString()
                                    : tr(" %1 of %2").arg(m_graph->currentHit() + 1).arg(m_hits));
    };
    bar->addAction(tr("◂"), this, [this, showPosition] {
        m_graph->findPrevious();
        showPosition();
    });
    bar->addAction(tr("▸"), this, [this, showPosition] {
        m_graph->findNext();
        showPosition();
    });
    bar->addWidget(m_searchStatus);
    new QShortcut(QKeySequence::Find, this, [this] {
        m_search->setFocus();
        m_search->selectAll();
    });
    connect(m_search, &QLineEdit::returnPressed, this, [this, showPosition] {
        if (m_search->text() == m_lastQuery && m_hits > 0) {
            m_graph->findNext();
        } else {
            m_lastQuery = m_search->text();
            m_hits = m_graph->find(m_lastQuery);
        }
        if (m_hits == 0 && !m_lastQuery.isEmpty())
            m_searchStatus->setText(tr(" not found"));
        else
            showPosition();
    });
    new QShortcut(QKeySequence::FindNext, this, [this, showPosition] {
        m_graph->findNext();
        showPosition();
    });
    new QShortcut(QKeySequence::FindPrevious, this, [this, showPosition] {
        m_graph->findPrevious();
        showPosition();
    });
}

bool MainWindow::isBusy() const
{
    return m_loading > 0 || m_optimizing || m_graph->layoutPending() || m_profile->isRunning() || m_cancelProbe ||
           m_cancelMemory;
}

QString MainWindow::statusText() const
{
    return m_statusText->text();
}

void MainWindow::setBusy(const QString &what, bool cancellable)
{
    m_busyText = what;
    m_statusText->setText(what);
    m_progress->show();
    m_cancel->setVisible(cancellable);
}

void MainWindow::updateBusy()
{
    if (isBusy())
        return;
    m_progress->hide();
    m_cancel->hide();
    // Whatever ended without saying how (a layout answered from the cache, a cancelled profile)
    // leaves no "Loading…" or "Profiling…" behind.
    if (m_statusText->text() == m_busyText)
        m_statusText->setText(tr("Ready"));
    emit idle();
}

void MainWindow::cancelWork()
{
    if (isBusy())
        m_statusText->setText(tr("Cancelled"));
    if (m_loading) {
        ++m_generation; // the load still finishes in the background; its result is dropped
        m_loading = 0;
        m_statusText->setText(tr("Loading cancelled"));
    }
    stopBackgroundJobs();
    updateBusy();
}

void MainWindow::showError(const QString &title, const QString &message)
{
    m_lastError = message;
    auto *box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open(); // not exec(): the window stays responsive (and tests can continue)
}

void MainWindow::openFile(const QString &path)
{
    loadAsync(path, fileLoader(path), false);
}

Status MainWindow::openTrace(const QString &path)
{
    OPSCOPE_TRY(m_profile->openTrace(path));
    m_timelineDock->show();
    return Status::ok();
}

void MainWindow::openBundledSample(const QString &fileName)
{
    QFile f(QStringLiteral(":/models/") + fileName);
    if (!f.open(QIODevice::ReadOnly)) {
        showError(tr("Cannot open sample"), tr("The bundled sample %1 is missing").arg(fileName));
        return;
    }
    const QByteArray bytes = f.readAll();
    loadAsync(
        QStringLiteral("sample: ") + fileName,
        [bytes]() -> Expected<std::shared_ptr<Model>> {
            return named(loadModelFromBytes(
                std::span(reinterpret_cast<const std::byte *>(bytes.constData()), std::size_t(bytes.size())),
                {}));
        },
        false);
}

void MainWindow::compareWith(const QString &path)
{
    if (!m_model)
        openFile(path);
    else
        loadAsync(path, fileLoader(path), true);
}

void MainWindow::loadAsync(const QString &source, std::function<Expected<std::shared_ptr<Model>>()> load,
                           bool compare)
{
    const int generation = ++m_generation;
    ++m_loading;
    setBusy(tr("Loading %1…").arg(source), true);
    auto *watcher = new QFutureWatcher<Expected<std::shared_ptr<Model>>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation, source, compare] {
        watcher->deleteLater();
        if (generation != m_generation)
            return; // cancelled or superseded
        m_loading = std::max(0, m_loading - 1);
        Expected<std::shared_ptr<Model>> r = watcher->result();
        if (!r) {
            const QString message = QString::fromStdString(r.status().message());
            m_statusText->setText(tr("Could not open %1").arg(source));
            showError(tr("Cannot open %1").arg(source), message);
            emit loadFailed(message);
            updateBusy();
            return;
        }
        if (compare) {
            m_step = -2;
            // Another file, often the same model optimized elsewhere: nodes renamed by an export
            // are matched by tensor identity, as in original vs final.
            m_graph->showComparison(m_model, &m_model->graph, *r, &(*r)->graph,
                                    m_passes->overlay() ? GraphPane::Mode::Overlay : GraphPane::Mode::SideBySide,
                                    matchRenamedNodes(m_model->graph, (*r)->graph), true);
            m_graph->setTitles(QFileInfo(m_source).fileName(), QFileInfo(source).fileName());
            m_diffSummary = diffSummary(tr("Comparing with %1").arg(source));
            m_statusText->setText(m_diffSummary);
            emit modelLoaded(source);
        } else {
            setModel(*r, source);
        }
        updateBusy();
    });
    watcher->setFuture(QtConcurrent::run(std::move(load)));
}

void MainWindow::setModel(std::shared_ptr<Model> model, const QString &source)
{
    m_model = std::move(model);
    m_source = source;
    m_result.reset();
    m_step = -2;
    m_diffSummary.clear();
    m_passes->model()->clearResult();
    m_passes->setStepEnabled(false, false);
    m_passes->setStatus({});
    m_graph->showGraph(m_model, &m_model->graph);
    m_summary->setSummary(summarizeModel(*m_model, 10));
    m_inspector->clear();
    m_inspectorTabs->setCurrentIndex(1);
    setWindowTitle(QStringLiteral("%1 — opscope").arg(QFileInfo(source).fileName()));
    if (QFileInfo::exists(source))
        addRecent(source);
    emit modelLoaded(source);
}

bool MainWindow::selectNode(const QString &name)
{
    std::string key = m_graph->visibleKeyFor(name.toStdString());
    // A closed group by its scope ("/encoder/layer.0/attention"), as the breadcrumbs name it.
    if (!m_graph->scene(0)->itemForKey(key) && m_graph->scene(0)->itemForKey("group:" + name.toStdString()))
        key = "group:" + name.toStdString();
    for (int side = 0; side < 2; ++side)
        if (auto *item = m_graph->scene(side)->itemForKey(key)) {
            m_graph->scene(side)->clearSelection();
            item->setSelected(true);
            m_graph->view(side)->centerOnItem(item);
            return true;
        }
    return false;
}

void MainWindow::inspectNode(const Model &model, const Graph &graph, NodeId node)
{
    std::vector<PropertySection> sections = opscope::inspectNode(model, graph, node);
    for (ValueId v : graph.node(node).inputs) {
        if (!v.valid() || !graph.value(v).initializer || graph.value(v).isGraphInput)
            continue;
        if (graph.value(v).initializer->elementCount() > kStatsLimit)
            continue;
        for (PropertySection &s : inspectInitializer(graph, v)) {
            s.title += ": " + graph.value(v).name;
            sections.push_back(std::move(s));
        }
    }
    m_inspector->setSections(std::move(sections));
    if (&graph == m_inspectedGraph && node == m_inspectedNode)
        showNodeValues();
    else
        m_values->setTensors(constantInputs(graph, node));
    if (m_inspectorTabs->currentWidget() != m_values)
        m_inspectorTabs->setCurrentIndex(0);
}

void MainWindow::showValuesTab()
{
    m_inspectorTabs->setCurrentWidget(m_values);
}

void MainWindow::inspectTensor(int, const Graph *graph, const QString &tensor)
{
    const ValueId v = graph ? graph->findValue(tensor.toStdString()) : ValueId();
    if (!v.valid())
        return;
    m_inspector->setSections(opscope::inspectTensor(*graph, v));
    std::vector<Tensor> values;
    if (std::optional<Tensor> t = constantValue(*graph, v))
        values.push_back(std::move(*t));
    m_values->setTensors(std::move(values));
    if (m_inspectorTabs->currentWidget() != m_values)
        m_inspectorTabs->setCurrentIndex(0);
}

void MainWindow::exportGraph()
{
    const QFileInfo source(m_source);
    const QString suggested = m_source.isEmpty() || m_source.startsWith(QLatin1Char(':'))
                                  ? QStringLiteral("graph.svg")
                                  : source.dir().filePath(source.completeBaseName() + QStringLiteral(".svg"));
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export graph"), suggested, tr("SVG (*.svg);;PNG (*.png)"));
    if (path.isEmpty())
        return;
    const bool ok = path.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive) ? m_graph->exportPng(path)
                                                                               : m_graph->exportSvg(path);
    if (!ok)
        showError(tr("Cannot export"), tr("Writing %1 failed").arg(path));
}

void MainWindow::addRecent(const QString &path)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString &path : recent)
        m_recentMenu->addAction(path, this, [this, path] { openFile(path); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    cancelWork();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    event->accept();
}

namespace {

// The first local file among dropped URLs (a browser's https:// link has nothing to map).
QString firstLocalFile(const QMimeData *data)
{
    for (const QUrl &url : data->urls())
        if (url.isLocalFile())
            return url.toLocalFile();
    return {};
}

} // namespace

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    if (!firstLocalFile(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event)
{
    const QString path = firstLocalFile(event->mimeData());
    if (!path.isEmpty()) {
        event->acceptProposedAction();
        openFile(path);
    }
}

} // namespace opscope
