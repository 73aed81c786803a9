#pragma once
// dead-code-elimination: removes nodes none of whose outputs reach a graph output (directly or
// through a subgraph that reads them by name), initializers nothing reads, and — inside If/Loop/Scan
// bodies — dead nodes, unused constants and captured outer values the body no longer reads.
//
//     x ──► Relu ──► y (output)            x ──► Relu ──► y (output)
//     x ──► Sigmoid ──► (unused)     →
//     W (initializer, unused)
//
// Graph inputs of the main graph are the model's interface and stay, used or not; so do the formal
// inputs of Loop/Scan bodies, whose positions carry meaning.

#include "passes/pass.h"

namespace opscope::passes {

class DeadCodeElimination final : public Pass
{
public:
    std::string name() const override { return "dead-code-elimination"; }
    Expected<bool> run(Model &model, PassContext &context) override;
};

// Also used by other passes' tests and by the pipeline helpers.
bool eliminateDeadCode(Graph &graph);

} // namespace opscope::passes
