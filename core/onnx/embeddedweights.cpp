#include "onnx/embeddedweights.h"

#include "onnx/wireformat.h"

#include "ir/tensor.h"
#include "util/mappedfile.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>

namespace opscope {

namespace {

using namespace wire;

// One TensorProto, the stream limited to it.
bool readTensor(CodedInputStream &in, std::vector<RawDataSpan> &out, std::map<std::string, int> *names)
{
    RawDataSpan span;
    bool raw = false, external = false;
    while (const std::uint32_t tag = in.ReadTag()) {
        const std::uint32_t field = WireFormatLite::GetTagFieldNumber(tag);
        if (field == kTensorName && lengthDelimited(tag)) {
            if (!WireFormatLite::ReadString(&in, &span.name))
                return false;
        } else if (field == kTensorRawData && lengthDelimited(tag)) {
            std::uint32_t length = 0;
            if (!in.ReadVarint32(&length))
                return false;
            span.offset = std::uint64_t(in.CurrentPosition());
            span.length = length;
            raw = true;
            if (!in.Skip(int(length)))
                return false;
        } else if (field == kTensorDataLocation &&
                   WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_VARINT) {
            std::uint64_t location = 0;
            if (!in.ReadVarint64(&location))
                return false;
            external = location == 1;
        } else if (!WireFormatLite::SkipField(&in, tag)) {
            return false;
        }
    }
    if (names)
        ++(*names)[span.name];
    if (raw && !external)
        out.push_back(std::move(span));
    return true;
}

} // namespace

Expected<std::vector<RawDataSpan>> findInitializerRawData(std::span<const std::byte> bytes,
                                                          std::map<std::string, int> *initializerNames)
{
    if (bytes.size() > std::size_t(INT_MAX))
        return Status::unsupported("a model over 2 GiB has no embedded weights to find");
    CodedInputStream in(reinterpret_cast<const std::uint8_t *>(bytes.data()), int(bytes.size()));
    in.SetTotalBytesLimit(INT_MAX);
    std::vector<RawDataSpan> spans;
    const auto graph = [&] {
        while (const std::uint32_t tag = in.ReadTag()) {
            if (WireFormatLite::GetTagFieldNumber(tag) == kGraphInitializer && lengthDelimited(tag)) {
                if (!readNested(in, [&] { return readTensor(in, spans, initializerNames); }))
                    return false;
            } else if (!WireFormatLite::SkipField(&in, tag)) {
                return false;
            }
        }
        return true;
    };
    while (const std::uint32_t tag = in.ReadTag()) {
        if (WireFormatLite::GetTagFieldNumber(tag) == kModelGraph && lengthDelimited(tag)) {
            if (!readNested(in, graph))
                return Status::invalid("the model's graph is not valid Protobuf");
        } else if (!WireFormatLite::SkipField(&in, tag)) {
            return Status::invalid("the model is not valid Protobuf");
        }
    }
    if (!in.ConsumedEntireMessage())
        return Status::invalid("the model is not valid Protobuf");
    return spans;
}

std::uint64_t mapEmbeddedWeights(Graph &graph, const std::shared_ptr<const MappedFile> &file, std::uint64_t minBytes)
{
    if (!file)
        return 0;
    const Expected<std::vector<RawDataSpan>> spans = findInitializerRawData(file->bytes());
    if (!spans)
        return 0;
    // Protobuf merges a repeated tensor's fields; a name given to two initializers is ambiguous.
    std::map<std::string, const RawDataSpan *> byName;
    std::map<std::string, int> seen;
    for (const RawDataSpan &s : *spans) {
        byName[s.name] = &s;
        ++seen[s.name];
    }
    const std::span<const std::byte> all = file->bytes();
    std::uint64_t mapped = 0;
    for (ValueId v : graph.initializers()) {
        std::optional<Tensor> &t = graph.value(v).initializer;
        if (!t || !t->data || t->data->isMapped() || t->external || t->data->size() < minBytes)
            continue;
        const auto it = byName.find(graph.value(v).name);
        if (it == byName.end() || seen[it->first] != 1)
            continue;
        const RawDataSpan &s = *it->second;
        const std::span<const std::byte> held = t->data->bytes();
        if (s.length != held.size() || s.offset > all.size() || s.length > all.size() - s.offset)
            continue;
        // The found place must hold what was loaded: its first and last bytes, a page each.
        const std::size_t probe = std::min<std::size_t>(64, held.size());
        if (std::memcmp(all.data() + s.offset, held.data(), probe) != 0 ||
            std::memcmp(all.data() + s.offset + s.length - probe, held.data() + held.size() - probe, probe) != 0)
            continue;
        t->data = Buffer::fromMapping(file, s.offset, s.length, dataTypeAlignment(t->dtype));
        mapped += s.length;
    }
    return mapped;
}

Expected<SpilledWeights> spillHeapWeights(Graph &graph, const std::filesystem::path &folder, std::uint64_t minBytes)
{
    std::vector<ValueId> chosen;
    std::vector<std::span<const std::byte>> parts;
    for (ValueId v : graph.initializers()) {
        const std::optional<Tensor> &t = graph.value(v).initializer;
        if (!t || !t->data || t->dtype == DataType::String || t->data->size() < minBytes)
            continue;
        // A mapping at an offset its element type cannot be read at would be copied to the heap
        // by the first node that reads it, and stay there: in the scratch file it is aligned.
        if (t->data->isMapped() && !t->data->isMisaligned())
            continue;
        chosen.push_back(v);
        parts.push_back(t->data->storedBytes());
    }
    SpilledWeights spilled;
    if (chosen.empty())
        return spilled;
    std::vector<std::uint64_t> offsets;
    Expected<std::shared_ptr<const MappedFile>> file = MappedFile::writeScratch(folder, parts, offsets);
    if (!file)
        return file.status();
    for (std::size_t i = 0; i < chosen.size(); ++i) {
        std::optional<Tensor> &t = graph.value(chosen[i]).initializer;
        if (t->data->isMapped()) {
            dropResidentPages(parts[i]); // paged in from the model file to be written out
            spilled.realigned += parts[i].size();
        }
        t->data = Buffer::fromMapping(*file, offsets[i], parts[i].size(), dataTypeAlignment(t->dtype)); // the heap copy goes here
        spilled.bytes += parts[i].size();
    }
    spilled.tensors = chosen.size();
    return spilled;
}

void dropResidentWeights(const Graph &graph)
{
    for (ValueId v : graph.initializers())
        if (const std::optional<Tensor> &t = graph.value(v).initializer; t && t->isMapped())
            dropResidentPages(t->data->storedBytes());
}

std::filesystem::path scratchFolder()
{
    if (const char *tmp = std::getenv("TMPDIR"); tmp && *tmp)
        return tmp;
    return "/var/tmp";
}

} // namespace opscope
