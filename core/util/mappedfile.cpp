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
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        const std::string what = "cannot open '" + path.string() + "': " + std::strerror(err);
        return err == ENOENT ? Status::notFound(what) : Status::io(what);
    }
    struct stat st
    {
    };
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return Status::io("'" + path.string() + "' is not a regular file");
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

MappedFile::~MappedFile()
{
    if (m_data)
        ::munmap(const_cast<std::byte *>(m_data), m_size);
}

} // namespace opscope
