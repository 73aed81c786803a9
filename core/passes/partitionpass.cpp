#include "passes/partitionpass.h"

#include "schedule/partition.h"
#include "schedule/scheduler.h"

#include <nlohmann/json.hpp>

namespace opscope::passes {

namespace {
constexpr const char *kKey = "opscope.placement";
}

Expected<bool> PartitionForDevices::run(Model &model, PassContext &context)
{
    const int devices = std::max(1, context.options().devices);
    if (devices < 2)
        return false;
    const schedule::CostModel cost = schedule::calibratedCpuModel(devices, 1);
    Expected<std::vector<int>> place = schedule::placeNodes(model.graph, schedule::Strategy::Greedy, cost);
    if (!place)
        return place.status();
    Expected<schedule::Partition> part = schedule::partitionForDevices(model, *place);
    if (!part)
        return part.status();
    nlohmann::json placement = nlohmann::json::object();
    for (NodeId id : part->model.graph.nodeIds())
        if (id.index < part->deviceOf.size() && part->deviceOf[id.index] >= 0)
            placement[part->model.graph.node(id).name] = part->deviceOf[id.index];
    model = std::move(part->model);
    std::erase_if(model.metadata, [](const auto &kv) { return kv.first == kKey; });
    model.metadata.emplace_back(kKey, placement.dump());
    return true;
}

std::map<std::string, int> placementOf(const Model &model)
{
    std::map<std::string, int> out;
    for (const auto &[key, value] : model.metadata)
        if (key == kKey) {
            try {
                const nlohmann::json placement = nlohmann::json::parse(value); // outlives the loop
                for (const auto &[name, device] : placement.items())
                    out[name] = device.get<int>();
            } catch (const std::exception &) {
                out.clear(); // not ours, or damaged: no colours
            }
        }
    return out;
}

} // namespace opscope::passes
