#pragma once
// What every fuzz target shares: a scratch folder with files for external data to point at
// (created once per process), and the ONNX-aware mutator.

#include "modelmutator.h"

#include <filesystem>
#include <span>

namespace opscope::fuzz {

// <tmp>/opscope-fuzz-<pid>/ with w.bin (256 bytes), an empty file and a folder `sub`.
const std::filesystem::path &scratchFolder();

inline std::span<const std::byte> asBytes(const std::uint8_t *data, std::size_t size)
{
    return {reinterpret_cast<const std::byte *>(data), size};
}

// Writes `size` bytes to a file in the scratch folder (readers that take a path).
std::filesystem::path writeScratch(const char *name, const std::uint8_t *data, std::size_t size);

} // namespace opscope::fuzz

// Models as input: the structure-aware mutator.
#define OPSCOPE_FUZZ_MODEL_MUTATOR(focus)                                                             \
    extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t *data, std::size_t size,            \
                                                   std::size_t maxSize, unsigned seed)              \
    {                                                                                                \
        return opscope::fuzz::mutateModel(data, size, maxSize, seed, focus);                         \
    }
