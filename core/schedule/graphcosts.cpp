#include "schedule/graphcosts.h"

#include "ir/dependencies.h"

#include <algorithm>

namespace opscope::schedule {

Expected<GraphCosts> graphCosts(const Graph &graph, const CostModel &model)
{
    if (model.devices.empty())
        return Status::invalid("the cost model has no devices");
    GraphCosts c;
    Expected<std::vector<NodeId>> order = dependencyOrder(graph);
    if (!order)
        return order.status();
    c.order = std::move(*order);
    c.position.assign(graph.nodeSlots(), -1);
    for (std::size_t i = 0; i < c.order.size(); ++i)
        c.position[c.order[i].index] = int(i);
    c.preds = nodePredecessors(graph);
    c.succs.resize(graph.nodeSlots());
    for (NodeId n : c.order)
        for (NodeId p : c.preds[n.index])
            c.succs[p.index].push_back(n);
    c.seconds.assign(graph.nodeSlots(), std::vector<double>(model.devices.size(), 0.0));
    c.outputBytes.assign(graph.nodeSlots(), 0.0);
    c.weights.assign(graph.nodeSlots(), {});
    for (NodeId n : c.order) {
        const OpCost cost = estimateCost(graph, n);
        c.outputBytes[n.index] = cost.outputBytes;
        const Node &node = graph.node(n);
        const auto readsWeight = [&](ValueId v) {
            if (!v.valid() || !graph.value(v).initializer)
                return;
            if (model.embeddedWeightsEverywhere && !graph.value(v).initializer->isMapped())
                return;
            auto &w = c.weights[n.index];
            if (std::none_of(w.begin(), w.end(), [&](const auto &e) { return e.first == v.index; }))
                w.emplace_back(v.index, double(graph.value(v).initializer->byteSize()));
        };
        for (ValueId v : node.inputs)
            readsWeight(v);
        if (node.hasSubgraphs())
            for (ValueId v : implicitInputs(graph, n))
                readsWeight(v);
        const bool ours = node.domain == "ai.opscope";
        for (std::size_t d = 0; d < model.devices.size(); ++d) {
            if (ours && node.opType == "Send") {
                c.seconds[n.index][d] = 0.0; // hands the tensor over; Recv does the copy
            } else if (ours && node.opType == "Recv") {
                // The copy over the link, as an unpartitioned edge between those devices costs.
                const Attribute *from = node.attribute("from");
                const Attribute *to = node.attribute("to");
                const auto devices = std::int64_t(model.devices.size());
                const bool known =
                    from && to && from->i >= 0 && to->i >= 0 && from->i < devices && to->i < devices;
                c.seconds[n.index][d] =
                    known ? model.transferSeconds(cost.outputBytes, std::size_t(from->i), std::size_t(to->i))
                          : model.link.latencySeconds + cost.outputBytes / model.link.bytesPerSecond;
            } else if (const auto m = model.measuredSeconds.find(node.name);
                       m != model.measuredSeconds.end()) {
                c.seconds[n.index][d] = m->second;
            } else {
                c.seconds[n.index][d] = model.seconds(cost, d);
            }
        }
    }
    return c;
}

std::vector<double> upwardRanks(const GraphCosts &c, const CostModel &model)
{
    std::vector<double> rank(c.seconds.size(), 0.0);
    // Seconds per byte, averaged over the device pairs (links between processes are slower).
    double meanLink = 0.0;
    const std::size_t devices = model.devices.size();
    for (std::size_t i = 0; i < devices; ++i)
        for (std::size_t j = 0; j < devices; ++j)
            if (i != j)
                meanLink += (model.transferSeconds(2.0, i, j) - model.transferSeconds(1.0, i, j)) /
                            double(devices * (devices - 1));
    for (auto it = c.order.rbegin(); it != c.order.rend(); ++it) {
        const auto &s = c.seconds[it->index];
        double mean = 0.0;
        for (double x : s)
            mean += x;
        mean /= double(std::max<std::size_t>(1, s.size()));
        double best = 0.0;
        for (NodeId succ : c.succs[it->index])
            best = std::max(best, rank[succ.index] + c.outputBytes[it->index] * meanLink);
        rank[it->index] = mean + best;
    }
    return rank;
}

} // namespace opscope::schedule
