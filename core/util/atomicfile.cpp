#include "util/atomicfile.h"

#include <cerrno>
#include <filesystem>
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

namespace {

const char *kindOf(const std::filesystem::file_status &s)
{
    namespace fs = std::filesystem;
    switch (s.type()) {
    case fs::file_type::directory: return "a folder";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
    }
}

} // namespace

Status AtomicFile::open()
{
    namespace fs = std::filesystem;
    // The file is written beside the destination and renamed over it. A rename replaces whatever
    // the name is: a symbolic link would become a file (the link's target left stale) and a device
    // or FIFO would be replaced by a regular file (-o /dev/null as root breaks the machine). So
    // links are followed to their target, and only regular files are ever replaced.
    std::error_code ec;
    for (int hops = 0; fs::is_symlink(fs::symlink_status(m_destination, ec)); ++hops) {
        if (hops == 40)
            return Status::invalid("'" + m_destination.string() + "' is a loop of symbolic links");
        const fs::path target = fs::read_symlink(m_destination, ec);
        if (ec)
            return Status::io("cannot read the link '" + m_destination.string() + "': " + ec.message());
        m_destination = target.is_absolute() ? target : m_destination.parent_path() / target;
    }
    if (const fs::file_status st = fs::status(m_destination, ec); !ec && fs::exists(st) && !fs::is_regular_file(st))
        return Status::invalid("'" + m_destination.string() + "' is " + kindOf(st) +
                               ", not a file opscope can replace; give the path of a regular file");
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
