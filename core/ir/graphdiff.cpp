#include "ir/graphdiff.h"

#include "ir/fingerprint.h"

#include <unordered_map>

namespace opscope {

namespace {

// A node's identity for comparison: op, wiring by tensor name, attributes (tensors by identity,
// subgraphs by fingerprint, so this stays cheap for big weights).
std::string signature(const Graph &g, const Node &n)
{
    std::string s = n.domain + "::" + n.opType + "(";
    for (ValueId v : n.inputs)
        s += (v.valid() ? g.value(v).name : std::string()) + ",";
    s += ")->(";
    for (ValueId v : n.outputs)
        s += (v.valid() ? g.value(v).name : std::string()) + ",";
    s += ")";
    for (const Attribute &a : n.attributes) {
        s += "|" + a.name + "=";
        if (a.type == AttributeType::Tensor)
            s += "t" + std::to_string(a.t.data ? a.t.data->id() : 0);
        else if (a.type == AttributeType::Graph && a.g)
            s += "g" + std::to_string(fingerprint(*a.g));
        else
            s += a.valueText(1u << 16);
    }
    // A rewritten constant input (new weights) is a modification too.
    for (ValueId v : n.inputs)
        if (v.valid() && g.value(v).initializer && g.value(v).initializer->data)
            s += "|w" + std::to_string(g.value(v).initializer->data->id());
    return s;
}

} // namespace

GraphDiff diffGraphsByName(const Graph &before, const Graph &after)
{
    GraphDiff d;
    std::unordered_map<std::string, NodeId> inAfter;
    for (NodeId id : after.nodeIds())
        inAfter.emplace(after.node(id).name, id);
    std::unordered_set<std::string> seen;
    for (NodeId id : before.nodeIds()) {
        const Node &b = before.node(id);
        seen.insert(b.name);
        const auto it = inAfter.find(b.name);
        if (it == inAfter.end())
            d.removed.insert(b.name);
        else if (signature(before, b) != signature(after, after.node(it->second)))
            d.modified.insert(b.name);
    }
    for (const auto &[name, id] : inAfter)
        if (!seen.count(name))
            d.added.insert(name);
    return d;
}

} // namespace opscope
