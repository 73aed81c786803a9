#include "onnx/typecheck.h"
#include "onnx/importer.h"

#include "ir/dependencies.h"
#include "ir/verifier.h"
#include "onnx/opschema.h"
#include "onnx/protoconvert.h"
#include "onnx/schemacheck.h"

#include <map>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <set>

namespace opscope {
namespace {

class Importer
{
public:
    Importer(const ImportOptions &options, std::vector<std::string> &warnings)
        : m_files(options.modelDir), m_warnings(warnings)
    {
        if (options.embeddedFile)
            m_files.setEmbedded(options.embeddedFile, options.embeddedSpans);
    }

    Status graph(onnx::GraphProto &gp, Graph &g, bool isSubgraph)
    {
        g.setName(gp.name());
        g.setDocString(gp.doc_string());
        const std::string where = "graph '" + gp.name() + "'";

        for (auto &tp : *gp.mutable_initializer()) {
            if (tp.name().empty())
                return Status::invalid(where + " has an initializer without a name");
            if (g.findValue(tp.name()).valid())
                return Status::invalid(where + ": initializer '" + tp.name() + "' is defined twice");
            Expected<Tensor> t = tensorFromProto(tp, m_files, "initializer '" + tp.name() + "'");
            if (!t)
                return t.status();
            g.addInitializer(tp.name(), std::move(*t));
        }
        for (auto &sp : *gp.mutable_sparse_initializer()) {
            const std::string name = sp.values().name();
            if (name.empty() || g.findValue(name).valid())
                return Status::invalid(where + ": sparse initializer '" + name +
                                       "' has no name or is defined twice");
            Expected<SparseTensor> s =
                sparseTensorFromProto(sp, m_files, "sparse initializer '" + name + "'");
            if (!s)
                return s.status();
            // Checked here, so that running it later cannot fail: the runtime uses the dense form.
            if (Expected<Tensor> dense = denseFromSparse(*s, "sparse initializer '" + name + "'"); !dense)
                return dense.status();
            const ValueId v = g.valueNamed(name);
            g.value(v).sparseInitializer = std::move(*s);
        }
        for (const auto &vi : gp.input()) {
            if (vi.name().empty())
                return Status::invalid(where + " has a graph input without a name");
            const ValueId v = g.findValue(vi.name());
            if (v.valid() && g.value(v).isGraphInput)
                return Status::invalid(where + ": graph input '" + vi.name() + "' is listed twice");
            TypeInfo type = typeFromProto(vi.type());
            // Negative sizes were made symbols before inference (symbolizeNegativeDims).
            const ValueId id = g.addInput(vi.name(), std::move(type));
            g.value(id).docString = vi.doc_string();
            OPSCOPE_TRY(checkType(g.value(id).type, "graph input '" + vi.name() + "'"));
        }

        for (auto &np : *gp.mutable_node())
            OPSCOPE_TRY(node(np, g));

        for (const auto &vi : gp.value_info()) {
            if (vi.name().empty())
                continue;
            const ValueId v = g.valueNamed(vi.name());
            Value &value = g.value(v);
            if (!value.isGraphInput) {
                value.type = typeFromProto(vi.type());
                value.docString = vi.doc_string();
            }
            value.hasValueInfo = true;
            OPSCOPE_TRY(checkType(value.type, "tensor '" + vi.name() + "'"));
        }
        for (const auto &vi : gp.output()) {
            if (vi.name().empty())
                return Status::invalid(where + " has a graph output without a name");
            const ValueId v = g.valueNamed(vi.name());
            if (vi.has_type())
                g.value(v).type = typeFromProto(vi.type());
            if (g.value(v).docString.empty())
                g.value(v).docString = vi.doc_string();
            OPSCOPE_TRY(checkType(g.value(v).type, "graph output '" + vi.name() + "'"));
            g.addOutput(v);
        }
        for (const auto &qa : gp.quantization_annotation()) {
            QuantizationAnnotation a;
            a.tensorName = qa.tensor_name();
            for (const auto &kv : qa.quant_parameter_tensor_names())
                a.parameters.emplace_back(kv.key(), kv.value());
            g.quantizationAnnotations().push_back(std::move(a));
        }

        // Names read but defined nowhere: in a subgraph they come from an enclosing scope (the
        // verifier checks that they resolve); at the top level they are dangling.
        for (ValueId v : g.valueIds()) {
            Value &value = g.value(v);
            const bool defined =
                value.isGraphInput || value.initializer || value.sparseInitializer || value.producer.valid();
            if (defined || (value.uses.empty() && !g.isGraphOutput(v)))
                continue;
            if (isSubgraph) {
                value.outerScope = true;
            } else if (!value.uses.empty()) {
                const Node &user = g.node(value.uses.front().node);
                return Status::invalid("node '" + nodeDisplayName(user) + "' (" + user.opType +
                                       ") reads tensor '" + value.name +
                                       "', which no node, initializer or graph input produces");
            } else {
                return Status::invalid(where + ": graph output '" + value.name +
                                       "' is not produced by any node");
            }
        }
        return Status::ok();
    }

