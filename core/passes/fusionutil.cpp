#include "passes/fusionutil.h"

#include "passes/passutil.h"

#include <cmath>
#include <limits>

namespace opscope::passes {

std::optional<ActivationSpec> fusableActivation(const Graph &graph, const Node &node)
{
    if (node.inputs.empty() || !node.inputs[0].valid() || node.outputs.size() != 1)
        return std::nullopt;
    if (isOp(node, "Relu") || isOp(node, "Sigmoid") || isOp(node, "Tanh") || isOp(node, "HardSwish"))
        return ActivationSpec{node.opType, {}};
    if (isOpscopeOp(node, "HardSwish")) // HardSwish below opset 14 (hardswish-fusion)
        return ActivationSpec{"HardSwish", {}};
    if (isOpscopeOp(node, "Swish"))
        return ActivationSpec{"Swish", {attrFloat(node, "alpha", 1.0f)}};
    if (isOp(node, "LeakyRelu"))
        return ActivationSpec{"LeakyRelu", {attrFloat(node, "alpha", 0.01f)}};
    if (isOp(node, "HardSigmoid"))
        return ActivationSpec{"HardSigmoid", {attrFloat(node, "alpha", 0.2f), attrFloat(node, "beta", 0.5f)}};
    if (isOp(node, "Clip")) {
        float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
        if (node.inputs.size() == 1) {
            lo = attrFloat(node, "min", lo);
            hi = attrFloat(node, "max", hi);
        } else {
            for (std::size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
                if (!node.inputs[i].valid())
                    continue;
                const std::optional<float> v = scalarFloat(graph, node.inputs[i]);
                if (!v)
                    return std::nullopt;
                (i == 1 ? lo : hi) = *v;
            }
        }
        return ActivationSpec{"Clip", {lo, hi}};
    }
    return std::nullopt;
}

std::vector<Attribute> activationAttributes(const ActivationSpec &spec)
{
    std::vector<Attribute> out{Attribute::makeString("activation", spec.op)};
    if (!spec.params.empty())
        out.push_back(Attribute::makeFloats("activation_params", spec.params));
    return out;
}

std::optional<ActivationSpec> activationFromAttributes(const Node &node)
{
    const Attribute *a = node.attribute("activation");
    if (!a || a->type != AttributeType::String || a->s.empty())
        return std::nullopt;
    ActivationSpec spec{a->s, {}};
    if (const Attribute *p = node.attribute("activation_params"))
        spec.params = p->floats;
    return spec;
}

std::optional<std::vector<float>> perChannelValues(const Graph &graph, ValueId constant,
                                                   std::int64_t channels, std::size_t rank, std::size_t axis)
{
    const Tensor *t = constantTensor(graph, constant);
    if (!t || t->dtype != DataType::Float || t->dims.size() > rank || t->elementCount() > channels)
        return std::nullopt; // more elements than channels cannot be per-channel: not read
    const auto values = constantFloats(graph, constant);
    if (!values)
        return std::nullopt;
    if (values->size() == 1) {
        if (channels < 0 || channels > kMaxSynthesizedElements)
            return std::nullopt;
        return std::vector<float>(static_cast<std::size_t>(channels), (*values)[0]);
    }
    // Align the constant's dims to the right of the tensor's.
    const std::size_t offset = rank - t->dims.size();
    for (std::size_t i = 0; i < t->dims.size(); ++i) {
        const std::int64_t d = t->dims[i];
        if (i + offset == axis ? d != channels : d != 1)
            return std::nullopt;
    }
    return values;
}

std::optional<ChannelAffine> batchNormAffine(const Graph &graph, const Node &bn)
{
    if (!isOp(bn, "BatchNormalization") || bn.inputs.size() < 5 || attrInt(bn, "training_mode", 0) != 0)
        return std::nullopt;
    for (std::size_t i = 1; i < bn.outputs.size(); ++i)
        if (!isUnread(graph, bn.outputs[i]))
            return std::nullopt;
    const auto scale = constantFloats(graph, bn.inputs[1]), bias = constantFloats(graph, bn.inputs[2]);
    const auto mean = constantFloats(graph, bn.inputs[3]), var = constantFloats(graph, bn.inputs[4]);
    if (!scale || !bias || !mean || !var)
        return std::nullopt;
    const std::size_t c = scale->size();
    if (bias->size() != c || mean->size() != c || var->size() != c)
        return std::nullopt;
    const float eps = attrFloat(bn, "epsilon", 1e-5f);
    ChannelAffine a;
    a.scale.resize(c);
    a.shift.resize(c);
    for (std::size_t i = 0; i < c; ++i) {
        a.scale[i] = (*scale)[i] / std::sqrt((*var)[i] + eps);
        a.shift[i] = (*bias)[i] - (*mean)[i] * a.scale[i];
    }
    return a;
}

} // namespace opscope::passes

