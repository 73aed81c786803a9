#pragma once
// What libonnx's operator schemas say about an op at a given opset: documentation, attribute
// defaults, inputs and outputs. The inspector shows it; the runtime takes defaults from it.

#include "ir/attribute.h"
#include "ir/model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opscope {

struct OpAttributeInfo
{
    std::string name;
    std::string description;
    AttributeType type = AttributeType::Undefined;
    bool required = false;
    std::optional<Attribute> defaultValue;
};

struct OpArgumentInfo
{
    std::string name;
    std::string description;
    std::string typeConstraint; // "T"
    bool optional = false;
    bool variadic = false;
};

struct OpSchemaInfo
{
    std::string opType;
    std::string domain;
    int sinceVersion = 0;
    bool deprecated = false;
    std::string doc;
    std::vector<OpAttributeInfo> attributes;
    std::vector<OpArgumentInfo> inputs;
    std::vector<OpArgumentInfo> outputs;

    const OpAttributeInfo *attribute(const std::string &name) const;
};

// The schema in force for `opType` in `domain` at `opsetVersion`, or nothing when libonnx has none.
std::optional<OpSchemaInfo> findOpSchema(const std::string &opType, const std::string &domain,
                                         int opsetVersion);

// True for domains libonnx registers schemas for (ai.onnx, ai.onnx.ml, ai.onnx.preview.training).
bool isKnownDomain(const std::string &domain);

// One warning per distinct (domain, op) the model uses that has no schema and no model-local
// function: the model still loads and displays, but cannot run as is.
std::vector<std::string> unknownOperatorWarnings(const Model &model);

} // namespace opscope

namespace opscope {

// The attributes with schema defaults for an op at an opset (cached; cheap to call per node).
const std::vector<Attribute> &attributeDefaults(const std::string &opType, const std::string &domain,
                                                int opsetVersion);

} // namespace opscope

namespace opscope {

// The element types a node's inputs may have, from its schema's type constraints. Kernels read
// their inputs as the schema's types (a Where's condition as bool, Add's operands as one type):
// a model whose values break that (a float condition, float + int64, only visible at run time
// when the model declares no types) would make a kernel reinterpret bytes. The executor checks
// every node's inputs against these rules before its kernel runs.
struct InputTypeRule
{
    std::uint32_t allowed = ~0u; // bit (1 << DataType); all bits: not constrained (seq, optional)
    int typeVariable = -1;       // inputs with the same variable ("T") must have the same type
    std::string variableName;
};

struct InputTypeRules
{
    std::vector<InputTypeRule> inputs; // one per formal input
    bool lastIsVariadic = false;       // the last rule repeats for every further input
    bool variadicHomogeneous = true;   // a variadic slot's inputs share one type
    bool empty() const { return inputs.empty(); }
    const InputTypeRule *rule(std::size_t input) const
    {
        if (input < inputs.size())
            return &inputs[input];
        return lastIsVariadic && !inputs.empty() ? &inputs.back() : nullptr;
    }
};

// The rules for an op at an opset (cached, stable address; empty when libonnx has no schema, as
// for ONNX Runtime's contrib ops and opscope's own). Above libonnx's newest operator set, newer
// ONNX versions added float16, bfloat16, float8 and string variants of many ops; those types are
// allowed there rather than refusing a model libonnx is too old to judge.
const InputTypeRules &inputTypeRules(const std::string &opType, const std::string &domain, int opsetVersion);

} // namespace opscope

