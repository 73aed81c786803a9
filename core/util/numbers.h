#pragma once
// Numbers a user typed (device counts, indices, host counts): decimal digits only, all of them.
// std::atoi and std::stoi read a prefix — "1,cuda:1" was 1 device, "cpu:2x" two, "0x10" zero —
// and stoi throws on overflow; every such argument is read here instead.

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace opscope {

// The value of `text` when it is a whole number in decimal digits (no sign, spaces, base prefix
// or trailing characters) from `min` to `max`; nullopt otherwise.
inline std::optional<std::int64_t> parseWholeNumber(std::string_view text, std::int64_t min, std::int64_t max)
{
    if (text.empty() || text.front() < '0' || text.front() > '9')
        return std::nullopt;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
        return std::nullopt;
    return v;
}

} // namespace opscope
