#pragma once
// constant-propagation: carries constants across graph boundaries after upstream folding.
//  - An If whose condition became constant is replaced by the branch it would take, inlined.
//  - A constant of an enclosing graph read by an If/Loop/Scan body becomes a constant of that
//    body (same bytes, shared), and the body is folded.
//
//     c=true ──► If ──► y           then_branch: a ──► Relu ──► t
//                │                  →      a ──► Relu ──► y
//     W ──► Loop(body: x·W …)       →      Loop(body: x·W' …)  with W' a body constant, folded there
//
// Valid because branches and bodies are pure functions of their inputs and captured values.
// Branches that themselves contain subgraphs are not inlined (their captures would need renaming).

#include "passes/pass.h"

namespace opscope::passes {

class ConstantPropagation final : public Pass
{
public:
    std::string name() const override { return "constant-propagation"; }
    bool repeatsToFixedPoint() const override { return true; }
    Expected<bool> run(Model &model, PassContext &context) override;
};

} // namespace opscope::passes
