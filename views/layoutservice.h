#pragma once
// Runs Graphviz layouts on one worker thread (Graphviz is not thread-safe), so the window never
// waits for dot. A newer request supersedes queued older ones: they are skipped, not run
// (gvLayout itself cannot be interrupted; a superseded result that was already running is dropped).

#include "layout/graphlayout.h"

#include <QObject>
#include <QSharedPointer>
#include <QThread>
#include <atomic>

namespace opscope {

class LayoutWorker;

class LayoutService : public QObject
{
    Q_OBJECT
public:
    explicit LayoutService(QObject *parent = nullptr);
    ~LayoutService() override;

    // Returns the ticket `finished` will carry.
    quint64 request(layout::LayoutRequest request);
    // Drops every pending request (their results are never delivered).
    void cancelAll();
    quint64 latestTicket() const { return m_latest.load(); }

signals:
    void finished(quint64 ticket, QSharedPointer<const layout::LayoutResult> result, const QString &error,
                  double milliseconds);

private:
    QThread m_thread;
    LayoutWorker *m_worker = nullptr;
    std::atomic<quint64> m_latest{0};
    std::atomic<quint64> m_next{0};
};

} // namespace opscope
