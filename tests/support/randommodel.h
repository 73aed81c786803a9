#pragma once
// Random ONNX models built in code from a seed, for the pass fuzzer (tst_passfuzz) and anything
// else that needs valid models nobody tuned on: elementwise ops (float and int64), MatMul,
// Reshape/Transpose, Gather, Constant nodes and initializers at every level, the patterns the
// fusions and algebra rules look for, duplicated nodes and constants, and If/Loop/Scan nested up
// to three levels whose bodies read values of randomly chosen enclosing levels. Shapes are random
// per model ([a,b] with a, b in 1..4 and the shapes derived from them). If conditions are exact,
// so float rounding differences between two equivalent graphs never flip a branch.

#include <cstdint>
#include <onnx/onnx_pb.h>

namespace opscope::test {

struct RandomModelOptions
{
    int maxDepth = 3;         // subgraph levels below the main graph
    int opsPerGraph = 7;      // ops a graph gets before its outputs (bodies get fewer)
    double controlFlow = 0.3; // chance that an op is an If, Loop or Scan (while depth allows)
};

// The same seed and options give the same model, byte for byte.
onnx::ModelProto randomModel(std::uint64_t seed, const RandomModelOptions &options = {});

} // namespace opscope::test
