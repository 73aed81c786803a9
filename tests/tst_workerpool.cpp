// The executor's worker pool: every job of a call runs at the same time (jobs that wait for each
// other finish), workers are reused across calls, and several callers at once each get their own.

#include "runtime/workerpool.h"

#include <QTest>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using namespace opscope;

namespace {

// Jobs that each wait (bounded) until all `n` have started: they finish only if they run at once.
std::vector<std::function<void()>> rendezvous(std::size_t n, std::atomic<int> &arrived, std::atomic<int> &met)
{
    std::vector<std::function<void()>> jobs;
    for (std::size_t i = 0; i < n; ++i)
        jobs.emplace_back([&arrived, &met, n] {
            ++arrived;
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (arrived.load() % int(n) != 0 && std::chrono::steady_clock::now() < deadline)
                std::this_thread::yield();
            if (arrived.load() % int(n) == 0)
                ++met;
        });
    return jobs;
}

} // namespace

class TestWorkerPool : public QObject
{
    Q_OBJECT

private slots:
    void jobsRunAtOnce()
    {
        WorkerPool pool;
        std::atomic<int> arrived{0}, met{0};
        pool.runConcurrently(rendezvous(4, arrived, met));
        QCOMPARE(met.load(), 4);
        QCOMPARE(pool.workerCount(), std::size_t(3)); // the caller runs the first job
    }

    void workersAreReused()
    {
        WorkerPool pool;
        std::set<std::thread::id> seen;
        std::mutex mutex;
        for (int round = 0; round < 20; ++round) {
            std::vector<std::function<void()>> jobs;
            for (int j = 0; j < 3; ++j)
                jobs.emplace_back([&] {
                    std::lock_guard lock(mutex);
                    seen.insert(std::this_thread::get_id());
                });
            pool.runConcurrently(jobs);
        }
        QCOMPARE(pool.workerCount(), std::size_t(2));
        QVERIFY(seen.size() <= 3); // the caller and the same two workers, every round
    }

    void severalCallers()
    {
        WorkerPool pool;
        std::atomic<int> completed{0};
        std::vector<std::thread> callers;
        for (int c = 0; c < 4; ++c)
            callers.emplace_back([&] {
                for (int round = 0; round < 25; ++round) {
                    std::atomic<int> arrived{0}, met{0};
                    pool.runConcurrently(rendezvous(3, arrived, met));
                    if (met.load() == 3)
                        ++completed;
                }
            });
        for (std::thread &t : callers)
            t.join();
        QCOMPARE(completed.load(), 100);
        QVERIFY(pool.workerCount() <= 8); // at most two per concurrent caller
    }

    void emptyAndSingle()
    {
        WorkerPool pool;
        pool.runConcurrently({});
        int ran = 0;
        pool.runConcurrently({[&] { ++ran; }});
        QCOMPARE(ran, 1);
        QCOMPARE(pool.workerCount(), std::size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestWorkerPool)
#include "tst_workerpool.moc"
