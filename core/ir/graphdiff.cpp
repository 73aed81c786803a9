#include "ir/graphdiff.h"

#include "ir/fingerprint.h"

#include <mutex>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace opscope {

namespace {

// A node's own identity for comparison: op, attributes (tensors by content, subgraphs by
// fingerprint), the constants it reads and the tensors it
// writes. Its activation inputs are compared apart (sameWiring): a node is not "modified" because
// the node feeding it was rewritten.
// Weights by content: a model compared with its copy, or with a version another tool wrote,
// holds equal bytes in other buffers (by buffer identity every node that read a weight showed
// "modified" there). Hashed once per buffer — ids are unique for the process lifetime — so a
// pass stepper diffing two dozen steps of a big model reads each weight once. Never 0.
std::uint64_t weightDigest(const Tensor &t)
{
    if (!t.data)
        return 0;
    static std::mutex lock;
    static std::unordered_map<std::uint64_t, std::uint64_t> digests; // buffer id → digest
    {
        const std::lock_guard guard(lock);
        if (const auto it = digests.find(t.data->id()); it != digests.end())
            return it->second;
    }
    const std::span<const std::byte> bytes = t.data->storedBytes();
    std::uint64_t h = std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
    h = h * 31 + std::uint64_t(t.dtype);
    for (std::int64_t d : t.dims)
        h = h * 1000003u + std::uint64_t(d);
    h |= 1;
    const std::lock_guard guard(lock);
    digests.emplace(t.data->id(), h);
    return h;
}

// The weights a value holds: an initializer's, or a Constant node's (exporters such as
// Paddle2ONNX write hundreds of them; constant folding turns each into an initializer sharing its
// buffer). 0: not a constant.
std::uint64_t constantId(const Graph &g, ValueId v)
{
    const Value &value = g.value(v);
    if (value.initializer && value.initializer->data)
        return weightDigest(*value.initializer);
    if (!value.producer.valid())
        return 0;
    const Node &p = g.node(value.producer);
    if (p.opType != "Constant" || !(p.domain.empty() || p.domain == "ai.onnx") || !p.inputs.empty())
        return 0;
    const Attribute *t = p.attribute("value");
    return t && t->type == AttributeType::Tensor ? weightDigest(t->t) : 0;
}

std::string signature(const Graph &g, const Node &n)
{
    std::string s = n.domain + "::" + n.opType + "(" + std::to_string(n.inputs.size()) + ")->(";
    // Graph outputs by name (the model's interface); an intermediate tensor's new name is no
    // change to the node that writes it — an optimized file names its tensors anew, and every node
    // there showed "modified" for it.
    for (ValueId v : n.outputs)
        s += (!v.valid() ? std::string() : g.isGraphOutput(v) ? g.value(v).name : std::string("·")) + ",";
    s += ")";
    for (const Attribute &a : n.attributes) {
        s += "|" + a.name + "=";
        if (a.type == AttributeType::Tensor)
            s += "t" + std::to_string(weightDigest(a.t));
        else if (a.type == AttributeType::Graph && a.g)
            s += "g" + std::to_string(fingerprint(*a.g));
        else
            s += a.valueText(1u << 16);
    }
    // A rewritten constant input (new weights) is a modification too; the same weights moved from
    // a Constant node into an initializer are not (every reader of 340 Constants showed modified).
    for (ValueId v : n.inputs)
        if (const std::uint64_t w = v.valid() ? constantId(g, v) : 0)
            s += "|w" + std::to_string(w);
    return s;
}

// Each input slot reads the same thing: the same graph input or constant by name, or the output of
// a node both graphs have. Reading from a node only one graph has (a BN fused away, the FusedConv
// that replaced it) is the neighbour's rewrite, not this node's.
bool sameWiring(const Graph &before, const Node &b, const Graph &after, const Node &a)
{
    for (std::size_t k = 0; k < b.inputs.size() && k < a.inputs.size(); ++k) {
        const ValueId vb = b.inputs[k], va = a.inputs[k];
        if (vb.valid() != va.valid())
            return false;
        if (!vb.valid())
            continue;
        const NodeId pb = before.value(vb).producer, pa = after.value(va).producer;
        if (const std::uint64_t w = constantId(before, vb); w && w == constantId(after, va))
            continue; // the same weights, from a Constant node or an initializer
        if (!pb.valid() || !pa.valid()) {
            if (pb.valid() != pa.valid() || before.value(vb).name != after.value(va).name)
                return false;
            continue;
        }
        const std::string &nb = before.node(pb).name, &na = after.node(pa).name;
        if (nb == na)
            continue;
        if (after.findNode(nb).valid() && before.findNode(na).valid())
            return false; // rewired between nodes both graphs keep
    }
    return true;
}

} // namespace

GraphDiff diffGraphsByName(const Graph &before, const Graph &after,
                           const std::unordered_map<std::string, std::string> &same)
{
    GraphDiff d;
    std::unordered_map<std::string, NodeId> inAfter;
    for (NodeId id : after.nodeIds())
        inAfter.emplace(after.node(id).name, id);
    std::unordered_map<std::string, std::string> sameBefore; // before name → after name
    for (const auto &[a, b] : same)
        if (inAfter.count(a))
            sameBefore.emplace(b, a);
    std::unordered_set<std::string> seen;
    for (NodeId id : before.nodeIds()) {
        const Node &b = before.node(id);
        seen.insert(b.name);
        if (const auto s = sameBefore.find(b.name); s != sameBefore.end() && !inAfter.count(b.name)) {
            seen.insert(s->second);
            const Node &a = after.node(inAfter.at(s->second));
            if (signature(before, b) != signature(after, a) || !sameWiring(before, b, after, a)) {
                d.modified.insert(b.name);
                d.modified.insert(a.name);
            }
            continue;
        }
        const auto it = inAfter.find(b.name);
        if (it == inAfter.end())
            d.removed.insert(b.name);
        else if (const Node &a = after.node(it->second);
                 signature(before, b) != signature(after, a) || !sameWiring(before, b, after, a))
            d.modified.insert(b.name);
    }
    for (const auto &[name, id] : inAfter)
        if (!seen.count(name))
            d.added.insert(name);
    return d;
}

