#pragma once
// What rank 0 sends the other ranks about a plan, and what each rank keeps of it: the graph's
// signature (every rank must hold the same one), a placement and plan by node slot as MessagePack,
// and a rank's own queues of a plan over every rank's devices.

#include "mpitransfers.h"
#include "runtime/executionplan.h"
#include "runtime/runtimetensor.h"
#include "schedule/scheduler.h"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace opscope::dist {

// What every rank checks before trusting rank 0's plan: node slots, op types, names and wiring.
std::string graphSignature(const Graph &graph);

std::vector<std::byte> packJson(const nlohmann::json &j);
nlohmann::json unpackJson(const std::vector<std::byte> &bytes);
// A tensor as a MessagePack binary (encodeTensor's bytes) and back.
nlohmann::json tensorToJson(const RuntimeTensor &t);
Expected<RuntimeTensor> tensorFromJson(const nlohmann::json &j);

// What rank 0 decides for one schedule: the placement over all ranks' devices and the plan.
nlohmann::json encodePlan(const schedule::Placement &place, const schedule::Schedule &s, std::size_t slots);
void decodePlan(const nlohmann::json &j, schedule::Placement &place, ExecutionPlan &plan, double &predicted);

// This rank's queues of a plan over every rank's devices (subPlan): a step waiting for another
// rank's step is a Recv of a cross-rank edge, its data arriving over MPI instead.
Expected<ExecutionPlan> localPlan(const ExecutionPlan &global, const std::vector<int> &rankOfDevice, int rank,
                                  const Graph &graph);

} // namespace opscope::dist
