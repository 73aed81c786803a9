#pragma once
// A 64-bit fingerprint of a graph's structure: ops, names, wiring, attributes, types, and the
// identity (not the content) of constant tensors. Equal fingerprints before and after a pass mean
// it changed nothing; hashing buffer ids keeps this O(structure) for multi-GiB models.

#include "ir/graph.h"
#include "ir/model.h"

#include <cstdint>

namespace opscope {

std::uint64_t fingerprint(const Graph &graph);
std::uint64_t fingerprint(const Model &model);

} // namespace opscope
