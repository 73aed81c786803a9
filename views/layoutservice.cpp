#include "layoutservice.h"

#include "layout/layered.h"
#include "layout/layoutio.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QProcess>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace opscope {

namespace {

constexpr std::size_t kCacheBytes = std::size_t(128) << 20;

QString findHelper()
{
    const QString env = qEnvironmentVariable("OPSCOPE_LAYOUT_HELPER");
    if (!env.isEmpty())
        return env;
    const QString dir = QCoreApplication::applicationDirPath();
    for (const QString &candidate : {dir + QStringLiteral("/opscope-layout"),
                                     dir + QStringLiteral("/../libexec/opscope/opscope-layout")})
        if (QFileInfo(candidate).isExecutable())
            return QFileInfo(candidate).canonicalFilePath();
    return {};
}

std::size_t footprint(const layout::LayoutResult &r)
{
    std::size_t points = r.centers.size();
    for (const auto &path : r.edges)
        points += path.size() + 2; // + the vector itself
    return points * sizeof(layout::Point) + 64;
}

} // namespace

struct LayoutService::Job
{
    const QObject *client = nullptr;
    quint64 ticket = 0;
    quint64 digest = 0;
    layout::LayoutRequest request;
    QProcess *process = nullptr;
    QTimer *deadline = nullptr;
    QElapsedTimer clock;
    QByteArray out;
    bool done = false; // answered, or handed to the quick layout
};

LayoutService::LayoutService(QObject *parent) : QObject(parent), m_helper(findHelper())
{
    qRegisterMetaType<QSharedPointer<const layout::LayoutResult>>();
    bool ok = false;
    const int budget = qEnvironmentVariableIntValue("OPSCOPE_LAYOUT_BUDGET_MS", &ok);
    if (ok && budget > 0)
        m_budgetMs = budget;
}

LayoutService::~LayoutService()
{
    // Quitting ends every helper: nothing of a layout outlives the window.
    while (!m_jobs.empty())
        end(m_jobs.front());
}

bool LayoutService::isLatest(const Job &job) const
{
    return m_latest.value(job.client) == job.ticket;
}

quint64 LayoutService::request(const QObject *client, layout::LayoutRequest request)
{
    const quint64 ticket = ++m_next;
    m_latest[client] = ticket;
    const quint64 digest = layout::requestDigest(request);
    if (const auto it = m_cache.constFind(digest); it != m_cache.constEnd()) {
        m_lru.remove(digest);
        m_lru.push_back(digest);
        QTimer::singleShot(0, this, [this, client, ticket, entry = *it] {
            if (m_latest.value(client) == ticket)
                emit finished(ticket, entry.result, QString(), 0.0, entry.note);
        });
        trimSuperseded();
        return ticket;
    }
    // The same layout already running (stepping back and forth quickly): answer this ticket with it.
    for (const auto &job : m_jobs)
        if (job->digest == digest && job->client == client && !job->done) {
            job->ticket = ticket;
            trimSuperseded();
            return ticket;
        }
    auto job = std::make_shared<Job>();
    job->client = client;
    job->ticket = ticket;
    job->digest = digest;
    job->request = std::move(request);
    m_jobs.push_back(job);
    trimSuperseded();
    start(job);
    return ticket;
}

void LayoutService::start(const std::shared_ptr<Job> &job)
{
    job->clock.start();
    if (m_helper.isEmpty()) {
        fallBack(job, tr("The layout helper opscope-layout was not found next to the app or in "
                         "../libexec/opscope"));
        return;
    }
    job->process = new QProcess(this);
    job->process->setProgram(m_helper);
    connect(job->process, &QProcess::readyReadStandardOutput, this,
            [job] { job->out += job->process->readAllStandardOutput(); });
    connect(job->process, &QProcess::finished, this, [this, job] { onHelperDone(job); });
    connect(job->process, &QProcess::errorOccurred, this, [this, job](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart && !job->done)
            fallBack(job, tr("The layout helper %1 could not start (%2)")
                              .arg(m_helper, job->process->errorString()));
    });
    job->deadline = new QTimer(this);
    job->deadline->setSingleShot(true);
    connect(job->deadline, &QTimer::timeout, this, [this, job] {
        if (job->done)
            return;
        if (!isLatest(*job)) {
            end(job); // superseded and out of time: nobody waits for it
            return;
        }
        recordLayout(job->request.nodes.size(), m_budgetMs, false);
        fallBack(job, tr("Graphviz dot did not finish within %1 s").arg(m_budgetMs / 1000.0, 0, 'g', 3));
    });
    job->deadline->start(m_budgetMs);
    job->process->start(QIODevice::ReadWrite);
    if (!job->process)
        return; // failed to start: already answered with the quick layout
    const std::string bytes = layout::encodeRequest(job->request);
    job->process->write(bytes.data(), qint64(bytes.size()));
    job->process->closeWriteChannel();
}

