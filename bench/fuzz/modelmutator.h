#pragma once
// A structure-aware mutator for ONNX models, plugged into libFuzzer as LLVMFuzzerCustomMutator.
// Byte flips mostly produce protobuf that does not parse; the crashes worth finding live in models
// that parse and are *semantically* wrong: an attribute of the wrong type or value, a dim of 0 or
// 2^62, an input list one too long, a branch that declares inputs, a function that calls itself,
// external data pointing anywhere. This mutator parses the input as a ModelProto, applies a few
// such edits anywhere in the model (subgraphs and functions included), and serializes it again;
// one mutation in eight is libFuzzer's own byte mutation, so the parser keeps being exercised.

#include <cstddef>
#include <cstdint>

namespace opscope::fuzz {

// What the external-data target emphasises: locations, offsets and lengths.
enum class MutationFocus
{
    Structure,
    ExternalData
};

std::size_t mutateModel(std::uint8_t *data, std::size_t size, std::size_t maxSize, unsigned seed,
                        MutationFocus focus);

} // namespace opscope::fuzz
