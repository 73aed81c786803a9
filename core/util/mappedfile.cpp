#include "util/mappedfile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace opscope {

Expected<std::shared_ptr<const MappedFile>> MappedFile::open(const std::filesystem::path &path)
{
    // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer forever (a user who
    // passes a named pipe, or a loader thread the app can never join). A regular file ignores it.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        const int err = errno;
        const std::string what = "cannot open '" + path.string() + "': " + std::strerror(err);
        return err == ENOENT ? Status::notFound(what) : Status::invalid(what);
    }
    struct stat st
    {
    };
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const bool folder = S_ISDIR(st.st_mode);
        ::close(fd);
        return Status::invalid("'" + path.string() + "' is " +
                               (folder ? "a folder" : "not a regular file (a pipe, device or socket)") +
                               "; give a file");
    }
    std::shared_ptr<MappedFile> file(new MappedFile);
    file->m_path = path;
    file->m_size = static_cast<std::size_t>(st.st_size);
    if (file->m_size > 0) {
        void *p = ::mmap(nullptr, file->m_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            const int err = errno;
            ::close(fd);
            return Status::io("cannot map '" + path.string() + "': " + std::strerror(err));
        }
        file->m_data = static_cast<const std::byte *>(p);
    }
    ::close(fd); // the mapping keeps the file alive
    return std::shared_ptr<const MappedFile>(std::move(file));
}

Expected<std::shared_ptr<const MappedFile>> MappedFile::writeScratch(const std::filesystem::path &folder,
                                                                      const std::vector<std::span<const std::byte>> &parts,
                                                                      std::vector<std::uint64_t> &offsets)
{
    struct statfs fs
    {
    };
    if (::statfs(folder.c_str(), &fs) != 0)
        return Status::io("cannot use '" + folder.string() + "' for scratch files: " + std::strerror(errno));
    if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC)
        return Status::unsupported("'" + folder.string() + "' is in memory (tmpfs), so spilling to it saves nothing: "
                                   "set TMPDIR to a folder on disk");
    // O_TMPFILE: a file without a name, gone with its last mapping even if the process is killed.
    int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        std::string name = (folder / "opscope-scratch-XXXXXX").string();
        fd = ::mkstemp(name.data());
        if (fd >= 0)
            ::unlink(name.c_str());
    }
    if (fd < 0)
        return Status::io("cannot create a scratch file in '" + folder.string() + "': " + std::strerror(errno));
    const auto fail = [&](const char *what) {
        const int err = errno;
        ::close(fd);
        return Status::io(std::string("cannot ") + what + " a scratch file in '" + folder.string() +
                          "': " + std::strerror(err));
    };
    offsets.clear();
    std::uint64_t at = 0;
    for (const std::span<const std::byte> part : parts) {
        at = (at + 63) / 64 * 64;
        offsets.push_back(at);
        for (std::size_t done = 0; done < part.size();) {
            const ssize_t n = ::pwrite(fd, part.data() + done, part.size() - done, off_t(at + done));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return fail("write"); // ENOSPC: the caller keeps its heap copies
            done += std::size_t(n);
        }
        at += part.size();
    }
    std::shared_ptr<MappedFile> file(new MappedFile);
    file->m_path = folder / "(scratch)";
    file->m_size = static_cast<std::size_t>(at);
    if (at > 0) {
        void *p = ::mmap(nullptr, file->m_size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            return fail("map");
        file->m_data = static_cast<const std::byte *>(p);
    }
    ::close(fd);
    return std::shared_ptr<const MappedFile>(std::move(file));
}


void dropResidentPages(std::span<const std::byte> bytes)
{
    if (bytes.empty())
        return;
    static const std::uintptr_t page = std::uintptr_t(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<std::uintptr_t>(bytes.data()) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(bytes.data()) + bytes.size() + page - 1) / page * page;
    ::madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
}

void MappedFile::dropResidentPages() const
{
    opscope::dropResidentPages(bytes());
}

MappedFile::~MappedFile()
{
    if (m_data)
        ::munmap(const_cast<std::byte *>(m_data), m_size);
}

} // namespace opscope
