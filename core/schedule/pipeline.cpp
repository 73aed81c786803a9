#include "schedule/pipeline.h"

#include "schedule/graphcosts.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace opscope::schedule {

namespace {

// Fills stages in dependency order: a new stage when the next node would take the stage past
// `budget` seconds, or past its device's memory cap — the weights its nodes read (once), their
// outputs and the tensors it receives from earlier stages, counted as greedy counts them. Any
// prefix of a stage that fits also fits, so filling greedily needs the fewest stages for a budget
// and the count only falls as the budget grows: the budget can be bisected.
class StageFill
{
public:
    StageFill(const GraphCosts &c, const CostModel &model, std::size_t stages)
        : m_c(c), m_model(model), m_stages(stages), m_receivedIn(c.seconds.size())
    {
        std::size_t values = 0;
        for (const auto &w : c.weights)
            for (const auto &[v, b] : w)
                values = std::max<std::size_t>(values, v + 1);
        m_heldIn.resize(values);
    }

    // Stages used for `budget`; with `device`, each node's stage and `memory`'s counts too.
    std::size_t run(double budget, std::vector<int> *device = nullptr, std::vector<double> *memory = nullptr)
    {
        std::size_t stage = 0;
        double load = 0.0, bytes = 0.0;
        std::vector<int> stageOf(m_c.seconds.size(), -1);
        std::fill(m_heldIn.begin(), m_heldIn.end(), -1);
        std::fill(m_receivedIn.begin(), m_receivedIn.end(), -1);
        const auto cap = [&](std::size_t s) {
            return s < m_model.devices.size() && m_model.devices[s].memoryBytes
                       ? double(m_model.devices[s].memoryBytes)
                       : std::numeric_limits<double>::infinity();
        };
        for (std::size_t i = 0; i < m_c.order.size(); ++i) {
            const NodeId n = m_c.order[i];
            const double seconds = m_c.seconds[n.index][0];
            double adds = addedBytes(n, stage, stageOf);
            const std::size_t left = m_c.order.size() - i;
            // Bounded by the devices (`m_stages`): each stage gets at least one node while there
            // are enough; the last one takes what is left, over budget or not.
            const bool last = m_stages && stage + 1 >= m_stages;
            const bool mustCut = m_stages && !last && left <= m_stages - stage - 1;
            if (!last && load > 0.0 && (load + seconds > budget || bytes + adds > cap(stage) || mustCut)) {
                if (memory && stage < memory->size())
                    (*memory)[stage] = bytes;
                ++stage;
                load = 0.0, bytes = 0.0;
                adds = addedBytes(n, stage, stageOf);
            }
            bytes += adds;
            // The node is placed: its stage now holds what it added.
            for (const auto &[v, b] : m_c.weights[n.index])
                m_heldIn[v] = int(stage);
            for (NodeId p : m_c.preds[n.index])
                if (stageOf[p.index] >= 0 && std::size_t(stageOf[p.index]) != stage)
                    m_receivedIn[p.index] = int(stage);
            stageOf[n.index] = int(stage);
            if (device)
                (*device)[n.index] = int(stage);
            load += seconds;
        }
        if (memory && stage < memory->size())
            (*memory)[stage] = bytes;
        return stage + 1;
    }

private:
    // What node `n` adds to `stage`: the weights it reads that the stage does not hold yet, its
    // outputs, and its inputs from nodes of earlier stages the stage has not received yet.
    double addedBytes(NodeId n, std::size_t stage, const std::vector<int> &stageOf) const
    {
        double bytes = m_c.outputBytes[n.index];
        for (const auto &[v, b] : m_c.weights[n.index])
            if (m_heldIn[v] != int(stage))
                bytes += b;
        for (NodeId p : m_c.preds[n.index])
            if (stageOf[p.index] >= 0 && std::size_t(stageOf[p.index]) != stage &&
                m_receivedIn[p.index] != int(stage))
                bytes += m_c.outputBytes[p.index];
        return bytes;
    }

    const GraphCosts &m_c;
    const CostModel &m_model;
    std::size_t m_stages;
    // By value slot / node slot: the stage that holds the weight / has received the node's
    // outputs (stages only grow, so the latest is the only one asked about).
    std::vector<int> m_heldIn, m_receivedIn;
};

} // namespace

Expected<Placement> placePipeline(const Graph &graph, const CostModel &model, std::size_t stages)
{
    Expected<GraphCosts> costs = graphCosts(graph, model);
    if (!costs)
        return costs.status();
    const GraphCosts &c = *costs;
    if (stages == 0 || stages > model.devices.size())
        stages = model.devices.size();
    double lo = 0.0, total = 0.0;
    for (NodeId n : c.order) {
        lo = std::max(lo, c.seconds[n.index][0]);
        total += c.seconds[n.index][0];
    }
    double hi = std::max(lo, total);
    StageFill unbounded(c, model, 0);
    for (int i = 0; i < 60 && hi - lo > 1e-12 * std::max(1.0, hi); ++i) {
        const double mid = 0.5 * (lo + hi);
        (unbounded.run(mid) <= stages ? hi : lo) = mid;
    }
    Placement p;
    p.device.assign(c.seconds.size(), -1);
    p.start.assign(c.seconds.size(), 0.0);
    p.memory.assign(model.devices.size(), 0.0);
    StageFill(c, model, stages).run(hi, &p.device, &p.memory);
    double t = 0.0;
    for (NodeId n : c.order) {
        p.start[n.index] = t;
        t += c.seconds[n.index][0];
    }
    p.makespan = t; // one batch: the stages in turn (transfers aside)
    for (std::size_t d = 0; d < p.memory.size(); ++d)
        if (model.devices[d].memoryBytes && p.memory[d] > double(model.devices[d].memoryBytes))
            p.overflows = true;
    return p;
}

PipelinePrediction predictPipeline(const Schedule &schedule, std::size_t devices, int microbatches)
{
    std::vector<double> load(std::max<std::size_t>(1, devices), 0.0);
    for (const PredictedOp &op : schedule.predicted)
        load[op.device % load.size()] += op.finish - op.start;
    PipelinePrediction p;
    p.stages = int(std::count_if(load.begin(), load.end(), [](double x) { return x > 0; }));
    const int m = std::max(1, microbatches);
    p.makespanSeconds = *std::max_element(load.begin(), load.end()) * double(m + p.stages - 1) / double(m);
    p.bubble = idealBubble(m, p.stages);
    return p;
}

double idealBubble(int microbatches, int stages)
{
    const int m = std::max(1, microbatches), s = std::max(1, stages);
    return double(s - 1) / double(m + s - 1);
}

} // namespace opscope::schedule
