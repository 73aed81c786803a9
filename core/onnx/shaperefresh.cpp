#include "onnx/shaperefresh.h"

#include "onnx/exporter.h"
#include "onnx/protoconvert.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

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
    return improved;
}

} // namespace opscope
