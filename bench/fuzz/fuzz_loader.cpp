// Bytes → parse → import (schema checks, checker, shape inference) → verify → summary: what
// `opscope-cli info` and the app's loader do with a file; and the raw_data spans MPI ranks map
// embedded weights from, checked against what Protobuf parsed; and the rewrite ranks parse instead
// (onnx/strippedweights.h): it parses where the file does, into the same initializers, those it
// stripped empty and their spans holding what Protobuf parsed for them.
#include "fuzztarget.h"

#include "ir/summary.h"
#include "ir/verifier.h"
#include "onnx/embeddedweights.h"
#include "onnx/modelio.h"
#include "onnx/strippedweights.h"

#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <cstring>
#include <map>

OPSCOPE_FUZZ_MODEL_MUTATOR(opscope::fuzz::MutationFocus::Structure)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    using namespace opscope;
    LoadOptions options;
    options.runChecker = true;
    options.inferShapes = true;
    const std::span<const std::byte> bytes = fuzz::asBytes(data, size);
    // Where MPI ranks map embedded weights from: every span inside the file, and where the model
    // loads, each one the bytes Protobuf parsed for that initializer (else a rank would compute
    // with other weights than the model's).
    const Expected<std::vector<RawDataSpan>> spans = findInitializerRawData(bytes);
    if (spans)
        for (const RawDataSpan &s : *spans)
            if (s.offset > size || s.length > size - s.offset)
                std::abort();
    // A threshold of 16 bytes strips what small fuzzed models hold (ranks use 64 KiB).
    if (const Expected<StrippedModel> stripped = stripEmbeddedWeights(bytes, 16); stripped) {
        onnx::ModelProto full, light;
        const bool fullOk = full.ParseFromArray(data, int(size));
        if (fullOk != light.ParseFromString(stripped->bytes))
            std::abort();
        if (fullOk) {
            if (full.graph().initializer_size() != light.graph().initializer_size())
                std::abort();
            for (int i = 0; i < full.graph().initializer_size(); ++i) {
                const onnx::TensorProto &a = full.graph().initializer(i), &b = light.graph().initializer(i);
                if (a.name() != b.name() || a.dims_size() != b.dims_size() || a.data_type() != b.data_type())
                    std::abort();
                const auto it = stripped->spans.find(a.name());
                if (it == stripped->spans.end()) {
                    if (a.raw_data() != b.raw_data())
                        std::abort();
                } else if (b.raw_data().size() > 8 || b.raw_data() != std::string(b.raw_data().size(), '\0') ||
                           a.raw_data().size() != it->second.length ||
                           std::memcmp(a.raw_data().data(), data + it->second.offset, it->second.length) != 0) {
                    std::abort();
                }
            }
        }
    }
    Expected<ImportResult> loaded = loadModelFromBytes(bytes, fuzz::scratchFolder(), options);
    if (!loaded)
        return 0;
    if (spans) {
        std::map<std::string, int> count;
        for (const RawDataSpan &s : *spans)
            ++count[s.name];
        const Graph &g = loaded->model.graph;
        for (const RawDataSpan &s : *spans) {
            const ValueId v = g.findValue(s.name);
            if (count[s.name] != 1 || !v.valid() || !g.value(v).initializer || !g.value(v).initializer->data)
                continue;
            const std::span<const std::byte> held = g.value(v).initializer->data->bytes();
            if (held.size() == s.length && std::memcmp(held.data(), data + s.offset, held.size()) != 0)
                std::abort();
        }
    }
    (void)verifyGraph(loaded->model.graph);
    (void)summarizeModel(loaded->model, 5);
    return 0;
}
