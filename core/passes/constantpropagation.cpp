#include "passes/constantpropagation.h"

#include "passes/constantfolding.h"
#include "passes/passutil.h"

namespace opscope::passes {

namespace {

struct Scope
{
    const Graph *graph;
    const Scope *parent;
};

const Tensor *visibleConstant(const Scope *scope, const std::string &name)
{
    for (; scope; scope = scope->parent) {
        const ValueId v = scope->graph->findValue(name);
        if (!v.valid())
            continue;
        if (const Tensor *t = constantTensor(*scope->graph, v))
            return t;
        if (!scope->graph->value(v).outerScope)
            return nullptr; // defined here, not constant
    }
    return nullptr;
}

Expected<bool> inlineBranch(Graph &parent, NodeId ifNode, const Graph &branch)
{
    for (NodeId n : branch.nodeIds())
        if (branch.node(n).hasSubgraphs())
            return false;
    if (branch.outputs().size() != parent.node(ifNode).outputs.size())
        return false;
    Expected<std::vector<NodeId>> order = branch.topologicalOrder();
    if (!order)
        return order.status();
    // The If goes first: the names of its branches are free again for the nodes taken out of them.
    const std::vector<ValueId> ifOutputs = parent.node(ifNode).outputs;
    const std::vector<ValueId> ifInputs = parent.node(ifNode).inputs;
    parent.removeNode(ifNode);
    std::vector<ValueId> map(branch.valueSlots());
    auto mapped = [&](ValueId v) -> Expected<ValueId> {
        if (!v.valid())
            return ValueId();
        if (map[v.index].valid())
            return map[v.index];
        const Value &value = branch.value(v);
        ValueId out;
        if (value.outerScope) {
            out = parent.findValue(value.name);
            if (!out.valid())
                out = parent.addOuterScopeValue(value.name);
        } else if (value.initializer) {
            out = addConstant(parent, value.name, *value.initializer);
        } else {
            Expected<ValueId> created = parent.createValue(freshValueName(parent, value.name), value.type);
            if (!created)
                return created.status();
            out = *created;
        }
        map[v.index] = out;
        return out;
    };
    for (NodeId n : *order) {
        const Node &node = branch.node(n);
        std::vector<ValueId> ins, outs;
        for (ValueId v : node.inputs) {
            Expected<ValueId> m = mapped(v);
            if (!m)
                return m.status();
            ins.push_back(*m);
        }
        for (ValueId v : node.outputs) {
            Expected<ValueId> m = mapped(v);
            if (!m)
                return m.status();
            outs.push_back(*m);
        }
        Expected<NodeId> added =
            parent.addNode(node.opType, ins, outs, node.domain, freshNodeName(parent, node.name));
        if (!added)
            return added.status();
        parent.node(*added).attributes = node.attributes;
    }
    std::vector<ValueId> results;
    for (ValueId v : branch.outputs()) {
        Expected<ValueId> m = mapped(v);
        if (!m)
            return m.status();
        results.push_back(*m);
    }
    for (std::size_t i = 0; i < ifOutputs.size(); ++i) {
        if (!ifOutputs[i].valid())
            continue;
        OPSCOPE_TRY(replaceValue(parent, ifOutputs[i], results[i]));
        if (parent.value(ifOutputs[i]).alive && isUnread(parent, ifOutputs[i]))
            parent.removeValue(ifOutputs[i]);
    }
    for (ValueId in : ifInputs)
        eraseConstantIfUnused(parent, in);
    return true;
}

// Outer constants a body reads become its own constants (fresh names: bodies may not shadow).
bool captureConstants(Graph &body, const Scope &outer)
{
    bool changed = false;
    for (ValueId v : body.valueIds()) {
        const Value &value = body.value(v);
        if (!value.outerScope || value.uses.empty())
            continue;
        const Tensor *t = visibleConstant(&outer, value.name);
        if (!t)
            continue;
        const std::string name = freshValueName(body, value.name + "_const"); // unique in the model
        Tensor copy = *t; // shares the bytes
        copy.name = name;
        copy.external.reset();
        const ValueId local = body.addInitializer(name, std::move(copy));
        body.replaceAllUsesWith(v, local);
        body.removeValue(v);
        changed = true;
    }
    return changed;
}

// Captured values carry no type inside the body; shape rules there need the enclosing graph's.
void inheritTypes(Graph &body, const Scope &outer)
{
    for (ValueId v : body.valueIds()) {
        Value &value = body.value(v);
        if (!value.outerScope || value.type.isKnown())
            continue;
        for (const Scope *s = &outer; s; s = s->parent) {
            const ValueId found = s->graph->findValue(value.name);
            if (found.valid() && s->graph->value(found).type.isKnown()) {
                value.type = s->graph->value(found).type;
                break;
            }
        }
    }
}

// `path` names `graph` as matches do ("" for the main graph, "If_0/then_branch" below it); every
// folded node, inlined If and body given constants is recorded in `matches`.
Expected<bool> propagate(Graph &graph, const Scope *parentScope, const std::map<std::string, int> &opsets,
                         const PassOptions &options, const std::string &path, std::vector<PatternMatch> &matches)
{
    const Scope scope{&graph, parentScope};
    std::vector<PatternMatch> folds;
    Expected<bool> folded = foldConstants(graph, opsets, options, &folds);
    if (!folded)
        return folded.status();
    for (PatternMatch &m : folds) {
        m.graphPath = path;
        matches.push_back(std::move(m));
    }
    bool changed = *folded;
    auto record = [&](const char *rule, NodeId id) {
        matches.push_back({rule, path, {id}, {graph.node(id).name}, {}, {}});
    };
    for (NodeId id : graph.nodeIds()) {
        Node &node = graph.node(id);
        if (!node.alive || !node.hasSubgraphs())
            continue;
        if (isOp(node, "If") && !node.inputs.empty()) {
            if (const auto cond = constantValues(graph, node.inputs[0]); cond && cond->size() == 1) {
                const Attribute *branch = node.attribute((*cond)[0] != 0.0 ? "then_branch" : "else_branch");
                if (branch && branch->g) {
                    const Graph body = *branch->g; // the node goes away while inlining
                    const std::size_t at = matches.size();
                    record("If with a constant condition → its branch", id);
                    Expected<bool> inlined = inlineBranch(graph, id, body);
                    if (!inlined)
                        return inlined.status();
                    if (*inlined) {
                        changed = true;
                        continue;
                    }
                    matches.resize(at);
                }
            }
        }
        const std::string nodeName = node.name; // `node` may move as bodies grow the graph's tables
        for (Attribute &a : node.attributes) {
            std::vector<Graph *> bodies;
            if (a.type == AttributeType::Graph && a.g)
                bodies.push_back(a.g.get());
            for (auto &g : a.graphs)
                bodies.push_back(g.get());
            for (std::size_t b = 0; b < bodies.size(); ++b) {
                Graph *body = bodies[b];
                std::string where = (path.empty() ? "" : path + "/") + nodeName + "/" + a.name;
                if (a.type != AttributeType::Graph)
                    where += "[" + std::to_string(b) + "]";
                if (captureConstants(*body, scope)) {
                    record("outer constants carried into the body", id);
                    changed = true;
                }
                inheritTypes(*body, scope);
                Expected<bool> inner = propagate(*body, &scope, opsets, options, where, matches);
                if (!inner)
                    return inner.status();
                changed = changed || *inner;
            }
        }
    }
    return changed;
}

} // namespace

Expected<bool> ConstantPropagation::run(Model &model, PassContext &context)
{
    const ModelNameScope names(model.graph);
    std::vector<PatternMatch> matches;
    Expected<bool> changed = propagate(model.graph, nullptr, opsetMap(model), context.options(), {}, matches);
    for (PatternMatch &m : matches)
        context.recordMatch(std::move(m));
    return changed;
}

} // namespace opscope::passes