namespace opscope::passes {

bool convFeedsOnly(const Graph &graph, const Node &conv, NodeId consumer)
{
    if (!isOp(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1)
        return false;
    if (singleConsumer(graph, conv.outputs[0]) != consumer)
        return false;
    const Tensor *w = constantTensor(graph, conv.inputs[1]);
    if (!w || w->dtype != DataType::Float || w->dims.size() < 3)
        return false;
    if (conv.inputs.size() > 2 && conv.inputs[2].valid()) {
        const Tensor *b = constantTensor(graph, conv.inputs[2]);
        if (!b || b->dtype != DataType::Float || b->elementCount() != w->dims[0])
            return false;
    }
    return true;
}

std::int64_t convOutputChannels(const Graph &graph, const Node &conv)
{
    return constantTensor(graph, conv.inputs[1])->dims[0];
}

std::optional<std::vector<float>> convChannelOperand(const Graph &graph, const Node &node,
                                                     std::string_view op, NodeId &conv)
{
    if (!isOp(node, op) || node.inputs.size() != 2)
        return std::nullopt;
    for (int side = 0; side < 2; ++side) {
        const NodeId p = graph.producer(node.inputs[side]);
        if (!p.valid() || !convFeedsOnly(graph, graph.node(p), node.id))
            continue;
        const std::size_t rank = constantTensor(graph, graph.node(p).inputs[1])->dims.size();
        const auto values =
            perChannelValues(graph, node.inputs[1 - side], convOutputChannels(graph, graph.node(p)), rank, 1);
        if (values) {
            conv = p;
            return values;
        }
    }
    return std::nullopt;
}

Expected<bool> fuseActivation(Model &model, Graph &graph, NodeId producer, NodeId activation,
                              const std::string &fusedOp)
{
    const auto spec = fusableActivation(graph, graph.node(activation));
    if (!spec)
        return false;
    std::vector<Attribute> attrs = graph.node(producer).attributes;
    for (Attribute &a : activationAttributes(*spec))
        attrs.push_back(std::move(a));
    Expected<NodeId> fused =
        addNodeWithOutputs(graph, fusedOp, graph.node(producer).inputs, 1,
                           graph.node(producer).name + "_" + spec->op, std::move(attrs), kOpscopeDomain);
    if (!fused)
        return fused.status();
    const ValueId out = graph.node(*fused).outputs[0];
    graph.value(out).type = graph.value(graph.node(activation).outputs[0]).type;
    OPSCOPE_TRY(bypassNode(graph, activation, out));
    eraseNode(graph, producer);
    ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

void foldIntoConv(Graph &graph, NodeId convId, const std::vector<float> *scale,
                  const std::vector<float> *shift)
{
    const Node &conv = graph.node(convId);
    const Tensor &w = *constantTensor(graph, conv.inputs[1]);
    const std::int64_t m = w.dims[0];
    std::vector<float> bias(static_cast<std::size_t>(m), 0.0f);
    const bool hadBias = conv.inputs.size() > 2 && conv.inputs[2].valid();
    if (hadBias)
        bias = *constantFloats(graph, conv.inputs[2]);
    const std::string base = conv.name;
    if (scale) {
        std::vector<float> weights(w.as<float>().begin(), w.as<float>().end());
        const std::size_t per = weights.size() / static_cast<std::size_t>(m);
        for (std::size_t o = 0; o < static_cast<std::size_t>(m); ++o) {
            for (std::size_t i = 0; i < per; ++i)
                weights[o * per + i] *= (*scale)[o];
            bias[o] *= (*scale)[o];
        }
        const ValueId oldW = conv.inputs[1];
        const ValueId newW = addConstant(graph, base + "_W", floatTensor(w.dims, weights));
        graph.setNodeInput(convId, 1, newW);
        eraseConstantIfUnused(graph, oldW);
    }
    if (shift)
        for (std::size_t o = 0; o < bias.size(); ++o)
            bias[o] += (*shift)[o];
    if (scale || shift) {
        const ValueId oldB = hadBias ? graph.node(convId).inputs[2] : ValueId();
        const ValueId newB = addConstant(graph, base + "_B", floatTensor({m}, bias));
        graph.setNodeInput(convId, 2, newB);
        eraseConstantIfUnused(graph, oldB);
    }
}

} // namespace opscope::passes
