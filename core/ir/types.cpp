#include "ir/types.h"

#include <algorithm>
#include <limits>
#include <string_view>

namespace opscope {

Shape::Shape(std::initializer_list<std::int64_t> sizes)
{
    for (std::int64_t s : sizes)
        dims.push_back(Dim::known(s));
}

Shape Shape::fromSizes(const std::vector<std::int64_t> &sizes)
{
    Shape s;
    for (std::int64_t v : sizes)
        s.dims.push_back(Dim::known(v));
    return s;
}

bool Shape::isStatic() const
{
    for (const Dim &d : dims)
        if (!d.isKnown())
            return false;
    return true;
}

ElementCount countElements(const std::vector<std::int64_t> &dims)
{
    // The product of the non-zero dims must fit too: an empty tensor's other dims are what kernels
    // multiply for outer and inner sizes ([0, 2^63 − 1, 24]: 24 · (2^63 − 1) overflowed in a
    // Reduce, found by fuzzing), so a shape is refused whatever order its zeros come in.
    ElementCount c;
    bool empty = false;
    for (std::int64_t d : dims) {
        if (d < 0) {
            c.negative = true;
            c.negativeDim = d;
            return c;
        }
        if (d == 0) {
            empty = true;
            continue;
        }
        if (c.count > std::numeric_limits<std::int64_t>::max() / d) {
            c.overflow = true;
            return c;
        }
        c.count *= d;
    }
    if (empty)
        c.count = 0;
    return c;
}

Expected<std::int64_t> checkedElementCount(const std::vector<std::int64_t> &dims, const std::string &what)
{
    const ElementCount c = countElements(dims);
    if (c.negative)
        return Status::invalid(what + " has a negative dimension (" + std::to_string(c.negativeDim) + ")");
    if (c.overflow)
        return Status::invalid(what + " has dimensions whose product overflows 64 bits");
    return c.count;
}

Expected<std::int64_t> Shape::elementCount() const
{
    std::vector<std::int64_t> sizes;
    sizes.reserve(dims.size());
    for (const Dim &d : dims) {
        if (!d.isKnown())
            return Status::invalid("shape " + toString() + " is not static");
        sizes.push_back(d.value);
    }
    return checkedElementCount(sizes, "shape " + toString());
}

bool Dim::isInvented() const
{
    constexpr std::string_view prefix = "unk__";
    return isSymbolic() && symbol.size() > prefix.size() && symbol.compare(0, prefix.size(), prefix) == 0 &&
           std::all_of(symbol.begin() + prefix.size(), symbol.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string Shape::toString() const
{
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (i)
            s += ',';
        const Dim &d = dims[i];
        s += d.isKnown() ? std::to_string(d.value) : d.isSymbolic() && !d.isInvented() ? d.symbol : std::string("?");
    }
    return s + "]";
}

TypeInfo TypeInfo::tensor(DataType type, std::optional<Shape> shape)
{
    TypeInfo t;
    t.kind = Kind::Tensor;
    t.elemType = type;
    t.shape = std::move(shape);
    return t;
}

std::string TypeInfo::toString() const
{
    const auto tensorText = [this] {
        return std::string(dataTypeName(elemType)) + (shape ? shape->toString() : std::string("[...]"));
    };
    const std::string innerText = inner ? inner->toString() : std::string("?");
    switch (kind) {
    case Kind::Unknown: return "?";
    case Kind::Tensor: return tensorText();
    case Kind::SparseTensor: return "sparse(" + tensorText() + ")";
    case Kind::Sequence: return "seq(" + innerText + ")";
    case Kind::Map: return "map(" + std::string(dataTypeName(keyType)) + "," + innerText + ")";
    case Kind::Optional: return "optional(" + innerText + ")";
    }
    return "?";
}

bool TypeInfo::operator==(const TypeInfo &other) const
{
    if (kind != other.kind || elemType != other.elemType || shape != other.shape ||
        keyType != other.keyType || denotation != other.denotation ||
        static_cast<bool>(inner) != static_cast<bool>(other.inner))
        return false;
    return !inner || *inner == *other.inner;
}

} // namespace opscope
