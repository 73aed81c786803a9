// Small loaded models run on random inputs: kernels must reject bad shapes, attributes and
// values with an error, never crash or read out of bounds. Inputs stay small (dims bound to 3)
// and the session refuses runs that would not fit in memory.
//
// A first run sizes the memory plan; a second runs from it (one arena: in place, views, shared
// ranges) and must compute the first's outputs bit for bit, with a plan that passes
// verifyMemoryPlan. A difference is a finding (abort): a kernel that leaves part of its output
// unwritten, writes in place over an input it still reads, or a plan that lets two live tensors
// share bytes — wrong results that no sanitizer sees.
//
// A run is cancelled after kBudget: a Loop of billions of iterations (a Range-as-Loop export
// whose trip count is cast from a huge float) is a valid model that is merely slow, and the
// executor stops it between steps — it checks its cancel flag before every step, Loop
// iterations included. A hang inside one step (a kernel that walks 2^42 empty rows) cannot be
// cancelled that way, so it still outlasts libFuzzer's -timeout and is reported: that is a bug.
#include "fuzztarget.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "onnx/modelio.h"
#include "runtime/conformance.h"
#include "runtime/memoryplan.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"

#include <cstdio>
#include <cstdlib>

OPSCOPE_FUZZ_MODEL_MUTATOR(opscope::fuzz::MutationFocus::Structure)

namespace {

constexpr auto kBudget = std::chrono::seconds(3); // unwinding takes as long again: inside -timeout=20

// One watchdog for the process: it raises `cancel` once the current run is older than kBudget.
// Start, end and the check share a mutex, so a check of the last run cannot cancel the next.
struct Watchdog
{
    std::atomic<bool> cancel{false};
    std::mutex mutex;
    std::int64_t startedNs = 0; // 0: no run under way

    Watchdog()
    {
        std::thread([this] {
            for (;;) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                const std::lock_guard lock(mutex);
                if (startedNs && now() - startedNs > std::chrono::nanoseconds(kBudget).count())
                    cancel.store(true);
            }
        }).detach();
    }
    void start()
    {
        const std::lock_guard lock(mutex);
        cancel.store(false);
        startedNs = now();
    }
    void stop()
    {
        const std::lock_guard lock(mutex);
        startedNs = 0;
    }
    static std::int64_t now()
    {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace opscope;
    Expected<ImportResult> loaded = loadModelFromBytes(fuzz::asBytes(data, size), fuzz::scratchFolder(), {});
    if (!loaded || loaded->model.graph.nodeCountWithSubgraphs() > 64)
        return 0;
    Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(loaded->model, {});
    if (!session)
        return 0;
    // Inputs beyond 1 M elements: not this target (writing a [2, n, 2^31 - 1] input's random
    // values alone outlasts the timeout). Unbound symbols count as 1, as randomFeeds sizes them.
    for (const IoInfo &io : (*session)->inputs()) {
        if (!io.type.shape)
            continue;
        double count = 1;
        for (const Dim &d : io.type.shape->dims)
            count *= d.isKnown() ? double(std::max<std::int64_t>(d.value, 0)) : 1.0;
        if (count > double(1 << 20))
            return 0;
    }
    RandomInputOptions random;
    random.seed = size;
    Expected<Feeds> feeds = randomFeeds(**session, {}, random);
    if (feeds) {
        // Outputs are not bounded by the inputs' size: a ConvInteger with pads of 2^31 − 1 is legal
        // and asks for a 16 GiB output. A tensor or arena past 1 GiB is refused here as too large
        // (a clear error, as past a machine's memory), not held against libFuzzer's RSS limit.
        static const bool limited = (RuntimeTensor::setAllocationLimit(std::uint64_t(1) << 30), true);
        (void)limited;
        static Watchdog watchdog;
        watchdog.start();
        ExecOptions exec;
        exec.cancel = &watchdog.cancel;
        const auto began = std::chrono::steady_clock::now();
        Expected<std::vector<RuntimeTensor>> sized = (*session)->run(*feeds, nullptr, &exec);
        watchdog.stop();
        // A run of seconds (one legal MaxPool of a 60×80 window over 1000², 11 s under ASan) is
        // not compared: twice its time would pass -timeout, and one step cannot be cancelled.
        const bool quick = std::chrono::steady_clock::now() - began < std::chrono::seconds(1);
        const std::shared_ptr<const MemoryPlan> plan = sized && quick ? (*session)->memoryPlan(*feeds) : nullptr;
        if (plan) {
            const auto fail = [](const std::string &why) {
                std::fprintf(stderr, "fuzz_run: the run from the memory plan %s\n", why.c_str());
                std::abort();
            };
            if (const Status valid = verifyMemoryPlan((*session)->prepared(), (*session)->prepared().plan, *plan); !valid)
                fail("is invalid: " + valid.message());
            watchdog.start();
            Expected<std::vector<RuntimeTensor>> planned = (*session)->run(*feeds, nullptr, &exec);
            watchdog.stop();
            // Cancelled by the watchdog, or refused for memory the arena would need at once: not
            // a difference. An internal error where the sizing run succeeded is.
            if (!planned && planned.status().kind() == ErrorKind::Internal)
                fail("failed where the sizing run succeeded: " + planned.status().message());
            if (planned) {
                if (planned->size() != sized->size())
                    fail("returned " + std::to_string(planned->size()) + " outputs, not " +
                         std::to_string(sized->size()));
                for (std::size_t i = 0; i < sized->size(); ++i)
                    if (!sameBits((*sized)[i], (*planned)[i]))
                        fail("computed output " + std::to_string(i) + " ('" + (*session)->outputs()[i].name +
                             "') differently from the sizing run");
            }
        }
    }
    return 0;
}
