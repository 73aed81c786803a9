#include "ir/attribute.h"

#include "ir/graph.h"

#include <sstream>

namespace opscope {

std::string_view attributeTypeName(AttributeType type)
{
    switch (type) {
    case AttributeType::Undefined: return "undefined";
    case AttributeType::Float: return "float";
    case AttributeType::Int: return "int";
    case AttributeType::String: return "string";
    case AttributeType::Tensor: return "tensor";
    case AttributeType::Graph: return "graph";
    case AttributeType::SparseTensor: return "sparse_tensor";
    case AttributeType::TypeProto: return "type_proto";
    case AttributeType::Floats: return "floats";
    case AttributeType::Ints: return "ints";
    case AttributeType::Strings: return "strings";
    case AttributeType::Tensors: return "tensors";
    case AttributeType::Graphs: return "graphs";
    case AttributeType::SparseTensors: return "sparse_tensors";
    case AttributeType::TypeProtos: return "type_protos";
    }
    return "unknown";
}

Attribute Attribute::makeFloat(std::string name, float v)
{
    Attribute a;
    a.name = std::move(name);
    a.type = AttributeType::Float;
    a.f = v;
    return a;
}

Attribute Attribute::makeInt(std::string name, std::int64_t v)
{
    Attribute a;
    a.name = std::move(name);
    a.type = AttributeType::Int;
    a.i = v;
    return a;
}

Attribute Attribute::makeString(std::string name, std::string v)
{
    Attribute a;
    a.name = std::move(name);
    a.type = AttributeType::String;
    a.s = std::move(v);
    return a;
}

Attribute Attribute::makeInts(std::string name, std::vector<std::int64_t> v)
{
    Attribute a;
    a.name = std::move(name);
    a.type = AttributeType::Ints;
    a.ints = std::move(v);
    return a;
}

Attribute Attribute::makeFloats(std::string name, std::vector<float> v)
{
    Attribute a;
    a.name = std::move(name);
    a.type = AttributeType::Floats;
    a.floats = std::move(v);
    return a;
}

Attribute Attribute::makeTensor(std::string name, Tensor v)
{
    Attribute a;
    a.name = std::move(name);
    a.type = AttributeType::Tensor;
    a.t = std::move(v);
    return a;
}

Attribute Attribute::makeGraph(std::string name, Graph v)
{
    Attribute a;
    a.name = std::move(name);
    a.type = AttributeType::Graph;
    a.g = ClonePtr<Graph>(std::move(v));
    return a;
}

namespace {

template<class T, class F>
std::string listText(const std::vector<T> &items, std::size_t maxItems, F &&format)
{
    std::string out = "[";
    for (std::size_t k = 0; k < items.size() && k < maxItems; ++k) {
        if (k)
            out += ", ";
        out += format(items[k]);
    }
    if (items.size() > maxItems)
        out += ", … (" + std::to_string(items.size()) + " items)";
    return out + "]";
}

std::string floatText(float v)
{
    std::ostringstream os;
    os << v;
    return os.str();
}

std::string tensorText(const Tensor &t)
{
    return "<tensor " + std::string(dataTypeName(t.dtype)) + Shape::fromSizes(t.dims).toString() + ">";
}

std::string graphText(const ClonePtr<Graph> &g)
{
    return g ? "<graph " + g->name() + ": " + std::to_string(g->nodeCount()) + " nodes>"
             : std::string("<graph>");
}

} // namespace

std::string Attribute::valueText(std::size_t maxItems) const
{
    if (!refAttrName.empty())
        return "@" + refAttrName;
    switch (type) {
    case AttributeType::Undefined: return "?";
    case AttributeType::Float: return floatText(f);
    case AttributeType::Int: return std::to_string(i);
    case AttributeType::String: return "\"" + s + "\"";
    case AttributeType::Tensor: return tensorText(t);
    case AttributeType::Graph: return graphText(g);
    case AttributeType::SparseTensor: return "<sparse " + Shape::fromSizes(sparse.dims).toString() + ">";
    case AttributeType::TypeProto: return tp.toString();
    case AttributeType::Floats: return listText(floats, maxItems, floatText);
    case AttributeType::Ints:
        return listText(ints, maxItems, [](std::int64_t v) { return std::to_string(v); });
    case AttributeType::Strings:
        return listText(strings, maxItems, [](const std::string &v) { return "\"" + v + "\""; });
    case AttributeType::Tensors: return listText(tensors, maxItems, tensorText);
    case AttributeType::Graphs: return listText(graphs, maxItems, graphText);
    case AttributeType::SparseTensors: return "<" + std::to_string(sparseTensors.size()) + " sparse tensors>";
    case AttributeType::TypeProtos:
        return listText(typeProtos, maxItems, [](const TypeInfo &v) { return v.toString(); });
    }
    return "?";
}

} // namespace opscope
