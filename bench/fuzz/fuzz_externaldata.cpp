// Models whose tensors point into external files: locations that escape the folder, name a
// folder or a missing file, offsets and lengths past the end or malformed. The mutator spends
// its edits on the external-data fields; the scratch folder holds the files they may name.
#include "fuzztarget.h"

#include "ir/summary.h"
#include "onnx/modelio.h"

OPSCOPE_FUZZ_MODEL_MUTATOR(opscope::fuzz::MutationFocus::ExternalData)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace opscope;
    LoadOptions options;
    options.runChecker = false; // the checker re-reads external files itself; our resolver is the target
    Expected<ImportResult> loaded = loadModelFromBytes(fuzz::asBytes(data, size), fuzz::scratchFolder(), options);
    if (loaded)
        (void)summarizeModel(loaded->model, 5); // touches every tensor's bytes (statistics)
    return 0;
}
