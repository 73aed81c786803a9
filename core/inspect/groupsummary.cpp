#include "inspect/groupsummary.h"

#include "inspect/tensorvalues.h"

#include <algorithm>
#include <map>
#include <set>

namespace opscope {

namespace {

std::string count(std::uint64_t n)
{
    // 12,345,678: parameter counts are read at a glance.
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

} // namespace

std::vector<PropertySection> inspectNodeGroup(const Graph &graph, const std::vector<NodeId> &members,
                                              const std::string &path, std::size_t childGroups)
{
    const std::set<NodeId> inside(members.begin(), members.end());
    std::map<std::string, std::size_t> ops;
    std::set<ValueId> constants, readFromOutside, handedOut;
    std::size_t constantNodes = 0;
    for (NodeId id : members) {
        const Node &n = graph.node(id);
        if (n.opType == "Constant" && n.domain.empty()) {
            ++constantNodes; // a weight drawn inside its reader, not an op of the group
            continue;
        }
        ++ops[n.domain.empty() ? n.opType : n.domain + "::" + n.opType];
        for (ValueId in : n.inputs) {
            if (!in.valid())
                continue;
            if (constantValue(graph, in)) {
                constants.insert(in);
                continue;
            }
            const NodeId producer = graph.value(in).producer;
            if (!producer.valid() || !inside.count(producer))
                readFromOutside.insert(in);
        }
        for (ValueId out : n.outputs) {
            if (!out.valid())
                continue;
            bool escapes = graph.isGraphOutput(out);
            for (const Use &use : graph.uses(out))
                escapes = escapes || !inside.count(use.node);
            if (escapes)
                handedOut.insert(out);
        }
    }
    std::uint64_t parameters = 0, parameterBytes = 0;
    for (ValueId v : constants)
        if (const std::optional<Tensor> t = constantValue(graph, v)) {
            parameters += std::uint64_t(std::max<std::int64_t>(0, t->elementCount()));
            parameterBytes += t->byteSize();
        }

    std::vector<PropertySection> out;
    PropertySection group{"Group", {}};
    group.rows.push_back({"scope", path, path});
    group.rows.push_back({"nodes", count(members.size() - constantNodes),
                          constantNodes ? "and " + count(constantNodes) + " Constant nodes holding weights" : ""});
    if (childGroups)
        group.rows.push_back({"groups inside", count(childGroups), {}});
    group.rows.push_back({"parameters", count(parameters), count(constants.size()) + " weight tensors"});
    group.rows.push_back({"parameter bytes", bytesText(parameterBytes), {}});
    group.rows.push_back({"reads from outside", count(readFromOutside.size()) + " values", {}});
    group.rows.push_back({"hands out", count(handedOut.size()) + " values", {}});
    out.push_back(std::move(group));

    std::vector<std::pair<std::string, std::size_t>> byCount(ops.begin(), ops.end());
    std::stable_sort(byCount.begin(), byCount.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
    PropertySection opSection{"Operators", {}};
    for (const auto &[op, n] : byCount)
        opSection.rows.push_back({op, count(n), {}});
    out.push_back(std::move(opSection));
    auto names = [&](const std::set<ValueId> &values, const char *title) {
        PropertySection s{title, {}};
        std::size_t shown = 0;
        for (ValueId v : values) {
            if (++shown > 12) {
                s.rows.push_back({"…", count(values.size() - 12) + " more", {}});
                break;
            }
            const Value &value = graph.value(v);
            s.rows.push_back({value.name, value.type.isKnown() ? value.type.toString() : "unknown type", value.name});
        }
        if (!s.rows.empty())
            out.push_back(std::move(s));
    };
    names(readFromOutside, "Inputs from outside");
    names(handedOut, "Outputs");
    return out;
}

} // namespace opscope
