#pragma once
// NumPy .npy files (format versions 1–3, C order, little endian), the exchange format of
// `opscope-cli run` for inputs and outputs.

#include "runtime/runtimetensor.h"
#include "util/status.h"

#include <filesystem>

namespace opscope {

Expected<RuntimeTensor> readNpy(const std::filesystem::path &path);
// Written atomically.
Status writeNpy(const std::filesystem::path &path, const RuntimeTensor &tensor);

} // namespace opscope
