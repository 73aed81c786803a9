#include "onnx/protoconvert.h"

#include <charconv>

#include <cstring>
#include <limits>

static_assert(std::endian::native == std::endian::little,
              "ONNX raw data is little endian; so are our targets");

namespace opscope {

// ---------------------------------------------------------------- types

namespace {

Shape shapeFromProto(const onnx::TensorShapeProto &proto)
{
    Shape s;
    s.dims.reserve(proto.dim_size());
    for (const auto &d : proto.dim()) {
        Dim dim;
        if (d.has_dim_value())
            dim.value = d.dim_value();
        else if (d.has_dim_param())
            dim.symbol = d.dim_param();
        dim.denotation = d.denotation();
        s.dims.push_back(std::move(dim));
    }
    return s;
}

void shapeToProto(const Shape &shape, onnx::TensorShapeProto *proto)
{
    for (const Dim &d : shape.dims) {
        auto *pd = proto->add_dim();
        if (d.isKnown())
            pd->set_dim_value(d.value);
        else if (!d.symbol.empty())
            pd->set_dim_param(d.symbol);
        if (!d.denotation.empty())
            pd->set_denotation(d.denotation);
    }
}

} // namespace

TypeInfo typeFromProto(const onnx::TypeProto &proto)
{
    TypeInfo t;
    t.denotation = proto.denotation();
    switch (proto.value_case()) {
    case onnx::TypeProto::kTensorType:
        t.kind = TypeInfo::Kind::Tensor;
        t.elemType = static_cast<DataType>(proto.tensor_type().elem_type());
        if (proto.tensor_type().has_shape())
            t.shape = shapeFromProto(proto.tensor_type().shape());
        break;
    case onnx::TypeProto::kSparseTensorType:
        t.kind = TypeInfo::Kind::SparseTensor;
        t.elemType = static_cast<DataType>(proto.sparse_tensor_type().elem_type());
        if (proto.sparse_tensor_type().has_shape())
            t.shape = shapeFromProto(proto.sparse_tensor_type().shape());
        break;
    case onnx::TypeProto::kSequenceType:
        t.kind = TypeInfo::Kind::Sequence;
        if (proto.sequence_type().has_elem_type())
            t.inner = ClonePtr<TypeInfo>(typeFromProto(proto.sequence_type().elem_type()));
        break;
    case onnx::TypeProto::kMapType:
        t.kind = TypeInfo::Kind::Map;
        t.keyType = static_cast<DataType>(proto.map_type().key_type());
        if (proto.map_type().has_value_type())
            t.inner = ClonePtr<TypeInfo>(typeFromProto(proto.map_type().value_type()));
        break;
    case onnx::TypeProto::kOptionalType:
        t.kind = TypeInfo::Kind::Optional;
        if (proto.optional_type().has_elem_type())
            t.inner = ClonePtr<TypeInfo>(typeFromProto(proto.optional_type().elem_type()));
        break;
    default: break;
    }
    return t;
}

void typeToProto(const TypeInfo &type, onnx::TypeProto *proto)
{
    if (!type.denotation.empty())
        proto->set_denotation(type.denotation);
    switch (type.kind) {
    case TypeInfo::Kind::Unknown: break;
    case TypeInfo::Kind::Tensor: {
        auto *tt = proto->mutable_tensor_type();
        tt->set_elem_type(static_cast<int>(type.elemType));
        if (type.shape)
            shapeToProto(*type.shape, tt->mutable_shape());
        break;
    }
    case TypeInfo::Kind::SparseTensor: {
        auto *tt = proto->mutable_sparse_tensor_type();
        tt->set_elem_type(static_cast<int>(type.elemType));
        if (type.shape)
            shapeToProto(*type.shape, tt->mutable_shape());
        break;
    }
    case TypeInfo::Kind::Sequence: {
        auto *st = proto->mutable_sequence_type();
        if (type.inner)
            typeToProto(*type.inner, st->mutable_elem_type());
        break;
    }
    case TypeInfo::Kind::Map: {
        auto *mt = proto->mutable_map_type();
        mt->set_key_type(static_cast<int>(type.keyType));
        if (type.inner)
            typeToProto(*type.inner, mt->mutable_value_type());
        break;
    }
    case TypeInfo::Kind::Optional: {
        auto *ot = proto->mutable_optional_type();
        if (type.inner)
            typeToProto(*type.inner, ot->mutable_elem_type());
        break;
    }
    }
}

// ---------------------------------------------------------------- tensors in

namespace {

// Copies a repeated field into little-endian bytes of `elemSize` each (narrowing where ONNX
// widens: int8/fp16/bool... live in int32_data as their bit patterns).
template<class Field>
std::vector<std::byte> packField(const Field &field, std::size_t elemSize)
{
    std::vector<std::byte> out(static_cast<std::size_t>(field.size()) * elemSize);
    std::size_t k = 0;
    for (const auto &v : field) {
        std::memcpy(out.data() + k * elemSize, &v, elemSize); // little endian: low bytes first
        ++k;
    }
    return out;
}

Expected<std::vector<std::byte>> typedFieldBytes(const onnx::TensorProto &proto, DataType dtype,
                                                 const std::string &what)
{
    switch (dtype) {
    case DataType::Float:
    case DataType::Complex64: return packField(proto.float_data(), sizeof(float));
    case DataType::Double:
    case DataType::Complex128: return packField(proto.double_data(), sizeof(double));
    case DataType::Int64: return packField(proto.int64_data(), sizeof(std::int64_t));
    case DataType::UInt32:
    case DataType::UInt64: return packField(proto.uint64_data(), dataTypeSize(dtype));
    case DataType::Int32:
    case DataType::Int16:
    case DataType::Int8:
    case DataType::UInt16:
    case DataType::UInt8:
    case DataType::Bool:
    case DataType::Float16:
    case DataType::BFloat16:
    case DataType::Float8E4M3FN:
    case DataType::Float8E4M3FNUZ:
    case DataType::Float8E5M2:
    case DataType::Float8E5M2FNUZ: return packField(proto.int32_data(), dataTypeSize(dtype));
    default:
        return Status::unsupported(what + " has data type " + std::to_string(int(dtype)) +
                                   ", which opscope cannot read");
    }
}

Status loadExternal(onnx::TensorProto &proto, Tensor &t, ExternalFiles &files, const std::string &what)
{
    ExternalSource src;
    bool hasLength = false;
    // Whole decimal numbers only: stoull takes "12abc" as 12 and "-1" as 2^64 - 1.
    auto number = [&](const std::string &text, std::uint64_t &out) -> Status {
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        if (ec != std::errc() || end != text.data() + text.size() || text.empty())
            return Status::invalid(what + ": external data value '" + text + "' is not a whole number");
        return Status::ok();
    };
    for (const auto &kv : proto.external_data()) {
        if (kv.key() == "location") {
            src.location = kv.value();
        } else if (kv.key() == "offset") {
            OPSCOPE_TRY(number(kv.value(), src.offset));
        } else if (kv.key() == "length") {
            OPSCOPE_TRY(number(kv.value(), src.length));
            hasLength = true;
        }
    }
    const Expected<std::int64_t> count = checkedElementCount(t.dims, what);
    if (!count)
        return count.status();
    if (t.dtype == DataType::String)
        return Status::unsupported(what + ": string tensors cannot be stored as external data");
    const std::uint64_t need = static_cast<std::uint64_t>(*count) * dataTypeSize(t.dtype);
    if (hasLength && src.length != need)
        return Status::invalid(what + ": external data length " + std::to_string(src.length) +
                               " does not match its shape (" + std::to_string(need) + " bytes)");
    src.length = need;
    Expected<std::shared_ptr<const MappedFile>> file = files.open(src.location, t.name);
    if (!file)
        return file.status();
    const std::uint64_t size = (*file)->size();
    if (src.offset > size || src.length > size - src.offset)
        return Status::invalid(what + ": external data '" + src.location + "' is " + std::to_string(size) +
                               " bytes, too short for offset " + std::to_string(src.offset) + " + length " +
                               std::to_string(src.length) + " (truncated file?)");
    t.data = Buffer::fromMapping(*file, src.offset, src.length, dataTypeAlignment(t.dtype));
    t.external = std::move(src);
    (void)proto;
    return Status::ok();
}

} // namespace

Expected<Tensor> tensorFromProto(onnx::TensorProto &proto, ExternalFiles &files, const std::string &what)
{
    Tensor t;
    t.name = proto.name();
    t.docString = proto.doc_string();
    if (!isKnownDataType(proto.data_type()) || proto.data_type() == 0)
        return Status::invalid(what + " has an unknown data type (" + std::to_string(proto.data_type()) +
                               ")");
    t.dtype = static_cast<DataType>(proto.data_type());
    t.dims.assign(proto.dims().begin(), proto.dims().end());
    const Expected<std::int64_t> count = checkedElementCount(t.dims, what);
    if (!count)
        return count.status();
    if (proto.has_segment())
        return Status::unsupported(what + " is split into segments, which opscope does not support");

    if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
        OPSCOPE_TRY(loadExternal(proto, t, files, what));
    } else if (t.dtype == DataType::String) {
        t.strings = std::make_shared<const std::vector<std::string>>(proto.string_data().begin(),
                                                                     proto.string_data().end());
    } else if (proto.has_raw_data()) {
        // Stripped (one placeholder element): the bytes are in the mapped model file.
        if (const std::uint64_t need = std::uint64_t(*count) * dataTypeSize(t.dtype); proto.raw_data().size() != need)
            t.data = files.takeEmbedded(t.name, need, dataTypeAlignment(t.dtype));
        if (!t.data) {
            std::unique_ptr<std::string> raw(proto.release_raw_data());
            t.data = Buffer::fromString(std::move(*raw));
        }
    } else {
        Expected<std::vector<std::byte>> bytes = typedFieldBytes(proto, t.dtype, what);
        if (!bytes)
            return bytes.status();
        t.data = Buffer::fromBytes(std::move(*bytes));
    }
    OPSCOPE_TRY(validateTensorData(t, what));
    canonicalizeBools(t);
    return t;
}

