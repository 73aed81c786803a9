#pragma once
// Offsets for memory planning's buffers (memoryplan.h): two greedy orders, one best-fit placement.
//
//   greedy by size     largest buffer first.
//   greedy by breadth  the steps with the most live bytes first, each step's buffers largest first.
//
// Each buffer goes into the smallest gap between the placed buffers it conflicts with that holds
// it (best fit), else above them all. Conflict: under a serial plan overlapping step intervals,
// otherwise neither buffer's every use happens before the other's producer (PlanOrder::precedes).

#include "runtime/planorder.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opscope {

constexpr std::uint64_t arenaAlignment = 64;
inline std::uint64_t alignedBytes(std::uint64_t bytes)
{
    return (bytes + arenaAlignment - 1) / arenaAlignment * arenaAlignment;
}

// One range of an arena: a value and the values that live in its bytes (views, in-place outputs).
struct ArenaBuffer
{
    ValueId root;     // invalid for a workspace
    NodeId workspaceOf; // a node's workspace: no members, used at its step alone
    int device = 0;
    std::uint64_t bytes = 0; // aligned
    int first = 0;           // the root producer's position in the plan order
    int last = 0;            // the last use of any member
    std::vector<int> uses;   // every member's producer and readers
    std::vector<ValueId> members;
    bool output = false; // a member leaves the run: not in the arena
    std::uint64_t offset = 0;
};

struct PlacementResult
{
    std::uint64_t arenaBytes = 0;
    std::uint64_t lowerBoundBytes = 0;
    std::uint64_t peakBytes = 0; // live at peakPosition of the order
    int peakPosition = -1;
    std::string strategy;
};

enum class OffsetStrategy;

// Places buffers[ids] (writes their offsets). `share` false: each its own range, in order.
PlacementResult placeBuffers(std::vector<ArenaBuffer> &buffers, const std::vector<int> &ids, const PlanOrder &order,
                             int steps, bool share, OffsetStrategy strategy);

} // namespace opscope
