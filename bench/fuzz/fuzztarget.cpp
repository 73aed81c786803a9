#include "fuzztarget.h"

#include <fstream>
#include <unistd.h>

namespace opscope::fuzz {

const std::filesystem::path &scratchFolder()
{
    static const std::filesystem::path dir = [] {
        namespace fs = std::filesystem;
        const fs::path d = fs::temp_directory_path() / ("opscope-fuzz-" + std::to_string(::getpid()));
        fs::create_directories(d / "sub");
        std::ofstream w(d / "w.bin", std::ios::binary);
        for (int i = 0; i < 256; ++i)
            w.put(static_cast<char>(i));
        std::ofstream(d / "empty.bin").flush();
        return d;
    }();
    return dir;
}

std::filesystem::path writeScratch(const char *name, const std::uint8_t *data, std::size_t size)
{
    const std::filesystem::path p = scratchFolder() / name;
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
    return p;
}

} // namespace opscope::fuzz
