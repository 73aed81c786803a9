#pragma once
// prelu-fusion: the ways exporters write a parametric ReLU by hand → PRelu(x, α).
//
//     Relu(x) + α·(−Relu(−x))        Relu(x) − α·Relu(−x)        Relu(x) + (−α)·Relu(−x)
//     Max(x, 0) + α·Min(x, 0)        Relu(x) + α·Min(x, 0)
//     Where(x < 0 | x ≤ 0, α·x, x)   Where(x > 0 | x ≥ 0, x, α·x)
//     →   x ──► PRelu(α) ──► y           (prelu-to-leakyrelu then turns a single α into LeakyRelu)
//
// Valid when x is float32, α is a float constant that broadcasts to x without growing it
// (PRelu's unidirectional broadcast), and the intermediates have no other readers.

#include "passes/pass.h"

namespace opscope::passes {

class PReluFusion final : public RewritePass
{
public:
    std::string name() const override { return "prelu-fusion"; }

protected:
    void select(const Model &model, const Graph &graph, std::vector<Match> &matches) const override;
    Expected<bool> apply(Model &model, Graph &graph, const Match &match) const override;
};

} // namespace opscope::passes
