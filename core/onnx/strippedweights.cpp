#include "onnx/strippedweights.h"

#include "onnx/wireformat.h"

#include <climits>
#include <string_view>

namespace opscope {

namespace {

using namespace wire;

// Weights, not data a shape could come from: FLOAT, UINT8, INT8, FLOAT16, DOUBLE, BFLOAT16 and
// the FLOAT8 types.
bool strippableType(std::uint64_t t)
{
    return t == 1 || t == 2 || t == 3 || t == 10 || t == 11 || t == 16 || (t >= 17 && t <= 20);
}

std::size_t elementSize(std::uint64_t t)
{
    return t == 11 ? 8 : t == 1 ? 4 : t == 10 || t == 16 ? 2 : 1;
}

void putVarint(std::string &out, std::uint64_t v)
{
    while (v >= 0x80) {
        out.push_back(char(std::uint8_t(v) | 0x80));
        v >>= 7;
    }
    out.push_back(char(v));
}

void putLengthDelimited(std::string &out, std::uint32_t field, std::string_view body)
{
    putVarint(out, (std::uint64_t(field) << 3) | WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    putVarint(out, body.size());
    out.append(body);
}

class Stripper
{
public:
    Stripper(std::span<const std::byte> file, std::uint64_t minBytes, const std::map<std::string, int> &names)
        : m_base(reinterpret_cast<const char *>(file.data())),
          m_in(reinterpret_cast<const std::uint8_t *>(file.data()), int(file.size())), m_minBytes(minBytes),
          m_names(names)
    {
        m_in.SetTotalBytesLimit(INT_MAX);
    }

    bool model(std::string &out)
    {
        return rewrite(kModelGraph, out, [this](std::string &graph) {
            return rewrite(kGraphInitializer, graph, [this](std::string &tensor) { return this->tensor(tensor); });
        });
    }

    std::map<std::string, RawDataSpan> spans;

private:
    // A field as it is in the file.
    bool copyField(std::uint32_t tag, int start, std::string &out)
    {
        if (!WireFormatLite::SkipField(&m_in, tag))
            return false;
        out.append(m_base + start, std::size_t(m_in.CurrentPosition() - start));
        return true;
    }

    // The fields of the message at hand as they are, but each length-delimited `field`, whose
    // body `child` rewrites.
    template<class Child>
    bool rewrite(std::uint32_t field, std::string &out, Child child)
    {
        while (true) {
            const int start = m_in.CurrentPosition();
            const std::uint32_t tag = m_in.ReadTag();
            if (!tag)
                return m_in.ConsumedEntireMessage();
            if (std::uint32_t(WireFormatLite::GetTagFieldNumber(tag)) == field && lengthDelimited(tag)) {
                std::string body;
                if (!readNested(m_in, [&] { return child(body); }))
                    return false;
                putLengthDelimited(out, field, body);
            } else if (!copyField(tag, start, out)) {
                return false;
            }
        }
    }

    bool tensor(std::string &out)
    {
        struct Field
        {
            int start = 0, end = 0;
            bool raw = false;
        };
        std::vector<Field> fields;
        RawDataSpan last;
        bool raw = false, external = false;
        std::uint64_t dataType = 0;
        while (true) {
            Field f;
            f.start = m_in.CurrentPosition();
            const std::uint32_t tag = m_in.ReadTag();
            if (!tag)
                break;
            const std::uint32_t number = WireFormatLite::GetTagFieldNumber(tag);
            const auto wire = WireFormatLite::GetTagWireType(tag);
            if (number == kTensorRawData && lengthDelimited(tag)) {
                std::uint32_t length = 0;
                if (!m_in.ReadVarint32(&length))
                    return false;
                last.offset = std::uint64_t(m_in.CurrentPosition());
                last.length = length;
                if (!m_in.Skip(int(length)))
                    return false;
                f.raw = raw = true; // Protobuf keeps the last raw_data
            } else if (number == kTensorName && lengthDelimited(tag)) {
                if (!WireFormatLite::ReadString(&m_in, &last.name))
                    return false;
            } else if ((number == kTensorDataType || number == kTensorDataLocation) &&
                       wire == WireFormatLite::WIRETYPE_VARINT) {
                std::uint64_t v = 0;
                if (!m_in.ReadVarint64(&v))
                    return false;
                if (number == kTensorDataType)
                    dataType = v;
                else
                    external = v == 1;
            } else if (!WireFormatLite::SkipField(&m_in, tag)) {
                return false;
            }
            f.end = m_in.CurrentPosition();
            fields.push_back(f);
        }
        const auto named = m_names.find(last.name);
        const bool strip = raw && !external && last.length >= m_minBytes && strippableType(dataType) &&
                           named != m_names.end() && named->second == 1 && !spans.count(last.name);
        for (const Field &f : fields)
            if (!(strip && f.raw))
                out.append(m_base + f.start, std::size_t(f.end - f.start));
        if (strip) {
            // One zero element in place of the bytes: onnx::checker counts an empty raw_data as no
            // value at all, and libonnx's inference, should it read the tensor, reads one value.
            putLengthDelimited(out, kTensorRawData, std::string(elementSize(dataType), '\0'));
            spans.emplace(last.name, last);
        }
        return true;
    }

    const char *m_base;
    CodedInputStream m_in;
    std::uint64_t m_minBytes;
    const std::map<std::string, int> &m_names;
};

} // namespace

Expected<StrippedModel> stripEmbeddedWeights(std::span<const std::byte> file, std::uint64_t minBytes)
{
    if (file.size() > std::size_t(INT_MAX))
        return Status::unsupported("a model over 2 GiB cannot be parsed by Protobuf");
    // A name given to two initializers is ambiguous: Protobuf keeps both, the importer refuses.
    // Every initializer counts, not only those with raw_data: a span looked up by a name that a
    // float_data tensor shares would be given to the wrong tensor (fuzz_loader, round 17).
    std::map<std::string, int> names;
    const Expected<std::vector<RawDataSpan>> all = findInitializerRawData(file, &names);
    if (!all)
        return all.status();
    Stripper stripper(file, minBytes, names);
    StrippedModel stripped;
    if (!stripper.model(stripped.bytes))
        return Status::invalid("the model is not valid Protobuf");
    stripped.spans = std::move(stripper.spans);
    return stripped;
}

} // namespace opscope
