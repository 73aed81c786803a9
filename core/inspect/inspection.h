#pragma once
// What the inspector shows about a node, an initializer or a tensor, as plain sections of
// (property, value) rows; views/InspectorModel only adapts them.

#include "ir/model.h"
#include "util/systemmemory.h" // bytesText

#include <atomic>
#include <string>
#include <vector>

namespace opscope {

struct PropertyRow
{
    std::string property;
    std::string value;
    std::string tooltip; // schema documentation, full values
};

struct PropertySection
{
    std::string title;
    std::vector<PropertyRow> rows;
};

// Op, domain, name, every attribute (with the schema's default when unset and its documentation),
// inputs and outputs with dtype and shape.
std::vector<PropertySection> inspectNode(const Model &model, const Graph &graph, NodeId node);
// dtype, shape, bytes, where it is stored, min/max/mean/std and a 16-bin histogram (for tensors
// of at most kInlineStatsElements; bigger ones point to the Values tab, which computes them in the
// background).
std::vector<PropertySection> inspectInitializer(const Graph &graph, ValueId value);
// A tensor between nodes: type, producer, consumers.
std::vector<PropertySection> inspectTensor(const Graph &graph, ValueId value);

struct TensorStats
{
    std::int64_t count = 0, nonFinite = 0, nan = 0, inf = 0; // nonFinite = nan + inf
    double min = 0, max = 0, mean = 0, stddev = 0;
    std::vector<std::int64_t> histogram; // 16 bins over [min, max] (finite values)
};
// Numeric tensors only (empty histogram otherwise). Reads every element: a big weight's statistics
// are read from disk (a mapped 1 GiB weight is 1 GiB of I/O), so callers on the GUI thread keep to
// kInlineStatsElements and compute larger ones in the background; `cancel` is polled every 1 M
// elements (a cancelled result has count 0).
TensorStats tensorStats(const Tensor &tensor, const std::atomic<bool> *cancel = nullptr);
inline constexpr std::int64_t kInlineStatsElements = std::int64_t(1) << 22; // 16 MiB of float32

} // namespace opscope
