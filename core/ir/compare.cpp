#include "ir/compare.h"

#include <cstring>

namespace opscope {
namespace {

Status differs(const std::string &where, const std::string &what, const std::string &a, const std::string &b)
{
    return Status::invalid(where + ": " + what + " differs: " + a + " vs " + b);
}

std::string valueName(const Graph &g, ValueId v)
{
    return v.valid() ? g.value(v).name : std::string();
}

std::string tensorText(const Tensor &t)
{
    return std::string(dataTypeName(t.dtype)) + Shape::fromSizes(t.dims).toString() + " (" +
           std::to_string(t.byteSize()) + " bytes)";
}

Status compareTensors(const std::string &where, const Tensor &a, const Tensor &b)
{
    if (!a.sameContent(b))
        return differs(where, "tensor content", tensorText(a), tensorText(b));
    return Status::ok();
}

Status compareTypes(const std::string &where, const TypeInfo &a, const TypeInfo &b)
{
    return a == b ? Status::ok() : differs(where, "type", a.toString(), b.toString());
}

Status compareAttributes(const std::string &where, const Attribute &a, const Attribute &b)
{
    const std::string at = where + ": attribute '" + a.name + "'";
    if (a.name != b.name || a.type != b.type || a.refAttrName != b.refAttrName)
        return differs(where, "attribute", a.name + ":" + std::string(attributeTypeName(a.type)),
                       b.name + ":" + std::string(attributeTypeName(b.type)));
    const bool fEqual = std::memcmp(&a.f, &b.f, sizeof a.f) == 0;
    bool floatsEqual = a.floats.size() == b.floats.size() &&
                       (a.floats.empty() ||
                        std::memcmp(a.floats.data(), b.floats.data(), a.floats.size() * sizeof(float)) == 0);
    if (!fEqual || a.i != b.i || a.s != b.s || !floatsEqual || a.ints != b.ints || a.strings != b.strings ||
        a.tensors.size() != b.tensors.size() || a.graphs.size() != b.graphs.size() ||
        a.sparseTensors.size() != b.sparseTensors.size() || a.typeProtos != b.typeProtos || !(a.tp == b.tp) ||
        !(a.sparse == b.sparse) || a.docString != b.docString)
        return differs(at, "value", a.valueText(), b.valueText());
    OPSCOPE_TRY(compareTensors(at, a.t, b.t));
    for (std::size_t k = 0; k < a.tensors.size(); ++k)
        OPSCOPE_TRY(compareTensors(at + "[" + std::to_string(k) + "]", a.tensors[k], b.tensors[k]));
    for (std::size_t k = 0; k < a.sparseTensors.size(); ++k)
        if (!(a.sparseTensors[k] == b.sparseTensors[k]))
            return differs(at, "sparse tensor " + std::to_string(k), "", "");
    if (static_cast<bool>(a.g) != static_cast<bool>(b.g))
        return differs(at, "graph presence", a.g ? "yes" : "no", b.g ? "yes" : "no");
    if (a.g)
        OPSCOPE_TRY(compareGraphs(*a.g, *b.g).withContext(at));
    for (std::size_t k = 0; k < a.graphs.size(); ++k)
        OPSCOPE_TRY(
            compareGraphs(*a.graphs[k], *b.graphs[k]).withContext(at + "[" + std::to_string(k) + "]"));
    return Status::ok();
}

Status compareValueLists(const std::string &where, const Graph &ga, const std::vector<ValueId> &a,
                         const Graph &gb, const std::vector<ValueId> &b, const char *what)
{
    if (a.size() != b.size())
        return differs(where, std::string("number of ") + what, std::to_string(a.size()),
                       std::to_string(b.size()));
    for (std::size_t k = 0; k < a.size(); ++k) {
        const std::string na = valueName(ga, a[k]);
        if (na != valueName(gb, b[k]))
            return differs(where, std::string(what) + " " + std::to_string(k), na, valueName(gb, b[k]));
        if (a[k].valid())
            OPSCOPE_TRY(compareTypes(where + ": " + what + " '" + na + "'", ga.value(a[k]).type,
                                     gb.value(b[k]).type));
    }
    return Status::ok();
}

} // namespace

Status compareGraphs(const Graph &a, const Graph &b)
{
    const std::string where = "graph '" + a.name() + "'";
    if (a.name() != b.name() || a.docString() != b.docString())
        return differs(where, "name or doc string", a.name(), b.name());
    OPSCOPE_TRY(compareValueLists(where, a, a.inputs(), b, b.inputs(), "input"));
    OPSCOPE_TRY(compareValueLists(where, a, a.outputs(), b, b.outputs(), "output"));

    const std::vector<ValueId> ia = a.initializers();
    const std::vector<ValueId> ib = b.initializers();
    if (ia.size() != ib.size())
        return differs(where, "initializer count", std::to_string(ia.size()), std::to_string(ib.size()));
    for (std::size_t k = 0; k < ia.size(); ++k) {
        const Value &va = a.value(ia[k]);
        const Value &vb = b.value(ib[k]);
        if (va.name != vb.name)
            return differs(where, "initializer " + std::to_string(k), va.name, vb.name);
        OPSCOPE_TRY(
            compareTensors(where + ": initializer '" + va.name + "'", *va.initializer, *vb.initializer));
    }

    const std::vector<NodeId> na = a.nodeIds();
    const std::vector<NodeId> nb = b.nodeIds();
    if (na.size() != nb.size())
        return differs(where, "node count", std::to_string(na.size()), std::to_string(nb.size()));
    for (std::size_t k = 0; k < na.size(); ++k) {
        const Node &x = a.node(na[k]);
        const Node &y = b.node(nb[k]);
        const std::string at = where + ": node " + std::to_string(k) + " '" + x.name + "' (" + x.opType + ")";
        if (x.opType != y.opType || x.domain != y.domain)
            return differs(at, "operator", x.domain + "::" + x.opType, y.domain + "::" + y.opType);
        if (x.name != y.name || x.docString != y.docString)
            return differs(at, "name or doc string", x.name, y.name);
        if (x.inputs.size() != y.inputs.size() || x.outputs.size() != y.outputs.size())
            return differs(at, "arity",
                           std::to_string(x.inputs.size()) + "/" + std::to_string(x.outputs.size()),
                           std::to_string(y.inputs.size()) + "/" + std::to_string(y.outputs.size()));
        for (std::size_t i = 0; i < x.inputs.size(); ++i)
            if (valueName(a, x.inputs[i]) != valueName(b, y.inputs[i]))
                return differs(at, "input " + std::to_string(i), valueName(a, x.inputs[i]),
                               valueName(b, y.inputs[i]));
        for (std::size_t i = 0; i < x.outputs.size(); ++i) {
            const std::string oa = valueName(a, x.outputs[i]);
            if (oa != valueName(b, y.outputs[i]))
                return differs(at, "output " + std::to_string(i), oa, valueName(b, y.outputs[i]));
            if (x.outputs[i].valid())
                OPSCOPE_TRY(compareTypes(at + ": output '" + oa + "'", a.value(x.outputs[i]).type,
                                         b.value(y.outputs[i]).type));
        }
        if (x.attributes.size() != y.attributes.size())
            return differs(at, "attribute count", std::to_string(x.attributes.size()),
                           std::to_string(y.attributes.size()));
        for (std::size_t i = 0; i < x.attributes.size(); ++i)
            OPSCOPE_TRY(compareAttributes(at, x.attributes[i], y.attributes[i]));
    }
    if (a.quantizationAnnotations() != b.quantizationAnnotations())
        return differs(where, "quantization annotations", "", "");
    return Status::ok();
}

Status compareModels(const Model &a, const Model &b)
{
    if (a.irVersion != b.irVersion)
        return differs("model", "ir_version", std::to_string(a.irVersion), std::to_string(b.irVersion));
    if (a.opsets != b.opsets)
        return differs("model", "opset imports", std::to_string(a.opsets.size()),
                       std::to_string(b.opsets.size()));
    if (a.producerName != b.producerName || a.producerVersion != b.producerVersion || a.domain != b.domain ||
        a.modelVersion != b.modelVersion || a.docString != b.docString || a.metadata != b.metadata)
        return differs("model", "producer, domain, version, doc string or metadata", a.producerName,
                       b.producerName);
    OPSCOPE_TRY(compareGraphs(a.graph, b.graph));
    if (a.functions.size() != b.functions.size())
        return differs("model", "function count", std::to_string(a.functions.size()),
                       std::to_string(b.functions.size()));
    for (std::size_t k = 0; k < a.functions.size(); ++k) {
        const Function &fa = a.functions[k];
        const Function &fb = b.functions[k];
        if (fa.name != fb.name || fa.domain != fb.domain || fa.attributeNames != fb.attributeNames ||
            fa.opsets != fb.opsets || fa.docString != fb.docString)
            return differs("model", "function " + std::to_string(k), fa.name, fb.name);
        OPSCOPE_TRY(compareGraphs(fa.body, fb.body).withContext("function '" + fa.name + "'"));
    }
    return Status::ok();
}

} // namespace opscope
