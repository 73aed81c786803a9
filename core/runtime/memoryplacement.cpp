#include "runtime/memoryplacement.h"

#include "runtime/memoryplan.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace opscope {
namespace {

// Every use of a happens before b's producer writes its first byte.
bool allBefore(const ArenaBuffer &a, const ArenaBuffer &b, const PlanOrder &order)
{
    for (int u : a.uses)
        if (!order.precedes(u, b.first))
            return false;
    return true;
}

// Whether two buffers may be live at once: happens-before implies the linearization's order, so
// only the buffer that ends first there can precede the other; overlapping there, they conflict.
bool conflict(const ArenaBuffer &a, const ArenaBuffer &b, const PlanOrder &order)
{
    if (a.last < b.first)
        return !allBefore(a, b, order);
    if (b.last < a.first)
        return !allBefore(b, a, order);
    return true;
}

// A lower bound for plans that may run ops at once: buffers that pairwise conflict need disjoint
// ranges in every valid placement, so any such set's bytes bound the arena from below. The live
// set at the order's peak is one; each is grown greedily (largest first), and so are sets seeded
// by the largest buffers — parallel branches whose buffers no one step of the order holds at once.
std::uint64_t concurrentBound(const std::vector<ArenaBuffer> &buffers, const std::vector<int> &bySize,
                              const PlanOrder &order, int peakPosition)
{
    std::uint64_t best = 0;
    std::vector<int> clique;
    const auto grow = [&] {
        for (int b : bySize) {
            const ArenaBuffer &buf = buffers[std::size_t(b)];
            if (std::find(clique.begin(), clique.end(), b) != clique.end())
                continue;
            if (std::all_of(clique.begin(), clique.end(),
                            [&](int c) { return conflict(buf, buffers[std::size_t(c)], order); }))
                clique.push_back(b);
        }
        std::uint64_t bytes = 0;
        for (int c : clique)
            bytes += buffers[std::size_t(c)].bytes;
        best = std::max(best, bytes);
    };
    for (int b : bySize)
        if (buffers[std::size_t(b)].first <= peakPosition && peakPosition <= buffers[std::size_t(b)].last)
            clique.push_back(b);
    grow();
    constexpr std::size_t seeds = 16;
    for (std::size_t i = 0; i < std::min(seeds, bySize.size()); ++i) {
        clique.assign(1, bySize[i]);
        grow();
    }
    return best;
}

// The buffers placed so far under a plan that is not serial, by first position, each node of the
// tree holding the largest `after` (the position from which on every use of a buffer precedes
// every step) below it. A buffer b placed later can only conflict with p if p's uses do not all
// precede b's producer (p.after > b.first) and b's do not all precede p's (p.first < b.after):
// the tree visits those and no others, where a plain scan visited every placed buffer.
class PlacedIndex
{
public:
    explicit PlacedIndex(int steps)
    {
        while (m_size < steps)
            m_size <<= 1;
        m_max.assign(2 * std::size_t(m_size), std::numeric_limits<int>::min());
        m_at.resize(std::size_t(m_size));
    }

    void insert(int first, int after, int buffer)
    {
        m_at[std::size_t(first)].emplace_back(after, buffer);
        for (std::size_t i = std::size_t(first + m_size); i > 0; i >>= 1)
            m_max[i] = std::max(m_max[i], after);
    }

    // f(buffer) for every placed buffer with after > x and first < y.
    template<class F>
    void forEach(int x, int y, F &&f) const
    {
        visit(1, 0, m_size, x, y, f);
    }

private:
    template<class F>
    void visit(std::size_t node, int lo, int hi, int x, int y, F &f) const
    {
        if (lo >= y || m_max[node] <= x)
            return;
        if (hi - lo == 1) {
            for (const auto &[after, buffer] : m_at[std::size_t(lo)])
                if (after > x)
                    f(buffer);
            return;
        }
        const int mid = lo + (hi - lo) / 2;
        visit(2 * node, lo, mid, x, y, f);
        visit(2 * node + 1, mid, hi, x, y, f);
    }

    int m_size = 1;
    std::vector<int> m_max;
    std::vector<std::vector<std::pair<int, int>>> m_at; // by first position: (after, buffer)
};

class Placer
{
public:
    Placer(const std::vector<ArenaBuffer> &buffers, const PlanOrder &order, int steps)
        : m_buffers(buffers), m_order(order), m_steps(steps)
    {
        if (!order.serial()) {
            m_after.assign(buffers.size(), 0);
            for (std::size_t b = 0; b < buffers.size(); ++b)
                for (int u : buffers[b].uses)
                    m_after[b] = std::max(m_after[b], order.precedesAllFrom(u));
        }
    }

