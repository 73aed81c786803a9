#include "ir/graph.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_set>

namespace opscope {

const Attribute *Node::attribute(std::string_view attrName) const
{
    for (const Attribute &a : attributes)
        if (a.name == attrName)
            return &a;
    return nullptr;
}

Attribute *Node::attribute(std::string_view attrName)
{
    for (Attribute &a : attributes)
        if (a.name == attrName)
            return &a;
    return nullptr;
}

bool Node::hasSubgraphs() const
{
    return std::any_of(attributes.begin(), attributes.end(), [](const Attribute &a) {
        return a.type == AttributeType::Graph || a.type == AttributeType::Graphs;
    });
}

std::string nodeDisplayName(const Node &node)
{
    return node.name.empty() ? node.opType + " node #" + std::to_string(node.id.index) : node.name;
}

ValueId Graph::newValue(const std::string &name)
{
    const ValueId id(static_cast<std::uint32_t>(m_values.size()));
    Value v;
    v.id = id;
    v.name = name;
    m_values.push_back(std::move(v));
    m_valueByName.emplace(name, id);
    return id;
}

Expected<ValueId> Graph::createValue(const std::string &name, TypeInfo type)
{
    if (name.empty())
        return Status::invalid("a tensor name cannot be empty");
    if (m_valueByName.count(name))
        return Status::invalid("tensor '" + name + "' is defined twice in graph '" + m_name + "'");
    const ValueId id = newValue(name);
    m_values[id.index].type = std::move(type);
    return id;
}

ValueId Graph::valueNamed(const std::string &name)
{
    const auto it = m_valueByName.find(name);
    return it != m_valueByName.end() ? it->second : newValue(name);
}

ValueId Graph::findValue(std::string_view name) const
{
    const auto it = m_valueByName.find(std::string(name));
    return it != m_valueByName.end() ? it->second : ValueId();
}

ValueId Graph::addInput(const std::string &name, TypeInfo type)
{
    const ValueId id = valueNamed(name);
    Value &v = m_values[id.index];
    v.type = std::move(type);
    if (!v.isGraphInput) {
        v.isGraphInput = true;
        m_inputs.push_back(id);
    }
    return id;
}

ValueId Graph::addInitializer(const std::string &name, Tensor tensor)
{
    const ValueId id = valueNamed(name);
    Value &v = m_values[id.index];
    if (!v.type.isKnown())
        v.type = TypeInfo::tensor(tensor.dtype, Shape::fromSizes(tensor.dims));
    if (tensor.name.empty())
        tensor.name = name;
    if (!v.initializer)
        m_initializerOrder.push_back(id);
    v.initializer = std::move(tensor);
    return id;
}

ValueId Graph::addOuterScopeValue(const std::string &name)
{
    const ValueId id = valueNamed(name);
    m_values[id.index].outerScope = true;
    return id;
}

Status Graph::renameValue(ValueId id, const std::string &newName)
{
    if (newName.empty())
        return Status::invalid("a tensor name cannot be empty");
    if (m_valueByName.count(newName))
        return Status::invalid("tensor '" + newName + "' already exists");
    Value &v = m_values[id.index];
    m_valueByName.erase(v.name);
    v.name = newName;
    if (v.initializer)
        v.initializer->name = newName;
    m_valueByName.emplace(newName, id);
    return Status::ok();
}

std::vector<ValueId> Graph::initializers() const
{
    std::vector<ValueId> out;
    for (ValueId id : m_initializerOrder)
        if (m_values[id.index].alive && m_values[id.index].initializer)
            out.push_back(id);
    return out;
}

std::vector<ValueId> Graph::valueIds() const
{
    std::vector<ValueId> out;
    for (const Value &v : m_values)
        if (v.alive)
            out.push_back(v.id);
    return out;
}

void Graph::addUse(ValueId v, Use use)
{
    if (v.valid())
        m_values[v.index].uses.push_back(use);
}

void Graph::dropUse(ValueId v, Use use)
{
    if (!v.valid())
        return;
    auto &uses = m_values[v.index].uses;
    const auto it = std::find(uses.begin(), uses.end(), use);
    if (it != uses.end())
        uses.erase(it);
}

Expected<NodeId> Graph::addNode(std::string opType, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                                std::string domain, std::string name)
{
    const NodeId id(static_cast<std::uint32_t>(m_nodes.size()));
    const std::string shownName = name.empty() ? opType + " node #" + std::to_string(id.index) : name;
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        if (!outputs[k].valid())
            continue;
        const Value &out = m_values[outputs[k].index];
        if (out.producer.valid())
            return Status::invalid("tensor '" + out.name + "' is produced by two nodes: '" +
                                   nodeDisplayName(m_nodes[out.producer.index]) + "' and '" + shownName +
                                   "'");
        if (out.isGraphInput || out.initializer)
            return Status::invalid("node '" + shownName + "' writes tensor '" + out.name +
                                   "', which is already a graph input or initializer");
        for (std::size_t j = 0; j < k; ++j)
            if (outputs[j] == outputs[k])
                return Status::invalid("node '" + shownName + "' lists output '" + out.name + "' twice");
    }
    Node n;
    n.id = id;
    n.opType = std::move(opType);
    n.domain = std::move(domain);
    n.name = std::move(name);
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    for (std::uint32_t k = 0; k < n.inputs.size(); ++k)
        addUse(n.inputs[k], Use{id, k});
    for (std::uint32_t k = 0; k < n.outputs.size(); ++k) {
        if (!n.outputs[k].valid())
            continue;
        Value &out = m_values[n.outputs[k].index];
        out.producer = id;
        out.producerOutput = k;
    }
    m_nodes.push_back(std::move(n));
    ++m_liveNodes;
    return id;
}

