#pragma once
// What a collapsed group holds, for the inspector when the group is selected: its nodes and ops
// by count, the parameters its nodes read (initializers and Constant values, each counted once)
// and what crosses its border — the values it reads from outside and those it hands out. A
// 3,000-node transformer grouped by scope reads as layers this way without opening any.

#include "inspect/inspection.h"

#include <string>
#include <vector>

namespace opscope {

std::vector<PropertySection> inspectNodeGroup(const Graph &graph, const std::vector<NodeId> &members,
                                              const std::string &path, std::size_t childGroups);

} // namespace opscope
