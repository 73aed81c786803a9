// opscope-cli memory: the memory plan of a model under a schedule. One sizing run with the given
// or random inputs learns every tensor's size; the plan puts them into one arena per device (in
// place, views, sharing between tensors whose lifetimes cannot overlap); a second run from the
// plan must compute the first's outputs bit for bit. Prints per device naive / in-place / planned
// bytes against the lower bound, and the tensors live at the peak.

#include "commands.h"
#include "profileformat.h"
#include "onnx/modelio.h"
#include "runtime/conformance.h"
#include "runtime/randominputs.h"
#include "schedule/costmodel.h"
#include "schedule/partition.h"
#include "util/numbers.h"
#include "util/systemmemory.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

namespace opscope::cli {
namespace {

std::string ratio(std::uint64_t a, std::uint64_t b)
{
    if (b == 0)
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", double(a) / double(b));
    return buf;
}

} // namespace

int runMemory(const MemoryArgs &args)
{
    Expected<schedule::Strategy> strategy = schedule::strategyFromName(args.schedule);
    if (!strategy)
        return reportError(strategy.status());
    Expected<int> devices = deviceCount(args.devices);
    if (!devices)
        return reportError(devices.status());
    Expected<ImportResult> loaded = loadModel(args.model);
    if (!loaded)
        return reportError(loaded.status());
    Model model = loaded->model;
    model.graph.assignNodeNames();
    if (Expected<double> opt = optimizeForRun(model, args.optimize); !opt)
        return reportError(opt.status());
    Expected<GivenInputs> given = givenInputsFor(model.graph, args.inputs, args.dims);
    if (!given)
        return reportError(given.status());
    noteUnboundDims(model.graph, given->tensors, given->dims);

    // Serial and parallel plan the model as it is; greedy and round-robin place it on the devices
    // and partition it (Send/Recv), as profile does.
    const int deviceCount = *strategy == schedule::Strategy::Serial ? 1 : *devices;
    schedule::CostModel cost = schedule::calibratedCpuModel(deviceCount, 1);
    schedule::ScheduleOptions so;
    so.workers = deviceCount;
    so.sharedQueue = !args.fixedQueues;
    Expected<schedule::DevicePlan> planned = schedule::planForDevices(model, *strategy, cost, so);
    if (!planned)
        return reportError(planned.status());
    const Model &runModel = planned->partition.model;
    const ExecutionPlan &plan = planned->schedule.plan;

    SessionOptions options;
    options.memory.inPlace = !args.noInPlace;
    options.memory.share = !args.noShare;
    options.memory.strategy = args.offsets == "size"      ? OffsetStrategy::BySize
                              : args.offsets == "breadth" ? OffsetStrategy::ByBreadth
                                                          : OffsetStrategy::Best;
    Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(runModel, options);
    if (!session)
        return reportError(session.status());
    RandomInputOptions random;
    random.seed = args.seed;
    random.dims = given->dims;
    Expected<Feeds> feeds = randomFeeds(**session, given->tensors, random);
    if (!feeds)
        return reportError(feeds.status());
    Expected<std::vector<RuntimeTensor>> sized = (*session)->run(*feeds, &plan);
    if (!sized)
        return reportError(sized.status());
    const std::shared_ptr<const MemoryPlan> memory = (*session)->memoryPlan(*feeds, &plan);
    if (!memory)
        return reportError(Status::internal("the sizing run made no memory plan"));
    if (Status valid = verifyMemoryPlan((*session)->prepared(), plan, *memory); !valid)
        return reportError(valid);
    MemoryRunStats stats;
    ExecOptions exec;
    exec.memoryStats = &stats;
    Expected<std::vector<RuntimeTensor>> again = (*session)->run(*feeds, &plan, &exec);
    if (!again)
        return reportError(again.status().withContext("run from the memory plan"));
    for (std::size_t i = 0; i < sized->size() && i < again->size(); ++i)
        if (!sameBits((*sized)[i], (*again)[i]))
            return reportError(Status::internal("output '" + (*session)->outputs()[i].name +
                                                "' differs when run from the memory plan"));

    const Graph &g = runModel.graph;
    if (args.json) {
        nlohmann::ordered_json j;
        j["model"] = args.model;
        j["schedule"] = schedule::strategyName(*strategy);
        j["planning_ms"] = memory->planningMs;
        j["checked"] = {{"bit_identical", true}, {"in_arena", stats.inArena}, {"elsewhere", stats.elsewhere},
                        {"copied_out", stats.copiedOut}};
        j["devices"] = nlohmann::ordered_json::array();
        for (const DeviceMemory &dm : memory->devices) {
            nlohmann::ordered_json d;
            d["name"] = dm.device;
            d["steps"] = dm.steps;
            d["naive_bytes"] = dm.naiveBytes;
            d["inplace_bytes"] = dm.inPlaceBytes;
            d["planned_bytes"] = dm.plannedBytes;
            d["lower_bound_bytes"] = dm.lowerBoundBytes;
            d["outside_bytes"] = dm.outsideBytes;
            d["peak_step"] = dm.peakStep;
            d["peak_step_bytes"] = dm.peakStepBytes;
            d["strategy"] = dm.strategy;
            d["tensors"] = nlohmann::ordered_json::array();
            for (const PlannedTensor &t : dm.tensors) {
                nlohmann::ordered_json tj;
                tj["name"] = plannedName(g, t);
                tj["producer"] = g.node(t.producer).name;
                tj["placement"] = placementName(t.placement);
                if (inArena(*memory, t))
                    tj["offset"] = t.offset;
                else
                    tj["offset"] = nullptr;
                tj["bytes"] = t.bytes;
                tj["first_step"] = t.firstStep;
                tj["last_step"] = t.lastStep;
                tj["inplace_of"] = t.placement == TensorPlacement::InPlace ? nlohmann::ordered_json(g.value(t.sharesWith).name)
                                                                     : nlohmann::ordered_json(nullptr);
                tj["view_of"] = t.placement == TensorPlacement::View ? nlohmann::ordered_json(g.value(t.sharesWith).name)
                                                               : nlohmann::ordered_json(nullptr);
                d["tensors"].push_back(std::move(tj));
            }
            j["devices"].push_back(std::move(d));
        }
        std::cout << j.dump(2) << '\n';
        return ExitOk;
    }

    std::printf("memory plan of %s (%s, %zu device%s), planned in %.2f ms\n", args.model.c_str(),
                schedule::strategyName(*strategy).c_str(), memory->devices.size(),
                memory->devices.size() == 1 ? "" : "s", memory->planningMs);
    std::printf("\n%-8s %7s %12s %12s %12s %12s  %s\n", "device", "steps", "naive", "in-place", "planned",
                "lower bound", "strategy (planned / bound)");
    for (const DeviceMemory &dm : memory->devices)
        std::printf("%-8s %7u %12s %12s %12s %12s  %s (%s)\n", dm.device.c_str(), dm.steps,
                    bytesText(dm.naiveBytes).c_str(), bytesText(dm.inPlaceBytes).c_str(),
                    bytesText(dm.plannedBytes).c_str(), bytesText(dm.lowerBoundBytes).c_str(), dm.strategy.c_str(),
                    ratio(dm.plannedBytes, dm.lowerBoundBytes).c_str());
    for (const DeviceMemory &dm : memory->devices) {
        std::size_t counts[8] = {};
        for (const PlannedTensor &t : dm.tensors)
            ++counts[int(t.placement)];
        const auto n = [&](TensorPlacement p, const char *one, const char *many) {
            const std::size_t c = counts[int(p)];
            return std::to_string(c) + " " + (c == 1 ? one : many);
        };
        std::printf("\n%s: %zu in the arena, %zu in place over their input, %s, %s; own allocations (%s): %s, %zu "
                    "of data-dependent size (graph outputs too), %zu made by their kernel; %s\n",
                    dm.device.c_str(), counts[int(TensorPlacement::Arena)], counts[int(TensorPlacement::InPlace)],
                    n(TensorPlacement::View, "view", "views").c_str(),
                    n(TensorPlacement::Workspace, "kernel workspace", "kernel workspaces").c_str(),
                    bytesText(dm.outsideBytes).c_str(),
                    n(TensorPlacement::Output, "graph output of known size", "graph outputs of known size").c_str(),
                    counts[int(TensorPlacement::Dynamic)], counts[int(TensorPlacement::Own)],
                    n(TensorPlacement::External, "constant", "constants").c_str());
        std::vector<const PlannedTensor *> peak;
        for (const PlannedTensor &t : dm.tensors)
            if (inArena(*memory, t) && t.placement != TensorPlacement::View &&
                t.firstStep <= dm.peakStep && dm.peakStep <= t.lastStep)
                peak.push_back(&t);
        std::sort(peak.begin(), peak.end(), [](auto *a, auto *b) { return a->bytes > b->bytes; });
        if (peak.empty())
            continue;
        std::printf("live at the peak (step %u of %u):\n  %10s %10s %13s  %s\n", dm.peakStep, dm.steps, "bytes",
                    "offset", "steps", "tensor (producer)");
        for (std::size_t i = 0; i < peak.size() && int(i) < args.top; ++i) {
            const PlannedTensor &t = *peak[i];
            const std::string steps = std::to_string(t.firstStep) + "-" + std::to_string(t.lastStep);
            std::printf("  %10s %10llu %13s  %s (%s)%s\n", bytesText(t.bytes).c_str(), (unsigned long long)t.offset,
                        steps.c_str(), oneLine(plannedName(g, t)).c_str(),
                        oneLine(g.node(t.producer).name).c_str(),
                        t.placement == TensorPlacement::InPlace ? (" in place of " + oneLine(g.value(t.sharesWith).name)).c_str()
                                                          : "");
        }
    }
    // Counted as the run met them: in-place tensors and views live in the arena too, so this is
    // the line above's "in the arena", "in place" and "view" together.
    std::printf("\nchecked: the run from the plan computed the sizing run's outputs bit for bit (%zu tensors read "
                "or written in the arena, in place and views included; %zu planned there but allocated elsewhere "
                "by their kernel, %zu copied out)\n",
                stats.inArena, stats.elsewhere, stats.copiedOut);
    return ExitOk;
}

} // namespace opscope::cli
