#include "schedule/partition.h"

#include "ir/dependencies.h"
#include "passes/passutil.h"

#include <algorithm>
#include <limits>
#include <map>

namespace opscope::schedule {

namespace {

Expected<Partition> partition(const Model &model, const std::vector<int> &deviceOf,
                              const Placement *placement)
{
    Partition p{model, deviceOf, 0, {}};
    if (placement)
        p.start = placement->start;
    // A Send/Recv the placement has no time for is due when its input is (makeSchedule: NaN).
    auto keyAt = [&p, placement](NodeId node, double key) {
        if (!placement)
            return;
        p.start.resize(std::max(p.start.size(), std::size_t(node.index) + 1),
                       std::numeric_limits<double>::quiet_NaN());
        p.start[node.index] = key;
    };
    Graph &g = p.model.graph;
    p.deviceOf.resize(g.nodeSlots(), -1);
    const std::vector<NodeId> nodes = g.nodeIds();
    // If/Loop/Scan nodes whose bodies read a value by name, by value: such a read crosses devices
    // like an input does. In one process the body could read the producer's buffer anyway, but
    // not on a GPU or in another rank, and the plan would order it after a step it has no
    // transfer from.
    std::vector<std::vector<NodeId>> bodyReaders(g.valueSlots());
    for (NodeId n : nodes)
        if (g.node(n).hasSubgraphs())
            for (ValueId v : implicitInputs(g, n))
                bodyReaders[v.index].push_back(n);
    for (NodeId producer : nodes) {
        const int from = p.deviceOf[producer.index];
        for (ValueId out : std::vector<ValueId>(g.node(producer).outputs)) {
            if (!out.valid())
                continue;
            // Consumers by destination device: inputs, and bodies reading it from outside.
            std::map<int, std::pair<std::vector<Use>, std::vector<NodeId>>> byDevice;
            const auto deviceOfNode = [&](NodeId n) { return n.index < p.deviceOf.size() ? p.deviceOf[n.index] : from; };
            for (const Use &u : g.uses(out))
                if (const int to = deviceOfNode(u.node); to >= 0 && to != from)
                    byDevice[to].first.push_back(u);
            for (NodeId reader : bodyReaders[out.index])
                if (const int to = deviceOfNode(reader); to >= 0 && to != from)
                    byDevice[to].second.push_back(reader);
            if (byDevice.empty())
                continue;
            const std::string name = g.value(out).name;
            // A Constant node (Paddle2ONNX and tracers write weights and scalars as hundreds of
            // them) is made again on each device that reads it, not sent: 118 of PP-OCRv4 det's
            // 161 transfers carried Constants' values, scalars among them.
            if (const Node &c = g.node(producer); c.opType == "Constant" && c.inputs.empty() &&
                                                  (c.domain.empty() || c.domain == "ai.onnx") && !c.hasSubgraphs()) {
                const std::vector<Attribute> attributes = c.attributes;
                const std::string domain = c.domain, nodeName = c.name;
                for (auto &[to, readers] : byDevice) {
                    Expected<NodeId> copy = passes::addNodeWithOutputs(g, "Constant", {}, 1,
                                                                       nodeName + "_dev" + std::to_string(to),
                                                                       attributes, domain);
                    if (!copy)
                        return copy.status();
                    const ValueId made = g.node(*copy).outputs[0];
                    g.value(made).type = g.value(out).type;
                    // Named after what it copies ("p2o.helper.constant.8_dev1", not "Constant_240_dev1_out0"),
                    // where that name is free.
                    if (!g.findValue(name + "_dev" + std::to_string(to)).valid())
                        (void)g.renameValue(made, name + "_dev" + std::to_string(to));
                    p.deviceOf.resize(g.nodeSlots(), -1);
                    p.deviceOf[copy->index] = to;
                    if (placement && producer.index < placement->start.size())
                        keyAt(*copy, placement->start[producer.index]);
                    for (const Use &u : readers.first)
                        g.setNodeInput(u.node, u.inputIndex, made);
                    for (NodeId reader : readers.second)
                        renameSubgraphReads(g, reader, name, g.value(made).name);
                }
                // Read only elsewhere: the original goes (drawn as a box of its own, unread).
                if (g.uses(out).empty() && !g.isGraphOutput(out) &&
                    std::none_of(bodyReaders[out.index].begin(), bodyReaders[out.index].end(),
                                 [&](NodeId r) { return deviceOfNode(r) == from; })) {
                    passes::eraseNode(g, producer);
                    p.deviceOf[producer.index] = -1;
                }
                continue;
            }
            Expected<NodeId> send =
                passes::addNodeWithOutputs(g, "Send", {out}, 1, "Send_" + name, {}, passes::kOpscopeDomain);
            if (!send)
                return send.status();
            const ValueId sent = g.node(*send).outputs[0];
            g.value(sent).type = g.value(out).type;
            p.deviceOf.resize(g.nodeSlots(), -1);
            p.deviceOf[send->index] = from;
            if (placement && producer.index < placement->start.size())
                keyAt(*send, placement->start[producer.index]);
            for (auto &[to, readers] : byDevice) {
                Expected<NodeId> recv = passes::addNodeWithOutputs(
                    g, "Recv", {sent}, 1, "Recv_" + name + "_dev" + std::to_string(to),
                    {Attribute::makeInt("from", from), Attribute::makeInt("to", to)}, passes::kOpscopeDomain);
                if (!recv)
                    return recv.status();
                const ValueId received = g.node(*recv).outputs[0];
                g.value(received).type = g.value(out).type;
                p.deviceOf.resize(g.nodeSlots(), -1);
                p.deviceOf[recv->index] = to;
                if (placement) {
                    const auto copy = placement->recvStart.find({producer.index, to});
                    keyAt(*recv, copy != placement->recvStart.end()
                                     ? copy->second
                                     : std::numeric_limits<double>::quiet_NaN());
                }
                for (const Use &u : readers.first)
                    g.setNodeInput(u.node, u.inputIndex, received);
                // The bodies read the received copy by its name (fresh in the whole tree).
                for (NodeId reader : readers.second)
                    renameSubgraphReads(g, reader, name, g.value(received).name);
                ++p.transfers;
            }
            g.node(*send).attributes = {Attribute::makeInt("from", from)};
        }
    }
    passes::ensureOpset(p.model, passes::kOpscopeDomain, 1);
    return p;
}

} // namespace

Expected<Partition> partitionForDevices(const Model &model, const std::vector<int> &deviceOf)
{
    return partition(model, deviceOf, nullptr);
}

Expected<Partition> partitionForDevices(const Model &model, const Placement &placement)
{
    return partition(model, placement.device, &placement);
}

Expected<DevicePlan> planForDevices(const Model &model, Strategy strategy, const CostModel &cost,
                                    const ScheduleOptions &options)
{
    DevicePlan p;
    if (strategy == Strategy::Greedy || strategy == Strategy::RoundRobin || strategy == Strategy::Pipeline) {
        Expected<Placement> place = placeFor(model.graph, strategy, cost);
        if (!place)
            return place.status();
        Expected<Partition> part = partitionForDevices(model, *place);
        if (!part)
            return part.status();
        p.placement = std::move(*place);
        p.partition = std::move(*part);
    } else {
        p.partition.model = model;
    }
    const Partition &part = p.partition;
    Expected<Schedule> plan = makeSchedule(part.model.graph, strategy, cost, options,
                                           part.deviceOf.empty() ? nullptr : &part.deviceOf,
                                           part.start.empty() ? nullptr : &part.start);
    if (!plan)
        return plan.status();
    p.schedule = std::move(*plan);
    return p;
}

} // namespace opscope::schedule
