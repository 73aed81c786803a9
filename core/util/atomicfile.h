#pragma once
// Atomic file writes: data goes to a hidden temporary file in the destination folder, is flushed
// to disk, then renamed over the destination. A failure at any point leaves the destination as
// it was and removes the temporary file, so there is never a half-written output.

#include "util/status.h"

#include <cstdio>
#include <filesystem>
#include <span>
#include <string>

namespace opscope {

class AtomicFile
{
public:
    explicit AtomicFile(std::filesystem::path destination);
    ~AtomicFile(); // discards the temporary file unless commit() succeeded
    AtomicFile(const AtomicFile &) = delete;
    AtomicFile &operator=(const AtomicFile &) = delete;

    Status open();
    Status write(std::span<const std::byte> data);
    Status write(const std::string &data);
    // Bytes written so far; the next write lands at this offset.
    std::uint64_t position() const { return m_position; }
    Status commit();
    void discard();

    const std::filesystem::path &destination() const { return m_destination; }

private:
    std::filesystem::path m_destination;
    std::filesystem::path m_temp;
    std::FILE *m_file = nullptr;
    std::uint64_t m_position = 0;
};

} // namespace opscope
