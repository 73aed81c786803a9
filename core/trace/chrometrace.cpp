#include "trace/chrometrace.h"

#include "util/mappedfile.h"

#include "ir/opcategory.h"
#include "util/atomicfile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <tuple>
#include <map>
#include <simdjson.h>
#include <unordered_map>

namespace opscope::trace {

namespace {

// JSON string escaping for names (streamed: a DOM of a million events would take seconds).
void appendString(std::string &out, std::string_view s)
{
    out += '"';
    for (const char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

void appendNumber(std::string &out, double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    out += buf;
}

} // namespace

std::string toChromeJson(const Trace &trace)
{
    // Processes numbered in lane order (not by name), with sort indices, so this reader, Chrome
    // and Perfetto show them in the order they were recorded: run by run, device by device.
    std::map<std::string, int> pids;
    std::vector<std::string> devices;
    for (const Lane &l : trace.lanes)
        if (pids.emplace(l.device, int(pids.size()) + 1).second)
            devices.push_back(l.device);
    std::string out;
    out.reserve(64 + 130 * trace.lanes.size() + [&] {
        std::size_t n = 0;
        for (const Lane &l : trace.lanes)
            n += l.spans.size() * 140;
        return n;
    }());
    out += "{\"traceEvents\":[";
    bool first = true;
    auto begin = [&] {
        if (!first)
            out += ",\n";
        first = false;
    };
    for (const std::string &device : devices) {
        const std::string pid = std::to_string(pids[device]);
        begin();
        out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"args\":{\"name\":";
        appendString(out, device);
        out += "}}";
        begin();
        out += "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + pid + ",\"args\":{\"sort_index\":" +
               pid + "}}";
    }
    for (const Lane &l : trace.lanes) {
        const std::string ids =
            ",\"pid\":" + std::to_string(pids[l.device]) + ",\"tid\":" + std::to_string(l.queue + 1);
        begin();
        out += "{\"name\":\"thread_name\",\"ph\":\"M\"" + ids + ",\"args\":{\"name\":\"queue " +
               std::to_string(l.queue) + "\"}}";
        for (const Span &s : l.spans) {
            begin();
            out += "{\"name\":";
            appendString(out, trace.strings[s.name]);
            out += ",\"cat\":";
            appendString(out, opCategoryName(OpCategory(s.category)));
            out += ",\"ph\":\"X\",\"ts\":";
            appendNumber(out, s.start * 1e6);
            out += ",\"dur\":";
            appendNumber(out, (s.end - s.start) * 1e6);
            out += ids + ",\"args\":{\"op\":";
            appendString(out, trace.strings[s.op]);
            if (s.shapes != kNoString) {
                out += ",\"shapes\":";
                appendString(out, trace.strings[s.shapes]);
            }
            out += "}}";
        }
    }
    int flow = 0;
    for (const Transfer &t : trace.transfers) {
        const Lane &from = trace.lanes[t.fromLane], &to = trace.lanes[t.toLane];
        ++flow;
        begin();
        out += "{\"name\":\"transfer\",\"cat\":\"transfer\",\"ph\":\"s\",\"id\":" + std::to_string(flow) +
               ",\"ts\":";
        appendNumber(out, t.start * 1e6);
        out += ",\"pid\":" + std::to_string(pids[from.device]) +
               ",\"tid\":" + std::to_string(from.queue + 1) +
               ",\"args\":{\"bytes\":" + std::to_string(t.bytes) + "}}";
        begin();
        out += "{\"name\":\"transfer\",\"cat\":\"transfer\",\"ph\":\"f\",\"bp\":\"e\",\"id\":" +
               std::to_string(flow) + ",\"ts\":";
        appendNumber(out, t.end * 1e6);
        out +=
            ",\"pid\":" + std::to_string(pids[to.device]) + ",\"tid\":" + std::to_string(to.queue + 1) + "}";
    }
    out += "],\"displayTimeUnit\":\"ms\",\"otherData\":{\"name\":";
    appendString(out, trace.name);
    out += "}}";
    return out;
}

Status writeChromeTrace(const Trace &trace, const std::filesystem::path &path)
{
    AtomicFile file(path);
    OPSCOPE_TRY(file.open());
    OPSCOPE_TRY(file.write(toChromeJson(trace)));
    return file.commit();
}

namespace {

namespace dom = simdjson::dom;

constexpr double kAdjacent = 2e-9; // seconds

// pid/tid are numbers in Chrome's traces and strings in some profilers'.
std::string idText(dom::element v)
{
    std::string_view s;
    if (!v.get_string().get(s))
        return std::string(s);
    std::int64_t i = 0;
    if (!v.get_int64().get(i))
        return std::to_string(i);
    double d = 0;
    if (!v.get_double().get(d))
        return std::to_string(std::int64_t(d));
    return "0";
}

std::string stringField(dom::object o, const char *key)
{
    std::string_view s;
    return o[key].get_string().get(s) ? std::string() : std::string(s);
}

double secondsField(dom::object o, const char *key)
{
    double d = 0.0;
    return o[key].get_double().get(d) ? 0.0 : d * 1e-6; // microseconds in the file
}

struct Raw
{
    double start, end;
    std::string pid, tid, name, cat;
    std::string op, shapes; // args written by opscope (other tools' traces leave them empty)
};

void readArgs(dom::object &o, Raw &r)
{
    dom::object args;
    if (o["args"].get_object().get(args))
        return;
    r.op = stringField(args, "op");
    r.shapes = stringField(args, "shapes");
}

Expected<Trace> parse(const simdjson::padded_string &text, const std::string &name)
{
    dom::parser parser;
    dom::element doc;
    if (const auto error = parser.parse(text).get(doc))
        return Status::invalid(std::string("not a Chrome trace (JSON error: ") +
                               simdjson::error_message(error) + ")");
    dom::array events;
    if (doc.get_array().get(events) && doc["traceEvents"].get_array().get(events))
        return Status::invalid(
            "not a Chrome trace: expected an array of events or an object with \"traceEvents\"");

    std::map<std::string, std::string> processNames;
    std::map<std::string, std::int64_t> processOrder; // process_sort_index
    std::vector<Raw> raws;
    raws.reserve(events.size());
    std::map<std::pair<std::string, std::string>, std::vector<Raw>> open; // B events per thread
    struct Flow
    {
        double start = -1, end = -1;
        std::string fromPid, fromTid, toPid, toTid;
        std::uint64_t bytes = 0;
    };
    std::map<std::string, Flow> flows;
    for (dom::element e : events) {
        dom::object o;
        if (e.get_object().get(o))
            continue;
        const std::string ph = stringField(o, "ph");
        dom::element field;
        const std::string pid = o["pid"].get(field) ? "0" : idText(field);
        const std::string tid = o["tid"].get(field) ? "0" : idText(field);
        const double ts = secondsField(o, "ts");
        if (ph == "X") {
            raws.push_back({ts,
                            ts + secondsField(o, "dur"),
                            pid,
                            tid,
                            stringField(o, "name"),
                            stringField(o, "cat"),
                            {},
                            {}});
            readArgs(o, raws.back());
        } else if (ph == "M") {
            dom::object args;
            std::int64_t index = 0;
            if (stringField(o, "name") == "process_name" && !o["args"].get_object().get(args))
                processNames[pid] = stringField(args, "name");
            else if (stringField(o, "name") == "process_sort_index" && !o["args"].get_object().get(args) &&
                     !args["sort_index"].get_int64().get(index))
                processOrder[pid] = index;
        } else if (ph == "B") {
            open[{pid, tid}].push_back(
                {ts, ts, pid, tid, stringField(o, "name"), stringField(o, "cat"), {}, {}});
            readArgs(o, open[{pid, tid}].back());
        } else if (ph == "E") {
            auto &stack = open[{pid, tid}];
            if (!stack.empty()) {
                Raw r = stack.back();
                stack.pop_back();
                r.end = ts;
                raws.push_back(r);
            }
        } else if (ph == "s" || ph == "f") {
            Flow &f = flows[o["id"].get(field) ? "0" : idText(field)];
            if (ph == "s") {
                f.start = ts;
                f.fromPid = pid;
                f.fromTid = tid;
                dom::object args;
                std::uint64_t bytes = 0;
                if (!o["args"].get_object().get(args) && !args["bytes"].get_uint64().get(bytes))
                    f.bytes = bytes;
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
    t.name = name;
    if (t.name.empty()) {
        dom::object other;
        t.name = !doc["otherData"].get_object().get(other) ? stringField(other, "name") : std::string();
        if (t.name.empty())
            t.name = "imported trace";
    }
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
    std::map<std::string, std::uint32_t> queueOf, queuesOf;
    std::unordered_map<std::string, std::uint8_t> categories;
    for (const Raw &r : raws) {
        auto &ends = stackEnds[{r.pid, r.tid}];
        // ts and dur are rounded separately in the file (to 1 ns here, coarser elsewhere): a span
        // that starts where the previous one ended must not count as nested inside it.
        while (!ends.empty() && ends.back() <= r.start + kAdjacent)
            ends.pop_back();
        const std::size_t depth = ends.size();
        ends.push_back(r.end);
        const auto key = std::tuple(r.pid, r.tid, depth);
        auto it = laneIndex.find(key);
        if (it == laneIndex.end()) {
            const auto p = processNames.find(r.pid);
            const std::string device = p != processNames.end() ? p->second : "process " + r.pid;
            const std::string threadKey = r.pid + "/" + r.tid + (depth ? "#" + std::to_string(depth) : "");
            // Queues count per process: a device's first thread is its queue 0 again after a round trip.
            const auto q = queueOf.emplace(threadKey, queuesOf[r.pid]++).first->second;
            t.lanes.push_back({device, q, {}});
            it = laneIndex.emplace(key, t.lanes.size() - 1).first;
        }
        // opscope's own traces name the op type in args; others' (PyTorch's) name the op itself.
        const std::string &op = !r.op.empty() ? r.op : r.cat.empty() ? r.name : r.cat;
        const std::string &typed = !r.op.empty() ? r.op : r.name;
        const auto cat = categories.emplace(typed, std::uint8_t(opCategory(typed, ""))).first->second;
        t.lanes[it->second].spans.push_back({r.start - t0, r.end - t0, intern(r.name), intern(op), cat,
                                             r.shapes.empty() ? kNoString : intern(r.shapes)});
    }
    for (const auto &[id, f] : flows) {
        if (f.start < 0 || f.end < 0)
            continue;
        const auto from = laneIndex.find({f.fromPid, f.fromTid, 0}),
                   to = laneIndex.find({f.toPid, f.toTid, 0});
        if (from != laneIndex.end() && to != laneIndex.end())
            t.transfers.push_back(
                {f.start - t0, f.end - t0, f.bytes, std::uint32_t(from->second), std::uint32_t(to->second)});
    }
    // Lanes were made in the order of their first event, which interleaves processes whose events
    // start together (the runs of a saved session all start at 0). Order them as the file says:
    // process sort index, else numeric pid, then thread and nesting depth.
    auto numeric = [](const std::string &id) {
        char *end = nullptr;
        const long long v = std::strtoll(id.c_str(), &end, 10);
        return end && *end == '\0' && !id.empty() ? v : std::numeric_limits<long long>::max();
    };
    using Key = std::tuple<long long, long long, std::string, long long, std::string, std::size_t>;
    std::vector<std::pair<Key, std::size_t>> keyed;
    for (const auto &[k, lane] : laneIndex) {
        const auto &[pid, tid, depth] = k;
        const auto order = processOrder.find(pid);
        keyed.push_back({Key(order != processOrder.end() ? order->second : numeric(pid), numeric(pid), pid,
                             numeric(tid), tid, depth),
                         lane});
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<std::uint32_t> newIndex(t.lanes.size());
    std::vector<Lane> sorted;
    sorted.reserve(t.lanes.size());
    for (const auto &[key, lane] : keyed) {
        newIndex[lane] = std::uint32_t(sorted.size());
        sorted.push_back(std::move(t.lanes[lane]));
    }
    t.lanes = std::move(sorted);
    for (Transfer &x : t.transfers) {
        x.fromLane = newIndex[x.fromLane];
        x.toLane = newIndex[x.toLane];
    }
    return t;
}

} // namespace

Expected<Trace> fromChromeJson(const std::string &text, const std::string &name)
{
    return parse(simdjson::padded_string(text), name);
}

Expected<Trace> readChromeTrace(const std::filesystem::path &path)
{
    Expected<std::shared_ptr<const MappedFile>> file = MappedFile::open(path);
    if (!file)
        return file.status();
    const std::span<const std::byte> bytes = (*file)->bytes();
    const simdjson::padded_string text(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    Expected<Trace> t = parse(text, {});
    if (!t)
        return t.status().withContext("'" + path.string() + "'");
    return t;
}

} // namespace opscope::trace
