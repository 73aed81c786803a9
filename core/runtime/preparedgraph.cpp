#include "runtime/preparedgraph.h"

#include "ir/dependencies.h"
#include "onnx/opschema.h"
#include "onnx/typecheck.h"

#include <algorithm>
#include <iterator>

namespace opscope {

std::unique_ptr<PreparedGraph> prepareGraph(const Graph &graph, const std::map<std::string, int> &opsets,
                                            const Backend &backend, std::set<UnsupportedOp> &unsupported,
                                            const std::set<std::string> &outerConstants)
{
    auto pg = std::make_unique<PreparedGraph>();
    pg->graph = &graph;
    pg->nodes.resize(graph.nodeSlots());
    pg->consumers.assign(graph.valueSlots(), 0);
    pg->keep.assign(graph.valueSlots(), false);
    for (ValueId v : graph.outputs())
        if (v.valid())
            pg->keep[v.index] = true;

    std::set<std::string> visibleConstants = outerConstants; // what this graph's subgraphs can read
    for (ValueId v : graph.initializers())
        if (graph.value(v).isConstant())
            visibleConstants.insert(graph.value(v).name);
    for (ValueId v : graph.valueIds()) {
        const Value &value = graph.value(v);
        if (!value.sparseInitializer || value.initializer)
            continue;
        // The importer validated it (denseFromSparse), so this succeeds.
        if (Expected<Tensor> dense = denseFromSparse(*value.sparseInitializer, value.name)) {
            pg->sparseConstants.emplace_back(v, std::move(*dense));
            pg->keep[v.index] = true;
            visibleConstants.insert(value.name);
        }
    }

    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        PreparedNode &p = pg->nodes[id.index];
        p.node = &n;
        const std::string domain = n.domain == "ai.onnx" ? std::string() : n.domain;
        const auto opset = opsets.find(domain);
        p.opset = opset != opsets.end() ? opset->second : 0;
        p.kernel = backend.kernelFor(domain, n.opType, p.opset);
        if (!p.kernel)
            unsupported.insert({n.opType, domain, p.opset, n.name});
        p.attributes = n.attributes;
        if (const InputTypeRules &rules = inputTypeRules(n.opType, domain, p.opset); !rules.empty())
            p.typeRules = &rules;
        for (const Attribute &d : attributeDefaults(n.opType, domain, p.opset))
            if (!n.attribute(d.name))
                p.attributes.push_back(d);
        for (ValueId v : n.inputs) {
            const bool constant =
                v.valid() && (graph.value(v).isConstant() ||
                              (graph.value(v).outerScope && outerConstants.count(graph.value(v).name)));
            p.constantInputs.push_back(constant);
            if (v.valid())
                ++pg->consumers[v.index];
        }
        if (n.hasSubgraphs()) {
            p.implicitInputs = implicitInputs(graph, id);
            for (ValueId v : p.implicitInputs)
                ++pg->consumers[v.index];
            for (const Attribute &a : n.attributes) {
                if (a.g) {
                    pg->subgraphs.push_back(
                        prepareGraph(*a.g, opsets, backend, unsupported, visibleConstants));
                    p.subgraphs.emplace_back(a.name, pg->subgraphs.back().get());
                }
                // Graph lists (rare) are not run by any standard kernel.
            }
        }
    }
    Expected<ExecutionPlan> plan = serialPlan(graph);
    if (plan)
        pg->plan = std::move(*plan);
    return pg;
}

Status checkInputTypes(const Graph &graph, const PreparedNode &pn, std::span<const RuntimeTensor *const> inputs)
{
    if (!pn.typeRules)
        return Status::ok();
    return checkNodeInputTypes(graph, *pn.node, *pn.typeRules, inputs.size(),
                               [&](std::size_t i) { return inputs[i] ? inputs[i]->dtype() : DataType::Undefined; });
}

std::string describeUnsupported(const std::set<UnsupportedOp> &ops)
{
    std::string text;
    for (const UnsupportedOp &op : ops) {
        if (!text.empty())
            text += ", ";
        text += (op.domain.empty() ? std::string() : op.domain + "::") + op.opType + " (opset " +
                std::to_string(op.opset) + ", node '" + op.firstNode + "')";
    }
    return text;
}

} // namespace opscope