    Status function(onnx::FunctionProto &fp, Function &f)
    {
        f.name = fp.name();
        f.domain = fp.domain();
        f.docString = fp.doc_string();
        f.attributeNames.assign(fp.attribute().begin(), fp.attribute().end());
        for (const auto &o : fp.opset_import())
            f.opsets.push_back({o.domain(), o.version()});
        f.body.setName(fp.name());
        for (const auto &in : fp.input())
            f.body.addInput(in, {});
        for (auto &np : *fp.mutable_node())
            OPSCOPE_TRY(node(np, f.body).withContext("function '" + fp.name() + "'"));
        for (const auto &out : fp.output())
            f.body.addOutput(f.body.valueNamed(out));
        return Status::ok();
    }

    ExternalFiles &files() { return m_files; }

private:
    Status checkType(const TypeInfo &type, const std::string &what)
    {
        if ((type.kind == TypeInfo::Kind::Tensor || type.kind == TypeInfo::Kind::SparseTensor) &&
            !isKnownDataType(static_cast<std::int32_t>(type.elemType)))
            return Status::invalid(what + " has an unknown element type (" +
                                   std::to_string(int(type.elemType)) + ")");
        if (type.shape) {
            std::vector<std::int64_t> known;
            for (const Dim &d : type.shape->dims)
                if (d.isKnown())
                    known.push_back(d.value);
            const Expected<std::int64_t> count = checkedElementCount(known, what + " " + type.toString());
            if (!count)
                return count.status();
        }
        if (type.inner)
            return checkType(*type.inner, what);
        return Status::ok();
    }

    Status node(onnx::NodeProto &np, Graph &g)
    {
        const std::string shown = np.name().empty() ? np.op_type() + " node" : "node '" + np.name() + "'";
        if (np.op_type().empty())
            return Status::invalid(shown + " has no operator type");
        std::vector<ValueId> inputs;
        for (const auto &in : np.input())
            inputs.push_back(in.empty() ? ValueId() : g.valueNamed(in));
        std::vector<ValueId> outputs;
        for (const auto &out : np.output())
            outputs.push_back(out.empty() ? ValueId() : g.valueNamed(out));
        Expected<NodeId> id =
            g.addNode(np.op_type(), std::move(inputs), std::move(outputs), np.domain(), np.name());
        if (!id)
            return id.status();
        Node &n = g.node(*id);
        n.docString = np.doc_string();
        for (auto &ap : *np.mutable_attribute()) {
            Expected<Attribute> a = attribute(ap, shown);
            if (!a)
                return a.status();
            g.node(*id).attributes.push_back(
                std::move(*a)); // `n` may dangle: subgraph import doesn't touch g, but be safe
        }
        return Status::ok();
    }