Expected<SparseTensor> sparseTensorFromProto(onnx::SparseTensorProto &proto, ExternalFiles &files,
                                             const std::string &what)
{
    SparseTensor s;
    s.dims.assign(proto.dims().begin(), proto.dims().end());
    const Expected<std::int64_t> count = checkedElementCount(s.dims, what);
    if (!count)
        return count.status();
    Expected<Tensor> values = tensorFromProto(*proto.mutable_values(), files, what + " values");
    if (!values)
        return values.status();
    Expected<Tensor> indices = tensorFromProto(*proto.mutable_indices(), files, what + " indices");
    if (!indices)
        return indices.status();
    s.values = std::move(*values);
    s.indices = std::move(*indices);
    return s;
}

// ---------------------------------------------------------------- tensors out

Status TensorSink::write(const Tensor &tensor, onnx::TensorProto *proto)
{
    proto->set_data_type(static_cast<int>(tensor.dtype));
    for (std::int64_t d : tensor.dims)
        proto->add_dims(d);
    if (!tensor.name.empty())
        proto->set_name(tensor.name);
    if (!tensor.docString.empty())
        proto->set_doc_string(tensor.docString);
    if (tensor.dtype == DataType::String) {
        if (tensor.strings)
            for (const std::string &s : *tensor.strings)
                proto->add_string_data(s);
        return Status::ok();
    }
    // Written byte by byte: a misaligned mapping needs no aligned copy.
    const std::span<const std::byte> bytes = tensor.data ? tensor.data->storedBytes() : std::span<const std::byte>();
    if (m_file && bytes.size() >= m_threshold && bytes.size() > 0) {
        // 64-byte alignment lets readers map tensors straight into SIMD loads.
        static const std::byte zeros[64]{};
        const std::uint64_t pad = (64 - m_file->position() % 64) % 64;
        OPSCOPE_TRY(m_file->write(std::span(zeros, pad)));
        const std::uint64_t offset = m_file->position();
        OPSCOPE_TRY(m_file->write(bytes));
        m_externalBytes += bytes.size();
        proto->set_data_location(onnx::TensorProto::EXTERNAL);
        const auto add = [proto](const char *key, const std::string &value) {
            auto *kv = proto->add_external_data();
            kv->set_key(key);
            kv->set_value(value);
        };
        add("location", m_location);
        add("offset", std::to_string(offset));
        add("length", std::to_string(bytes.size()));
        return Status::ok();
    }
    proto->set_raw_data(bytes.data(), bytes.size());
    return Status::ok();
}

Status sparseTensorToProto(const SparseTensor &tensor, TensorSink &sink, onnx::SparseTensorProto *proto)
{
    for (std::int64_t d : tensor.dims)
        proto->add_dims(d);
    OPSCOPE_TRY(sink.write(tensor.values, proto->mutable_values()));
    return sink.write(tensor.indices, proto->mutable_indices());
}

} // namespace opscope
