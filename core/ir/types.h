#pragma once
// Value types: tensors with (possibly symbolic) shapes, and ONNX's sequence/map/optional types.

#include "ir/cloneptr.h"
#include "ir/datatype.h"
#include "util/status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opscope {

// One dimension: a known size, a named symbol ("batch"), or unknown.
struct Dim
{
    std::int64_t value = -1; // >= 0 when known
    std::string symbol;      // set when symbolic
    std::string denotation;

    static Dim known(std::int64_t v) { return Dim{v, {}, {}}; }
    static Dim symbolic(std::string s) { return Dim{-1, std::move(s), {}}; }
    bool isKnown() const { return value >= 0; }
    bool isSymbolic() const { return value < 0 && !symbol.empty(); }
    // A name ONNX's shape inference made up for a dim it could not compute ("unk__3"): it says
    // "unknown" and nothing else, so shapes print it as "?" and counts call it unknown.
    bool isInvented() const;
    bool operator==(const Dim &) const = default;
};

struct Shape
{
    std::vector<Dim> dims;

    Shape() = default;
    Shape(std::initializer_list<std::int64_t> sizes);
    static Shape fromSizes(const std::vector<std::int64_t> &sizes);

    std::size_t rank() const { return dims.size(); }
    bool isStatic() const; // every dim known
    // Element count of a static shape, or an error if a dim is unknown or the product overflows.
    Expected<std::int64_t> elementCount() const;
    std::string toString() const; // "[1,3,224,224]", "[batch,3,?,?]"
    bool operator==(const Shape &) const = default;
};

// Multiplies dims with overflow checks; the error message names `what`.
Expected<std::int64_t> checkedElementCount(const std::vector<std::int64_t> &dims, const std::string &what);

// The same check without a message, for hot paths that build one only on failure.
struct ElementCount
{
    std::int64_t count = 1;
    std::int64_t negativeDim = 0; // the first negative dim, if any
    bool negative = false;
    bool overflow = false;
    bool ok() const { return !negative && !overflow; }
};
ElementCount countElements(const std::vector<std::int64_t> &dims);

struct TypeInfo
{
    enum class Kind
    {
        Unknown,
        Tensor,
        SparseTensor,
        Sequence,
        Map,
        Optional,
    };
    Kind kind = Kind::Unknown;
    DataType elemType = DataType::Undefined; // Tensor / SparseTensor element, Map value is `inner`
    std::optional<Shape> shape;              // absent: rank unknown
    DataType keyType = DataType::Undefined;  // Map key
    ClonePtr<TypeInfo> inner;                // Sequence/Optional element, Map value
    std::string denotation;

    static TypeInfo tensor(DataType type, std::optional<Shape> shape = std::nullopt);
    bool isTensor() const { return kind == Kind::Tensor; }
    bool isKnown() const { return kind != Kind::Unknown; }
    std::string toString() const; // "float32[1,3,224,224]", "seq(float32[?])"
    bool operator==(const TypeInfo &other) const;
};

} // namespace opscope
