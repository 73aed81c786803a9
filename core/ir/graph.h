#pragma once
// The in-memory graph. Nodes and values live in arrays indexed by strong ids; removal leaves a
// tombstone so ids stay stable for the lifetime of a graph (pass change records rely on it).
// Use-def chains go both ways: a value knows its producer and every (node, input slot) using it.
// Copying a Graph copies structure only; tensor bytes are shared (see tensor.h).

#include "ir/attribute.h"
#include "ir/ids.h"
#include "ir/tensor.h"
#include "ir/types.h"
#include "util/status.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace opscope {

struct Use
{
    NodeId node;
    std::uint32_t inputIndex = 0;
    bool operator==(const Use &) const = default;
};

struct Value
{
    ValueId id;
    std::string name;
    TypeInfo type;
    std::string docString;
    NodeId producer; // invalid for graph inputs, initializers and outer-scope values
    std::uint32_t producerOutput = 0;
    std::vector<Use> uses;
    std::optional<Tensor> initializer;
    std::optional<SparseTensor> sparseInitializer;
    bool isGraphInput = false;
    bool outerScope = false;   // defined in an enclosing graph (subgraphs only)
    bool hasValueInfo = false; // listed in the file's value_info; exported the same way
    bool alive = true;

    bool isConstant() const { return initializer.has_value() && !isGraphInput; }
};

struct Node
{
    NodeId id;
    std::string name; // readable and unique in its graph; generated when the file had none
    bool nameGenerated = false;
    std::string opType;
    std::string domain; // "" is the default ONNX domain
    std::string docString;
    std::vector<ValueId> inputs;  // invalid id: an omitted optional input ("")
    std::vector<ValueId> outputs; // invalid id: an omitted optional output
    std::vector<Attribute> attributes;
    bool alive = true;

    const Attribute *attribute(std::string_view attrName) const;
    Attribute *attribute(std::string_view attrName);
    bool hasSubgraphs() const;
};

// The node's name, or "<op> node #<index>" before names are assigned; for messages.
std::string nodeDisplayName(const Node &node);

struct QuantizationAnnotation
{
    std::string tensorName;
    std::vector<std::pair<std::string, std::string>> parameters; // key -> tensor name
    bool operator==(const QuantizationAnnotation &) const = default;
};

class Graph
{
public:
    Graph() = default;
    explicit Graph(std::string name) : m_name(std::move(name)) {}

    const std::string &name() const { return m_name; }
    void setName(std::string name) { m_name = std::move(name); }
    const std::string &docString() const { return m_docString; }
    void setDocString(std::string doc) { m_docString = std::move(doc); }

    // --- values ---
    // Creates a value with a new name; an empty name is not allowed.
    Expected<ValueId> createValue(const std::string &name, TypeInfo type = {});
    // The value with this name, created (without producer) when it does not exist yet.
    ValueId valueNamed(const std::string &name);
    ValueId findValue(std::string_view name) const;
    ValueId addInput(const std::string &name, TypeInfo type);
    ValueId addInitializer(const std::string &name, Tensor tensor);
    // A reference to a value of an enclosing graph (subgraphs only).
    ValueId addOuterScopeValue(const std::string &name);
    void setOutputs(std::vector<ValueId> outputs) { m_outputs = std::move(outputs); }
    void addOutput(ValueId v) { m_outputs.push_back(v); }
    Status renameValue(ValueId v, const std::string &newName);

    const Value &value(ValueId id) const { return m_values[id.index]; }
    Value &value(ValueId id) { return m_values[id.index]; }
    const std::vector<ValueId> &inputs() const { return m_inputs; }
    const std::vector<ValueId> &outputs() const { return m_outputs; }
    std::vector<ValueId> initializers() const; // in the order they were added
    std::vector<ValueId> valueIds() const;     // every live value
    std::size_t valueSlots() const { return m_values.size(); }

    // --- nodes ---
    // Adds a node whose outputs are existing values without a producer. Fails with a message naming
    // the tensor when one of them already has a producer.
    Expected<NodeId> addNode(std::string opType, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                             std::string domain = {}, std::string name = {});
    void removeNode(NodeId id); // detaches its uses; outputs lose their producer
    void setNodeInput(NodeId node, std::uint32_t index, ValueId v);
    // Every use of `from` (node inputs and graph outputs) now uses `to`.
    void replaceAllUsesWith(ValueId from, ValueId to);
    void removeValue(ValueId id); // must have no uses and no producer

    const Node &node(NodeId id) const { return m_nodes[id.index]; }
    Node &node(NodeId id) { return m_nodes[id.index]; }
    NodeId findNode(std::string_view name) const;
    std::vector<NodeId> nodeIds() const; // live nodes in insertion order
    std::size_t nodeCount() const { return m_liveNodes; }
    std::size_t nodeSlots() const { return m_nodes.size(); }
    std::size_t nodeCountWithSubgraphs() const;

    // An invalid id (an omitted optional input) has no producer and no uses: callers that walk
    // node.inputs need not test each one first (a pass once read past the values for one).
    NodeId producer(ValueId v) const { return v.valid() ? m_values[v.index].producer : NodeId(); }
    const std::vector<Use> &uses(ValueId v) const
    {
        static const std::vector<Use> none;
        return v.valid() ? m_values[v.index].uses : none;
    }
    bool isGraphOutput(ValueId v) const;

    // Kahn's algorithm, stable: nodes keep insertion order where dependencies allow.
    // Fails on a cycle, naming the nodes on it.
    Expected<std::vector<NodeId>> topologicalOrder() const;

    // Gives every unnamed node a readable, unique, deterministic name ("Conv_3": the 4th unnamed
    // Conv in insertion order), recursing into subgraphs. Named nodes keep their names.
    void assignNodeNames();

    std::vector<QuantizationAnnotation> &quantizationAnnotations() { return m_quantAnnotations; }
    const std::vector<QuantizationAnnotation> &quantizationAnnotations() const { return m_quantAnnotations; }

private:
    ValueId newValue(const std::string &name);
    void addUse(ValueId v, Use use);
    void dropUse(ValueId v, Use use);

    std::string m_name;
    std::string m_docString;
    std::vector<Node> m_nodes;
    std::vector<Value> m_values;
    std::vector<ValueId> m_inputs;
    std::vector<ValueId> m_outputs;
    std::vector<ValueId> m_initializerOrder;
    std::unordered_map<std::string, ValueId> m_valueByName;
    std::vector<QuantizationAnnotation> m_quantAnnotations;
    std::size_t m_liveNodes = 0;
};

} // namespace opscope
