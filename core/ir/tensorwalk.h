#pragma once
// Every tensor a graph holds: initializers, attribute tensors (Constant values and the like), and
// those of its If/Loop/Scan bodies at any depth. Saving (how many bytes, any external?) and the
// CLI's overwrite check (which files does the model read?) both need exactly this walk.

#include "ir/graph.h"

#include <functional>

namespace opscope {

void forEachTensor(const Graph &graph, const std::function<void(const Tensor &)> &visit);

} // namespace opscope
