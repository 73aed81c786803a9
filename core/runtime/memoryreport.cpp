#include "runtime/memoryreport.h"

#include <chrono>

namespace opscope {

Expected<MemoryReport> planModelMemory(const Model &model, const MemoryReportOptions &options)
{
    SessionOptions so;
    so.threads = options.threads;
    so.memory = options.plan;
    Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(model, so);
    if (!session)
        return session.status();
    Expected<Feeds> feeds = randomFeeds(**session, options.given, options.random);
    if (!feeds)
        return feeds.status();
    ExecOptions exec;
    exec.threads = options.threads;
    exec.cancel = options.cancel;
    const auto start = std::chrono::steady_clock::now();
    Expected<std::vector<RuntimeTensor>> ran = (*session)->run(*feeds, nullptr, &exec);
    if (!ran)
        return ran.status();
    MemoryReport report;
    report.runMilliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    report.plan = (*session)->memoryPlan(*feeds);
    if (!report.plan)
        return Status::internal("the sizing run made no memory plan");
    OPSCOPE_TRY(verifyMemoryPlan((*session)->prepared(), (*session)->prepared().plan, *report.plan));
    return report;
}

} // namespace opscope
