#include "rankplanning.h"

#include "rankplan.h"
#include "schedule/partition.h"
#include "schedule/pipeline.h"
#include "util/systemmemory.h"

#include <algorithm>

namespace opscope::dist {

namespace {

// Enough to converge where the first placement missed by a misestimate of reuse; more rarely
// helps and each try runs the whole model once (or plans it from its shapes).
constexpr int kMaxPlacements = 4;
// Aim below the budget: a placement's share is not exactly proportional to its caps.
constexpr double kHeadroom = 0.9;

std::uint64_t fixedBytes(const RankMemory &m, bool limitGiven) { return limitGiven ? m.embeddedBytes : 0; }

} // namespace

void capDevicesByRank(RankPlanRequest &request, const Model &model)
{
    const std::uint64_t everywhere = request.limitGiven ? embeddedWeightBytes(model.graph) : 0;
    std::vector<std::uint64_t> devicesOf(request.available.size(), 0);
    for (int r : request.rankOfDevice)
        if (r >= 0 && std::size_t(r) < devicesOf.size())
            ++devicesOf[std::size_t(r)];
    for (std::size_t d = 0; d < request.cost.devices.size() && d < request.rankOfDevice.size(); ++d) {
        const auto r = std::size_t(request.rankOfDevice[d]);
        const std::uint64_t budget = r < request.available.size() ? request.available[r] : 0;
        const std::uint64_t room = budget > everywhere ? budget - everywhere : 0;
        // 0 is "unlimited": a budget the embedded weights fill leaves each device 1 byte.
        request.cost.devices[d].memoryBytes = budget == 0 ? 0 : std::max<std::uint64_t>(1, room / devicesOf[r]);
    }
}

Expected<RankPlanOutcome> planAcrossRanks(const Model &model, RankPlanRequest request, const Feeds &sizing)
{
    using schedule::Strategy;
    RankPlanOutcome outcome;
    // greedy and pipeline place within the devices' caps; round-robin deals nodes out by turn.
    const bool byMemory = request.strategy == Strategy::Greedy || request.strategy == Strategy::Pipeline;
    const std::string placer = schedule::strategyName(request.strategy);
    // Every rank holds the weights on its heap whatever it runs: they are not a device's to hold.
    request.cost.embeddedWeightsEverywhere = true;
    for (int attempt = 1;; ++attempt) {
        Expected<schedule::Placement> place = schedule::placeFor(model.graph, request.strategy, request.cost);
        if (!place)
            return place.status();
        Expected<schedule::Partition> part = schedule::partitionForDevices(model, *place);
        if (!part)
            return part.status();
        schedule::ScheduleOptions so;
        so.workers = int(request.cost.devices.size());
        Expected<schedule::Schedule> plan = schedule::makeSchedule(part->model.graph, request.strategy, request.cost,
                                                                   so, &part->deviceOf, &part->start);
        if (!plan)
            return plan.status();
        if (Status valid = validatePlan(part->model.graph, plan->plan); !valid)
            return Status::internal("the " + request.name + " plan is invalid: " + valid.message());
        // A pipeline of M micro-batches: each stage's share of the batch M times, the slowest
        // stage setting the pace once the pipeline is full.
        if (request.strategy == Strategy::Pipeline && request.microbatches > 1)
            plan->predictedMakespan =
                schedule::predictPipeline(*plan, request.cost.devices.size(), request.microbatches).makespanSeconds;
        Expected<std::vector<RankMemory>> need =
            predictRankMemory(part->model, part->deviceOf, plan->plan, request.rankOfDevice, request.ranks,
                              request.threads, sizing, request.sizeByRunning, &outcome.unsized);
        if (!need)
            return need.status();
        const Status fits = checkRankMemory(request.name, *need, request.available, request.limitGiven);
        if (fits) {
            outcome.encoded = encodePlan(*place, *plan, part->model.graph.nodeSlots());
            nlohmann::json perRank = nlohmann::json::array();
            for (const RankMemory &m : *need)
                perRank.push_back({m.arenaBytes, m.outsideBytes, m.sendBytes, m.mappedBytes, m.embeddedBytes});
            outcome.encoded["memory"] = std::move(perRank);
            outcome.placements = attempt;
            return outcome;
        }
        const auto refuse = [&](const std::string &why) {
            outcome.encoded = {{"refused", fits.message() + why}};
            outcome.placements = attempt;
            return outcome;
        };
        if (!byMemory)
            return refuse("; start more ranks, give the ranks more memory, or try greedy or pipeline, which place "
                          "within each rank's memory");
        // The placement's count converted to real bytes: the most real bytes per counted byte among
        // the ranks over budget. Every device's cap becomes its rank's budget in counted bytes at
        // that rate (never above the cap it had), so the next placement can neither refill the rank
        // that was over nor move everything to another rank whose cap still reads in the old units.
        double realPerCounted = 0.0;
        for (std::size_t r = 0; r < need->size() && r < request.available.size(); ++r) {
            const RankMemory &m = (*need)[r];
            const std::uint64_t total = m.total(request.limitGiven), budget = request.available[r];
            if (budget == 0 || total <= budget)
                continue;
            const std::uint64_t fixed = fixedBytes(m, request.limitGiven);
            if (fixed >= budget)
                return refuse("; the weights every rank holds in memory alone take " + bytesText(fixed) +
                              ", wherever its nodes run (weights under 64 KiB, and those the passes made where "
                              "they could not be spilled to a scratch file on disk: see the note); weights in "
                              "external data, embedded ones of 64 KiB or more and those the passes made are "
                              "mapped, and each rank reads only those its nodes use");
            double counted = 0.0;
            for (std::size_t d = 0; d < request.rankOfDevice.size() && d < place->memory.size(); ++d)
                if (request.rankOfDevice[d] == int(r))
                    counted += place->memory[d];
            if (counted > 0.0)
                realPerCounted = std::max(realPerCounted, double(total - fixed) / counted);
        }
        bool tightened = false;
        if (realPerCounted > 0.0) {
            std::vector<int> devicesOf(request.available.size(), 0);
            for (int r : request.rankOfDevice)
                if (r >= 0 && std::size_t(r) < devicesOf.size())
                    ++devicesOf[std::size_t(r)];
            for (std::size_t d = 0; d < request.rankOfDevice.size() && d < request.cost.devices.size(); ++d) {
                const auto r = std::size_t(request.rankOfDevice[d]);
                if (r >= request.available.size() || request.available[r] == 0)
                    continue;
                const std::uint64_t fixed = fixedBytes((*need)[r], request.limitGiven);
                const double room = request.available[r] > fixed ? double(request.available[r] - fixed) : 0.0;
                double cap = std::max(1.0, room / realPerCounted * kHeadroom / std::max(1, devicesOf[r]));
                std::uint64_t &old = request.cost.devices[d].memoryBytes;
                if (old)
                    cap = std::min(cap, double(old));
                if (std::uint64_t(cap) != old)
                    tightened = true;
                old = std::uint64_t(cap);
            }
        }
        if (!tightened || attempt == kMaxPlacements)
            return refuse("; " + placer + " found no placement within it in " + std::to_string(attempt) +
                          (attempt == 1 ? " try" : " tries") + ": start more ranks or give the ranks more memory");
    }
}

} // namespace opscope::dist