void Graph::removeNode(NodeId id)
{
    Node &n = m_nodes[id.index];
    if (!n.alive)
        return;
    for (std::uint32_t k = 0; k < n.inputs.size(); ++k)
        dropUse(n.inputs[k], Use{id, k});
    for (ValueId out : n.outputs)
        if (out.valid())
            m_values[out.index].producer = NodeId();
    n.alive = false;
    --m_liveNodes;
    // A removed node keeps its name and wiring for messages, not its data: a folded Constant's
    // tensor (or a body graph) held here would keep every weight a pass replaced alive for the
    // graph's lifetime (PaddleOCR's recognizer ran with its original weights and their folded
    // copies both in memory).
    std::vector<Attribute>().swap(n.attributes);
}

void Graph::setNodeInput(NodeId node, std::uint32_t index, ValueId v)
{
    Node &n = m_nodes[node.index];
    if (index >= n.inputs.size())
        n.inputs.resize(index + 1);
    dropUse(n.inputs[index], Use{node, index});
    n.inputs[index] = v;
    addUse(v, Use{node, index});
}

void Graph::replaceAllUsesWith(ValueId from, ValueId to)
{
    const std::vector<Use> uses = m_values[from.index].uses;
    for (const Use &u : uses)
        setNodeInput(u.node, u.inputIndex, to);
    for (ValueId &out : m_outputs)
        if (out == from)
            out = to;
}

void Graph::removeValue(ValueId id)
{
    Value &v = m_values[id.index];
    v.alive = false;
    v.initializer.reset();
    v.sparseInitializer.reset();
    m_valueByName.erase(v.name);
    std::erase(m_inputs, id);
}

NodeId Graph::findNode(std::string_view name) const
{
    for (const Node &n : m_nodes)
        if (n.alive && n.name == name)
            return n.id;
    return NodeId();
}

std::vector<NodeId> Graph::nodeIds() const
{
    std::vector<NodeId> out;
    out.reserve(m_liveNodes);
    for (const Node &n : m_nodes)
        if (n.alive)
            out.push_back(n.id);
    return out;
}

std::size_t Graph::nodeCountWithSubgraphs() const
{
    std::size_t count = 0;
    for (const Node &n : m_nodes) {
        if (!n.alive)
            continue;
        ++count;
        for (const Attribute &a : n.attributes) {
            if (a.g)
                count += a.g->nodeCountWithSubgraphs();
            for (const ClonePtr<Graph> &g : a.graphs)
                if (g)
                    count += g->nodeCountWithSubgraphs();
        }
    }
    return count;
}

bool Graph::isGraphOutput(ValueId v) const
{
    return std::find(m_outputs.begin(), m_outputs.end(), v) != m_outputs.end();
}

Expected<std::vector<NodeId>> Graph::topologicalOrder() const
{
    std::vector<std::uint32_t> pending(m_nodes.size(), 0);
    std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
    for (const Node &n : m_nodes) {
        if (!n.alive)
            continue;
        for (ValueId in : n.inputs)
            if (in.valid() && m_values[in.index].producer.valid())
                ++pending[n.id.index];
        if (pending[n.id.index] == 0)
            ready.push(n.id.index);
    }
    std::vector<NodeId> order;
    order.reserve(m_liveNodes);
    while (!ready.empty()) {
        const std::uint32_t idx = ready.top();
        ready.pop();
        order.emplace_back(idx);
        for (ValueId out : m_nodes[idx].outputs) {
            if (!out.valid())
                continue;
            for (const Use &u : m_values[out.index].uses)
                if (--pending[u.node.index] == 0)
                    ready.push(u.node.index);
        }
    }
    if (order.size() == m_liveNodes)
        return order;

    // Name a few nodes that are stuck on the cycle so the user can find it.
    std::string names;
    int listed = 0;
    for (const Node &n : m_nodes) {
        if (n.alive && pending[n.id.index] > 0 && listed < 5) {
            names += (listed++ ? ", '" : "'") + nodeDisplayName(n) + "' (" + n.opType + ")";
        }
    }
    return Status::invalid("graph '" + m_name + "' has a cycle through " + names);
}

void Graph::assignNodeNames()
{
    std::unordered_set<std::string> taken;
    for (const Node &n : m_nodes)
        if (n.alive && !n.name.empty() && !n.nameGenerated)
            taken.insert(n.name);
    std::unordered_map<std::string, int> counters;
    for (Node &n : m_nodes) {
        if (!n.alive)
            continue;
        if (n.name.empty() || n.nameGenerated) {
            std::string candidate;
            do {
                candidate = n.opType + "_" + std::to_string(counters[n.opType]++);
            } while (taken.count(candidate));
            taken.insert(candidate);
            n.name = candidate;
            n.nameGenerated = true;
        }
        for (Attribute &a : n.attributes) {
            if (a.g)
                a.g->assignNodeNames();
            for (ClonePtr<Graph> &g : a.graphs)
                if (g)
                    g->assignNodeNames();
        }
    }
}

} // namespace opscope
