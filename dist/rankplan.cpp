#include "rankplan.h"

#include <cstring>

namespace opscope::dist {

using nlohmann::json;

std::string graphSignature(const Graph &graph)
{
    // FNV-1a over what a slot-indexed plan relies on.
    std::uint64_t h = 1469598103934665603ull;
    const auto mix = [&h](const std::string &s) {
        for (unsigned char c : s)
            h = (h ^ c) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    };
    for (NodeId n : graph.nodeIds()) {
        const Node &node = graph.node(n);
        mix(std::to_string(n.index));
        mix(node.domain + "::" + node.opType);
        mix(node.name);
        for (ValueId v : node.inputs)
            mix(v.valid() ? graph.value(v).name : "");
        for (ValueId v : node.outputs)
            mix(v.valid() ? graph.value(v).name : "");
    }
    return std::to_string(graph.nodeSlots()) + ":" + std::to_string(h);
}

std::vector<std::byte> packJson(const json &j)
{
    const std::vector<std::uint8_t> p = json::to_msgpack(j);
    std::vector<std::byte> out(p.size());
    if (!p.empty())
        std::memcpy(out.data(), p.data(), p.size());
    return out;
}

json unpackJson(const std::vector<std::byte> &b)
{
    const auto *p = reinterpret_cast<const std::uint8_t *>(b.data());
    return json::from_msgpack(p, p + b.size());
}

json tensorToJson(const RuntimeTensor &t)
{
    const std::vector<std::byte> b = encodeTensor(t);
    const auto *p = reinterpret_cast<const std::uint8_t *>(b.data());
    return json::binary_t(std::vector<std::uint8_t>(p, p + b.size()));
}

Expected<RuntimeTensor> tensorFromJson(const json &j)
{
    const auto &bin = j.get_binary();
    return decodeTensor(std::span(reinterpret_cast<const std::byte *>(bin.data()), bin.size()));
}

json encodePlan(const schedule::Placement &place, const schedule::Schedule &s, std::size_t slots)
{
    json j;
    j["slots"] = slots;
    j["device"] = place.device;
    j["start"] = place.start;
    json recv = json::array();
    for (const auto &[key, t] : place.recvStart)
        recv.push_back({key.first, key.second, t});
    j["recv"] = std::move(recv);
    j["predicted"] = s.predictedMakespan;
    j["name"] = s.plan.name;
    j["devices"] = s.plan.devices;
    json queues = json::array();
    for (const PlanQueue &q : s.plan.queues) {
        json steps = json::array();
        for (const PlanStep &st : q.steps) {
            json waits = json::array();
            for (const StepRef &r : st.waitFor)
                waits.push_back({r.queue, r.step});
            steps.push_back({st.node.index, std::move(waits)});
        }
        queues.push_back({{"device", q.device}, {"workers", q.workers}, {"steps", std::move(steps)}});
    }
    j["queues"] = std::move(queues);
    return j;
}

void decodePlan(const json &j, schedule::Placement &place, ExecutionPlan &plan, double &predicted)
{
    place.device = j.at("device").get<std::vector<int>>();
    place.start = j.at("start").get<std::vector<double>>();
    for (const json &r : j.at("recv"))
        place.recvStart[{r[0].get<std::uint32_t>(), r[1].get<int>()}] = r[2].get<double>();
    predicted = j.at("predicted").get<double>();
    plan.name = j.at("name").get<std::string>();
    plan.devices = j.at("devices").get<std::vector<std::string>>();
    for (const json &q : j.at("queues")) {
        PlanQueue queue;
        queue.device = q.at("device").get<int>();
        queue.workers = q.at("workers").get<int>();
        for (const json &st : q.at("steps")) {
            PlanStep step;
            step.node = NodeId{st[0].get<std::uint32_t>()};
            for (const json &w : st[1])
                step.waitFor.push_back({w[0].get<std::uint32_t>(), w[1].get<std::uint32_t>()});
            queue.steps.push_back(std::move(step));
        }
        plan.queues.push_back(std::move(queue));
    }
}

Expected<ExecutionPlan> localPlan(const ExecutionPlan &global, const std::vector<int> &rankOfDevice, int rank,
                                  const Graph &graph)
{
    std::vector<bool> mine(global.devices.size(), false);
    for (std::size_t d = 0; d < global.devices.size() && d < rankOfDevice.size(); ++d)
        mine[d] = rankOfDevice[d] == rank;
    return subPlan(global, mine, graph);
}

} // namespace opscope::dist
