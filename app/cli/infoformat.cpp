#include "infoformat.h"

#include "commands.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace opscope::cli {

std::string humanBytes(std::uint64_t bytes)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

std::string groupedNumber(std::uint64_t value)
{
    std::string digits = std::to_string(value);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

namespace {

std::string shapeText(const ValueSummary &v)
{
    if (!v.rankKnown)
        return v.dims.empty() ? std::string("[?]") : std::string();
    std::string s = "[";
    for (std::size_t i = 0; i < v.dims.size(); ++i)
        s += (i ? "," : "") + v.dims[i];
    return s + "]";
}

std::string dimsText(const std::vector<std::int64_t> &dims)
{
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i)
        s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

void valueRows(std::ostringstream &os, const char *label, const std::vector<ValueSummary> &values)
{
    std::size_t width = 0;
    for (const ValueSummary &v : values)
        width = std::max(width, v.name.size());
    if (values.empty())
        os << label << "(none)\n";
    for (std::size_t i = 0; i < values.size(); ++i) {
        const ValueSummary &v = values[i];
        os << (i == 0 ? std::string(label) : std::string(13, ' ')) << v.name
           << std::string(width - v.name.size() + 2, ' ') << v.dtype << ' ' << shapeText(v) << '\n';
    }
}

nlohmann::ordered_json valueJson(const ValueSummary &v)
{
    nlohmann::ordered_json shape = nullptr;
    if (v.rankKnown) {
        shape = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < v.dims.size(); ++i) {
            // From the dim itself, not its text: a symbol of digits only ("99999999999999999999")
            // stopped `info --json` with an internal error.
            const std::int64_t value = i < v.values.size() ? v.values[i] : -1;
            if (value >= 0)
                shape.push_back(value);
            else if (v.dims[i] == "?")
                shape.push_back(nullptr);
            else
                shape.push_back(v.dims[i]);
        }
    }
    return {{"name", v.name}, {"dtype", v.dtype}, {"shape", shape}};
}

std::string domainName(const std::string &d)
{
    return d.empty() ? std::string("ai.onnx") : d;
}

} // namespace

std::string infoText(const std::string &path, const ModelSummary &s, const std::vector<std::string> &warnings)
{
    std::ostringstream os;
    os << "model        " << path << '\n';
    os << "producer     " << (s.producer.empty() ? std::string("(unknown)") : s.producer) << '\n';
    os << "ir version   " << s.irVersion << '\n';
    os << "opsets       ";
    for (std::size_t i = 0; i < s.opsets.size(); ++i)
        os << (i ? ", " : "") << domainName(s.opsets[i].domain) << ' ' << s.opsets[i].version;
    os << '\n';
    os << "graph        " << (s.graphName.empty() ? std::string("(unnamed)") : s.graphName) << '\n';
    valueRows(os, "inputs       ", s.inputs);
    valueRows(os, "outputs      ", s.outputs);
    os << "nodes        " << groupedNumber(s.nodeCount);
    if (s.nodeCountWithSubgraphs != s.nodeCount)
        os << " (" << groupedNumber(s.nodeCountWithSubgraphs) << " with subgraphs)";
    if (s.functionCount)
        os << ", " << s.functionCount << " local functions";
    os << '\n';
    os << "parameters   " << groupedNumber(s.parameterCount) << " in " << s.initializerCount
       << (s.initializerCount == 1 ? " initializer" : " initializers");
    if (s.constantTensorCount)
        os << " and " << s.constantTensorCount << (s.constantTensorCount == 1 ? " Constant node" : " Constant nodes");
    os << ", " << humanBytes(s.parameterBytes);
    if (s.externalBytes)
        os << " (" << humanBytes(s.externalBytes) << " external)";
    os << '\n';
    os << "shapes       " << (s.allShapesKnown() ? "all known" : "some unknown") << " (" << s.valuesStatic
       << " static, " << s.valuesSymbolic << " symbolic, " << s.valuesUnknown << " unknown"
       // Which kind of unknown: a dim inference could not compute (a Reshape's −1 of a symbolic
       // batch) is not a tensor of unknown rank.
       << (s.valuesUnknown ? ": " + std::to_string(s.valuesUnknown - s.valuesUnknownRank) + " with some dims unknown, " +
                                 std::to_string(s.valuesUnknownRank) + " of unknown rank"
                           : std::string())
       << ")\n";
    if (!s.unknownExamples.empty()) {
        os << "unknown      ";
        for (std::size_t i = 0; i < s.unknownExamples.size(); ++i)
            os << (i ? ", " : "") << oneLine(s.unknownExamples[i]);
        os << (s.valuesUnknown > s.unknownExamples.size() ? ", …" : "") << '\n';
    }

    std::vector<std::pair<std::string, std::size_t>> ops(s.opHistogram.begin(), s.opHistogram.end());
    std::stable_sort(ops.begin(), ops.end(),
                     [](const auto &a, const auto &b) { return a.second > b.second; });
    os << "ops          ";
    std::size_t column = 13;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const std::string item = ops[i].first + " " + std::to_string(ops[i].second);
        if (i > 0 && column + item.size() + 2 > 100) {
            os << ",\n" << std::string(13, ' ');
            column = 13;
        } else if (i > 0) {
            os << ", ";
            column += 2;
        }
        os << item;
        column += item.size();
    }
    os << '\n';

    if (!s.largestInitializers.empty()) {
        const bool constants = std::any_of(s.largestInitializers.begin(), s.largestInitializers.end(),
                                           [](const InitializerSummary &i) { return i.constantNode; });
        os << (constants ? "largest weights (initializers and Constant values)\n" : "largest initializers\n");
        std::size_t width = 4;
        for (const InitializerSummary &i : s.largestInitializers)
            width = std::max(width, i.name.size());
        for (const InitializerSummary &i : s.largestInitializers) {
            const std::string dims = i.dtype + dimsText(i.dims);
            os << "  " << i.name << std::string(width - i.name.size() + 2, ' ') << dims
               << std::string(dims.size() < 28 ? 28 - dims.size() : 1, ' ') << humanBytes(i.bytes)
               << (i.external ? "  (external)" : "") << (i.constantNode ? "  (Constant)" : "") << '\n';
        }
    }
    for (const std::string &w : warnings)
        os << "warning: " << w << '\n';
    return os.str();
}

