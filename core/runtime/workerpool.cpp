#include "runtime/workerpool.h"

namespace opscope {

struct WorkerPool::Latch
{
    std::mutex mutex;
    std::condition_variable cv;
    std::size_t pending = 0;

    void done()
    {
        std::lock_guard lock(mutex);
        if (--pending == 0)
            cv.notify_all();
    }
};

struct WorkerPool::Worker
{
    std::thread thread;
    std::condition_variable cv;
    const std::function<void()> *job = nullptr; // set while busy (guarded by the pool's mutex)
    Latch *latch = nullptr;
    bool busy = false;
};

WorkerPool::WorkerPool() = default;

WorkerPool &WorkerPool::shared()
{
    static WorkerPool pool;
    return pool;
}

WorkerPool::~WorkerPool()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        for (const auto &w : m_workers)
            w->cv.notify_one();
    }
    for (const auto &w : m_workers)
        if (w->thread.joinable())
            w->thread.join();
}

std::size_t WorkerPool::workerCount() const
{
    std::lock_guard lock(m_mutex);
    return m_workers.size();
}

void WorkerPool::loop(Worker &worker)
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        worker.cv.wait(lock, [&] { return m_stopping || worker.job; });
        if (!worker.job)
            return; // stopping, idle
        const std::function<void()> *job = worker.job;
        Latch *latch = worker.latch;
        lock.unlock();
        (*job)();
        lock.lock();
        worker.job = nullptr;
        worker.latch = nullptr;
        worker.busy = false;
        latch->done(); // after `busy` is cleared: the caller may reuse this worker at once
    }
}

void WorkerPool::runConcurrently(const std::vector<std::function<void()>> &jobs)
{
    if (jobs.empty())
        return;
    Latch latch;
    latch.pending = jobs.size() - 1;
    {
        std::lock_guard lock(m_mutex);
        std::size_t next = 1;
        for (const auto &w : m_workers) {
            if (next == jobs.size())
                break;
            if (w->busy)
                continue;
            w->busy = true;
            w->job = &jobs[next++];
            w->latch = &latch;
            w->cv.notify_one();
        }
        for (; next < jobs.size(); ++next) {
            auto w = std::make_unique<Worker>();
            w->busy = true;
            w->job = &jobs[next];
            w->latch = &latch;
            Worker *raw = w.get();
            m_workers.push_back(std::move(w));
            raw->thread = std::thread([this, raw] { loop(*raw); });
        }
    }
    jobs.front()();
    std::unique_lock lock(latch.mutex);
    latch.cv.wait(lock, [&] { return latch.pending == 0; });
}

} // namespace opscope
