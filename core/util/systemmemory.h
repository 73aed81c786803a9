#pragma once

#include <cstdint>
#include <string>

namespace opscope {

// What this machine can hold at all: physical memory plus swap, read once. A single buffer
// larger than this can never be satisfied, and asking for one is worse than refusing it:
// with overcommit the request may "succeed" and the process dies later, and sanitizers abort
// on it outright. Allocation sites compare against this and return a Status instead.
std::uint64_t systemMemoryBytes();

// "1.5 KiB", "8.0 GiB": sizes as users read them (messages, the inspector).
std::string bytesText(std::uint64_t bytes);

} // namespace opscope
