// Bytes → parse → import (schema checks, checker, shape inference) → verify → summary: what
// `opscope-cli info` and the app's loader do with a file.
#include "fuzztarget.h"

#include "ir/summary.h"
#include "ir/verifier.h"
#include "onnx/modelio.h"

OPSCOPE_FUZZ_MODEL_MUTATOR(opscope::fuzz::MutationFocus::Structure)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace opscope;
    LoadOptions options;
    options.runChecker = true;
    options.inferShapes = true;
    Expected<ImportResult> loaded = loadModelFromBytes(fuzz::asBytes(data, size), fuzz::scratchFolder(), options);
    if (!loaded)
        return 0;
    (void)verifyGraph(loaded->model.graph);
    (void)summarizeModel(loaded->model, 5);
    return 0;
}
