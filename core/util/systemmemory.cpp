#include "util/systemmemory.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

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

namespace {

// A number in a cgroup file; "max" (v2, no limit) and anything unreadable are nullopt.
std::optional<std::uint64_t> readNumber(const std::filesystem::path &file)
{
    std::ifstream in(file);
    std::string text;
    if (!(in >> text) || text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    try {
        return std::stoull(text);
    } catch (...) {
        return std::nullopt;
    }
}

// `key VALUE` in a memory.stat file.
std::uint64_t statValue(const std::filesystem::path &file, const std::string &key)
{
    std::ifstream in(file);
    std::string k;
    std::uint64_t v = 0;
    while (in >> k >> v)
        if (k == key)
            return v;
    return 0;
}

// The directory of a cgroup path under a hierarchy's mount. Inside a container the mount shows the
// container's own cgroup as its root, so a path that does not exist there is the mount itself.
std::filesystem::path cgroupDir(const std::filesystem::path &mount, const std::string &path)
{
    const std::filesystem::path relative = std::filesystem::path(path).relative_path().lexically_normal();
    if (relative.empty() || relative == ".")
        return mount;
    std::filesystem::path dir = mount / relative;
    if (!dir.has_filename()) // "a/b/": the same directory, without the empty last element
        dir = dir.parent_path();
    std::error_code ec;
    return std::filesystem::is_directory(dir, ec) ? dir : mount;
}

// How much more the cgroup at `dir` and every cgroup above it (up to `mount`) may take: the least
// of limit − (usage − inactive file pages) over them. Page cache counts in a cgroup's usage but is
// given back under pressure, as MemAvailable counts it.
std::optional<std::uint64_t> headroom(const std::filesystem::path &mount, std::filesystem::path dir,
                                      const char *limitFile, const char *usageFile, const char *inactiveKey)
{
    std::optional<std::uint64_t> least;
    for (;;) {
        const std::optional<std::uint64_t> limit = readNumber(dir / limitFile);
        // v1 writes "no limit" as a huge page-rounded number (2^63 − page size).
        if (limit && *limit < (std::uint64_t(1) << 62)) {
            const std::uint64_t used = readNumber(dir / usageFile).value_or(0);
            const std::uint64_t inactive = statValue(dir / "memory.stat", inactiveKey);
            const std::uint64_t held = used > inactive ? used - inactive : 0;
            const std::uint64_t room = *limit > held ? *limit - held : 1; // 1: full, yet "known"
            least = least ? std::min(*least, room) : room;
        }
        if (dir == mount || !dir.has_parent_path() || dir.parent_path() == dir)
            break;
        dir = dir.parent_path();
        if (dir.string().size() < mount.string().size())
            break;
    }
    return least;
}

} // namespace

std::uint64_t cgroupAvailableBytes(const std::string &selfCgroup, const std::string &root)
{
    // Lines "ID:CONTROLLERS:PATH": "0::/path" is v2; v1 lists "memory" among the controllers.
    std::ifstream in(selfCgroup);
    std::string line;
    std::optional<std::uint64_t> room;
    while (std::getline(in, line)) {
        const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos)
            continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        std::optional<std::uint64_t> r;
        if (controllers.empty()) {
            const std::filesystem::path mount = std::filesystem::exists(std::filesystem::path(root) / "cgroup.controllers")
                                                    ? std::filesystem::path(root)
                                                    : std::filesystem::path(root) / "unified";
            r = headroom(mount, cgroupDir(mount, path), "memory.max", "memory.current", "inactive_file");
        } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
            const std::filesystem::path mount = std::filesystem::path(root) / "memory";
            r = headroom(mount, cgroupDir(mount, path), "memory.limit_in_bytes", "memory.usage_in_bytes",
                         "total_inactive_file");
        }
        if (r)
            room = room ? std::min(*room, *r) : *r;
    }
    return room.value_or(0);
}

Expected<std::uint64_t> parseByteSize(std::string_view text)
{
    const std::string t(text);
    const auto bad = [&t] {
        return Status::invalid("'" + t + "' is not a size: write bytes or a number with a unit, e.g. 512M, 1.5GiB, 2G");
    };
    std::size_t end = 0;
    while (end < t.size() && (std::isdigit(static_cast<unsigned char>(t[end])) || t[end] == '.'))
        ++end;
    if (end == 0 || std::count(t.begin(), t.begin() + std::ptrdiff_t(end), '.') > 1 || t[0] == '.')
        return bad();
    double value = 0.0;
    try {
        value = std::stod(t.substr(0, end));
    } catch (...) {
        return bad();
    }
    std::string unit;
    for (char c : t.substr(end))
        if (c != ' ')
            unit += char(std::toupper(static_cast<unsigned char>(c)));
    static const std::pair<const char *, double> units[] = {
        {"", 1.0},       {"B", 1.0},         {"K", 0x1p10},      {"KIB", 0x1p10}, {"KB", 1e3}, {"M", 0x1p20},
        {"MIB", 0x1p20}, {"MB", 1e6},        {"G", 0x1p30},      {"GIB", 0x1p30}, {"GB", 1e9}, {"T", 0x1p40},
        {"TIB", 0x1p40}, {"TB", 1e12},
    };
    for (const auto &[name, scale] : units)
        if (unit == name) {
            const double bytes = value * scale;
            if (!(bytes >= 1.0) || bytes >= 0x1p63)
                return Status::invalid("'" + t + "' is out of range: a size is at least 1 byte and below 8 EiB");
            return static_cast<std::uint64_t>(bytes);
        }
    return bad();
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
