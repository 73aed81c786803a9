#pragma once
// A batch as micro-batches and back: what a pipeline's runs take in and give out, in one process
// (runtime/stagerunner.h) and across MPI ranks (dist/).

#include "runtime/session.h"

#include <vector>

namespace opscope {

// Tensors of one type one after another along dim 0 (micro-batches back into a batch).
Expected<RuntimeTensor> concatDim0(const std::vector<RuntimeTensor> &parts);

// Every output joined from the micro-batches' (perBatch[m][i], m in order) along dim 0. An output
// no run computed is an internal error; one that does not join (its shape lost the batch) is the
// model's doing: invalid, with kMixesSamples.
Expected<std::vector<RuntimeTensor>> joinMicrobatches(const std::vector<std::vector<RuntimeTensor>> &perBatch);

// Why a model's joined outputs differ from one run of the whole batch: said with every such error.
inline constexpr const char *kMixesSamples = " (a model whose outputs mix the samples of a batch cannot be split "
                                             "into micro-batches: profile it without --microbatches)";

// A micro-batch's run that failed where the whole batch ran (the serial reference comes first): the
// model fixes its batch inside the graph (a Reshape to a constant shape, a batch-sized initializer
// it broadcasts against). A kernel's InvalidInput/Unsupported gets that said; any other failure
// (a cancel, a transfer, a bug) is returned as it is.
Status microbatchRunFailed(const Status &failure, int microbatches);

// Feeds split along dim 0 into `m` micro-batches: every input whose dim 0 is the batch (the first
// input's dim 0: the same symbol, or the same size where the model declares no shape) is split,
// the others go whole to each. Refused: a batch m does not divide, a batch the model fixes.
Expected<std::vector<Feeds>> splitFeeds(const Feeds &feeds, int m, const InferenceSession &session);

} // namespace opscope
