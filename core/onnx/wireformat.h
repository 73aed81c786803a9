#pragma once
// The Protobuf wire format of onnx.proto's fields that weights live in, for the walks that find
// raw_data in a serialized model without parsing it (embeddedweights, strippedweights).

#include <climits>
#include <cstdint>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

namespace opscope::wire {

using google::protobuf::io::CodedInputStream;
using google::protobuf::internal::WireFormatLite;

constexpr std::uint32_t kModelGraph = 7;          // ModelProto.graph
constexpr std::uint32_t kGraphInitializer = 5;    // GraphProto.initializer
constexpr std::uint32_t kTensorDataType = 2;      // TensorProto.data_type
constexpr std::uint32_t kTensorName = 8;          // TensorProto.name
constexpr std::uint32_t kTensorRawData = 9;       // TensorProto.raw_data
constexpr std::uint32_t kTensorDataLocation = 14; // TensorProto.data_location (1: EXTERNAL)

inline bool lengthDelimited(std::uint32_t tag)
{
    return WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// The body of a length-delimited field, read by `body` with the stream limited to it. The whole
// length must be there: at the end of the buffer the stream reports a clean end of message even
// inside a field whose length runs past it, and a truncated graph was walked as whole (fuzz_loader
// found the rewrite of such a file parsing where the file did not).
template<class Body>
bool readNested(CodedInputStream &in, Body body)
{
    std::uint32_t length = 0;
    if (!in.ReadVarint32(&length) || length > std::uint32_t(INT_MAX))
        return false;
    const int start = in.CurrentPosition();
    if (start > INT_MAX - int(length))
        return false;
    const CodedInputStream::Limit limit = in.PushLimit(int(length));
    const bool ok = body() && in.ConsumedEntireMessage() && in.CurrentPosition() == start + int(length);
    in.PopLimit(limit);
    return ok;
}

} // namespace opscope::wire
