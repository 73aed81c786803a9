#include "trace/chrometrace.h"

#include "ir/opcategory.h"
#include "util/atomicfile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

namespace opscope::trace {

std::string toChromeJson(const Trace &trace)
{
    using nlohmann::json;
    json events = json::array();
    std::map<std::string, int> pids;
    for (const Lane &l : trace.lanes)
        pids.emplace(l.device, int(pids.size()) + 1);
    for (const auto &[device, pid] : pids)
        events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", device}}}});
    for (const Lane &l : trace.lanes) {
        const int pid = pids[l.device];
        const int tid = int(l.queue) + 1;
        events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                          {"args", {{"name", "queue " + std::to_string(l.queue)}}}});
        for (const Span &s : l.spans)
            events.push_back({{"name", trace.strings[s.name]},
                              {"cat", std::string(opCategoryName(OpCategory(s.category)))},
                              {"ph", "X"},
                              {"ts", s.start * 1e6},
                              {"dur", (s.end - s.start) * 1e6},
                              {"pid", pid},
                              {"tid", tid},
                              {"args", {{"op", trace.strings[s.op]}}}});
    }
    int flow = 0;
    for (const Transfer &t : trace.transfers) {
        const Lane &from = trace.lanes[t.fromLane], &to = trace.lanes[t.toLane];
        ++flow;
        events.push_back({{"name", "transfer"}, {"cat", "transfer"}, {"ph", "s"}, {"id", flow}, {"ts", t.start * 1e6},
                          {"pid", pids[from.device]}, {"tid", int(from.queue) + 1}, {"args", {{"bytes", t.bytes}}}});
        events.push_back({{"name", "transfer"}, {"cat", "transfer"}, {"ph", "f"}, {"bp", "e"}, {"id", flow},
                          {"ts", t.end * 1e6}, {"pid", pids[to.device]}, {"tid", int(to.queue) + 1}});
    }
    return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", {{"name", trace.name}}}}.dump();
}

Status writeChromeTrace(const Trace &trace, const std::filesystem::path &path)
{
    AtomicFile file(path);
    OPSCOPE_TRY(file.open());
    OPSCOPE_TRY(file.write(toChromeJson(trace)));
    return file.commit();
}

namespace {

std::string idText(const nlohmann::json &v)
{
    if (v.is_string())
        return v.get<std::string>();
    if (v.is_number_integer())
        return std::to_string(v.get<std::int64_t>());
    if (v.is_number())
        return std::to_string(v.get<double>());
    return "0";
}

struct Raw
{
    double start, end;
    std::string pid, tid, name, cat;
};

} // namespace

