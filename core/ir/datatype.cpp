#include "ir/datatype.h"

#include <array>
#include <utility>

namespace opscope {
namespace {

struct TypeRow
{
    DataType type;
    std::string_view name;
    std::size_t size;
};

constexpr std::array<TypeRow, 21> typeTable{{
    {DataType::Undefined, "undefined", 0},
    {DataType::Float, "float32", 4},
    {DataType::UInt8, "uint8", 1},
    {DataType::Int8, "int8", 1},
    {DataType::UInt16, "uint16", 2},
    {DataType::Int16, "int16", 2},
    {DataType::Int32, "int32", 4},
    {DataType::Int64, "int64", 8},
    {DataType::String, "string", 0},
    {DataType::Bool, "bool", 1},
    {DataType::Float16, "float16", 2},
    {DataType::Double, "float64", 8},
    {DataType::UInt32, "uint32", 4},
    {DataType::UInt64, "uint64", 8},
    {DataType::Complex64, "complex64", 8},
    {DataType::Complex128, "complex128", 16},
    {DataType::BFloat16, "bfloat16", 2},
    {DataType::Float8E4M3FN, "float8e4m3fn", 1},
    {DataType::Float8E4M3FNUZ, "float8e4m3fnuz", 1},
    {DataType::Float8E5M2, "float8e5m2", 1},
    {DataType::Float8E5M2FNUZ, "float8e5m2fnuz", 1},
}};

const TypeRow *row(DataType type)
{
    const auto i = static_cast<std::size_t>(type);
    return i < typeTable.size() ? &typeTable[i] : nullptr;
}

} // namespace

std::string_view dataTypeName(DataType type)
{
    const TypeRow *r = row(type);
    return r ? r->name : "unknown";
}

std::optional<DataType> dataTypeFromName(std::string_view name)
{
    for (const TypeRow &r : typeTable)
        if (r.name == name)
            return r.type;
    return std::nullopt;
}

std::size_t dataTypeSize(DataType type)
{
    const TypeRow *r = row(type);
    return r ? r->size : 0;
}

std::size_t dataTypeAlignment(DataType type)
{
    const std::size_t size = dataTypeSize(type);
    // complex64/128 are read as pairs of float/double.
    const std::size_t element = type == DataType::Complex64 ? 4 : type == DataType::Complex128 ? 8 : size;
    return element != 0 && (element & (element - 1)) == 0 ? element : 1;
}

bool isKnownDataType(std::int32_t raw)
{
    return raw >= 0 && std::cmp_less(raw, typeTable.size());
}

bool isFloatingPoint(DataType type)
{
    switch (type) {
    case DataType::Float:
    case DataType::Double:
    case DataType::Float16:
    case DataType::BFloat16:
    case DataType::Float8E4M3FN:
    case DataType::Float8E4M3FNUZ:
    case DataType::Float8E5M2:
    case DataType::Float8E5M2FNUZ: return true;
    default: return false;
    }
}

} // namespace opscope
