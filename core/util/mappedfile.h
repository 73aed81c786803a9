#pragma once
// A read-only memory mapping of a whole file. Mapping costs no I/O: pages are read when first
// touched, so a model's external weights are not read until a consumer looks at them.

#include "util/status.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <vector>

namespace opscope {

class MappedFile
{
public:
    static Expected<std::shared_ptr<const MappedFile>> open(const std::filesystem::path &path);
    // `parts` written one after another (each at a 64-byte aligned offset, returned in `offsets`)
    // into a new unlinked file in `folder`, mapped read-only: bytes spilled from the heap that the
    // process reads only where it touches them, like a model's external data. Refused where the
    // folder is in memory (tmpfs, ramfs), where spilling would save nothing.
    static Expected<std::shared_ptr<const MappedFile>> writeScratch(const std::filesystem::path &folder,
                                                                    const std::vector<std::span<const std::byte>> &parts,
                                                                    std::vector<std::uint64_t> &offsets);
    ~MappedFile();
    MappedFile(const MappedFile &) = delete;
    MappedFile &operator=(const MappedFile &) = delete;

    std::span<const std::byte> bytes() const { return {m_data, m_size}; }
    std::size_t size() const { return m_size; }
    const std::filesystem::path &path() const { return m_path; }
    // Takes the pages read so far out of this process's resident set (they stay in the page
    // cache; a later read maps them again): after parsing a model, which read every byte, only
    // what the run reads counts against the process. Read-only mapping: nothing is lost.
    void dropResidentPages() const;

private:
    MappedFile() = default;
    const std::byte *m_data = nullptr;
    std::size_t m_size = 0;
    std::filesystem::path m_path;
};

// The same for part of a mapping (whole pages around `bytes`, which must lie in a read-only file
// mapping: its pages are read from the file again when next touched).
void dropResidentPages(std::span<const std::byte> bytes);

} // namespace opscope