Expected<Trace> fromChromeJson(const std::string &text, const std::string &name)
{
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text);
    } catch (const std::exception &e) {
        return Status::invalid(std::string("not a Chrome trace (JSON error: ") + e.what() + ")");
    }
    const nlohmann::json *events = nullptr;
    if (doc.is_array())
        events = &doc;
    else if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array())
        events = &doc["traceEvents"];
    if (!events)
        return Status::invalid("not a Chrome trace: expected an array of events or an object with \"traceEvents\"");

    std::map<std::string, std::string> processNames, threadNames;
    std::vector<Raw> raws;
    std::map<std::pair<std::string, std::string>, std::vector<Raw>> open; // B events per thread
    struct Flow
    {
        double start = -1, end = -1;
        std::string fromPid, fromTid, toPid, toTid;
        std::uint64_t bytes = 0;
    };
    std::map<std::string, Flow> flows;
    for (const nlohmann::json &e : *events) {
        if (!e.is_object())
            continue;
        const std::string ph = e.value("ph", "");
        const std::string pid = e.contains("pid") ? idText(e["pid"]) : "0";
        const std::string tid = e.contains("tid") ? idText(e["tid"]) : "0";
        const double ts = e.contains("ts") && e["ts"].is_number() ? e["ts"].get<double>() * 1e-6 : 0.0;
        if (ph == "M") {
            const std::string what = e.value("name", "");
            const std::string value = e.contains("args") && e["args"].is_object() ? e["args"].value("name", "") : "";
            if (what == "process_name")
                processNames[pid] = value;
            else if (what == "thread_name")
                threadNames[pid + "/" + tid] = value;
        } else if (ph == "X") {
            const double dur = e.contains("dur") && e["dur"].is_number() ? e["dur"].get<double>() * 1e-6 : 0.0;
            raws.push_back({ts, ts + dur, pid, tid, e.value("name", ""), e.value("cat", "")});
        } else if (ph == "B") {
            open[{pid, tid}].push_back({ts, ts, pid, tid, e.value("name", ""), e.value("cat", "")});
        } else if (ph == "E") {
            auto &stack = open[{pid, tid}];
            if (!stack.empty()) {
                Raw r = stack.back();
                stack.pop_back();
                r.end = ts;
                raws.push_back(r);
            }
        } else if (ph == "s" || ph == "f") {
            Flow &f = flows[idText(e.contains("id") ? e["id"] : nlohmann::json(0))];
            if (ph == "s") {
                f.start = ts;
                f.fromPid = pid;
                f.fromTid = tid;
                if (e.contains("args") && e["args"].is_object())
                    f.bytes = e["args"].value("bytes", std::uint64_t(0));
            } else {
                f.end = ts;
                f.toPid = pid;
                f.toTid = tid;
            }
        }
    }
    double t0 = raws.empty() ? 0.0 : raws.front().start;
    for (const Raw &r : raws)
        t0 = std::min(t0, r.start);
    std::sort(raws.begin(), raws.end(), [](const Raw &a, const Raw &b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end; // parents before children
    });

    Trace t;
    t.name = name.empty() ? (doc.is_object() && doc.contains("otherData") && doc["otherData"].is_object()
                                 ? doc["otherData"].value("name", "imported trace")
                                 : "imported trace")
                          : name;
    std::unordered_map<std::string, std::uint32_t> strings;
    auto intern = [&](const std::string &s) {
        const auto [it, inserted] = strings.emplace(s, std::uint32_t(t.strings.size()));
        if (inserted)
            t.strings.push_back(s);
        return it->second;
    };
    // Lanes: per (pid, tid), nested spans on deeper lanes.
    std::map<std::pair<std::string, std::string>, std::vector<double>> stackEnds;
    std::map<std::tuple<std::string, std::string, std::size_t>, std::size_t> laneIndex;
    std::map<std::string, std::uint32_t> queueOf;
    for (const Raw &r : raws) {
        auto &ends = stackEnds[{r.pid, r.tid}];
        while (!ends.empty() && ends.back() <= r.start)
            ends.pop_back();
        const std::size_t depth = ends.size();
        ends.push_back(r.end);
        const auto key = std::tuple(r.pid, r.tid, depth);
        auto it = laneIndex.find(key);
        if (it == laneIndex.end()) {
            const std::string device = processNames.count(r.pid) ? processNames[r.pid] : "process " + r.pid;
            const std::string threadKey = r.pid + "/" + r.tid + (depth ? "#" + std::to_string(depth) : "");
            const auto q = queueOf.emplace(threadKey, std::uint32_t(queueOf.size())).first->second;
            t.lanes.push_back({device, q, {}});
            it = laneIndex.emplace(key, t.lanes.size() - 1).first;
        }
        const std::uint32_t op = intern(r.cat.empty() ? r.name : r.cat);
        t.lanes[it->second].spans.push_back({r.start - t0, r.end - t0, intern(r.name), op,
                                             std::uint8_t(opCategory(r.name, ""))});
    }
    for (const auto &[id, f] : flows) {
        if (f.start < 0 || f.end < 0)
            continue;
        const auto from = laneIndex.find({f.fromPid, f.fromTid, 0}), to = laneIndex.find({f.toPid, f.toTid, 0});
        if (from != laneIndex.end() && to != laneIndex.end())
            t.transfers.push_back({f.start - t0, f.end - t0, f.bytes, std::uint32_t(from->second), std::uint32_t(to->second)});
    }
    return t;
}

Expected<Trace> readChromeTrace(const std::filesystem::path &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Status::notFound("cannot read '" + path.string() + "'");
    std::ostringstream ss;
    ss << in.rdbuf();
    Expected<Trace> t = fromChromeJson(ss.str());
    if (!t)
        return t.status().withContext("'" + path.string() + "'");
    return t;
}

} // namespace opscope::trace
