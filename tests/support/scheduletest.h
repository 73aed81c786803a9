#pragma once
// Helpers of the schedule and partition tests: uniform CPU devices, a run that fails the test.

#include "runtime/session.h"
#include "schedule/costmodel.h"

#include <QTest>
#include <string>
#include <vector>

namespace opscope::test {

// n devices of 10 GFLOP/s and 10 GB/s, 2 µs per op, linked at 1 µs and 5 GB/s.
inline schedule::CostModel devices(int n)
{
    schedule::CostModel m;
    for (int i = 0; i < n; ++i)
        m.devices.push_back({"cpu:" + std::to_string(i), 1e10, 1e10, 2e-6, 0});
    m.link = {1e-6, 5e9};
    return m;
}

// The outputs of `model` under `plan` (null: its own serial plan); fails the test on an error.
inline std::vector<RuntimeTensor> runWith(const Model &model, const ExecutionPlan *plan, const Feeds &feeds)
{
    Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(model);
    if (!s) {
        QTest::qFail(s.status().message().c_str(), __FILE__, __LINE__);
        return {};
    }
    Expected<std::vector<RuntimeTensor>> out = (*s)->run(feeds, plan);
    if (!out) {
        QTest::qFail(out.status().message().c_str(), __FILE__, __LINE__);
        return {};
    }
    return *out;
}

} // namespace opscope::test