void LayoutService::onHelperDone(const std::shared_ptr<Job> &job)
{
    if (job->done)
        return;
    job->out += job->process->readAllStandardOutput();
    const double ms = double(job->clock.nsecsElapsed()) / 1e6;
    QString why;
    if (job->process->exitStatus() == QProcess::NormalExit && job->process->exitCode() == 0) {
        const auto bytes = std::string_view(job->out.constData(), std::size_t(job->out.size()));
        Expected<layout::LayoutResult> r = layout::decodeResult(bytes, job->request);
        if (r) {
            auto result = QSharedPointer<const layout::LayoutResult>::create(std::move(*r));
            recordLayout(job->request.nodes.size(), ms, true);
            store(job->digest, result, QString());
            if (isLatest(*job))
                emit finished(job->ticket, result, QString(), ms, QString());
            end(job);
            return;
        }
        why = QString::fromStdString(r.status().message());
    } else {
        why = QString::fromUtf8(job->process->readAllStandardError()).trimmed();
        if (why.isEmpty())
            why = tr("the layout helper ended with %1").arg(job->process->exitCode());
    }
    if (!isLatest(*job)) {
        end(job);
        return;
    }
    fallBack(job, tr("Graphviz failed: %1").arg(why));
}

std::size_t LayoutService::itemBudget() const
{
    return std::size_t(std::clamp(kTargetLayoutMs / std::max(m_msPerItem, 1e-3), 60.0, 800.0));
}

void LayoutService::recordLayout(std::size_t items, double ms, bool finished)
{
    if (items < 20)
        return; // tiny layouts are mostly process start-up: they say nothing about dot's speed
    const double sample = ms / double(items);
    if (finished)
        m_msPerItem = 0.6 * m_msPerItem + 0.4 * sample;
    else // at least this slow, and the budget ran out: come back well under it
        m_msPerItem = std::max(m_msPerItem, sample) * 1.5;
}

void LayoutService::fallBack(const std::shared_ptr<Job> &job, const QString &why)
{
    // The quick layout takes well under a second even at 10,000 items, off the GUI thread.
    auto *watcher = new QFutureWatcher<layout::LayoutResult>(this);
    const QObject *client = job->client;
    const quint64 ticket = job->ticket, digest = job->digest;
    const QElapsedTimer clock = job->clock;
    const QString note = why + tr(": showing opscope's quick layered layout");
    connect(watcher, &QFutureWatcherBase::finished, this, [=, this] {
        auto result = QSharedPointer<const layout::LayoutResult>::create(watcher->result());
        watcher->deleteLater();
        store(digest, result, note);
        if (m_latest.value(client) == ticket)
            emit finished(ticket, result, QString(), double(clock.nsecsElapsed()) / 1e6, note);
    });
    watcher->setFuture(QtConcurrent::run([request = job->request] { return layout::layoutLayered(request); }));
    end(job);
}

void LayoutService::end(const std::shared_ptr<Job> &job)
{
    job->done = true;
    if (job->deadline) {
        job->deadline->stop();
        job->deadline->deleteLater();
        job->deadline = nullptr;
    }
    if (QProcess *p = job->process) {
        job->process = nullptr;
        p->disconnect(this);
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished(1000); // reap it: SIGKILL lands at once
        }
        p->deleteLater();
    }
    m_jobs.remove(job);
}

void LayoutService::trimSuperseded()
{
    // One superseded layout may finish for the cache; older ones would only slow the latest down.
    int superseded = 0;
    for (auto it = m_jobs.rbegin(); it != m_jobs.rend();) {
        const std::shared_ptr<Job> job = *it++;
        if (isLatest(*job))
            continue;
        if (++superseded > 1)
            end(job);
    }
}

void LayoutService::cancelAll()
{
    const auto jobs = m_jobs;
    for (const auto &job : jobs) {
        if (isLatest(*job))
            fallBack(job, tr("Graphviz layout cancelled"));
        else
            end(job);
    }
}

int LayoutService::runningHelpers() const
{
    int n = 0;
    for (const auto &job : m_jobs)
        n += job->process && job->process->state() != QProcess::NotRunning;
    return n;
}

QSharedPointer<const layout::LayoutResult> LayoutService::cached(const layout::LayoutRequest &request,
                                                                 QString *note) const
{
    const CacheEntry entry = m_cache.value(layout::requestDigest(request));
    if (note)
        *note = entry.note;
    return entry.result;
}

void LayoutService::store(quint64 digest, QSharedPointer<const layout::LayoutResult> result, const QString &note)
{
    if (const auto it = m_cache.find(digest); it != m_cache.end()) {
        if (!it->note.isEmpty() && note.isEmpty()) { // dot's layout replaces a quick one
            m_cacheBytes -= it->bytes;
            m_cache.erase(it);
            m_lru.remove(digest);
        } else {
            return;
        }
    }
    CacheEntry entry{std::move(result), note, 0};
    entry.bytes = footprint(*entry.result);
    m_cacheBytes += entry.bytes;
    m_cache.insert(digest, entry);
    m_lru.push_back(digest);
    while (m_cacheBytes > kCacheBytes && m_lru.size() > 1) {
        const quint64 old = m_lru.front();
        m_lru.pop_front();
        m_cacheBytes -= m_cache.value(old).bytes;
        m_cache.remove(old);
    }
}

} // namespace opscope
