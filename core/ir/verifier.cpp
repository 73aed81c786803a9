#include "ir/verifier.h"

#include <algorithm>

namespace opscope {
namespace {

using Scope = std::vector<const std::unordered_set<std::string> *>;

class Verifier
{
public:
    explicit Verifier(const VerifyOptions &options) : m_options(options) {}

    void verify(const Graph &g, Scope &outer)
    {
        std::unordered_set<std::string> defined;
        const std::string where = g.name().empty() ? std::string("graph") : "graph '" + g.name() + "'";
        const auto isOuter = [&outer](const std::string &name) {
            return std::any_of(outer.begin(), outer.end(), [&](const auto *s) { return s->count(name) > 0; });
        };

        for (ValueId vid : g.valueIds()) {
            const Value &v = g.value(vid);
            if (v.outerScope) {
                if (outer.empty())
                    error(where + ": tensor '" + v.name +
                          "' is used but no node, initializer or graph input produces it");
                else if (!isOuter(v.name))
                    error(where + ": tensor '" + v.name +
                          "' refers to an enclosing graph, which does not define it");
                continue;
            }
            const bool definedHere =
                v.isGraphInput || v.initializer || v.sparseInitializer || v.producer.valid();
            if (!definedHere) {
                if (!v.uses.empty()) {
                    const Node &user = g.node(v.uses.front().node);
                    error(where + ": node '" + nodeDisplayName(user) + "' (" + user.opType +
                          ") reads tensor '" + v.name +
                          "', which no node, initializer or graph input produces");
                }
                continue;
            }
            if (isOuter(v.name))
                error(where + ": tensor '" + v.name +
                      "' shadows a tensor of an enclosing graph (names must be unique across scopes)");
            defined.insert(v.name);
            if (v.producer.valid()) {
                const Node &p = g.node(v.producer);
                if (!p.alive || v.producerOutput >= p.outputs.size() || p.outputs[v.producerOutput] != vid)
                    error(where + ": tensor '" + v.name + "' names a producer that does not write it");
            }
            for (const Use &u : v.uses) {
                const Node &n = g.node(u.node);
                if (!n.alive || u.inputIndex >= n.inputs.size() || n.inputs[u.inputIndex] != vid)
                    error(where + ": tensor '" + v.name + "' lists a stale use by node '" +
                          nodeDisplayName(n) + "'");
            }
        }

        for (NodeId nid : g.nodeIds()) {
            const Node &n = g.node(nid);
            for (std::uint32_t k = 0; k < n.inputs.size(); ++k) {
                const ValueId in = n.inputs[k];
                if (!in.valid())
                    continue;
                const Value &v = g.value(in);
                if (!v.alive)
                    error(where + ": node '" + nodeDisplayName(n) + "' input " + std::to_string(k) +
                          " refers to removed tensor '" + v.name + "'");
                else if (std::find(v.uses.begin(), v.uses.end(), Use{nid, k}) == v.uses.end())
                    error(where + ": node '" + nodeDisplayName(n) + "' reads '" + v.name +
                          "' but the tensor does not list that use");
            }
            for (std::uint32_t k = 0; k < n.outputs.size(); ++k) {
                const ValueId out = n.outputs[k];
                if (out.valid() && (g.value(out).producer != nid || g.value(out).producerOutput != k))
                    error(where + ": node '" + nodeDisplayName(n) + "' output '" + g.value(out).name +
                          "' has another producer recorded");
            }
        }

        for (ValueId out : g.outputs()) {
            if (!out.valid() || !g.value(out).alive) {
                error(where + ": a graph output refers to a removed tensor");
                continue;
            }
            const Value &v = g.value(out);
            if (!v.isGraphInput && !v.initializer && !v.producer.valid() && !v.outerScope)
                error(where + ": graph output '" + v.name + "' is not produced by any node");
        }

        const auto order = g.topologicalOrder();
        if (!order)
            error(order.status().message());

        outer.push_back(&defined);
        for (NodeId nid : g.nodeIds()) {
            for (const Attribute &a : g.node(nid).attributes) {
                if (a.g)
                    verify(*a.g, outer);
                for (const ClonePtr<Graph> &sub : a.graphs)
                    if (sub)
                        verify(*sub, outer);
            }
        }
        outer.pop_back();
    }

    Status result() const
    {
        if (m_errors.empty())
            return Status::ok();
        std::string msg;
        for (std::size_t i = 0; i < m_errors.size(); ++i)
            msg += (i ? "; " : "") + m_errors[i];
        if (m_dropped)
            msg += "; and " + std::to_string(m_dropped) + " more problems";
        return Status::invalid(msg);
    }

private:
    void error(std::string message)
    {
        if (m_errors.size() < m_options.maxErrors)
            m_errors.push_back(std::move(message));
        else
            ++m_dropped;
    }

    VerifyOptions m_options;
    std::vector<std::string> m_errors;
    std::size_t m_dropped = 0;
};

} // namespace

Status verifyGraph(const Graph &graph, const VerifyOptions &options)
{
    Verifier v(options);
    Scope outer;
    v.verify(graph, outer);
    return v.result();
}

} // namespace opscope
