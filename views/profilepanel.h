#pragma once
// The timeline dock: profiling sessions (schedules, device count, iterations) run in the
// background with progress and Cancel; every run is kept in the session and shown stacked on one
// time axis (compare mode) with its makespan and per-device utilization, per-op totals beside it;
// runs save as, and load from, Chrome trace JSON.

#include "ir/model.h"
#include "schedule/profiler.h"

#include <QWidget>
#include <atomic>
#include <memory>

class QLabel;
class QPushButton;
class QTableView;

namespace opscope {

class OpTotalsModel;
class TimelineView;

class ProfilePanel : public QWidget
{
    Q_OBJECT
public:
    explicit ProfilePanel(QWidget *parent = nullptr);
    ~ProfilePanel() override; // cancels a running session

    TimelineView *timeline() const { return m_timeline; }
    OpTotalsModel *totals() const { return m_totals; }
    bool isRunning() const { return m_running; }
    const std::vector<schedule::ProfileRun> &runs() const { return m_runs; }

    // Profiles `model` (optimized at level extended first, as `opscope-cli profile` does).
    void profile(std::shared_ptr<const Model> model, const schedule::ProfileOptions &options);
    // Asks for schedules, devices and iterations, then profiles `currentModel()`.
    void showProfileDialog();
    void cancel();
    void addRun(schedule::ProfileRun run);
    void clearRuns();
    Status openTrace(const QString &path);
    Status saveTrace(const QString &path) const;
    // Node name → seconds summed over the last run: the graph's heat overlay. Names are those of the
    // model as given: a fused op's time is shared among the nodes it replaced.
    std::map<std::string, double> timePerNode() const;
    QTableView *totalsView() const { return m_table; } // for tests

signals:
    void started();
    void progress(const QString &text);
    void finished(const QString &error); // empty on success
    void spanClicked(const QString &node);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void showRuns();
    void fitTotals();

    TimelineView *m_timeline;
    OpTotalsModel *m_totals;
    QTableView *m_table;
    QLabel *m_status;
    std::vector<schedule::ProfileRun> m_runs;
    std::map<std::string, std::vector<std::string>> m_origins; // of the last profiled model's fused nodes
    std::shared_ptr<std::atomic<bool>> m_cancel;
    bool m_running = false;

public:
    std::function<std::shared_ptr<const Model>()> currentModel; // what "Profile…" profiles
    std::function<QString()> currentSource;                       // its file, for the save dialog's name
    // "Save trace" proposes the trace last opened or saved, else model.trace.json beside the model.
    QString suggestedTraceName() const;

private:
    QString m_tracePath;
};

} // namespace opscope