    // Offsets (by buffer index) for placing `sequence` in that order; returns the arena size.
    std::uint64_t run(const std::vector<int> &sequence, std::vector<std::uint64_t> &offsets)
    {
        offsets.assign(m_buffers.size(), 0);
        std::vector<std::vector<int>> liveAt(m_order.serial() ? std::size_t(m_steps) : 0);
        PlacedIndex placed(m_order.serial() ? 1 : m_steps);
        std::vector<int> stamp(m_buffers.size(), -1);
        std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
        std::uint64_t arena = 0;
        for (int b : sequence) {
            const ArenaBuffer &buf = m_buffers[std::size_t(b)];
            ranges.clear();
            const auto add = [&](int p) {
                ranges.emplace_back(offsets[std::size_t(p)], offsets[std::size_t(p)] + m_buffers[std::size_t(p)].bytes);
            };
            if (m_order.serial()) {
                for (int t = buf.first; t <= buf.last; ++t)
                    for (int p : liveAt[std::size_t(t)])
                        if (stamp[std::size_t(p)] != b) {
                            stamp[std::size_t(p)] = b;
                            add(p);
                        }
            } else {
                placed.forEach(buf.first, m_after[std::size_t(b)], [&](int p) {
                    if (conflict(m_buffers[std::size_t(p)], buf, m_order))
                        add(p);
                });
            }
            std::sort(ranges.begin(), ranges.end());
            // Best fit: the smallest gap that holds the buffer, else above everything it meets.
            std::uint64_t cursor = 0, best = std::numeric_limits<std::uint64_t>::max();
            std::uint64_t bestGap = best;
            for (const auto &[begin, end] : ranges) {
                if (begin > cursor && begin - cursor >= buf.bytes && begin - cursor < bestGap) {
                    best = cursor;
                    bestGap = begin - cursor;
                }
                cursor = std::max(cursor, end);
            }
            const std::uint64_t offset = best != std::numeric_limits<std::uint64_t>::max() ? best : cursor;
            offsets[std::size_t(b)] = offset;
            arena = std::max(arena, offset + buf.bytes);
            if (m_order.serial())
                for (int t = buf.first; t <= buf.last; ++t)
                    liveAt[std::size_t(t)].push_back(b);
            else
                placed.insert(buf.first, m_after[std::size_t(b)], b);
        }
        return arena;
    }

private:
    const std::vector<ArenaBuffer> &m_buffers;
    const PlanOrder &m_order;
    int m_steps;
    std::vector<int> m_after; // by buffer: the largest precedesAllFrom of its uses
};

} // namespace

PlacementResult placeBuffers(std::vector<ArenaBuffer> &buffers, const std::vector<int> &ids, const PlanOrder &order,
                             int steps, bool share, OffsetStrategy strategy)
{
    PlacementResult result;
    // Live bytes per position of the plan order: the lower bound (some execution has all of a
    // position's buffers live at once), and the breadth order.
    std::vector<std::int64_t> delta(std::size_t(steps) + 1, 0);
    for (int b : ids) {
        delta[std::size_t(buffers[std::size_t(b)].first)] += std::int64_t(buffers[std::size_t(b)].bytes);
        delta[std::size_t(buffers[std::size_t(b)].last) + 1] -= std::int64_t(buffers[std::size_t(b)].bytes);
    }
    std::vector<std::uint64_t> breadth(std::size_t(steps), 0);
    std::int64_t live = 0;
    for (int t = 0; t < steps; ++t) {
        live += delta[std::size_t(t)];
        breadth[std::size_t(t)] = std::uint64_t(live);
        if (std::uint64_t(live) > result.lowerBoundBytes || result.peakPosition < 0) {
            result.lowerBoundBytes = std::uint64_t(live);
            result.peakPosition = t;
        }
    }
    if (ids.empty()) {
        result.strategy = "none";
        return result;
    }
    if (!share || !order.hasMatrix()) {
        // Each buffer its own range: in-place only, or a parallel plan too big to order.
        std::uint64_t offset = 0;
        for (int b : ids) {
            buffers[std::size_t(b)].offset = offset;
            offset += buffers[std::size_t(b)].bytes;
        }
        result.arenaBytes = offset;
        result.strategy = share ? "unshared (plan too large to order)" : "unshared";
        return result;
    }

    std::vector<int> bySize = ids;
    std::stable_sort(bySize.begin(), bySize.end(), [&](int a, int b) {
        return buffers[std::size_t(a)].bytes > buffers[std::size_t(b)].bytes;
    });

    result.peakBytes = result.lowerBoundBytes;
    if (!order.serial())
        result.lowerBoundBytes = std::max(result.lowerBoundBytes,
                                          concurrentBound(buffers, bySize, order, result.peakPosition));

    Placer placer(buffers, order, steps);
    std::vector<std::uint64_t> sizeOffsets, breadthOffsets;
    const std::uint64_t sizeArena =
        strategy == OffsetStrategy::ByBreadth ? std::numeric_limits<std::uint64_t>::max() : placer.run(bySize, sizeOffsets);
    if (strategy == OffsetStrategy::BySize || sizeArena <= result.lowerBoundBytes) { // nothing can do better
        for (int b : ids)
            buffers[std::size_t(b)].offset = sizeOffsets[std::size_t(b)];
        result.arenaBytes = sizeArena;
        result.strategy = "greedy-by-size";
        return result;
    }

    std::vector<std::vector<int>> liveBuffers(static_cast<std::size_t>(steps));
    for (int b : bySize)
        for (int t = buffers[std::size_t(b)].first; t <= buffers[std::size_t(b)].last; ++t)
            liveBuffers[std::size_t(t)].push_back(b);
    std::vector<int> positions(static_cast<std::size_t>(steps));
    std::iota(positions.begin(), positions.end(), 0);
    std::stable_sort(positions.begin(), positions.end(),
                     [&](int a, int b) { return breadth[std::size_t(a)] > breadth[std::size_t(b)]; });
    std::vector<int> byBreadth;
    std::vector<char> taken(buffers.size(), 0);
    for (int t : positions)
        for (int b : liveBuffers[std::size_t(t)])
            if (!taken[std::size_t(b)]) {
                taken[std::size_t(b)] = 1;
                byBreadth.push_back(b);
            }

    const std::uint64_t breadthArena = placer.run(byBreadth, breadthOffsets);
    const bool size = sizeArena <= breadthArena;
    const std::vector<std::uint64_t> &offsets = size ? sizeOffsets : breadthOffsets;
    for (int b : ids)
        buffers[std::size_t(b)].offset = offsets[std::size_t(b)];
    result.arenaBytes = size ? sizeArena : breadthArena;
    result.strategy = size ? "greedy-by-size" : "greedy-by-breadth";
    return result;
}

} // namespace opscope