nlohmann::ordered_json infoJson(const std::string &path, const ModelSummary &s,
                                const std::vector<std::string> &warnings)
{
    nlohmann::ordered_json j;
    j["path"] = path;
    j["producer"] = s.producer;
    j["ir_version"] = s.irVersion;
    j["opsets"] = nlohmann::ordered_json::array();
    for (const OpsetImport &o : s.opsets)
        j["opsets"].push_back({{"domain", domainName(o.domain)}, {"version", o.version}});
    j["graph_name"] = s.graphName;
    j["inputs"] = nlohmann::ordered_json::array();
    for (const ValueSummary &v : s.inputs)
        j["inputs"].push_back(valueJson(v));
    j["outputs"] = nlohmann::ordered_json::array();
    for (const ValueSummary &v : s.outputs)
        j["outputs"].push_back(valueJson(v));
    j["node_count"] = s.nodeCount;
    j["node_count_with_subgraphs"] = s.nodeCountWithSubgraphs;
    j["function_count"] = s.functionCount;
    j["op_histogram"] = nlohmann::ordered_json::object();
    for (const auto &[op, count] : s.opHistogram)
        j["op_histogram"][op] = count;
    j["parameters"] = {{"count", s.parameterCount},
                       {"bytes", s.parameterBytes},
                       {"external_bytes", s.externalBytes},
                       {"initializers", s.initializerCount},
                       {"constant_nodes", s.constantTensorCount}};
    j["largest_initializers"] = nlohmann::ordered_json::array();
    for (const InitializerSummary &i : s.largestInitializers)
        j["largest_initializers"].push_back({{"name", i.name},
                                             {"dtype", i.dtype},
                                             {"shape", i.dims},
                                             {"bytes", i.bytes},
                                             {"external", i.external},
                                             {"constant", i.constantNode}});
    j["shapes"] = {{"all_known", s.allShapesKnown()},
                   {"static", s.valuesStatic},
                   {"symbolic", s.valuesSymbolic},
                   {"unknown", s.valuesUnknown},
                   {"unknown_rank", s.valuesUnknownRank},
                   {"unknown_examples", s.unknownExamples}};
    j["warnings"] = warnings;
    return j;
}

} // namespace opscope::cli
