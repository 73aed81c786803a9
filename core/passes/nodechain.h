#pragma once
// Builds the new nodes of a rewrite one after another, named after the node they replace. Errors
// are sticky: the first failure is kept and later steps do nothing, so an action checks once, at
// the end, instead of after every node.

#include "ir/model.h"
#include "util/status.h"

#include <string>
#include <vector>

namespace opscope::passes {

class NodeChain
{
public:
    NodeChain(Graph &graph, std::string base) : m_graph(graph), m_base(std::move(base)) {}

    // A new node with one output; returns the output (invalid after an earlier failure).
    ValueId op(const std::string &type, std::vector<ValueId> inputs, std::vector<Attribute> attributes = {},
               const std::string &domain = {});
    ValueId scalar(float value, const std::string &suffix); // a float32 scalar constant
    ValueId ints(std::vector<std::int64_t> values, const std::string &suffix);
    NodeId lastNode() const { return m_last; }

    const Status &status() const { return m_status; }
    bool ok() const { return m_status.isOk(); }
    // Ends the chain: `out`'s readers now read `last` (which takes out's type); then the matched
    // nodes nothing reads any more are erased.
    Status finish(ValueId out, ValueId last, const std::vector<NodeId> &matched);

private:
    Graph &m_graph;
    std::string m_base;
    Status m_status;
    NodeId m_last;
};

} // namespace opscope::passes
