#pragma once
// The node names a written model keeps from the model it was optimized from.
//
// Passes name what they create after what it replaces, and an export lowering writes fused ops
// back as plain ones: a ResNet's untouched Add came out as "/layer1/0/Add_Add_Add", its Conv as
// "…/Conv_Relu_NchwcConv_FusedConv_conv". Such a model no longer lined up with its source — the
// app's compare view showed every node removed and added again, and a user could not find a node
// by the name the exporter gave it. Before writing, a node takes back the name of the original
// node it stands for, found (in this order) as
//   - the longest original name its own name starts with ("<name>_…"), of its op type: what every
//     pass's naming keeps, through the layout passes and the lowering;
//   - the one original node of its op type among those it replaced (passes::replacementOrigins);
//   - after a node already named back, the next node of its op type downstream of that node's
//     original, past nodes the passes removed (Conv → BatchNormalization → Relu written back as
//     Conv → Relu: the Relu is the original Relu).
// Only names no other node has, each once. Tensor names are left as they are: a Conv with its
// BatchNorm folded in computes what the BatchNorm wrote, not what the Conv did, and a tensor
// name is a promise about values.

#include "ir/graph.h"
#include "passes/pipeline.h"

namespace opscope::passes {

// Returns how many nodes were named back.
std::size_t restoreOriginalNames(Graph &graph, const Graph &original, const PipelineResult &result);

} // namespace opscope::passes
