#include "onnx/externaldata.h"

namespace opscope {

Expected<std::filesystem::path> resolveExternalLocation(const std::filesystem::path &modelDir,
                                                        const std::string &location,
                                                        const std::string &tensorName)
{
    namespace fs = std::filesystem;
    const std::string what = "tensor '" + tensorName + "': external data location '" + location + "'";
    if (location.empty())
        return Status::invalid(what + " is empty");
    if (location.find('\0') != std::string::npos)
        return Status::invalid(what + " contains a NUL character");
    const fs::path rel(location);
    if (rel.is_absolute())
        return Status::invalid(what + " is an absolute path; it must be relative to the model's folder");
    for (const fs::path &part : rel)
        if (part == "..")
            return Status::invalid(what + " contains '..'; it must stay inside the model's folder");

    std::error_code ec;
    const fs::path base = fs::canonical(modelDir.empty() ? fs::path(".") : modelDir, ec);
    if (ec)
        return Status::io("cannot resolve the model's folder '" + modelDir.string() + "': " + ec.message());
    const fs::path target = fs::canonical(base / rel, ec);
    if (ec)
        return Status::notFound(what + ": file '" + (base / rel).string() + "' does not exist");
    // Compare path components: "/models/a" must not accept "/models/ab/...".
    auto b = base.begin();
    auto t = target.begin();
    for (; b != base.end(); ++b, ++t)
        if (t == target.end() || *t != *b)
            return Status::invalid(what + " resolves to '" + target.string() +
                                   "', outside the model's folder (through a symbolic link)");
    if (!fs::is_regular_file(target, ec))
        return Status::invalid(what + " is not a regular file");
    return target;
}

Expected<std::shared_ptr<const MappedFile>> ExternalFiles::open(const std::string &location,
                                                                const std::string &tensorName)
{
    const Expected<std::filesystem::path> path = resolveExternalLocation(m_modelDir, location, tensorName);
    if (!path)
        return path.status();
    const auto it = m_files.find(*path);
    if (it != m_files.end())
        return it->second;
    Expected<std::shared_ptr<const MappedFile>> file = MappedFile::open(*path);
    if (!file)
        return file.status();
    m_files.emplace(*path, *file);
    return file;
}

void ExternalFiles::setEmbedded(std::shared_ptr<const MappedFile> file,
                                EmbeddedSpans spans)
{
    m_embeddedFile = std::move(file);
    m_embedded = std::move(spans);
}

std::shared_ptr<const Buffer> ExternalFiles::takeEmbedded(const std::string &name, std::uint64_t bytes, std::size_t alignment)
{
    const auto it = m_embedded.find(name);
    if (!m_embeddedFile || it == m_embedded.end())
        return nullptr;
    const auto [offset, length] = it->second;
    m_embedded.erase(it);
    if (length != bytes || offset > m_embeddedFile->size() || length > m_embeddedFile->size() - offset)
        return nullptr;
    return Buffer::fromMapping(m_embeddedFile, offset, length, alignment);
}

} // namespace opscope
