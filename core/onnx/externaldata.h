#pragma once
// External tensor data: where a model may point (inside its own folder only) and the shared
// mappings of the files it points at.
//
// ONNX had path-traversal CVEs here (CVE-2022-25882, CVE-2024-27318): a location is refused when it
// is absolute, contains "..", or resolves (through symbolic links) outside the model's folder.

#include "ir/tensor.h"
#include "util/mappedfile.h"
#include "util/status.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace opscope {

// Embedded weights a stripped parse left out (onnx/strippedweights.h): initializer name → offset
// and length of its bytes in the model file.
using EmbeddedSpans = std::map<std::string, std::pair<std::uint64_t, std::uint64_t>>;

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

    // Embedded weights whose raw_data was left out of the parsed message (onnx/strippedweights.h):
    // the model file and where each lies in it, by initializer name.
    void setEmbedded(std::shared_ptr<const MappedFile> file, EmbeddedSpans spans);
    // The bytes of `name` in the model file when they are `bytes` long, else null. Each is taken
    // once: by the first initializer of that name, the main graph's (imported first).
    std::shared_ptr<const Buffer> takeEmbedded(const std::string &name, std::uint64_t bytes, std::size_t alignment);

private:
    std::filesystem::path m_modelDir;
    std::map<std::filesystem::path, std::shared_ptr<const MappedFile>> m_files;
    std::shared_ptr<const MappedFile> m_embeddedFile;
    EmbeddedSpans m_embedded;
};

} // namespace opscope
