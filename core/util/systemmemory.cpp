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

std::string bytesText(std::uint64_t b)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = double(b);
    int u = 0;
    while (v >= 1024.0 && u < 4)
        v /= 1024.0, ++u;
    char buf[48];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

} // namespace opscope
