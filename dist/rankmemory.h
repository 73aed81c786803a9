#pragma once
// What each rank's share of a spread plan takes, known before any rank runs it: a model that
// cannot be placed within the ranks' memory is refused up front, naming the rank, instead of one
// rank dying of OOM mid-run while the others wait for its transfers.
//
// Rank 0 sizes the partitioned plan in its own process (every device local, one run: the sizes
// the memory planner needs, data-dependent shapes included — or, where the whole model does not
// fit rank 0, from the inferred shapes without a run), then sums what each rank will hold:
//   arena     the memory plan's arena of each of its devices (intermediates, workspaces)
//   outside   graph outputs and data-dependent tensors (own allocations)
//   sends     the copy MpiTransfers keeps per edge it sends to another rank
//   weights   the mapped ones its nodes read (external data, embedded weights of 64 KiB or more,
//             which ranks map from the model file, and those the passes made of that size, which
//             ranks spill to a scratch file and map) — pages no node of the rank touches stay on
//             disk — and those on the heap (under 64 KiB, or pass-made ones a spill failed for),
//             held by every rank as each optimizes the whole model. Measured
//             free memory is read after loading, so heap weights count only against a limit given
//             with --memory-per-rank, which is the rank's whole budget.

#include "ir/model.h"
#include "runtime/executionplan.h"
#include "runtime/session.h"
#include "util/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::dist {

struct RankMemory
{
    std::uint64_t arenaBytes = 0;
    std::uint64_t outsideBytes = 0;
    std::uint64_t sendBytes = 0;
    std::uint64_t mappedBytes = 0;   // external weights its nodes read
    std::uint64_t embeddedBytes = 0; // weights on the heap (not mapped), held by every rank
    std::uint64_t total(bool withEmbedded) const
    {
        return arenaBytes + outsideBytes + sendBytes + mappedBytes + (withEmbedded ? embeddedBytes : 0);
    }
};

// The weights inside the model file (not mapped from external data): every rank holds them.
std::uint64_t embeddedWeightBytes(const Graph &graph);

// Rank 0 only. `partitioned` with its by-slot `deviceOf`, the global plan over every rank's
// devices, `rankOfDevice` by plan device. `byRunning`: one run of the whole partitioned model
// here sizes every tensor, data-dependent ones included; otherwise (the whole model does not fit
// rank 0) the inferred shapes do, and `unsized` counts the tensors whose size they do not know
// (left out of the prediction).
Expected<std::vector<RankMemory>> predictRankMemory(const Model &partitioned, const std::vector<int> &deviceOf,
                                                    const ExecutionPlan &global,
                                                    const std::vector<int> &rankOfDevice, int ranks, int threads,
                                                    const Feeds &feeds, bool byRunning = true,
                                                    std::size_t *unsized = nullptr);

// The first rank whose share does not fit what it has (`available`, by rank; 0: unknown, never
// refused), as a message naming the rank, what it needs and what it has (the caller says what to
// do about it); ok when all fit.
// `limitGiven`: the limits are --memory-per-rank's whole budgets, not free memory measured.
Status checkRankMemory(const std::string &schedule, const std::vector<RankMemory> &need,
                       const std::vector<std::uint64_t> &available, bool limitGiven);

} // namespace opscope::dist
