#pragma once
// Shared pieces of the fusion passes: which activations a Conv/Gemm can absorb, per-channel
// constants, and BatchNormalization as a per-channel affine map.

#include "ir/model.h"
#include "util/status.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::passes {

// An activation that opscope's fused kernels apply after a Conv/Gemm, in the attribute form of
// ONNX Runtime's FusedConv: `activation` names the op, `activation_params` its parameters
// (LeakyRelu: alpha; Clip: min, max; HardSigmoid: alpha, beta).
struct ActivationSpec
{
    std::string op;
    std::vector<float> params;
};

// The activation `node` computes, when it is one fused kernels implement and its parameters are
// attributes or float constants.
std::optional<ActivationSpec> fusableActivation(const Graph &graph, const Node &node);
std::vector<Attribute> activationAttributes(const ActivationSpec &spec);
std::optional<ActivationSpec> activationFromAttributes(const Node &node);

// The C values of a constant that, broadcast against a rank-`rank` tensor, varies only along
// `axis` (shapes like [C,1,1], [1,C,1,1], [C] for axis = rank-1, or a single value). Float32 only.
std::optional<std::vector<float>> perChannelValues(const Graph &graph, ValueId constant,
                                                   std::int64_t channels, std::size_t rank, std::size_t axis);

// BatchNormalization in inference form y = x·scale + shift per channel (axis 1), when all its
// parameters are float constants and its training outputs are unused.
struct ChannelAffine
{
    std::vector<float> scale, shift;
};
std::optional<ChannelAffine> batchNormAffine(const Graph &graph, const Node &bn);

} // namespace opscope::passes

namespace opscope::passes {

// A float Conv with constant weights (and bias, if any) whose output only `consumer` reads.
bool convFeedsOnly(const Graph &graph, const Node &conv, NodeId consumer);
std::int64_t convOutputChannels(const Graph &graph, const Node &conv);
// node = Conv output <op> constant, op Add or Mul: the constant's per-output-channel values, and
// the Conv in `conv` (conv-add-fusion, conv-mul-fusion).
std::optional<std::vector<float>> convChannelOperand(const Graph &graph, const Node &node,
                                                     std::string_view op, NodeId &conv);
// Replaces producer → activation by one fused node (op in ai.opscope: producer's inputs and
// attributes plus the activation's), for conv-activation-fusion and gemm-activation-fusion.
Expected<bool> fuseActivation(Model &model, Graph &graph, NodeId producer, NodeId activation,
                              const std::string &fusedOp);
// Conv output y → y·scale + shift per output channel, folded into new weight/bias constants.
// Either may be null (scale 1 / shift 0).
void foldIntoConv(Graph &graph, NodeId conv, const std::vector<float> *scale,
                  const std::vector<float> *shift);

} // namespace opscope::passes
