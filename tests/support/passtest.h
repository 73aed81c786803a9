#pragma once
// The shared harness of the pass tests: models built in code (through ONNX, so shape inference
// fills in the types the passes rely on), a pipeline run with the verifier after every pass, and
// the numeric proof — the graph before and after, on seeded random inputs, several seeds and
// dimension bindings, outputs equal within tolerance.

#include "ir/model.h"
#include "passes/pipeline.h"

#include <map>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace opscope::test {

onnx::AttributeProto intAttr(const std::string &name, std::int64_t v);
onnx::AttributeProto floatAttr(const std::string &name, float v);
onnx::AttributeProto intsAttr(const std::string &name, const std::vector<std::int64_t> &v);
onnx::AttributeProto stringAttr(const std::string &name, const std::string &v);
onnx::AttributeProto graphAttr(const std::string &name, const onnx::GraphProto &g);

class ModelBuilder
{
public:
    explicit ModelBuilder(int opset = 17);
    // dims: -1 becomes the symbolic dim "N".
    ModelBuilder &input(const std::string &name, const std::vector<std::int64_t> &dims, int elemType = 1);
    ModelBuilder &constant(const std::string &name, const std::vector<std::int64_t> &dims,
                           const std::vector<float> &values);
    // Uniform in [lo, hi), seeded by the name.
    ModelBuilder &randomConstant(const std::string &name, const std::vector<std::int64_t> &dims,
                                 float lo = -1.0f, float hi = 1.0f);
    ModelBuilder &intConstant(const std::string &name, const std::vector<std::int64_t> &dims,
                              const std::vector<std::int64_t> &values);
    ModelBuilder &op(const std::string &type, const std::vector<std::string> &inputs,
                     const std::vector<std::string> &outputs,
                     const std::vector<onnx::AttributeProto> &attrs = {}, const std::string &domain = {});
    ModelBuilder &output(const std::string &name, int elemType = 1);
    onnx::ModelProto &proto() { return m_proto; }
    // Serialized and loaded with shape inference; fails the test on error.
    Model build() const;

private:
    onnx::ModelProto m_proto;
};

struct PassOutcome
{
    Model after;
    passes::PipelineResult result;
    std::map<std::string, std::size_t> opsBefore, opsAfter; // opHistogram: "Conv", "ai.opscope::FusedConv"
    double maxAbsDiff = 0.0;
    bool compared = false; // false when the test already failed
};

int opCount(const std::map<std::string, std::size_t> &ops, const std::string &op);
std::map<std::string, std::size_t> countOps(const Model &model); // opHistogram of the main graph

// Runs `passes` (verifier on) and compares outputs before/after for every seed × binding of the
// symbolic dim "N". Fails the current test (QTest) on a pipeline error, a run error or a difference
// beyond atol + rtol·|want|.
PassOutcome runAndCompare(const Model &model, const std::vector<std::string> &passes,
                          std::vector<std::int64_t> batchSizes = {1, 3},
                          std::vector<std::uint64_t> seeds = {1, 2, 7}, double rtol = 1e-4,
                          double atol = 1e-5);

// Saves and reloads `model` (running onnx::checker); returns the checker's findings.
std::vector<std::string> checkerFindings(const Model &model);

} // namespace opscope::test
