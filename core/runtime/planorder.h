#pragma once
// The order facts of an execution plan that memory planning needs: one linearization (a valid
// execution order: every step after its queue predecessor, the steps it waits for and the
// producers of what it reads), and whether one step happens before another in *every* execution
// of the plan. For a serial plan that is position order; for parallel and multi-device plans it
// is reachability over queue order, waitFor and data edges (a bit matrix, built in reverse order).

#include "runtime/executionplan.h"
#include "runtime/preparedgraph.h"

#include <cstdint>
#include <vector>

namespace opscope {

class PlanOrder
{
public:
    // Plans above this many steps that are not serial get no reachability matrix (its size grows
    // with the square); precedes() then answers false for every pair, which is safe: no sharing.
    static constexpr std::size_t maxMatrixSteps = 20000;

    static Expected<PlanOrder> of(const PreparedGraph &pg, const ExecutionPlan &plan);

    const std::vector<NodeId> &order() const { return m_order; }
    // Position of a node in order(), -1 when the plan does not run it.
    int position(NodeId n) const { return n.valid() && n.index < m_position.size() ? m_position[n.index] : -1; }
    int deviceAt(int position) const { return m_device[std::size_t(position)]; }
    bool serial() const { return m_serial; }
    bool hasMatrix() const { return m_serial || !m_reach.empty(); }

    // Whether the step at position p finishes before the step at q starts in every execution.
    bool precedes(int p, int q) const
    {
        if (m_serial)
            return p < q;
        if (m_reach.empty() || p == q)
            return false;
        if (q < p)
            return false; // every edge goes forward in the linearization
        return (m_reach[m_rowStart[std::size_t(p)] + std::size_t(q >> 6) - std::size_t(p >> 6)] >> (q & 63)) & 1u;
    }

    // The first position from which on the step at p precedes every step: the planner skips,
    // without looking at their uses, buffers that start there or later.
    int precedesAllFrom(int p) const
    {
        return m_serial ? p + 1 : m_from.empty() ? int(m_order.size()) : m_from[std::size_t(p)];
    }

private:
    std::vector<NodeId> m_order;
    std::vector<int> m_position;
    std::vector<int> m_device;
    bool m_serial = true;
    std::size_t m_words = 0;
    // Row p: the positions p precedes, from p's own word on (the triangle above the diagonal: half
    // the zero-filled pages, which on a 10,000-step plan were most of the planning time).
    std::vector<std::uint64_t> m_reach;
    std::vector<std::size_t> m_rowStart;
    std::vector<int> m_from;             // precedesAllFrom
};

} // namespace opscope
