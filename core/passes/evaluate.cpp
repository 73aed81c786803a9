#include "passes/evaluate.h"

#include "runtime/backend.h"
#include "runtime/executor.h"
#include "runtime/preparedgraph.h"

namespace opscope::passes {

Expected<std::vector<Tensor>> evaluateNode(const Graph &graph, NodeId id,
                                           const std::map<std::string, int> &opsets)
{
    const Node &node = graph.node(id);
    Graph mini("fold");
    std::vector<ValueId> inputs, outputs;
    for (ValueId v : node.inputs) {
        if (!v.valid()) {
            inputs.push_back(ValueId());
            continue;
        }
        const Value &value = graph.value(v);
        if (!value.initializer)
            return Status::invalid("input '" + value.name + "' is not constant");
        inputs.push_back(mini.addInitializer(value.name, *value.initializer));
    }
    for (ValueId v : node.outputs) {
        if (!v.valid()) {
            outputs.push_back(ValueId());
            continue;
        }
        Expected<ValueId> out = mini.createValue(graph.value(v).name);
        if (!out)
            return out.status();
        outputs.push_back(*out);
    }
    Expected<NodeId> copy = mini.addNode(node.opType, inputs, outputs, node.domain, node.name);
    if (!copy)
        return copy.status();
    mini.node(*copy).attributes = node.attributes;
    std::vector<ValueId> graphOutputs;
    for (ValueId v : outputs)
        if (v.valid())
            graphOutputs.push_back(v);
    mini.setOutputs(graphOutputs);

    CpuBackend backend(0, 1);
    std::set<UnsupportedOp> unsupported;
    const std::unique_ptr<PreparedGraph> prepared = prepareGraph(mini, opsets, backend, unsupported);
    if (!unsupported.empty())
        return Status::unsupported("no kernel for " + describeUnsupported(unsupported));
    ExecOptions exec;
    exec.threads = 1;
    Expected<std::vector<RuntimeTensor>> ran = executeGraph(*prepared, {}, exec);
    if (!ran)
        return ran.status();
    std::vector<Tensor> result;
    std::size_t k = 0;
    for (ValueId v : outputs) {
        if (!v.valid()) {
            result.emplace_back();
            continue;
        }
        const RuntimeTensor &t = (*ran)[k++];
        if (!t.isValid())
            return Status::unsupported("output is not a tensor");
        result.push_back(t.toConstant());
    }
    return result;
}

} // namespace opscope::passes
