#include "schedule/placement.h"

#include "schedule/graphcosts.h"

#include <algorithm>
#include <limits>
#include <random>

namespace opscope::schedule {

namespace {

struct Interval
{
    double start, finish;
};

// Earliest start ≥ readyAt where `length` fits on a device busy during `busy` (sorted, disjoint).
double earliestGap(const std::vector<Interval> &busy, double readyAt, double length)
{
    // Intervals that end before readyAt cannot bound a gap after it.
    auto it = std::lower_bound(busy.begin(), busy.end(), readyAt,
                               [](const Interval &i, double t) { return i.finish <= t; });
    double t = readyAt;
    for (; it != busy.end(); ++it) {
        if (t + length <= it->start)
            return t;
        t = std::max(t, it->finish);
    }
    return t;
}

void occupy(std::vector<Interval> &busy, double start, double finish)
{
    auto it = std::lower_bound(busy.begin(), busy.end(), start,
                               [](const Interval &i, double t) { return i.start < t; });
    busy.insert(it, {start, finish});
}

// One HEFT pass with the given priorities (higher first among the nodes whose inputs are placed).
class Heft
{
public:
    Heft(const GraphCosts &c, const CostModel &model) : m_c(c), m_model(model)
    {
        for (const auto &reads : c.weights)
            for (const auto &[value, bytes] : reads)
                m_valueSlots = std::max<std::size_t>(m_valueSlots, value + 1);
    }

    Placement run(const std::vector<double> &priority)
    {
        const std::size_t devices = m_model.devices.size(), slots = m_c.seconds.size();
        m_p = Placement{};
        m_p.device.assign(slots, -1);
        m_p.start.assign(slots, 0.0);
        m_finish.assign(slots, 0.0);
        m_memory.assign(devices, 0.0);
        m_holds.assign(devices, std::vector<char>(m_valueSlots, 0));
        m_busy.assign(devices, {});
        m_copyBusy.assign(devices, {});
        visitByPriority(m_c, priority, [this](NodeId n) { place(n); });
        m_p.memory = m_memory;
        return std::move(m_p);
    }

private:
    std::vector<Interval> &copyLane(std::size_t d)
    {
        return m_model.devices[d].copiesOverlap ? m_copyBusy[d] : m_busy[d];
    }

    // When n's inputs are on device d: copies already made are reused, new ones are fitted into
    // the copy lane (tentatively, each on its own: close enough to compare devices).
    double readyOn(NodeId n, std::size_t d)
    {
        double readyAt = 0.0;
        for (NodeId q : m_c.preds[n.index]) {
            const auto from = std::size_t(m_p.device[q.index]);
            if (from == d) {
                readyAt = std::max(readyAt, m_finish[q.index]);
                continue;
            }
            const auto made = m_p.recvStart.find({q.index, int(d)});
            const double copy = m_model.transferSeconds(m_c.outputBytes[q.index], from, d);
            const double start = made != m_p.recvStart.end()
                                     ? made->second
                                     : earliestGap(copyLane(d), m_finish[q.index], copy);
            readyAt = std::max(readyAt, start + copy);
        }
        return readyAt;
    }

    void place(NodeId n)
    {
        const std::size_t devices = m_model.devices.size();
        double bestFinish = std::numeric_limits<double>::infinity();
        std::size_t best = devices;
        // Where no device has room, the node goes where it overflows the cap least (in proportion).
        double leastOverflow = std::numeric_limits<double>::infinity();
        std::size_t roomiest = 0;
        for (std::size_t d = 0; d < devices; ++d) {
            // Uncapped devices (every single-process plan) skip the count: this loop is hot.
            if (const std::uint64_t cap = m_model.devices[d].memoryBytes) {
                const double after = m_memory[d] + bytesOn(n, d);
                if (after > double(cap)) {
                    if (after / double(cap) < leastOverflow) {
                        leastOverflow = after / double(cap);
                        roomiest = d;
                    }
                    continue;
                }
            }
            const double length = m_c.seconds[n.index][d];
            const double finish = earliestGap(m_busy[d], readyOn(n, d), length) + length;
            if (finish < bestFinish) {
                bestFinish = finish;
                best = d;
            }
        }
        if (best == devices) {
            best = roomiest;
            m_p.overflows = true;
        }
        m_memory[best] += bytesOn(n, best);
        for (const auto &[value, bytes] : m_c.weights[n.index])
            m_holds[best][value] = 1;
        // Commit the new copies into `best` (earliest inputs first), then the node itself.
        std::vector<NodeId> copies;
        for (NodeId q : m_c.preds[n.index])
            if (std::size_t(m_p.device[q.index]) != best && !m_p.recvStart.count({q.index, int(best)}))
                copies.push_back(q);
        std::sort(copies.begin(), copies.end(),
                  [&](NodeId a, NodeId b) { return m_finish[a.index] < m_finish[b.index]; });
        for (NodeId q : copies) {
            const double copy =
                m_model.transferSeconds(m_c.outputBytes[q.index], std::size_t(m_p.device[q.index]), best);
            const double start = earliestGap(copyLane(best), m_finish[q.index], copy);
            occupy(copyLane(best), start, start + copy);
            m_p.recvStart[{q.index, int(best)}] = start;
        }
        const double length = m_c.seconds[n.index][best];
        const double start = earliestGap(m_busy[best], readyOn(n, best), length);
        m_p.device[n.index] = int(best);
        m_p.start[n.index] = start;
        m_finish[n.index] = start + length;
        occupy(m_busy[best], start, start + length);
        m_p.makespan = std::max(m_p.makespan, start + length);
    }

