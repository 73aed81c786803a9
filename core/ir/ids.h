#pragma once
// Strong index types: a NodeId can't be passed where a ValueId is expected.

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>

namespace opscope {

template<class Tag>
struct StrongId
{
    static constexpr std::uint32_t invalidIndex = std::numeric_limits<std::uint32_t>::max();
    std::uint32_t index = invalidIndex;

    constexpr StrongId() = default;
    constexpr explicit StrongId(std::uint32_t i) : index(i) {}
    constexpr bool valid() const { return index != invalidIndex; }
    constexpr explicit operator bool() const { return valid(); }
    constexpr auto operator<=>(const StrongId &) const = default;
};

using NodeId = StrongId<struct NodeTag>;
using ValueId = StrongId<struct ValueTag>;

} // namespace opscope

template<class Tag>
struct std::hash<opscope::StrongId<Tag>>
{
    std::size_t operator()(opscope::StrongId<Tag> id) const noexcept
    {
        return std::hash<std::uint32_t>{}(id.index);
    }
};
