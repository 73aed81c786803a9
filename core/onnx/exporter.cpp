#include "onnx/exporter.h"

#include "ir/dependencies.h"

namespace opscope {
namespace {

Status exportGraph(const Graph &g, TensorSink &sink, onnx::GraphProto *gp);

void valueInfo(const Value &v, onnx::ValueInfoProto *vi)
{
    vi->set_name(v.name);
    if (v.type.isKnown())
        typeToProto(v.type, vi->mutable_type());
    if (!v.docString.empty())
        vi->set_doc_string(v.docString);
}

Status exportAttribute(const Attribute &a, TensorSink &sink, onnx::AttributeProto *ap)
{
    ap->set_name(a.name);
    ap->set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type));
    if (!a.docString.empty())
        ap->set_doc_string(a.docString);
    if (!a.refAttrName.empty()) {
        ap->set_ref_attr_name(a.refAttrName);
        return Status::ok();
    }
    switch (a.type) {
    case AttributeType::Float: ap->set_f(a.f); break;
    case AttributeType::Int: ap->set_i(a.i); break;
    case AttributeType::String: ap->set_s(a.s); break;
    case AttributeType::Tensor: OPSCOPE_TRY(sink.write(a.t, ap->mutable_t())); break;
    case AttributeType::Graph:
        if (a.g)
            OPSCOPE_TRY(exportGraph(*a.g, sink, ap->mutable_g()));
        break;
    case AttributeType::SparseTensor:
        OPSCOPE_TRY(sparseTensorToProto(a.sparse, sink, ap->mutable_sparse_tensor()));
        break;
    case AttributeType::TypeProto: typeToProto(a.tp, ap->mutable_tp()); break;
    case AttributeType::Floats:
        for (float f : a.floats)
            ap->add_floats(f);
        break;
    case AttributeType::Ints:
        for (std::int64_t v : a.ints)
            ap->add_ints(v);
        break;
    case AttributeType::Strings:
        for (const std::string &s : a.strings)
            ap->add_strings(s);
        break;
    case AttributeType::Tensors:
        for (const Tensor &t : a.tensors)
            OPSCOPE_TRY(sink.write(t, ap->add_tensors()));
        break;
    case AttributeType::Graphs:
        for (const ClonePtr<Graph> &sub : a.graphs)
            if (sub)
                OPSCOPE_TRY(exportGraph(*sub, sink, ap->add_graphs()));
        break;
    case AttributeType::SparseTensors:
        for (const SparseTensor &s : a.sparseTensors)
            OPSCOPE_TRY(sparseTensorToProto(s, sink, ap->add_sparse_tensors()));
        break;
    case AttributeType::TypeProtos:
        for (const TypeInfo &t : a.typeProtos)
            typeToProto(t, ap->add_type_protos());
        break;
    case AttributeType::Undefined: break;
    }
    return Status::ok();
}

Status exportNode(const Graph &g, const Node &n, TensorSink &sink, onnx::NodeProto *np)
{
    const auto name = [&g](ValueId v) { return v.valid() ? g.value(v).name : std::string(); };
    for (ValueId v : n.inputs)
        np->add_input(name(v));
    for (ValueId v : n.outputs)
        np->add_output(name(v));
    if (!n.nameGenerated && !n.name.empty())
        np->set_name(n.name);
    np->set_op_type(n.opType);
    if (!n.domain.empty())
        np->set_domain(n.domain);
    if (!n.docString.empty())
        np->set_doc_string(n.docString);
    for (const Attribute &a : n.attributes)
        OPSCOPE_TRY(exportAttribute(a, sink, np->add_attribute()));
    return Status::ok();
}

