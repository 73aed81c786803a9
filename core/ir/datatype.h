#pragma once
// Element types, numbered as ONNX's TensorProto.DataType so conversion is a cast.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace opscope {

enum class DataType : std::int32_t
{
    Undefined = 0,
    Float = 1,
    UInt8 = 2,
    Int8 = 3,
    UInt16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Double = 11,
    UInt32 = 12,
    UInt64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    BFloat16 = 16,
    Float8E4M3FN = 17,
    Float8E4M3FNUZ = 18,
    Float8E5M2 = 19,
    Float8E5M2FNUZ = 20,
};

// Short lowercase name as users read it ("float32", "int64", "bf16"...).
std::string_view dataTypeName(DataType type);
std::optional<DataType> dataTypeFromName(std::string_view name);
// Bytes per element; 0 for String and Undefined (no fixed size).
std::size_t dataTypeSize(DataType type);
// The alignment a tensor of this type needs to be read as its element type (1 where none).
std::size_t dataTypeAlignment(DataType type);
bool isKnownDataType(std::int32_t raw);
bool isFloatingPoint(DataType type);

} // namespace opscope
