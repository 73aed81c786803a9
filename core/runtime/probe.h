#pragma once
// Intermediate values of one run: what the app's Values tab shows for a node's inputs and outputs
// (activations, as a debugger shows variables). Only the values asked for are kept — the run
// marks them as graph outputs of a copy of the model, so the executor frees everything else as it
// always does and a big model's activations never pile up.

#include "ir/model.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"

#include <atomic>
#include <string>
#include <vector>

namespace opscope {

struct ProbeOptions
{
    Feeds given;                           // inputs the user gave; the others are random
    RandomInputOptions random;             // seed and symbolic dims for the random ones
    int threads = 1;
    const std::atomic<bool> *cancel = nullptr;
};

struct ProbedValues
{
    std::vector<Tensor> values; // one per name asked for, in order, each named after its value
    double milliseconds = 0.0;  // the run
};

// `names` are values of the model (computed, graph inputs, or constants), in the main graph or in
// an If/Loop/Scan body at any depth — there the last iteration's value. Fails with a message naming
// the value when one is unknown, or lives in a body that did not run.
Expected<ProbedValues> probeValues(const Model &model, const std::vector<std::string> &names,
                                   const ProbeOptions &options = {});

// A runtime tensor as an IR tensor that owns a copy of its bytes.
Tensor toIrTensor(const RuntimeTensor &t, const std::string &name);

} // namespace opscope
