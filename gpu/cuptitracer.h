#pragma once
// GPU timelines from CUPTI's Activity API: every kernel (CONCURRENT_KERNEL, which does not
// serialize them), copy, peer copy, memset, runtime call and synchronization of a run, each tied
// to the graph node that launched it. One tracer per process (CUPTI's collection is global);
// libcupti is loaded at start (cudalibs.h), so a machine without it still runs, with a note.
// Plain C++ header: callers need no CUDA headers.

#include "cuptitrace.h"
#include "util/status.h"

#include <chrono>
#include <memory>
#include <string>

namespace opscope::gpu {

class CuptiTracer
{
public:
    // Starts collecting. Fails with a message that says why (CUPTI missing or too old, no device,
    // another profiler holds CUPTI, as under Nsight Systems); callers go on without GPU lanes.
    static Expected<std::unique_ptr<CuptiTracer>> start();
    ~CuptiTracer(); // stops collecting if finish() was not called

    CuptiTracer(const CuptiTracer &) = delete;
    CuptiTracer &operator=(const CuptiTracer &) = delete;

    // The running tracer, or null: what the CUDA backend asks before each node's launch.
    static CuptiTracer *active();

    // Around a node's launch on the calling thread: every kernel and copy CUPTI records meanwhile
    // is that node's (an external correlation id pushed and popped).
    void beginNode(const std::string &name, const std::string &op, const std::string &domain);
    void endNode();

    // Flushes CUPTI's buffers, stops collecting and appends the GPU lanes to `trace`, whose
    // clock starts at `zero` (trace::Recorder::zero()). Counts include dropped records.
    Expected<CuptiCounts> finish(trace::Trace &trace, std::chrono::steady_clock::time_point zero);

    struct State; // defined in the .cpp; CUPTI's buffer callbacks reach it

private:
    explicit CuptiTracer(std::unique_ptr<State> state);
    void stopCollecting();
    std::unique_ptr<State> m_state;
};

} // namespace opscope::gpu
