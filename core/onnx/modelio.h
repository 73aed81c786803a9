#pragma once
// Loading and saving ONNX model files: the entry points the CLI and the app use.

#include "ir/model.h"
#include "onnx/importer.h"
#include "util/status.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>

namespace opscope {

struct LoadOptions
{
    bool inferShapes = true;
    bool runChecker = true;
    // Embedded weights of 64 KiB or more read from the mapped file where used, not copied to the
    // heap (onnx/embeddedweights.h): for processes that run part of a model (MPI ranks).
    bool mapEmbeddedWeights = false;
};

// Reads `path`. External data is mapped (not read) from files inside the model's folder.
Expected<ImportResult> loadModel(const std::filesystem::path &path, const LoadOptions &options = {});
// Parses a serialized model; external data, if any, is looked up under `baseDir`.
Expected<ImportResult> loadModelFromBytes(std::span<const std::byte> bytes,
                                          const std::filesystem::path &baseDir,
                                          const LoadOptions &options = {});

enum class ExternalDataMode
{
    Auto,     // external if the model had external data or would not fit Protobuf's 2 GiB; else embedded
    Embed,    // everything in the .onnx file (fails past 2 GiB)
    External, // tensors of at least `threshold` bytes go to the data file
};

struct SaveOptions
{
    ExternalDataMode mode = ExternalDataMode::Auto;
    std::uint64_t threshold = 1024;
    std::string dataFileName; // default: "<model file name>.data", next to the model
};

struct SaveResult
{
    std::filesystem::path modelPath;
    std::optional<std::filesystem::path> dataPath;
    std::uint64_t modelBytes = 0;
    std::uint64_t externalBytes = 0;
};

// Writes atomically: on failure neither the model nor its data file is left half-written.
Expected<SaveResult> saveModel(const Model &model, const std::filesystem::path &path,
                               const SaveOptions &options = {});

// The data file saveModel would write for these options (to refuse overwriting a model's own weights).
std::filesystem::path externalDataPathFor(const std::filesystem::path &modelPath, const SaveOptions &options);

// Protobuf cannot serialize a message of 2 GiB or more.
constexpr std::uint64_t protobufLimitBytes = (1ULL << 31) - 1;

} // namespace opscope
