// Loaded models through every pass at level `all`, with the verifier after each pass: a pass
// must never crash on a valid model, and never leave an invalid one.
#include "fuzztarget.h"

#include "ir/verifier.h"
#include "onnx/modelio.h"
#include "passes/pipeline.h"
#include "passes/registry.h"

#include <cstdio>
#include <cstdlib>

OPSCOPE_FUZZ_MODEL_MUTATOR(opscope::fuzz::MutationFocus::Structure)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace opscope;
    Expected<ImportResult> loaded = loadModelFromBytes(fuzz::asBytes(data, size), fuzz::scratchFolder(), {});
    if (!loaded || loaded->model.graph.nodeCountWithSubgraphs() > 200)
        return 0;
    Model model = loaded->model;
    model.graph.assignNodeNames();
    passes::PipelineSpec spec;
    spec.level = "all";
    spec.target = "onnx";
    Expected<std::vector<std::string>> pipeline = passes::resolvePipeline(spec);
    if (!pipeline)
        std::abort();
    passes::PipelineOptions options;
    options.verify = true;
    options.keepSnapshots = false;
    const passes::PipelineResult r = passes::runPipeline(model, *pipeline, options);
    // A failing pass is reported and the model kept as it was; either way it must verify.
    if (Status st = verifyGraph(model.graph); !st) {
        std::fprintf(stderr, "pipeline left an invalid graph: %s (pipeline: %s)\n", st.message().c_str(),
                     r.status.message().c_str());
        std::abort();
    }
    return 0;
}
