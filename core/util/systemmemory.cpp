#include "util/systemmemory.h"

#include <cstdio>
#include <limits>

#include <sys/sysinfo.h>
#include <unistd.h>

namespace opscope {

std::uint64_t systemMemoryBytes()
{
    static const std::uint64_t bytes = [] {
        struct sysinfo info {};
        if (sysinfo(&info) == 0 && info.totalram > 0)
            return (static_cast<std::uint64_t>(info.totalram) + info.totalswap) * info.mem_unit;
        const long pages = sysconf(_SC_PHYS_PAGES);
        const long pageSize = sysconf(_SC_PAGE_SIZE);
        if (pages > 0 && pageSize > 0)
            return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize);
        return std::numeric_limits<std::uint64_t>::max(); // unknown: let the allocator decide
    }();
    return bytes;
}

std::string memoryText(std::uint64_t bytes)
{
    char text[32];
    if (bytes >= (std::uint64_t(1) << 30))
        std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(std::uint64_t(1) << 30));
    else
        std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1 << 20));
    return text;
}

} // namespace opscope
