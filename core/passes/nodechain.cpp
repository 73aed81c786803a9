#include "passes/nodechain.h"

#include "passes/passutil.h"

namespace opscope::passes {

ValueId NodeChain::op(const std::string &type, std::vector<ValueId> inputs, std::vector<Attribute> attributes,
                      const std::string &domain)
{
    if (!m_status.isOk())
        return {};
    Expected<NodeId> n = addNodeWithOutputs(m_graph, type, std::move(inputs), 1, m_base + "_" + type,
                                            std::move(attributes), domain);
    if (!n) {
        m_status = n.status();
        return {};
    }
    m_last = *n;
    return m_graph.node(*n).outputs[0];
}

ValueId NodeChain::scalar(float value, const std::string &suffix)
{
    return addConstant(m_graph, m_base + "_" + suffix, floatTensor({}, {value}));
}

ValueId NodeChain::ints(std::vector<std::int64_t> values, const std::string &suffix)
{
    const auto n = static_cast<std::int64_t>(values.size());
    return addConstant(m_graph, m_base + "_" + suffix, int64Tensor({n}, values));
}

Status NodeChain::finish(ValueId out, ValueId last, const std::vector<NodeId> &matched)
{
    if (!m_status.isOk())
        return m_status;
    m_graph.value(last).type = m_graph.value(out).type;
    OPSCOPE_TRY(replaceValue(m_graph, out, last));
    eraseUnread(m_graph, matched);
    return Status::ok();
}

} // namespace opscope::passes
