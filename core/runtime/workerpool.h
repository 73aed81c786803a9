#pragma once
// Persistent worker threads for the executor's queues. A plan with several queues needs them all
// running at once (a step waits for steps of other queues), so a call gets one thread per job —
// idle workers are reused, new ones are added when all are busy — and returns when every job has
// finished. Reusing threads matters beyond the spawn cost: each worker keeps its OpenMP team (the
// intra-op threads of its device) warm from one run to the next.

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace opscope {

class WorkerPool
{
public:
    WorkerPool();
    ~WorkerPool(); // finishes nothing new; joins the workers
    WorkerPool(const WorkerPool &) = delete;
    WorkerPool &operator=(const WorkerPool &) = delete;

    // The process-wide pool the executor uses.
    static WorkerPool &shared();

    // Runs every job concurrently, the first on the calling thread, the others on workers; returns
    // when all have returned. Safe to call from several threads at once (each call gets its own
    // workers). Jobs must not throw.
    void runConcurrently(const std::vector<std::function<void()>> &jobs);

    std::size_t workerCount() const;

private:
    struct Worker;
    struct Latch;
    void loop(Worker &worker);

    mutable std::mutex m_mutex;
    std::vector<std::unique_ptr<Worker>> m_workers;
    bool m_stopping = false;
};

} // namespace opscope
