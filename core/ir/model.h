#pragma once
// A whole model: the main graph plus what ONNX keeps around it (opsets, metadata, functions).

#include "ir/graph.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace opscope {

struct OpsetImport
{
    std::string domain; // "" = ai.onnx
    std::int64_t version = 0;
    bool operator==(const OpsetImport &) const = default;
};

// A model-local function (FunctionProto). Its body is a Graph whose inputs/outputs carry no types.
struct Function
{
    std::string name;
    std::string domain;
    std::string docString;
    std::vector<std::string> attributeNames;
    std::vector<OpsetImport> opsets;
    Graph body;
};

struct Model
{
    std::int64_t irVersion = 8;
    std::vector<OpsetImport> opsets;
    std::string producerName;
    std::string producerVersion;
    std::string domain;
    std::int64_t modelVersion = 0;
    std::string docString;
    std::vector<std::pair<std::string, std::string>> metadata;
    Graph graph;
    std::vector<Function> functions;
    std::filesystem::path sourcePath; // where it was loaded from (empty if built in memory)

    // Opset version imported for a domain ("" and "ai.onnx" are the same), or -1.
    std::int64_t opsetVersion(std::string_view domain) const;
};

} // namespace opscope
