#include "util/atomicfile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace opscope {

AtomicFile::AtomicFile(std::filesystem::path destination) : m_destination(std::move(destination)) {}

AtomicFile::~AtomicFile()
{
    discard();
}

Status AtomicFile::open()
{
    std::filesystem::path dir = m_destination.parent_path();
    if (dir.empty())
        dir = ".";
    std::string pattern = (dir / ("." + m_destination.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
        return Status::io("cannot create a file in '" + dir.string() + "': " + std::strerror(errno));
    ::fchmod(fd, 0644);
    m_temp = pattern;
    m_file = ::fdopen(fd, "wb");
    if (!m_file) {
        ::close(fd);
        discard();
        return Status::io("cannot open '" + m_temp.string() + "' for writing");
    }
    m_position = 0;
    return Status::ok();
}

Status AtomicFile::write(std::span<const std::byte> data)
{
    if (!m_file)
        return Status::internal("AtomicFile::write before open");
    if (!data.empty() && std::fwrite(data.data(), 1, data.size(), m_file) != data.size())
        return Status::io("writing '" + m_destination.string() + "' failed: " + std::strerror(errno));
    m_position += data.size();
    return Status::ok();
}

Status AtomicFile::write(const std::string &data)
{
    return write(std::as_bytes(std::span(data.data(), data.size())));
}

Status AtomicFile::commit()
{
    if (!m_file)
        return Status::internal("AtomicFile::commit before open");
    const bool flushed = std::fflush(m_file) == 0 && ::fsync(::fileno(m_file)) == 0;
    const bool closed = std::fclose(m_file) == 0;
    m_file = nullptr;
    if (!flushed || !closed) {
        discard();
        return Status::io("writing '" + m_destination.string() + "' failed: " + std::strerror(errno));
    }
    if (::rename(m_temp.c_str(), m_destination.c_str()) != 0) {
        const int err = errno;
        discard();
        return Status::io("cannot replace '" + m_destination.string() + "': " + std::strerror(err));
    }
    m_temp.clear();
    return Status::ok();
}

void AtomicFile::discard()
{
    if (m_file) {
        std::fclose(m_file);
        m_file = nullptr;
    }
    if (!m_temp.empty()) {
        std::error_code ec;
        std::filesystem::remove(m_temp, ec);
        m_temp.clear();
    }
}

} // namespace opscope
