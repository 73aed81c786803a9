#include "passes/commonsubexpression.h"

#include "ir/dependencies.h"
#include "passes/passutil.h"

#include <map>
#include <set>

namespace opscope::passes {

namespace {

constexpr std::uint64_t kMaxMergedConstantBytes = 1 << 16;

bool neverMerged(const Node &node)
{
    static const std::set<std::string> ops{"RandomUniform",    "RandomNormal", "RandomUniformLike",
                                           "RandomNormalLike", "Multinomial",  "Bernoulli"};
    return node.hasSubgraphs() || ops.count(node.opType) > 0;
}

// A key that is equal exactly when two nodes compute the same thing.
std::string nodeKey(const Node &node)
{
    std::string key = node.domain + "::" + node.opType + "(";
    for (ValueId v : node.inputs)
        key += (v.valid() ? std::to_string(v.index) : std::string("-")) + ",";
    key += ")#" + std::to_string(node.outputs.size());
    for (const Attribute &a : node.attributes) {
        key += "|" + a.name + ":" + std::to_string(int(a.type)) + "=";
        if (a.type == AttributeType::Tensor)
            key += "tensor@" + std::to_string(a.t.data ? a.t.data->id() : 0);
        else
            key += a.valueText(1u << 20);
    }
    return key;
}

} // namespace

void CommonSubexpressionElimination::select(const Model &, const Graph &graph,
                                            std::vector<Match> &matches) const
{
    // Duplicate constants: rule "constant", values = {duplicate, kept}. A constant a subgraph reads by
    // name can be kept but never be the duplicate: the body would read a name that is gone.
    std::map<std::tuple<DataType, std::vector<std::int64_t>>, std::vector<ValueId>> byShape;
    const std::vector<bool> readBelow = subgraphReads(graph);
    for (ValueId v : graph.initializers()) {
        const Value &value = graph.value(v);
        if (value.isGraphInput || graph.isGraphOutput(v) ||
            value.initializer->byteSize() > kMaxMergedConstantBytes ||
            value.initializer->dtype == DataType::String)
            continue;
        auto &seen = byShape[{value.initializer->dtype, value.initializer->dims}];
        if (readBelow[v.index]) {
            seen.push_back(v);
            continue;
        }
        bool merged = false;
        for (ValueId kept : seen)
            if (graph.value(kept).initializer->sameContent(*value.initializer)) {
                matches.push_back({"duplicate-constant", {}, {v, kept}, {}});
                merged = true;
                break;
            }
        if (!merged)
            seen.push_back(v);
    }
    // Duplicate nodes, in topological order so chains collapse over fixed-point iterations.
    Expected<std::vector<NodeId>> order = graph.topologicalOrder();
    if (!order)
        return;
    std::map<std::string, NodeId> seen;
    for (NodeId id : *order) {
        const Node &node = graph.node(id);
        if (neverMerged(node))
            continue;
        const auto [it, inserted] = seen.emplace(nodeKey(node), id);
        if (!inserted)
            matches.push_back({"duplicate-node", {id, it->second}, {}, {}});
    }
}

Expected<bool> CommonSubexpressionElimination::apply(Model &, Graph &graph, const Match &match) const
{
    if (match.rule == "duplicate-constant") {
        const ValueId dup = match.values[0], kept = match.values[1];
        if (keepsName(graph, dup))
            return false;
        graph.replaceAllUsesWith(dup, kept);
        graph.removeValue(dup);
        return true;
    }
    const NodeId dup = match.nodes[0], kept = match.nodes[1];
    const std::vector<ValueId> dupOutputs = graph.node(dup).outputs;
    const std::vector<ValueId> keptOutputs = graph.node(kept).outputs;
    for (std::size_t i = 0; i < dupOutputs.size(); ++i)
        if (!keptOutputs[i].valid() && !isUnread(graph, dupOutputs[i]))
            return false; // the kept node does not produce an output this one's consumers need
    for (std::size_t i = 0; i < dupOutputs.size(); ++i)
        if (dupOutputs[i].valid() && graph.isGraphOutput(dupOutputs[i]) &&
            (!keptOutputs[i].valid() || graph.isGraphOutput(keptOutputs[i])))
            return false; // two outputs would become one value; keep both nodes
    graph.removeNode(dup);
    for (std::size_t i = 0; i < dupOutputs.size(); ++i) {
        if (!dupOutputs[i].valid())
            continue;
        if (keptOutputs[i].valid())
            OPSCOPE_TRY(replaceValue(graph, dupOutputs[i], keptOutputs[i]));
        if (graph.value(dupOutputs[i]).alive && isUnread(graph, dupOutputs[i]))
            graph.removeValue(dupOutputs[i]);
    }
    return true;
}

} // namespace opscope::passes
