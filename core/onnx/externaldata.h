#pragma once
// External tensor data: where a model may point (inside its own folder only) and the shared
// mappings of the files it points at.
//
// ONNX had path-traversal CVEs here (CVE-2022-25882, CVE-2024-27318): a location is refused when it
// is absolute, contains "..", or resolves (through symbolic links) outside the model's folder.

#include "util/mappedfile.h"
#include "util/status.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace opscope {

// The file a location names, after the checks above. `tensorName` is for the message only.
Expected<std::filesystem::path> resolveExternalLocation(const std::filesystem::path &modelDir,
                                                        const std::string &location,
                                                        const std::string &tensorName);

// One mapping per external file, shared by every tensor that lives in it.
class ExternalFiles
{
public:
    explicit ExternalFiles(std::filesystem::path modelDir) : m_modelDir(std::move(modelDir)) {}
    Expected<std::shared_ptr<const MappedFile>> open(const std::string &location,
                                                     const std::string &tensorName);
    const std::filesystem::path &modelDir() const { return m_modelDir; }
    std::size_t fileCount() const { return m_files.size(); }

private:
    std::filesystem::path m_modelDir;
    std::map<std::filesystem::path, std::shared_ptr<const MappedFile>> m_files;
};

} // namespace opscope