Status exportGraph(const Graph &g, TensorSink &sink, onnx::GraphProto *gp)
{
    // Implicit inputs count: an If/Loop body may read a value produced later in insertion order.
    const Expected<std::vector<NodeId>> order = dependencyOrder(g);
    if (!order)
        return order.status();
    for (NodeId id : *order)
        OPSCOPE_TRY(exportNode(g, g.node(id), sink, gp->add_node()));
    gp->set_name(g.name());
    for (ValueId id : g.initializers()) {
        const Value &v = g.value(id);
        onnx::TensorProto *tp = gp->add_initializer();
        OPSCOPE_TRY(sink.write(*v.initializer, tp));
        tp->set_name(v.name);
    }
    for (ValueId id : g.valueIds()) {
        const Value &v = g.value(id);
        if (v.sparseInitializer) {
            onnx::SparseTensorProto *sp = gp->add_sparse_initializer();
            OPSCOPE_TRY(sparseTensorToProto(*v.sparseInitializer, sink, sp));
            sp->mutable_values()->set_name(v.name);
        }
    }
    if (!g.docString().empty())
        gp->set_doc_string(g.docString());
    for (ValueId id : g.inputs())
        valueInfo(g.value(id), gp->add_input());
    for (ValueId id : g.outputs())
        valueInfo(g.value(id), gp->add_output());
    for (ValueId id : g.valueIds()) {
        const Value &v = g.value(id);
        if (v.hasValueInfo && !v.isGraphInput && !g.isGraphOutput(id))
            valueInfo(v, gp->add_value_info());
    }
    for (const QuantizationAnnotation &qa : g.quantizationAnnotations()) {
        auto *p = gp->add_quantization_annotation();
        p->set_tensor_name(qa.tensorName);
        for (const auto &[key, value] : qa.parameters) {
            auto *kv = p->add_quant_parameter_tensor_names();
            kv->set_key(key);
            kv->set_value(value);
        }
    }
    return Status::ok();
}

void exportOpsets(const std::vector<OpsetImport> &opsets,
                  google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> *out)
{
    for (const OpsetImport &o : opsets) {
        auto *op = out->Add();
        op->set_domain(o.domain);
        op->set_version(o.version);
    }
}

} // namespace

Status exportModel(const Model &model, TensorSink &sink, onnx::ModelProto *proto)
{
    // IR < 4 requires every initializer to be a graph input too. A pass that created constants
    // (folding) would then have to widen the model's interface; IR 4 reads the same model
    // without that rule, so the file is written as IR 4 instead.
    std::int64_t irVersion = model.irVersion;
    if (irVersion < 4)
        for (ValueId v : model.graph.initializers())
            if (!model.graph.value(v).isGraphInput)
                irVersion = 4;
    proto->set_ir_version(irVersion);
    exportOpsets(model.opsets, proto->mutable_opset_import());
    if (!model.producerName.empty())
        proto->set_producer_name(model.producerName);
    if (!model.producerVersion.empty())
        proto->set_producer_version(model.producerVersion);
    if (!model.domain.empty())
        proto->set_domain(model.domain);
    if (model.modelVersion)
        proto->set_model_version(model.modelVersion);
    if (!model.docString.empty())
        proto->set_doc_string(model.docString);
    for (const auto &[key, value] : model.metadata) {
        auto *kv = proto->add_metadata_props();
        kv->set_key(key);
        kv->set_value(value);
    }
    OPSCOPE_TRY(exportGraph(model.graph, sink, proto->mutable_graph()));
    for (const Function &f : model.functions) {
        onnx::FunctionProto *fp = proto->add_functions();
        fp->set_name(f.name);
        fp->set_domain(f.domain);
        if (!f.docString.empty())
            fp->set_doc_string(f.docString);
        for (const std::string &a : f.attributeNames)
            fp->add_attribute(a);
        exportOpsets(f.opsets, fp->mutable_opset_import());
        for (ValueId v : f.body.inputs())
            fp->add_input(f.body.value(v).name);
        for (ValueId v : f.body.outputs())
            fp->add_output(f.body.value(v).name);
        const Expected<std::vector<NodeId>> order = f.body.topologicalOrder();
        if (!order)
            return order.status().withContext("function '" + f.name + "'");
        for (NodeId id : *order)
            OPSCOPE_TRY(exportNode(f.body, f.body.node(id), sink, fp->add_node()));
    }
    return Status::ok();
}

} // namespace opscope
