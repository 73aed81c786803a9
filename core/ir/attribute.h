#pragma once
// Node attributes of every ONNX kind. Graph-valued attributes (If/Loop/Scan bodies) are real
// subgraphs, deep-copied with the node.

#include "ir/cloneptr.h"
#include "ir/tensor.h"
#include "ir/types.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opscope {

class Graph;

enum class AttributeType
{
    Undefined = 0,
    Float = 1,
    Int = 2,
    String = 3,
    Tensor = 4,
    Graph = 5,
    SparseTensor = 11,
    TypeProto = 13,
    Floats = 6,
    Ints = 7,
    Strings = 8,
    Tensors = 9,
    Graphs = 10,
    SparseTensors = 12,
    TypeProtos = 14,
};

std::string_view attributeTypeName(AttributeType type);

struct Attribute
{
    std::string name;
    AttributeType type = AttributeType::Undefined;
    std::string docString;
    std::string refAttrName; // inside functions: refers to the caller's attribute

    float f = 0.0f;
    std::int64_t i = 0;
    std::string s;
    Tensor t;
    ClonePtr<Graph> g;
    SparseTensor sparse;
    TypeInfo tp;
    std::vector<float> floats;
    std::vector<std::int64_t> ints;
    std::vector<std::string> strings;
    std::vector<Tensor> tensors;
    std::vector<ClonePtr<Graph>> graphs;
    std::vector<SparseTensor> sparseTensors;
    std::vector<TypeInfo> typeProtos;

    static Attribute makeFloat(std::string name, float v);
    static Attribute makeInt(std::string name, std::int64_t v);
    static Attribute makeString(std::string name, std::string v);
    static Attribute makeInts(std::string name, std::vector<std::int64_t> v);
    static Attribute makeFloats(std::string name, std::vector<float> v);
    static Attribute makeTensor(std::string name, Tensor v);
    static Attribute makeGraph(std::string name, Graph v);

    // Short human-readable value ("[1,1]", "3.5", "<graph: 4 nodes>"), for inspectors and diffs.
    std::string valueText(std::size_t maxItems = 16) const;
};

} // namespace opscope
