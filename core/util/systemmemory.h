#pragma once

#include "util/status.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace opscope {

// What this machine can hold at all: physical memory plus swap, read once. A single buffer
// larger than this can never be satisfied, and asking for one is worse than refusing it:
// with overcommit the request may "succeed" and the process dies later, and sanitizers abort
// on it outright. Allocation sites compare against this and return a Status instead.
std::uint64_t systemMemoryBytes();

// Bytes this process's memory cgroup may still take (its limit, at any level above it, less what
// the cgroup uses that cannot be reclaimed), or 0 when no cgroup limits it. MemAvailable knows
// nothing of these limits: in a container, a Slurm or Kubernetes job, a run that "fits" the
// machine is killed by the kernel at the cgroup's limit. cgroup v2 and v1 (hierarchies as mounted
// under `root`, the process's own paths read from `selfCgroup`, normally /proc/self/cgroup).
std::uint64_t cgroupAvailableBytes(const std::string &selfCgroup = "/proc/self/cgroup",
                                   const std::string &root = "/sys/fs/cgroup");

// "1.5 KiB", "8.0 GiB": sizes as users read them (messages, the inspector).
std::string bytesText(std::uint64_t bytes);

// A size as users write it: "4096", "512M", "1.5GiB", "2G" (K/M/G/T and KiB… are powers of 1024,
// KB/MB/GB/TB powers of 1000, as `free` and Slurm read them). More than 0 and below 2^63 bytes.
Expected<std::uint64_t> parseByteSize(std::string_view text);

} // namespace opscope
