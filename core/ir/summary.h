#pragma once
// The facts `opscope-cli info` prints and the app's model inspector shows.

#include "ir/model.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opscope {

struct ValueSummary
{
    std::string name;
    std::string dtype;             // "float32", or the type text for non-tensors
    std::vector<std::string> dims; // "1", "batch", "?"; empty with rankKnown=false: unknown rank
    // Per dim: its value where the model gives one, −1 where it is symbolic or unknown (a dim
    // named "123" is a name, not 123).
    std::vector<std::int64_t> values;
    bool rankKnown = false;
};

struct InitializerSummary
{
    std::string name;
    std::string dtype;
    std::vector<std::int64_t> dims;
    std::uint64_t bytes = 0;
    bool external = false;
    bool constantNode = false; // a Constant node's value (Paddle2ONNX and others keep weights there)
};

struct ModelSummary
{
    std::string producer; // "pytorch 2.1"
    std::int64_t irVersion = 0;
    std::vector<OpsetImport> opsets;
    std::string graphName;
    std::vector<ValueSummary> inputs; // graph inputs that are not initializers
    std::vector<ValueSummary> outputs;
    std::size_t nodeCount = 0; // top level
    std::size_t nodeCountWithSubgraphs = 0;
    std::size_t functionCount = 0;
    std::map<std::string, std::size_t> opHistogram; // "Conv" or "com.microsoft::Attention", all levels
    std::uint64_t parameterCount = 0;               // elements of initializers and Constant tensors
    std::uint64_t parameterBytes = 0;
    std::uint64_t externalBytes = 0; // part of parameterBytes stored outside the .onnx file
    std::vector<InitializerSummary> largestInitializers; // by bytes, at most `topN`, Constant values included
    std::size_t initializerCount = 0;
    std::size_t constantTensorCount = 0; // Constant nodes with a tensor value: parameters outside initializers
    // Tensors flowing between nodes: fully known, known up to symbolic dims, or (partly) unknown.
    std::size_t valuesStatic = 0;
    std::size_t valuesSymbolic = 0;
    std::size_t valuesUnknown = 0;
    std::size_t valuesUnknownRank = 0; // of valuesUnknown: not even the rank (the rest: some dims)
    std::vector<std::string> unknownExamples; // the first few values of unknown shape, by name
    bool allShapesKnown() const { return valuesUnknown == 0; }
};

ModelSummary summarizeModel(const Model &model, std::size_t topN = 10);

// "Conv" for the ONNX domain, "com.microsoft::Attention" otherwise: how ops are counted and shown.
std::string opKey(const Node &node);
// Nodes per op key, subgraphs included (ModelSummary::opHistogram without the rest of the summary).
std::map<std::string, std::size_t> opHistogram(const Graph &graph);
ValueSummary summarizeValue(const Value &value);

} // namespace opscope
