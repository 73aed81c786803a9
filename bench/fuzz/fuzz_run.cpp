// Small loaded models run once on random inputs: kernels must reject bad shapes, attributes and
// values with an error, never crash or read out of bounds. Inputs stay small (dims bound to 3)
// and the session refuses runs that would not fit in memory.
#include "fuzztarget.h"

#include <algorithm>

#include "onnx/modelio.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"

OPSCOPE_FUZZ_MODEL_MUTATOR(opscope::fuzz::MutationFocus::Structure)

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
    if (feeds)
        (void)(*session)->run(*feeds);
    return 0;
}
