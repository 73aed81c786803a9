#include "layoutservice.h"

#include <QElapsedTimer>
#include <QMetaObject>

namespace opscope {

class LayoutWorker : public QObject
{
    Q_OBJECT
public:
    explicit LayoutWorker(const std::atomic<quint64> &latest) : m_latest(latest) {}

    void run(quint64 ticket, const layout::LayoutRequest &request)
    {
        if (ticket < m_latest.load())
            return; // superseded while queued
        QElapsedTimer timer;
        timer.start();
        Expected<layout::LayoutResult> r = layout::layoutWithGraphviz(request);
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        if (ticket < m_latest.load())
            return;
        if (r)
            emit finished(ticket, QSharedPointer<const layout::LayoutResult>::create(std::move(*r)),
                          QString(), ms);
        else
            emit finished(ticket, {}, QString::fromStdString(r.status().message()), ms);
    }

signals:
    void finished(quint64 ticket, QSharedPointer<const layout::LayoutResult> result, const QString &error,
                  double milliseconds);

private:
    const std::atomic<quint64> &m_latest;
};

LayoutService::LayoutService(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<QSharedPointer<const layout::LayoutResult>>();
    m_worker = new LayoutWorker(m_latest);
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &LayoutWorker::finished, this, &LayoutService::finished, Qt::QueuedConnection);
    m_thread.setObjectName(QStringLiteral("graphviz layout"));
    m_thread.start();
}

LayoutService::~LayoutService()
{
    cancelAll();
    m_thread.quit();
    m_thread.wait(); // a running dot layout finishes first (it cannot be interrupted)
}

quint64 LayoutService::request(layout::LayoutRequest request)
{
    const quint64 ticket = ++m_next;
    m_latest = ticket;
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, ticket, r = std::move(request)] { w->run(ticket, r); },
        Qt::QueuedConnection);
    return ticket;
}

void LayoutService::cancelAll()
{
    m_latest = ++m_next;
}

} // namespace opscope

#include "layoutservice.moc"
