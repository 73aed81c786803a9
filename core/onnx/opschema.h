#pragma once
// What libonnx's operator schemas say about an op at a given opset: documentation, attribute
// defaults, inputs and outputs. The inspector shows it; the runtime takes defaults from it.

#include "ir/attribute.h"
#include "ir/model.h"

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