std::unordered_map<std::string, std::string> matchRenamedNodes(const Graph &before, const Graph &after)
{
    std::unordered_map<std::string, std::string> match; // after → before
    std::unordered_set<std::string> taken;             // before names matched
    std::vector<NodeId> openAfter;
    std::unordered_set<std::string> afterNames;
    for (NodeId id : after.nodeIds())
        afterNames.insert(after.node(id).name);
    auto isOpenBefore = [&](const Node &n) { return !afterNames.count(n.name) && !taken.count(n.name); };
    for (NodeId id : after.nodeIds())
        if (!before.findNode(after.node(id).name).valid())
            openAfter.push_back(id);
    auto op = [](const Node &n) { return n.domain + "::" + n.opType; };
    auto names = [](const Graph &g, const std::vector<ValueId> &vs, bool activationsOnly) {
        std::string s;
        for (ValueId v : vs)
            if (v.valid() && !(activationsOnly && g.value(v).isConstant()))
                s += g.value(v).name + '\x1f';
        return s;
    };
    // One pass of matching by a key: taken only when the key is unique among the open nodes of
    // both graphs.
    auto byKey = [&](auto key) {
        std::unordered_map<std::string, std::vector<NodeId>> b, a;
        for (NodeId id : before.nodeIds())
            if (const Node &n = before.node(id); isOpenBefore(n))
                if (std::string k = key(before, n); !k.empty())
                    b[k].push_back(id);
        for (NodeId id : openAfter)
            if (!match.count(after.node(id).name))
                if (std::string k = key(after, after.node(id)); !k.empty())
                    a[k].push_back(id);
        for (const auto &[k, ids] : a)
            if (const auto it = b.find(k); ids.size() == 1 && it != b.end() && it->second.size() == 1) {
                const std::string &bn = before.node(it->second.front()).name;
                match.emplace(after.node(ids.front()).name, bn);
                taken.insert(bn);
            }
    };
    byKey([&](const Graph &g, const Node &n) {
        const std::string outs = names(g, n.outputs, false);
        return outs.empty() ? std::string() : op(n) + "|" + outs;
    });
    byKey([&](const Graph &g, const Node &n) {
        const std::string ins = names(g, n.inputs, true);
        return ins.empty() ? std::string() : op(n) + "<" + ins;
    });
    // Through the wiring, from the outputs up: an open after node feeding a matched node in some
    // input slot is the open before node of the same op feeding that slot of its partner (a
    // lowered Conv above its matched Relu; intermediate tensors are renamed, only the graph's
    // outputs keep theirs).
    for (int round = 0; round < 64; ++round) { // one level of the graph per round, at most
        const std::size_t matched = match.size();
        for (NodeId id : openAfter) {
            const Node &n = after.node(id);
            if (match.count(n.name))
                continue;
            std::unordered_set<std::string> candidates;
            for (ValueId out : n.outputs)
                if (out.valid())
                    for (const Use &u : after.value(out).uses) {
                        const std::string &reader = after.node(u.node).name;
                        const auto m = match.find(reader);
                        const NodeId partner = before.findNode(m != match.end() ? m->second : reader);
                        if (!partner.valid())
                            continue;
                        // The partner's input in the same slot: a Concat reads four Relus.
                        const auto &ins = before.node(partner).inputs;
                        if (u.inputIndex >= ins.size())
                            continue;
                        const ValueId in = ins[u.inputIndex];
                        if (in.valid() && before.value(in).producer.valid())
                            if (const Node &p = before.node(before.value(in).producer); isOpenBefore(p) && op(p) == op(n))
                                candidates.insert(p.name);
                    }
            // And from the inputs down: reading slot k from a matched producer's output j, it is
            // the open reader of the same op in slot k of the partner's output j.
            if (candidates.empty())
                for (std::size_t slot = 0; slot < n.inputs.size(); ++slot) {
                    const ValueId in = n.inputs[slot];
                    if (!in.valid() || !after.value(in).producer.valid())
                        continue;
                    const Node &producer = after.node(after.value(in).producer);
                    const auto m = match.find(producer.name);
                    const NodeId partner = before.findNode(m != match.end() ? m->second : producer.name);
                    const std::uint32_t j = after.value(in).producerOutput;
                    if (!partner.valid() || j >= before.node(partner).outputs.size() ||
                        !before.node(partner).outputs[j].valid())
                        continue;
                    for (const Use &u : before.value(before.node(partner).outputs[j]).uses)
                        if (const Node &r = before.node(u.node);
                            u.inputIndex == slot && isOpenBefore(r) && op(r) == op(n))
                            candidates.insert(r.name);
                }
            if (candidates.size() == 1) {
                match.emplace(n.name, *candidates.begin());
                taken.insert(*candidates.begin());
            }
        }
        if (match.size() == matched)
            break;
    }
    return match;
}

} // namespace opscope
