#include "cuptitracer.h"

#include "cudalibs.h"

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <atomic>
#include <optional>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace opscope::gpu {

namespace {

// What CUPTI collects: kernels without serializing them, copies (peer ones too), memsets, the
// runtime calls that launched them, synchronizations, and the ids pushed around each node.
constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,          CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,         CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    // Libraries launch through the driver too (cuDNN's cuLaunchKernelEx): its calls carry the
    // correlation ids of those kernels, and external correlation records follow the API kinds on.
    CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};

const char *kindName(CUpti_ActivityKind kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return "kernels";
    case CUPTI_ACTIVITY_KIND_MEMCPY: return "copies";
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return "peer copies";
    case CUPTI_ACTIVITY_KIND_MEMSET: return "memsets";
    case CUPTI_ACTIVITY_KIND_RUNTIME: return "runtime calls";
    case CUPTI_ACTIVITY_KIND_DRIVER: return "driver calls";
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return "synchronizations";
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return "external correlation ids";
    default: return "activity";
    }
}

constexpr std::size_t kBufferBytes = std::size_t(8) << 20;

std::string resultText(CUptiResult r)
{
    const char *s = nullptr;
    if (cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "CUPTI error " + std::to_string(int(r));
}

// "cudaLaunchKernel_v7000" → "cudaLaunchKernel".
std::string apiName(bool driver, std::uint32_t cbid)
{
    const char *name = nullptr;
    if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) !=
            CUPTI_SUCCESS ||
        !name)
        return {};
    std::string s = name;
    if (const auto v = s.rfind("_v"); v != std::string::npos && v + 2 < s.size() &&
                                      s.find_first_not_of("0123456789", v + 2) == std::string::npos)
        s.resize(v);
    return s;
}

} // namespace

struct CuptiTracer::State
{
    std::mutex mutex; // the builder: CUPTI hands buffers over on a thread of its own
    CuptiTraceBuilder builder{apiName};
    std::mutex nodesMutex;
    std::vector<LaunchedNode> nodes;
    // (CUPTI ns, steady clock) read back to back at start and at finish: the clock map's line.
    std::vector<std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> clockPairs;
    bool finished = false;
    CUptiResult flushed = CUPTI_SUCCESS;
    std::uint32_t version = 0;
};

namespace {

std::mutex g_activeMutex;
std::atomic<CuptiTracer *> g_active{nullptr};
CuptiTracer::State *g_state = nullptr; // under g_activeMutex: where buffers go

void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size, size_t *maxNumRecords)
{
    *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer ? kBufferBytes : 0;
    *maxNumRecords = 0; // as many as fit
}

void CUPTIAPI bufferCompleted(CUcontext context, uint32_t streamId, uint8_t *buffer, size_t, size_t validSize)
{
    {
        const std::lock_guard active(g_activeMutex);
        if (g_state) {
            const std::lock_guard lock(g_state->mutex);
            CUpti_Activity *record = nullptr;
            while (cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS)
                g_state->builder.add(record);
            std::size_t dropped = 0;
            if (cuptiActivityGetNumDroppedRecords(context, streamId, &dropped) == CUPTI_SUCCESS)
                g_state->builder.addDropped(dropped);
        }
    }
    std::free(buffer);
}

// A pair of clock readings: CUPTI's between two of the host's, the host's midpoint kept; none when
// CUPTI's read failed (a pair at 0 would move every GPU span by decades).
std::optional<std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> clockPair()
{
    const auto before = std::chrono::steady_clock::now();
    std::uint64_t ns = 0;
    const CUptiResult r = cuptiGetTimestamp(&ns);
    const auto after = std::chrono::steady_clock::now();
    if (r != CUPTI_SUCCESS || ns == 0)
        return std::nullopt;
    return std::pair(ns, before + (after - before) / 2);
}

// The tightest of a few pairs read back to back (a preempted read brackets loosely).
std::optional<std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> bestClockPair()
{
    std::optional<std::pair<std::uint64_t, std::chrono::steady_clock::time_point>> best;
    std::chrono::steady_clock::duration bestGap = std::chrono::hours(1);
    for (int k = 0; k < 5; ++k) {
        const auto before = std::chrono::steady_clock::now();
        const auto pair = clockPair();
        const auto gap = std::chrono::steady_clock::now() - before;
        if (pair && gap < bestGap)
            best = pair, bestGap = gap;
    }
    return best;
}

