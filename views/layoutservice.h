#pragma once
// Lays graphs out without ever hanging the app. Graphviz dot runs in a helper process
// (opscope-layout), because gvLayout cannot be interrupted in-process; the service kills it when
//  - it runs past its time budget: the request is answered with opscope's own layered layout
//    (core/layout/layered), and the answer's note says so for the status bar;
//  - the user cancels: the same quick layout, at once;
//  - the service is destroyed (the window closes): nothing keeps burning CPU after quitting.
// A request superseded by a newer one keeps running (at most one such) and its result is cached,
// not thrown away: stepping back to a pass shows its layout at once. The cache is keyed by the
// request's content, so it survives the graphs being rebuilt.

#include "layout/graphlayout.h"

#include <QHash>
#include <QObject>
#include <QSharedPointer>
#include <QString>
#include <list>
#include <memory>

class QProcess;
class QTimer;

namespace opscope {

class LayoutService : public QObject
{
    Q_OBJECT
public:
    explicit LayoutService(QObject *parent = nullptr);
    ~LayoutService() override;

    // Returns the ticket `finished` will carry. Each client's latest request is answered; an
    // older one of the same client is superseded (cached when it finishes, never delivered).
    quint64 request(const QObject *client, layout::LayoutRequest request);
    // Every client's latest request is answered now with the quick layout; dot processes end.
    void cancelAll();

    // A finished layout of exactly this request, or null; `note` gets its note (one digest of the
    // request for both).
    QSharedPointer<const layout::LayoutResult> cached(const layout::LayoutRequest &request,
                                                      QString *note = nullptr) const;

    // How long dot may take before the quick layout is shown (OPSCOPE_LAYOUT_BUDGET_MS overrides
    // the default of 4 s).
    void setBudgetMs(int ms) { m_budgetMs = ms; }
    int budgetMs() const { return m_budgetMs; }
    // The helper executable: OPSCOPE_LAYOUT_HELPER, else next to the app, else the installed
    // libexec/opscope/opscope-layout.
    void setHelperPath(const QString &path) { m_helper = path; }
    QString helperPath() const { return m_helper; }
    // Helper processes alive now (the latest and at most one superseded).
    int runningHelpers() const;

    // How many items a view should lay out at once for dot to answer in about kTargetLayoutMs on
    // this machine: learnt from the layouts dot finished, and cut when one ran past the budget.
    // A fixed count is too many on a slow laptop and too few on a workstation.
    static constexpr double kTargetLayoutMs = 600.0;
    std::size_t itemBudget() const;
    void recordLayout(std::size_t items, double ms, bool finished);

signals:
    // `note` is empty when dot laid the graph out; otherwise it says why the quick layout is shown.
    void finished(quint64 ticket, QSharedPointer<const layout::LayoutResult> result, const QString &error,
                  double milliseconds, const QString &note);

private:
    struct Job;
    struct CacheEntry
    {
        QSharedPointer<const layout::LayoutResult> result;
        QString note;
        std::size_t bytes = 0;
    };

    bool isLatest(const Job &job) const;
    void start(const std::shared_ptr<Job> &job);
    void onHelperDone(const std::shared_ptr<Job> &job);
    void fallBack(const std::shared_ptr<Job> &job, const QString &why);
    void store(quint64 digest, QSharedPointer<const layout::LayoutResult> result, const QString &note);
    void end(const std::shared_ptr<Job> &job);
    void trimSuperseded();

    QString m_helper;
    int m_budgetMs = 4000;
    double m_msPerItem = 2.4; // a 2-core VM's dot: 250 items in about 600 ms
    quint64 m_next = 0;
    QHash<const QObject *, quint64> m_latest; // per client
    std::list<std::shared_ptr<Job>> m_jobs; // oldest first
    QHash<quint64, CacheEntry> m_cache;
    std::list<quint64> m_lru; // least recently used first
    std::size_t m_cacheBytes = 0;
};

} // namespace opscope
