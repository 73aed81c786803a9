#pragma once
// What the structure checks (schemacheck.cpp) and the inference guards (inferenceguards.cpp)
// share: the rank bound, the shape-input table, and how a node is named in a message.

#include <cstdint>
#include <functional>
#include <map>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <string>

namespace opscope::schemadetail {

// Ranks beyond any real model's (ONNX Runtime's kernels stop well below): a bound that keeps
// libonnx from building millions of dims out of one bad shape tensor.
inline constexpr std::int64_t kMaxTensorRank = 64;

// Ops whose output rank is the length of a 1-D input (by input index): libonnx makes one dim per
// entry. Checked on declared lengths before inference and guarded during it.
const std::map<std::string, int> &shapeInputs();

std::string canonicalDomain(const std::string &domain); // "ai.onnx" → ""
std::string shown(const std::string &name);              // control characters escaped
std::string nodeLabel(const onnx::NodeProto &n);         // "node 'x' (Conv)" or "an unnamed Conv node"
// Ops whose inference and kernels divide by or index with their window attributes.
bool isWindowOp(const std::string &op);
// Replaces the inference function of every version of `op`'s schema by wrap(original): how the
// guards and the missing rules (installInferenceGaps, inferencegaps.cpp) hook into libonnx.
void wrapInference(const std::string &op,
                   const std::function<onnx::InferenceFunction(onnx::InferenceFunction)> &wrap);
void installInferenceGaps();

} // namespace opscope::schemadetail
