#pragma once
// The built-in passes by stable kebab-case name, and the named pipelines (levels).
//
//   basic     folding, propagation, redundant nodes, algebra, CSE, DCE
//   extended  basic + operator replacement/forwarding + every fusion
//   layout    extended + data-layout passes (none yet: layout conversion is a later issue)
//   all       every pass of every level
// Export targets (lower-to-onnx, lower-to-ort) are passes too, outside the levels.

#include "passes/pass.h"

#include <memory>
#include <string>
#include <vector>

namespace opscope::passes {

struct PassInfo
{
    std::string name;
    std::string summary; // one line for --list
    std::string level;   // the first level that includes it ("basic", "extended", "target")
};

const std::vector<PassInfo> &builtinPasses();
std::unique_ptr<Pass> createPass(const std::string &name);
const std::vector<std::string> &levelNames();

struct PipelineSpec
{
    std::string level = "basic";       // used when `passes` is empty
    std::vector<std::string> passes;   // an explicit list and order
    std::vector<std::string> disabled; // dropped from the list
    std::string target = "onnx";       // onnx | ort | none: the lowering appended last
};

// The pass list a spec denotes; unknown names, levels and targets are errors listing the valid ones.
Expected<std::vector<std::string>> resolvePipeline(const PipelineSpec &spec);

} // namespace opscope::passes
