#pragma once
// The opscope desktop window: graph panel in the centre; inspector and passes as docks. Loading,
// optimizing and layout run off the GUI thread with progress and Cancel; errors from core are
// shown as they come, nothing crashes.

#include "ir/model.h"
#include "passes/pipeline.h"

#include <QMainWindow>
#include <QPointer>
#include <atomic>
#include <map>
#include <memory>

class QDockWidget;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTreeView;

namespace opscope {

class GraphPane;
class InspectorModel;
class LayoutService;
class MemoryPanel;
class ValuesPanel;
class ModelSummaryModel;
class PassPanel;
class ProfilePanel;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    void openFile(const QString &path);
    void openBundledSample(const QString &fileName = QStringLiteral("inception_block.onnx"));
    // A Chrome trace (a saved session, `profile --trace`, another tool's) in the timeline.
    Status openTrace(const QString &path);
    void compareWith(const QString &path);
    void runPipeline();
    // The graph placed on `devices` CPU devices with Send/Recv, shown as a pass step.
    void partitionForDevices(int devices);
    void cancelWork();
    // Shows pass `record` of the last run (BEFORE | AFTER); -1: original vs final.
    void showStep(int record);
    void stepNext();
    void stepPrevious();
    void nextMatch();
    void previousMatch();

    // For tests and --screenshot.
    GraphPane *graphPane() const { return m_graph; }
    LayoutService *layoutService() const { return m_layouts; }
    PassPanel *passPanel() const { return m_passes; }
    ProfilePanel *profilePanel() const { return m_profile; }
    InspectorModel *inspector() const { return m_inspector; }
    ValuesPanel *valuesPanel() const { return m_values; }
    MemoryPanel *memoryPanel() const { return m_memory; }
    QAction *planMemoryAction() const { return m_planMemory; }
    void showValuesTab();
    bool isBusy() const;
    const passes::PipelineResult *pipelineResult() const { return m_result.get(); }
    int currentStep() const { return m_step; }
    std::vector<int> changingSteps() const; // records of the last run whose pass changed the graph
    const QString &lastError() const { return m_lastError; }
    QString statusText() const;
    std::shared_ptr<const Model> model() const { return m_model; }
    bool selectNode(const QString &name); // false: no such node on screen
    // What "Save model at this step" writes: the step's model, lowered for the export target
    // (onnx, ort); with target none, `opscopeOnly` lists the ops only opscope runs.
    Expected<std::shared_ptr<const Model>> exportableModel(QStringList *opscopeOnly = nullptr) const;
    QString suggestedSaveName() const;
    // "WHAT: 3 removed, 2 added, 1 modified" for the diff on screen: a comparison's or a step's.
    QString diffSummary(const QString &what) const;

signals:
    void modelLoaded(const QString &source);
    void loadFailed(const QString &message);
    void pipelineFinished();
    void idle(); // nothing loading, optimizing or laying out

protected:
    void closeEvent(QCloseEvent *event) override;
    void showEvent(QShowEvent *event) override; // first show: docks sized to the window
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void buildMenus();
    void runPasses(std::vector<std::string> list, passes::PassOptions options);
    void buildDocks();
    void loadAsync(const QString &source, std::function<Expected<std::shared_ptr<Model>>()> load,
                   bool compare);
    void setModel(std::shared_ptr<Model> model, const QString &source);
    void showError(const QString &title, const QString &message);
    void setBusy(const QString &what, bool cancellable);
    void stopBackgroundJobs(); // profile, probe, pipeline and layouts: each told to stop
    void updateBusy();
    void addRecent(const QString &path);
    void rebuildRecentMenu();
    void saveAtStep();
    void exportGraph();
    void inspectNode(const Model &model, const Graph &graph, NodeId node);
    // Values tab of the inspected node: its constants, and its activations when a run computed them.
    void showNodeValues();
    void probeInspectedNode(); // one run in the background keeping the node's inputs and outputs
    void planMemoryOnScreen(); // the Memory dock: the plan of the model (or pass step) shown
    void applyBytesHeat();     // View ▸ Colour nodes by planned bytes, on the side showing the planned model
    void inspectTensor(int side, const Graph *graph, const QString &tensor);
    std::shared_ptr<const Model> modelBefore(int record) const;
    std::shared_ptr<const Model> modelAfter(int record) const;

    LayoutService *m_layouts;
    GraphPane *m_graph;
    PassPanel *m_passes;
    ProfilePanel *m_profile;
    InspectorModel *m_inspector;
    ModelSummaryModel *m_summary;
    QTabWidget *m_inspectorTabs = nullptr;
    ValuesPanel *m_values = nullptr;
    std::shared_ptr<const Model> m_inspectedModel; // what the selected node belongs to
    const Graph *m_inspectedGraph = nullptr;
    NodeId m_inspectedNode;
    // Activations of the last probe runs (value name → tensor) of m_activationsModel; another
    // model (a new file, a pass step) starts afresh.
    std::shared_ptr<const Model> m_activationsModel;
    std::map<std::string, Tensor> m_activations;
    std::map<std::string, std::int64_t> m_activationDims; // the symbolic dims those runs used
    std::shared_ptr<std::atomic<bool>> m_cancelProbe; // set while a probe runs
    QString m_probeNote;
    QDockWidget *m_timelineDock = nullptr;
    QDockWidget *m_memoryDock = nullptr;
    MemoryPanel *m_memory = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancelMemory; // set while a memory plan is made
    QLineEdit *m_search = nullptr;
    QLabel *m_searchStatus = nullptr;
    QProgressBar *m_progress = nullptr;
    QPushButton *m_cancel = nullptr;
    QLabel *m_statusText = nullptr;
    QDockWidget *m_passDock = nullptr, *m_inspectorDock = nullptr;
    bool m_docksSized = false, m_restoredState = false;
    QString m_busyText; // what setBusy showed: replaced when the work ends, never left stale
    QMenu *m_recentMenu = nullptr;
    QAction *m_planMemory = nullptr;
    QAction *m_bytesHeatAction = nullptr;

    std::shared_ptr<const Model> m_model;
    QString m_source;
    std::shared_ptr<passes::PipelineResult> m_result;
    int m_step = -2; // -2: no comparison shown
    QString m_diffSummary; // "Comparing with F: …" or a pass step's counts while shown, else empty
    int m_match = -1;
    std::shared_ptr<std::atomic<bool>> m_cancelPipeline;
    int m_loading = 0;
    int m_generation = 0; // a newer open supersedes an older one still loading
    bool m_optimizing = false;
    bool m_heat = false; // graph nodes shaded by the last profiled run
    QString m_lastError;
    QString m_lastQuery;
    int m_hits = 0;
};

} // namespace opscope
