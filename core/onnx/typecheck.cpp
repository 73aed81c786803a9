#include "onnx/typecheck.h"

namespace opscope {
namespace {

void collect(const Model &model, const Graph &g, std::vector<std::string> &found)
{
    for (NodeId id : g.nodeIds()) {
        const Node &n = g.node(id);
        const std::string domain = n.domain == "ai.onnx" ? std::string() : n.domain;
        const std::int64_t opset = model.opsetVersion(domain);
        if (opset > 0) {
            const InputTypeRules &rules = inputTypeRules(n.opType, domain, int(opset));
            if (!rules.empty()) {
                const Status st = checkNodeInputTypes(g, n, rules, n.inputs.size(), [&](std::size_t i) {
                    if (!n.inputs[i].valid())
                        return DataType::Undefined;
                    const TypeInfo &t = g.value(n.inputs[i]).type;
                    return t.kind == TypeInfo::Kind::Tensor ? t.elemType : DataType::Undefined;
                });
                if (!st)
                    found.push_back(st.message() + ": running the model will fail there");
            }
        }
        for (const Attribute &a : n.attributes) {
            if (a.g)
                collect(model, *a.g, found);
            for (const ClonePtr<Graph> &sub : a.graphs)
                if (sub)
                    collect(model, *sub, found);
        }
    }
}

} // namespace

std::vector<std::string> inputTypeWarnings(const Model &model, std::size_t limit)
{
    std::vector<std::string> found;
    collect(model, model.graph, found);
    if (found.size() > limit) {
        const std::size_t more = found.size() - limit;
        found.resize(limit);
        found.push_back(std::to_string(more) + " more node(s) with input types their operator does not accept");
    }
    return found;
}

} // namespace opscope