    Expected<Attribute> attribute(onnx::AttributeProto &ap, const std::string &owner)
    {
        Attribute a;
        a.name = ap.name();
        a.docString = ap.doc_string();
        a.refAttrName = ap.ref_attr_name();
        const std::string what = owner + " attribute '" + ap.name() + "'";
        a.type = ap.type() != onnx::AttributeProto::UNDEFINED ? static_cast<AttributeType>(ap.type())
                                                              : guessType(ap);
        a.f = ap.f();
        a.i = ap.i();
        a.s = ap.s();
        a.floats.assign(ap.floats().begin(), ap.floats().end());
        a.ints.assign(ap.ints().begin(), ap.ints().end());
        a.strings.assign(ap.strings().begin(), ap.strings().end());
        if (ap.has_t()) {
            Expected<Tensor> t = tensorFromProto(*ap.mutable_t(), m_files, what);
            if (!t)
                return t.status();
            a.t = std::move(*t);
        }
        for (auto &tp : *ap.mutable_tensors()) {
            Expected<Tensor> t = tensorFromProto(tp, m_files, what);
            if (!t)
                return t.status();
            a.tensors.push_back(std::move(*t));
        }
        if (ap.has_sparse_tensor()) {
            Expected<SparseTensor> s = sparseTensorFromProto(*ap.mutable_sparse_tensor(), m_files, what);
            if (!s)
                return s.status();
            a.sparse = std::move(*s);
        }
        for (auto &sp : *ap.mutable_sparse_tensors()) {
            Expected<SparseTensor> s = sparseTensorFromProto(sp, m_files, what);
            if (!s)
                return s.status();
            a.sparseTensors.push_back(std::move(*s));
        }
        if (ap.has_tp())
            a.tp = typeFromProto(ap.tp());
        for (const auto &tp : ap.type_protos())
            a.typeProtos.push_back(typeFromProto(tp));
        if (ap.has_g()) {
            Graph sub;
            OPSCOPE_TRY(graph(*ap.mutable_g(), sub, true).withContext(what));
            a.g = ClonePtr<Graph>(std::move(sub));
        }
        for (auto &gp : *ap.mutable_graphs()) {
            Graph sub;
            OPSCOPE_TRY(graph(gp, sub, true).withContext(what));
            a.graphs.emplace_back(std::move(sub));
        }
        return a;
    }

    static AttributeType guessType(const onnx::AttributeProto &ap)
    {
        if (ap.has_f())
            return AttributeType::Float;
        if (ap.has_i())
            return AttributeType::Int;
        if (ap.has_s())
            return AttributeType::String;
        if (ap.has_t())
            return AttributeType::Tensor;
        if (ap.has_g())
            return AttributeType::Graph;
        if (ap.floats_size())
            return AttributeType::Floats;
        if (ap.ints_size())
            return AttributeType::Ints;
        if (ap.strings_size())
            return AttributeType::Strings;
        if (ap.tensors_size())
            return AttributeType::Tensors;
        if (ap.graphs_size())
            return AttributeType::Graphs;
        return AttributeType::Undefined;
    }

