#include "onnx/shaperefresh.h"

#include "onnx/schemacheck.h"
#include "onnx/schemacheckdetail.h"

#include "ir/dependencies.h"

#include "onnx/exporter.h"
#include "onnx/protoconvert.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <optional>
#include <set>

namespace opscope {

namespace {

constexpr std::uint64_t kInlineBytes = 4096;

// How much a type says: a rank, symbolic dims, known dims (worth most).
int specificity(const TypeInfo &t)
{
    if (!t.isTensor() || !t.shape)
        return t.isTensor() ? 0 : -1;
    int n = 1;
    for (const Dim &d : t.shape->dims)
        n += d.isKnown() ? 2 : d.isSymbolic() ? 1 : 0;
    return n;
}

} // namespace

Expected<std::size_t> refreshShapes(Model &model)
{
    Model light;
    light.irVersion = std::max<std::int64_t>(model.irVersion, 4);
    light.opsets = model.opsets;
    light.graph = model.graph; // structure only
    Graph &g = light.graph;
    for (ValueId v : g.initializers()) {
        Value &value = g.value(v);
        if (value.isGraphInput || value.initializer->byteSize() <= kInlineBytes)
            continue;
        value.type = TypeInfo::tensor(value.initializer->dtype, Shape::fromSizes(value.initializer->dims));
        value.initializer.reset();
        g.addInput(value.name, value.type);
    }
    onnx::ModelProto proto;
    TensorSink sink(nullptr, {}, 0);
    OPSCOPE_TRY(exportModel(light, sink, &proto));
    OPSCOPE_TRY(checkModelStructure(proto)); // libonnx trusts what it infers on
    ensureShapeInferenceGuards();
    try {
        onnx::ShapeInferenceOptions options;
        options.check_type = false;
        options.error_mode = 0;
        onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception &e) {
        return Status::unsupported(std::string("shape inference stopped: ") + e.what());
    }
    std::size_t improved = 0;
    auto take = [&](const onnx::ValueInfoProto &vi) {
        const ValueId v = model.graph.findValue(vi.name());
        if (!v.valid() || !vi.has_type())
            return;
        Value &value = model.graph.value(v);
        if (value.initializer || value.isGraphInput)
            return;
        TypeInfo inferred = typeFromProto(vi.type());
        if (!inferred.isTensor() || specificity(inferred) <= specificity(value.type))
            return;
        if (value.type.isTensor() && value.type.elemType != DataType::Undefined &&
            value.type.elemType != inferred.elemType)
            return; // disagreement: keep what we had
        value.type = std::move(inferred);
        ++improved;
    };
    for (const auto &vi : proto.graph().value_info())
        take(vi);
    for (const auto &vi : proto.graph().output())
        take(vi);
    improved += propagateRanks(model.graph);
    return improved + typeCapturedValues(model.graph); // what bodies read, as now typed outside
}

namespace {

std::optional<std::size_t> rankOf(const Graph &g, ValueId v)
{
    if (!v.valid())
        return std::nullopt;
    const Value &value = g.value(v);
    if (value.initializer)
        return value.initializer->dims.size();
    if (value.type.isTensor() && value.type.shape)
        return value.type.shape->dims.size();
    return std::nullopt;
}

std::optional<std::vector<std::int64_t>> intsOf(const Graph &g, const Node &n, std::size_t input,
                                                const char *attr)
{
    if (input < n.inputs.size() && n.inputs[input].valid()) {
        const Value &v = g.value(n.inputs[input]);
        if (!v.initializer || v.isGraphInput || v.initializer->dtype != DataType::Int64)
            return std::nullopt;
        const auto data = v.initializer->as<std::int64_t>();
        return std::vector<std::int64_t>(data.begin(), data.end());
    }
    if (const Attribute *a = n.attribute(attr))
        return a->ints;
    return std::nullopt;
}

// The rank of n's first output when its inputs' ranks decide it.
std::optional<std::size_t> outputRank(const Graph &g, const Node &n)
{
    static const std::set<std::string, std::less<>> sameAsInput{"Relu",       "LeakyRelu",
                                                                "Sigmoid",    "HardSigmoid",
                                                                "HardSwish",  "Tanh",
                                                                "Softmax",    "LogSoftmax",
                                                                "Identity",   "Neg",
                                                                "Abs",        "Sqrt",
                                                                "Exp",        "Erf",
                                                                "Cast",       "Clip",
                                                                "Slice",      "Dropout",
                                                                "Gelu",       "Elu",
                                                                "Softplus",   "Floor",
                                                                "Ceil",       "Round",
                                                                "Reciprocal", "LayerNormalization",
                                                                "Not",        "Sign",
                                                                "Log"};
    static const std::set<std::string, std::less<>> broadcasting{
        "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Where", "Equal", "Less", "Greater", "And", "Or"};
    if (!n.domain.empty() && n.domain != "ai.onnx")
        return std::nullopt;
    const std::string &op = n.opType;
    const auto in0 = n.inputs.empty() ? std::nullopt : rankOf(g, n.inputs[0]);
    if (op == "Reshape" && n.inputs.size() > 1 && n.inputs[1].valid()) {
        const Value &shape = g.value(n.inputs[1]);
        if (shape.type.isTensor() && shape.type.shape && shape.type.shape->dims.size() == 1 &&
            shape.type.shape->dims[0].isKnown())
            return std::size_t(shape.type.shape->dims[0].value);
        return std::nullopt;
    }
    if (op == "Transpose") {
        if (const Attribute *perm = n.attribute("perm"))
            return perm->ints.size();
        return in0;
    }
    if ((op == "Squeeze" || op == "Unsqueeze") && in0) {
        const auto axes = intsOf(g, n, 1, "axes");
        if (!axes || (op == "Squeeze" && axes->empty()))
            return std::nullopt;
        return op == "Squeeze" ? (*in0 >= axes->size() ? std::optional(*in0 - axes->size()) : std::nullopt)
                               : std::optional(*in0 + axes->size());
    }
    if (sameAsInput.count(op))
        return in0;
    if (broadcasting.count(op) || op == "MatMul") {
        std::size_t r = 0;
        for (ValueId v : n.inputs) {
            const auto ri = rankOf(g, v);
            if (!ri || (op == "MatMul" && *ri < 2))
                return std::nullopt;
            r = std::max(r, *ri);
        }
        return r;
    }
    return std::nullopt;
}

} // namespace

std::size_t propagateRanks(Graph &graph)
{
    Expected<std::vector<NodeId>> order = graph.topologicalOrder();
    if (!order)
        return 0;
    std::size_t added = 0;
    for (NodeId id : *order) {
        const Node &n = graph.node(id);
        if (n.outputs.empty() || !n.outputs[0].valid())
            continue;
        Value &out = graph.value(n.outputs[0]);
        if (out.type.isTensor() && out.type.shape)
            continue;
        const auto rank = outputRank(graph, n);
        // A shape input declared 2^40 long (fuzzing: a 2^46-byte allocation here) is no rank.
        if (!rank || *rank > std::size_t(schemadetail::kMaxTensorRank))
            continue;
        DataType elem = out.type.elemType;
        if (elem == DataType::Undefined && !n.inputs.empty() && n.inputs[0].valid()) {
            const Value &in = graph.value(n.inputs[0]);
            elem = in.initializer ? in.initializer->dtype : in.type.elemType;
        }
        if (n.opType == "Cast")
            if (const Attribute *to = n.attribute("to"))
                elem = DataType(std::int32_t(to->i)); // ONNX's TensorProto numbering
        if (n.opType == "Where" && n.inputs.size() > 1 && n.inputs[1].valid()) { // input 0 is the condition
            const Value &in = graph.value(n.inputs[1]);
            elem = in.initializer ? in.initializer->dtype : in.type.elemType;
        }
        static const std::set<std::string, std::less<>> comparisons{"Equal", "Less", "Greater",
                                                                    "And",   "Or",   "Not"};
        if (comparisons.count(n.opType))
            elem = DataType::Bool;
        Shape shape;
        shape.dims.resize(*rank);
        out.type = TypeInfo::tensor(elem, shape);
        ++added;
    }
    return added;
}

} // namespace opscope
