#pragma once
// partition-for-devices: places every node on one of N CPU devices with the greedy (HEFT)
// scheduler and the calibrated cost model, then gives every tensor that crosses devices a
// Send/Recv pair (schedule/partition.h). The placement is recorded in the model's metadata
// ("opscope.placement": node name → device) so views colour nodes by device and it survives
// export; --target onnx lowers Send/Recv to Identity.
//
//     a ──► b ──► c        →       a(dev0) ──► Send ──► Recv ──► b(dev1) ──► Send ──► Recv ──► c(dev0)
//
// Not part of any level: the pass stepper and `optimize --passes` run it on request
// (PassOptions::devices).

#include "passes/pass.h"

#include <map>
#include <string>

namespace opscope::passes {

class PartitionForDevices final : public Pass
{
public:
    std::string name() const override { return "partition-for-devices"; }
    Expected<bool> run(Model &model, PassContext &context) override;
};

// The placement recorded by the pass (empty when there is none).
std::map<std::string, int> placementOf(const Model &model);

} // namespace opscope::passes
