#pragma once

#include <cstdint>
#include <string>

namespace opscope {

// What this machine can hold at all: physical memory plus swap, read once. A single buffer
// larger than this can never be satisfied, and asking for one is worse than refusing it:
// with overcommit the request may "succeed" and the process dies later, and sanitizers abort
// on it outright. Allocation sites compare against this and return a Status instead.
std::uint64_t systemMemoryBytes();

// "8.0 GiB" style text for messages.
std::string memoryText(std::uint64_t bytes);

} // namespace opscope