// Only one tracer starts at a time: CUPTI's collection is process-wide.
std::atomic<bool> g_starting{false};

} // namespace

CuptiTracer::CuptiTracer(std::unique_ptr<State> state) : m_state(std::move(state)) {}

Expected<std::unique_ptr<CuptiTracer>> CuptiTracer::start()
{
    OPSCOPE_TRY(cuptiLoaded());
    // CUPTI is called without g_activeMutex held: its buffer callback takes that lock on CUPTI's
    // own thread, and CUPTI may hold an internal lock while it delivers a buffer.
    if (g_active.load() || g_starting.exchange(true))
        return Status::unsupported("a CUPTI trace is already being recorded in this process");
    struct Starting
    {
        ~Starting() { g_starting = false; }
    } starting;
    static const CUptiResult registered = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
    if (registered != CUPTI_SUCCESS)
        return Status::unsupported("CUPTI did not take its buffer callbacks: " + resultText(registered) +
                                   " (another profiler, such as Nsight Systems, may hold CUPTI)");
    // Thread ids as the system knows them (gettid), not pthread_self() cut to 32 bits.
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    auto state = std::make_unique<State>();
    cuptiGetVersion(&state->version);
    std::vector<CUpti_ActivityKind> enabled;
    for (CUpti_ActivityKind kind : kKinds) {
        if (const CUptiResult r = cuptiActivityEnable(kind); r != CUPTI_SUCCESS) {
            for (CUpti_ActivityKind k : enabled)
                cuptiActivityDisable(k);
            return Status::unsupported(std::string("CUPTI could not record ") + kindName(kind) + ": " + resultText(r) +
                                       " (CUPTI needs a GPU and its driver, and no other profiler holding it)");
        }
        enabled.push_back(kind);
    }
    if (const auto pair = bestClockPair())
        state->clockPairs.push_back(*pair);
    std::unique_ptr<CuptiTracer> tracer(new CuptiTracer(std::move(state)));
    const std::lock_guard active(g_activeMutex);
    g_state = tracer->m_state.get();
    g_active = tracer.get();
    return tracer;
}

// Ends collection: the device finished first (a flush does not synchronize, and a kernel still
// running comes back unfinished), the kinds disabled before the last flush (a record made between
// a flush and the disabling would arrive after the state is gone), then the drops CUPTI counted
// outside any buffer.
void CuptiTracer::stopCollecting()
{
    cudaDeviceSynchronize();
    cudaGetLastError();
    for (CUpti_ActivityKind kind : kKinds)
        cuptiActivityDisable(kind);
    m_state->flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped) {
        const std::lock_guard lock(m_state->mutex);
        m_state->builder.addDropped(dropped);
    }
    const std::lock_guard active(g_activeMutex);
    g_state = nullptr;
    g_active = nullptr;
    m_state->finished = true;
}

CuptiTracer::~CuptiTracer()
{
    if (!m_state->finished)
        stopCollecting();
}

CuptiTracer *CuptiTracer::active() { return g_active.load(std::memory_order_acquire); }

void CuptiTracer::beginNode(const std::string &name, const std::string &op, const std::string &domain)
{
    std::uint64_t id = 0;
    {
        const std::lock_guard lock(m_state->nodesMutex);
        m_state->nodes.push_back({name, op, domain});
        id = m_state->nodes.size();
    }
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void CuptiTracer::endNode()
{
    std::uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

Expected<CuptiCounts> CuptiTracer::finish(trace::Trace &trace, std::chrono::steady_clock::time_point zero)
{
    if (m_state->finished)
        return Status::internal("the CUPTI trace was already finished");
    if (const auto pair = bestClockPair())
        m_state->clockPairs.push_back(*pair);
    stopCollecting();
    if (m_state->flushed != CUPTI_SUCCESS)
        return Status::unsupported("CUPTI did not hand over its records: " + resultText(m_state->flushed));
    std::vector<std::pair<std::uint64_t, double>> pairs;
    for (const auto &[ns, host] : m_state->clockPairs)
        pairs.emplace_back(ns, std::chrono::duration<double>(host - zero).count());
    const std::lock_guard lock(m_state->mutex);
    const std::lock_guard nodes(m_state->nodesMutex);
    CuptiCounts counts = m_state->builder.appendTo(trace, fitClock(pairs), m_state->nodes);
    counts.cuptiVersion = m_state->version;
    return counts;
}

} // namespace opscope::gpu
