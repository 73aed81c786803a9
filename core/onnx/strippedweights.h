#pragma once
// A model parsed without a copy of its big embedded weights.
//
// Protobuf copies every raw_data field into the parsed message: loading a 1.5 GiB model took
// 1.5 GiB of heap before the weights could be mapped from the file instead (onnx/embeddedweights.h),
// and an MPI rank's memory peaked at the whole model while it was to hold a part. Here the raw_data
// of the big top-level initializers is left empty in a rewritten copy of the message (the rest of
// the model, kilobytes), which is what Protobuf then parses; the importer points those tensors at
// their bytes in the mapped file (ExternalFiles::embedded), which nothing has read yet.
//
//   file:    Model{ graph{ initializer{ name "w", dims, data_type, raw_data <4 MiB> } … } … }
//   parsed:  Model{ graph{ initializer{ name "w", dims, data_type, raw_data <one zero element> } … } … }
//            + "w" → file bytes [offset, offset + 4 MiB)

#include "onnx/embeddedweights.h"

#include <map>

namespace opscope {

struct StrippedModel
{
    std::string bytes;                       // the serialized model, those raw_data fields one zero element
    std::map<std::string, RawDataSpan> spans; // initializer name → where its bytes are in the file
};

// Strips the raw_data of top-level initializers of at least `minBytes` whose name is unique and
// whose type is a float or 8-bit type (never an integer tensor a shape could be read from: ONNX
// shape inference reads those). A file Protobuf could not parse is an error; the caller then parses
// it whole, and reports what Protobuf says.
Expected<StrippedModel> stripEmbeddedWeights(std::span<const std::byte> file, std::uint64_t minBytes = 64 * 1024);

} // namespace opscope
