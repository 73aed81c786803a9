#pragma once
// Helpers shared by the tests: ONNX protos built in code, temp folders, the CLI's path.

#include "ir/model.h"
#include "onnx/modelio.h"
#include "runtime/session.h"

#include <QString>
#include <QTemporaryDir>
#include <filesystem>
#include <initializer_list>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace opscope::test {

std::filesystem::path sourceDir();
std::filesystem::path samplePath(const std::string &fileName); // resources/models/<fileName>
QString cliPath();

onnx::TensorProto floatTensor(const std::string &name, const std::vector<std::int64_t> &dims,
                              const std::vector<float> &values);
onnx::TensorProto int64Tensor(const std::string &name, const std::vector<std::int64_t> &dims,
                              const std::vector<std::int64_t> &values);
onnx::ValueInfoProto tensorInfo(const std::string &name, int elemType, const std::vector<std::int64_t> &dims);
onnx::NodeProto node(const std::string &op, const std::vector<std::string> &inputs,
                     const std::vector<std::string> &outputs, const std::string &name = {});
// Adds the GRAPH attribute `attr` (then_branch, else_branch, body) to `owner`: a graph named
// `attr` of `nodes` whose one output `output` is float `dims`. Names the body reads and does not
// define come from the enclosing graphs.
void addBody(onnx::NodeProto &owner, const std::string &attr, const std::vector<onnx::NodeProto> &nodes,
             const std::string &output, const std::vector<std::int64_t> &dims = {2, 3});
// x float[2,3]; a = Relu(x), b = Tanh(x), d = Sigmoid(x), c = true; y = If(c) then
// If(c) { Mul(a + b, d) } else { Sub(a + b, d) } else a - b: bodies reading four outer values,
// two of them two levels down (partitioning across devices and ranks).
onnx::ModelProto nestedCaptureModel();
// A valid model: y = Relu(x + bias), x float[2,3], opset 13.
onnx::ModelProto smallModel();
// smallModel()'s opsets and metadata around an empty graph (no inputs, weights, nodes or outputs).
onnx::ModelProto emptyModel();
void writeProto(const std::filesystem::path &path, const onnx::ModelProto &proto);
void writeBytes(const std::filesystem::path &path, const std::string &bytes);

// Loads or fails the current test with the loader's message.
ImportResult loadOrFail(const std::filesystem::path &path);
// The same for a model built in memory (its external data, if any, relative to the working folder).
Model modelOrFail(const onnx::ModelProto &proto);
// A session with default options, or null after failing the current test with why.
std::unique_ptr<InferenceSession> sessionOrFail(const Model &model);

} // namespace opscope::test