    ExternalFiles m_files;
    std::vector<std::string> &m_warnings;
};

void runChecker(const onnx::ModelProto &proto, const ImportOptions &options, bool hasExternal,
                std::vector<std::string> &warnings)
{
    try {
        // With external data the checker must know the model's folder; it re-reads the (small) file.
        if (hasExternal && !options.modelPath.empty())
            onnx::checker::check_model(options.modelPath.string());
        else if (!hasExternal)
            onnx::checker::check_model(proto);
    } catch (const std::exception &e) {
        std::string msg = e.what();
        while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
            msg.pop_back();
        const auto nl = msg.find("\n\n==>");
        if (nl != std::string::npos)
            msg = msg.substr(0, nl);
        // Above this libonnx's newest opset the checker judges by older schemas: Split-18's
        // num_outputs was an "Unrecognized attribute". Say so, rather than call a valid model wrong.
        const auto &known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
        for (const auto &opset : proto.opset_import()) {
            if (msg.find("operator") == std::string::npos)
                break; // not an op's schema: the IR version, the graph's structure
            const std::string domain = opset.domain() == "ai.onnx" ? std::string() : opset.domain();
            if (const auto it = known.find(domain); it != known.end() && opset.version() > it->second.second) {
                msg += " (checked against opset " + std::to_string(it->second.second) +
                       ", the newest this libonnx knows; the model imports " + std::to_string(opset.version()) +
                       ", whose schemas may allow it)";
                break;
            }
        }
        warnings.push_back("onnx checker: " + msg);
    }
}

bool hasExternalData(const onnx::GraphProto &g)
{
    for (const auto &t : g.initializer())
        if (t.data_location() == onnx::TensorProto::EXTERNAL)
            return true;
    for (const auto &n : g.node())
        for (const auto &a : n.attribute()) {
            if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL)
                return true;
            if (a.has_g() && hasExternalData(a.g()))
                return true;
            for (const auto &sub : a.graphs())
                if (hasExternalData(sub))
                    return true;
        }
    return false;
}

// A negative dim_value (old exporters write -1 for "any") is no size. libonnx's inference reads
// it as one (GatherND's indices [2, -1] made it index dim -1 and crash, found by fuzzing), so it
// never sees one: a graph input's becomes the symbol `<input>_dim<d>`, bindable with --dim (said in
// a warning), any other (outputs, value_info, subgraphs) is left unknown.
void symbolizeNegativeDims(onnx::GraphProto &g, bool top, std::vector<std::string> &warnings)
{
    const auto fix = [&](onnx::ValueInfoProto &vi, bool named) {
        if (!vi.has_type() || !vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
            return;
        auto *shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
        for (int d = 0; d < shape->dim_size(); ++d) {
            auto *dim = shape->mutable_dim(d);
            if (!dim->has_dim_value() || dim->dim_value() >= 0)
                continue;
            const std::int64_t was = dim->dim_value();
            if (!named) {
                dim->clear_dim_value();
                continue;
            }
            const std::string symbol = vi.name() + "_dim" + std::to_string(d);
            dim->set_dim_param(symbol);
            warnings.push_back("input '" + vi.name() + "' dimension " + std::to_string(d) + " is " +
                               std::to_string(was) + ", not a size; it is treated as the symbol '" + symbol +
                               "' (bind it with --dim " + symbol + "=VALUE)");
        }
    };
    for (auto &vi : *g.mutable_input())
        fix(vi, top);
    for (auto &vi : *g.mutable_output())
        fix(vi, false);
    for (auto &vi : *g.mutable_value_info())
        fix(vi, false);
    for (auto &n : *g.mutable_node())
        for (auto &a : *n.mutable_attribute()) {
            if (a.has_g())
                symbolizeNegativeDims(*a.mutable_g(), false, warnings);
            for (auto &sub : *a.mutable_graphs())
                symbolizeNegativeDims(sub, false, warnings);
        }
}

} // namespace

Expected<ImportResult> importModel(onnx::ModelProto &proto, const ImportOptions &options)
{
    ImportResult result;
    if (!proto.has_graph())
        return Status::invalid("not an ONNX model: it has no graph");
    if (proto.ir_version() <= 0)
        return Status::invalid("not an ONNX model: ir_version is missing");
    if (proto.ir_version() >= 3 && proto.opset_import_size() == 0)
        return Status::invalid("the model imports no operator set (opset_import is empty; truncated file?)");

    // Before any libonnx code reads the model: its checker and inference trust what they get.
    OPSCOPE_TRY(checkModelStructure(proto, options.embeddedFile ? &options.embeddedSpans : nullptr));
    symbolizeNegativeDims(*proto.mutable_graph(), true, result.warnings);
    const bool external = hasExternalData(proto.graph());
    if (options.runChecker)
        runChecker(proto, options, external, result.warnings);
    if (options.inferShapes)
        OPSCOPE_TRY(runGuardedShapeInference(proto, result.warnings));

    Model &m = result.model;
    m.irVersion = proto.ir_version();
    for (const auto &o : proto.opset_import())
        m.opsets.push_back({o.domain(), o.version()});
    m.producerName = proto.producer_name();
    m.producerVersion = proto.producer_version();
    m.domain = proto.domain();
    m.modelVersion = proto.model_version();
    m.docString = proto.doc_string();
    for (const auto &kv : proto.metadata_props())
        m.metadata.emplace_back(kv.key(), kv.value());
    if (proto.training_info_size() > 0)
        result.warnings.push_back("the model's training_info is not kept by opscope");

    Importer importer(options, result.warnings);
    OPSCOPE_TRY(importer.graph(*proto.mutable_graph(), m.graph, false));
    for (auto &fp : *proto.mutable_functions()) {
        Function f;
        OPSCOPE_TRY(importer.function(fp, f));
        m.functions.push_back(std::move(f));
    }
    OPSCOPE_TRY(verifyGraph(m.graph));
    typeCapturedValues(m.graph);
    for (Function &f : m.functions)
        typeCapturedValues(f.body);
    m.graph.assignNodeNames();
    for (Function &f : m.functions)
        f.body.assignNodeNames();
    for (std::string &w : unknownOperatorWarnings(m))
        result.warnings.push_back(std::move(w));
    for (std::string &w : inputTypeWarnings(m))
        result.warnings.push_back(std::move(w));
    return result;
}

} // namespace opscope
