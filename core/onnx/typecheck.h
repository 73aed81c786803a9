#pragma once
// A node's input element types against its schema's type constraints (opschema.h's
// InputTypeRules): each type allowed in its slot, inputs sharing a type variable of one type.
// One check for two callers: the executor, with the tensors a kernel is about to read (an error),
// and the importer, with the types a model declares or inference found (a warning at load, so
// `info` and the app say what a run will refuse).

#include "onnx/opschema.h"
#include "util/status.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

namespace opscope {

// `typeOf(i)`: input i's element type, DataType::Undefined when absent or unknown (not checked).
// Allocates nothing unless it fails: the executor calls it before every kernel.
template<class TypeOf>
Status checkNodeInputTypes(const Graph &graph, const Node &n, const InputTypeRules &rules, std::size_t count,
                           TypeOf typeOf)
{
    const auto inputText = [&](std::size_t i) {
        const std::string name = i < n.inputs.size() && n.inputs[i].valid() ? graph.value(n.inputs[i]).name : "";
        return "input " + std::to_string(i) + (name.empty() ? std::string() : " '" + name + "'");
    };
    // The first input bound to each type variable: libonnx's schemas have at most 4 variables;
    // larger indices scan the earlier inputs.
    constexpr int kTracked = 16;
    std::size_t firstOf[kTracked];
    std::fill(std::begin(firstOf), std::end(firstOf), count);
    for (std::size_t i = 0; i < count; ++i) {
        const DataType dtype = typeOf(i);
        const InputTypeRule *rule = rules.rule(i);
        if (dtype == DataType::Undefined || !rule)
            continue;
        const int raw = static_cast<int>(dtype);
        if (raw <= 0 || raw >= 32 || !(rule->allowed & (1u << raw))) {
            std::string accepted;
            for (int b = 1; b < 32; ++b)
                if (rule->allowed & (1u << b))
                    accepted += (accepted.empty() ? "" : ", ") + std::string(dataTypeName(DataType(b)));
            return Status::invalid("node '" + n.name + "' (" + n.opType + "): " + inputText(i) + " is " +
                                   std::string(dataTypeName(dtype)) + ", which " + n.opType +
                                   " does not accept there (" + accepted + ")");
        }
        const bool variadicSlot = rules.lastIsVariadic && i + 1 >= rules.inputs.size();
        if (rule->typeVariable < 0 || (variadicSlot && !rules.variadicHomogeneous))
            continue;
        std::size_t at = count;
        if (rule->typeVariable < kTracked) {
            at = firstOf[rule->typeVariable];
            if (at == count)
                firstOf[rule->typeVariable] = i;
        } else {
            for (std::size_t j = 0; j < i && at == count; ++j) {
                const InputTypeRule *earlier = rules.rule(j);
                const bool earlierVariadic = rules.lastIsVariadic && j + 1 >= rules.inputs.size();
                if (typeOf(j) != DataType::Undefined && earlier && earlier->typeVariable == rule->typeVariable &&
                    !(earlierVariadic && !rules.variadicHomogeneous))
                    at = j;
            }
        }
        if (at == count)
            continue;
        const DataType first = typeOf(at);
        if (first != dtype)
            return Status::invalid("node '" + n.name + "' (" + n.opType + "): " + inputText(at) + " is " +
                                   std::string(dataTypeName(first)) + " and " + inputText(i) + " is " +
                                   std::string(dataTypeName(dtype)) + "; " + n.opType +
                                   " needs them of one type (" + rule->variableName + ")");
    }
    return Status::ok();
}

// Warnings for the nodes (main graph and bodies) whose declared or inferred input types break
// their schema: what a run would refuse. The first `limit`, then how many more.
std::vector<std::string> inputTypeWarnings(const Model &model, std::size_t limit = 10);

} // namespace opscope
