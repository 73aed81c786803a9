#include "util/mappedfile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

void MappedFile::dropResidentPages() const
{
    if (m_data)
        ::madvise(const_cast<std::byte *>(m_data), m_size, MADV_DONTNEED);
}

MappedFile::~MappedFile()
{
    if (m_data)
        ::munmap(const_cast<std::byte *>(m_data), m_size);
}

} // namespace opscope
