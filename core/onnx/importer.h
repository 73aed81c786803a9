#pragma once
// ONNX → IR. Validates as it goes (dims, data sizes, external-data paths, producers, cycles) so a
// bad model is refused with a message naming the problem instead of crashing something later.

#include "ir/model.h"
#include "onnx/externaldata.h"
#include "util/status.h"

#include <map>
#include <memory>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace opscope {

struct ImportOptions
{
    bool inferShapes = true;         // run ONNX shape inference and keep the inferred types
    bool runChecker = true;          // run onnx::checker; its complaints become warnings
    std::filesystem::path modelDir;  // external data is looked up (only) under this folder
    std::filesystem::path modelPath; // for the checker on models with external data; may be empty
    // A parse of onnx/strippedweights.h: the model file and, by initializer name, where the bytes
    // of the raw_data fields it left empty lie in it (offset, length).
    std::shared_ptr<const MappedFile> embeddedFile;
    EmbeddedSpans embeddedSpans;
};

struct ImportResult
{
    Model model;
    std::vector<std::string> warnings; // the model loads, but something deserves the user's attention
};

// Consumes `proto` (tensor bytes are moved out of it).
Expected<ImportResult> importModel(onnx::ModelProto &proto, const ImportOptions &options);

} // namespace opscope