    // What placing n on d adds to d: its outputs, the weights d does not hold yet, and the copies
    // of inputs made elsewhere that d has not received yet.
    double bytesOn(NodeId n, std::size_t d) const
    {
        double bytes = m_c.outputBytes[n.index];
        for (const auto &[value, size] : m_c.weights[n.index])
            if (!m_holds[d][value])
                bytes += size;
        for (NodeId q : m_c.preds[n.index])
            if (std::size_t(m_p.device[q.index]) != d && !m_p.recvStart.count({q.index, int(d)}))
                bytes += m_c.outputBytes[q.index];
        return bytes;
    }

    const GraphCosts &m_c;
    const CostModel &m_model;
    std::size_t m_valueSlots = 0;
    Placement m_p;
    std::vector<double> m_finish, m_memory;
    std::vector<std::vector<char>> m_holds; // [device][value slot]: the weight is on the device
    std::vector<std::vector<Interval>> m_busy, m_copyBusy;
};

} // namespace

Expected<Placement> placeGreedy(const Graph &graph, const CostModel &model, const PlacementOptions &options)
{
    Expected<GraphCosts> costs = graphCosts(graph, model);
    if (!costs)
        return costs.status();
    const GraphCosts &c = *costs;
    const std::vector<double> rank = upwardRanks(c, model);
    Heft heft(c, model);
    Placement best = heft.run(rank);
    // A budget of about 2·10⁷ steps (~20 per node-device trial: gap search, input copies) keeps
    // placement well under a second on big graphs: 64 passes at 400 nodes × 8 devices.
    const double trials = double(std::max<std::size_t>(1, c.order.size())) * double(model.devices.size());
    const int refinements = options.refinements >= 0   ? options.refinements
                            : model.devices.size() < 2 ? 0
                                                       : int(std::clamp(2e7 / (trials * 20.0), 0.0, 64.0));
    std::mt19937 rng(options.seed);
    std::vector<double> perturbed(rank.size());
    for (int i = 0; i < refinements; ++i) {
        // Small perturbations reorder near-ties; larger ones explore other placements.
        const double spread = (i % 3 == 0) ? 0.05 : (i % 3 == 1) ? 0.15 : 0.35;
        std::uniform_real_distribution<double> factor(1.0 - spread, 1.0 + spread);
        for (std::size_t s = 0; s < rank.size(); ++s)
            perturbed[s] = rank[s] * factor(rng);
        Placement candidate = heft.run(perturbed);
        // Fitting the caps comes first, then speed.
        if (std::pair(candidate.overflows, candidate.makespan) < std::pair(best.overflows, best.makespan))
            best = std::move(candidate);
    }
    // Where transfers cost more than concurrency gains (small models), one device is best: the
    // fastest one, running everything in dependency order.
    double bytes = 0.0;
    std::vector<char> counted;
    for (NodeId n : c.order) {
        bytes += c.outputBytes[n.index];
        for (const auto &[value, size] : c.weights[n.index]) {
            if (counted.size() <= value)
                counted.resize(value + 1, 0);
            if (!counted[value])
                bytes += size;
            counted[value] = 1;
        }
    }
    std::size_t fastest = 0;
    double alone = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < model.devices.size(); ++d) {
        double total = 0.0;
        for (NodeId n : c.order)
            total += c.seconds[n.index][d];
        const std::uint64_t cap = model.devices[d].memoryBytes;
        if (total < alone && (!cap || bytes <= double(cap))) {
            alone = total;
            fastest = d;
        }
    }
    // `alone` is finite only where the fastest device has room for everything.
    if (alone < best.makespan || (best.overflows && alone < std::numeric_limits<double>::infinity())) {
        Placement single;
        single.device.assign(c.seconds.size(), -1);
        single.start.assign(c.seconds.size(), 0.0);
        double t = 0.0;
        for (NodeId n : c.order) {
            single.device[n.index] = int(fastest);
            single.start[n.index] = t;
            t += c.seconds[n.index][fastest];
        }
        single.makespan = t;
        single.memory.assign(model.devices.size(), 0.0);
        single.memory[fastest] = bytes;
        best = std::move(single);
    }
    return best;
}

Expected<Placement> placeRoundRobin(const Graph &graph, const CostModel &model, std::size_t devices)
{
    Expected<GraphCosts> costs = graphCosts(graph, model);
    if (!costs)
        return costs.status();
    Placement p;
    p.device.assign(graph.nodeSlots(), -1);
    p.start.assign(graph.nodeSlots(), 0.0);
    const std::size_t count = devices ? std::min(devices, model.devices.size()) : model.devices.size();
    std::size_t next = 0;
    for (NodeId n : costs->order) {
        p.start[n.index] = double(next);
        p.device[n.index] = int(next++ % count);
    }
    return p;
}

} // namespace opscope::schedule
