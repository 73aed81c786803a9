#include "trace/chrometrace.h"

// The reader: streamed in chunks with simdjson On-Demand straight from the file's mapping (a
// 10M-event trace is a ~1 GB file), opscope's own traces, Perfetto's and PyTorch's (Kineto).

#include "ir/opcategory.h"
#include "util/mappedfile.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <simdjson.h>
#include <tuple>
#include <unordered_map>

namespace opscope::trace {

namespace {

namespace od = simdjson::ondemand;

constexpr double kAdjacent = 2e-9; // seconds
constexpr std::uint32_t kNone = 0xFFFFFFFFu;

// Strings seen while reading, each stored once: 10M events name a few thousand nodes.
class StringTable
{
public:
    std::uint32_t intern(std::string_view s)
    {
        const auto it = m_index.find(s);
        if (it != m_index.end())
            return it->second;
        m_list.emplace_back(s);
        const auto id = std::uint32_t(m_list.size() - 1);
        m_index.emplace(m_list.back(), id);
        return id;
    }
    const std::string &operator[](std::uint32_t id) const { return m_list[id]; }

private:
    std::deque<std::string> m_list; // stable addresses: the index's keys view into it
    std::unordered_map<std::string_view, std::uint32_t> m_index;
};

// One span as read: 40 bytes, strings by id (a DOM and six std::strings per event made a 10M-event
// trace need ~10 GB).
struct Raw
{
    double start, end;
    std::uint32_t pid, tid, name, cat, op, shapes, detail; // op/shapes/cat/detail: kNone when absent
};

struct Flow
{
    double start = -1, end = -1;
    std::uint32_t fromPid = 0, fromTid = 0, toPid = 0, toTid = 0;
    std::uint64_t bytes = 0;
    bool launch = false; // a host call → the device work it started, not a transfer of data
};

// pid/tid/id are numbers in Chrome's traces and strings in some profilers'.
std::string idText(od::value v)
{
    od::json_type type;
    if (v.type().get(type))
        return "0";
    if (type == od::json_type::string) {
        std::string_view s;
        return v.get_string().get(s) ? std::string("0") : std::string(s);
    }
    if (type == od::json_type::number) {
        std::int64_t i = 0;
        if (!v.get_int64().get(i))
            return std::to_string(i);
        double d = 0;
        if (!v.get_double().get(d) && std::isfinite(d) && std::fabs(d) < 9e18)
            return std::to_string(std::int64_t(d));
    }
    return "0";
}

// Microseconds in the file. Not a number: 0, as a missing field. Beyond ±10^15 µs (31 years) or
// not finite: NaN, and the event is left out — a span of 10^308 µs made a 300-digit makespan.
double seconds(od::value v)
{
    double d = 0.0;
    if (v.get_double().get(d))
        return 0.0;
    return std::isfinite(d) && std::fabs(d) <= 1e15 ? d * 1e-6 : std::numeric_limits<double>::quiet_NaN();
}

std::string_view text_of(od::value v)
{
    std::string_view s;
    return v.get_string().get(s) ? std::string_view() : s;
}

// The category toChromeJson wrote ("fused", "shape/layout"), if `name` is one.
std::optional<std::uint8_t> categoryNamed(std::string_view name)
{
    for (int c = 0; c <= int(OpCategory::Other); ++c)
        if (opCategoryName(OpCategory(c)) == name)
            return std::uint8_t(c);
    return std::nullopt;
}

// "queue 3": the name toChromeJson gives a lane without a label of its own.
bool isQueueName(std::string_view name)
{
    return name.starts_with("queue ") && name.size() > 6 &&
           name.substr(6).find_first_not_of("0123456789") == std::string_view::npos;
}

Status jsonError(simdjson::error_code e)
{
    return Status::invalid(std::string("not a Chrome trace (JSON error: ") + simdjson::error_message(e) + ")");
}

struct Reader
{
    StringTable strings, ids;
    std::vector<Raw> raws;
    std::map<std::uint32_t, std::string> processNames;
    std::map<std::uint32_t, std::int64_t> processOrder; // process_sort_index
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> threadNames;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Raw>> open; // B events per thread
    std::map<std::string, Flow> flows;
    std::map<std::pair<std::uint32_t, std::string>, std::vector<std::pair<double, double>>> counters; // (pid, name)
    std::string otherName;

    Status event(od::object o)
    {
        std::string_view ph, name, cat, op, shapes, argName, detail;
        std::string pid = "0", tid = "0", id = "0";
        double ts = 0, dur = 0;
        std::int64_t sortIndex = 0;
        bool hasSortIndex = false;
        std::uint64_t bytes = 0;
        double value = 0.0;
        for (auto field : o) {
            std::string_view key;
            if (auto e = field.unescaped_key().get(key))
                return jsonError(e);
            od::value v;
            if (auto e = field.value().get(v))
                return jsonError(e);
            if (key == "ph")
                ph = text_of(v);
            else if (key == "name")
                name = text_of(v);
            else if (key == "cat")
                cat = text_of(v);
            else if (key == "pid")
                pid = idText(v);
            else if (key == "tid")
                tid = idText(v);
            else if (key == "id")
                id = idText(v);
            else if (key == "ts")
                ts = seconds(v);
            else if (key == "dur")
                dur = seconds(v);
            else if (key == "args") {
                od::object args;
                if (v.get_object().get(args))
                    continue;
                for (auto a : args) {
                    std::string_view k;
                    od::value av;
                    if (a.unescaped_key().get(k) || a.value().get(av))
                        break;
                    if (k == "op")
                        op = text_of(av);
                    else if (k == "shapes")
                        shapes = text_of(av);
                    else if (k == "detail")
                        detail = text_of(av);
                    else if (k == "name")
                        argName = text_of(av);
                    else if (k == "sort_index")
                        hasSortIndex = !av.get_int64().get(sortIndex);
                    else if (k == "bytes") {
                        if (av.get_double().get(value))
                            value = 0.0;
                        if (av.get_uint64().get(bytes))
                            bytes = 0;
                    }
                }
            }
        }
        const std::uint32_t p = ids.intern(pid), t = ids.intern(tid);
        auto raw = [&](double start, double end) {
            return Raw{start,
                       end,
                       p,
                       t,
                       strings.intern(name),
                       cat.empty() ? kNone : strings.intern(cat),
                       op.empty() ? kNone : strings.intern(op),
                       shapes.empty() ? kNone : strings.intern(shapes),
                       detail.empty() ? kNone : strings.intern(detail)};
        };
        // Events outside any clock are left out; so are spans that end before they start (a
        // negative duration showed a device −23 % busy).
        if (!std::isfinite(ts))
            return Status::ok();
        if (ph == "X") {
            if (std::isfinite(dur) && dur >= 0.0)
                raws.push_back(raw(ts, ts + dur));
        } else if (ph == "M") {
            if (name == "process_name")
                processNames[p] = std::string(argName);
            else if (name == "process_sort_index" && hasSortIndex)
                processOrder[p] = sortIndex;
            else if (name == "thread_name")
                threadNames[{p, t}] = std::string(argName);
        } else if (ph == "B") {
            open[{p, t}].push_back(raw(ts, ts));
        } else if (ph == "E") {
            auto &stack = open[{p, t}];
            if (!stack.empty()) {
                Raw r = stack.back();
                stack.pop_back();
                r.end = ts;
                if (r.end >= r.start)
                    raws.push_back(r);
            }
        } else if (ph == "C") {
            counters[{p, std::string(name)}].emplace_back(ts, value);
        } else if (ph == "s" || ph == "f") {
            Flow &f = flows[id];
            // opscope's launch arrows, and Kineto's CPU-op → GPU-kernel flows ("ac2g").
            f.launch = f.launch || cat == "launch" || cat == "ac2g";
            if (ph == "s") {
                f.start = ts;
                f.fromPid = p;
                f.fromTid = t;
                f.bytes = bytes;
            } else {
                f.end = ts;
                f.toPid = p;
                f.toTid = t;
            }
        }
        return Status::ok();
    }

    Status events(od::array array)
    {
        for (auto element : array) {
            od::value v;
            if (auto e = element.get(v))
                return jsonError(e);
            od::object o;
            if (v.get_object().get(o))
                continue; // not an event
            OPSCOPE_TRY(event(o));
        }
        return Status::ok();
    }
};

// Events are parsed in chunks of a few MB, each copied into a padded buffer the parser reuses:
// memory is the spans kept, not the file — a 10M-event trace is a ~1 GB file. A byte scanner finds
// the events array (a top-level array, or "traceEvents" in an object) and the commas between its
// elements; strings are skipped with their escapes so a ',' or '[' inside a name is not structure.
constexpr std::size_t kChunkBytes = std::size_t(4) << 20;

Status parseEvents(Reader &in, std::string_view json)
{
    od::parser parser;
    simdjson::padded_string buffer;
    auto parseChunk = [&](std::string_view elements) -> Status {
        if (elements.find_first_not_of(" \t\r\n") == std::string_view::npos)
            return Status::ok();
        std::string wrapped;
        wrapped.reserve(elements.size() + 2);
        wrapped += '[';
        wrapped += elements;
        wrapped += ']';
        buffer = simdjson::padded_string(wrapped);
        od::document doc;
        if (auto e = parser.iterate(buffer).get(doc))
            return jsonError(e);
        od::array array;
        if (auto e = doc.get_array().get(array))
            return jsonError(e);
        return in.events(array);
    };
    auto parseOther = [&](std::string_view object) {
        simdjson::padded_string text(object);
        od::document doc;
        od::object other;
        if (parser.iterate(text).get(doc) || doc.get_object().get(other))
            return;
        for (auto o : other) {
            std::string_view k;
            od::value v;
            if (o.unescaped_key().get(k) || o.value().get(v))
                break;
            if (k == "name")
                in.otherName = std::string(text_of(v));
        }
    };
    int depth = 0, eventsDepth = -1, otherDepth = -1;
    bool inString = false, escaped = false, sawEvents = false, keyIsEvents = false, keyIsOther = false;
    std::size_t stringStart = 0, chunkStart = 0, otherStart = 0;
    std::string_view lastString;
    for (std::size_t i = 0; i < json.size(); ++i) {
        const char c = json[i];
        if (inString) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"') {
                inString = false;
                lastString = json.substr(stringStart, i - stringStart);
            }
            continue;
        }
        switch (c) {
        case '"':
            inString = true;
            stringStart = i + 1;
            break;
        case ':':
            if (depth == 1) { // a key of the top-level object
                keyIsEvents = lastString == "traceEvents";
                keyIsOther = lastString == "otherData";
            }
            break;
        case '[':
        case '{':
            if (depth == 0 && c == '[') { // the trace is the array of events itself
                eventsDepth = 1;
                chunkStart = i + 1;
                sawEvents = true;
            } else if (depth == 1 && eventsDepth < 0 && c == '[' && keyIsEvents) {
                eventsDepth = 2;
                chunkStart = i + 1;
                sawEvents = true;
            } else if (depth == 1 && c == '{' && keyIsOther) {
                otherDepth = 2;
                otherStart = i;
            }
            if (++depth > 512)
                return Status::invalid("not a Chrome trace: nested more than 512 levels deep");
            break;
        case ']':
        case '}':
            if (depth == 0)
                return Status::invalid("not a Chrome trace (JSON error: unbalanced brackets)");
            if (depth == eventsDepth && c == ']') { // the end of the events array
                OPSCOPE_TRY(parseChunk(json.substr(chunkStart, i - chunkStart)));
                eventsDepth = -2; // done; a second traceEvents is ignored
            } else if (depth == otherDepth && c == '}') {
                parseOther(json.substr(otherStart, i + 1 - otherStart));
                otherDepth = -1;
            }
            if (depth == 1)
                keyIsEvents = keyIsOther = false;
            --depth;
            break;
        case ',':
            if (depth == eventsDepth && i - chunkStart >= kChunkBytes) {
                OPSCOPE_TRY(parseChunk(json.substr(chunkStart, i - chunkStart)));
                chunkStart = i + 1;
            }
            break;
        default: break;
        }
    }
    if (inString || depth != 0)
        return Status::invalid("not a Chrome trace (JSON error: the text ends inside a string or a bracket)");
    if (!sawEvents || eventsDepth != -2)
        return Status::invalid("not a Chrome trace: expected an array of events or an object with \"traceEvents\"");
    return Status::ok();
}

Expected<Trace> parse(std::string_view json, const std::string &name)
{
    Reader in;
    OPSCOPE_TRY(parseEvents(in, json));

    std::vector<Raw> &raws = in.raws;
    double t0 = raws.empty() ? 0.0 : raws.front().start;
    for (const Raw &r : raws)
        t0 = std::min(t0, r.start);
    std::sort(raws.begin(), raws.end(), [](const Raw &a, const Raw &b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end; // parents before children
    });

    Trace t;
    t.name = !name.empty() ? name : !in.otherName.empty() ? in.otherName : std::string("imported trace");
    std::vector<std::uint32_t> kept(0); // read string id → Trace string id
    auto intern = [&](std::uint32_t id) {
        if (id >= kept.size())
            kept.resize(std::size_t(id) + 1, kNone);
        if (kept[id] == kNone)
            kept[id] = t.intern(in.strings[id]);
        return kept[id];
    };
    // Lanes: per (pid, tid), nested spans on deeper lanes.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<double>> stackEnds;
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::size_t>, std::size_t> laneIndex;
    std::map<std::string, std::uint32_t> queueOf;
    std::map<std::uint32_t, std::uint32_t> queuesOf;
    std::unordered_map<std::uint32_t, std::uint8_t> categories;
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
            const auto p = in.processNames.find(r.pid);
            const std::string device = p != in.processNames.end() ? p->second : "process " + in.ids[r.pid];
            const std::string threadKey =
                in.ids[r.pid] + "/" + in.ids[r.tid] + (depth ? "#" + std::to_string(depth) : "");
            // Queues count per process: a device's first thread is its queue 0 again after a round trip.
            const auto q = queueOf.emplace(threadKey, queuesOf[r.pid]++).first->second;
            // A thread's own name where it says more than opscope's "queue N" ("stream 7").
            std::string label;
            if (const auto n = in.threadNames.find({r.pid, r.tid});
                depth == 0 && n != in.threadNames.end() && !isQueueName(n->second))
                label = n->second;
            t.lanes.push_back({device, q, {}, std::move(label)});
            it = laneIndex.emplace(key, t.lanes.size() - 1).first;
        }
        // opscope's own traces name the op type in args; others' (PyTorch's) name the op itself.
        const std::uint32_t op = r.op != kNone ? r.op : r.cat == kNone ? r.name : r.cat;
        const std::uint32_t typed = r.op != kNone ? r.op : r.name;
        // Waits and host setup carry the category "idle" (what toChromeJson writes for them): not
        // work, whatever their op is called.
        const bool idle = r.cat != kNone && in.strings[r.cat] == opCategoryName(OpCategory(kIdleCategory));
        // opscope's own traces name the category ("fused" for ai.opscope's NhwcConv, whose domain
        // the file does not carry: recomputed from the op alone it became "other", drawn grey).
        const auto written = r.cat == kNone ? std::optional<std::uint8_t>() : categoryNamed(in.strings[r.cat]);
        const auto cat = idle      ? kIdleCategory
                         : written ? *written
                                   : categories.emplace(typed, std::uint8_t(opCategory(in.strings[typed], ""))).first->second;
        t.lanes[it->second].spans.push_back({r.start - t0, r.end - t0, intern(r.name), intern(op), cat,
                                             r.shapes == kNone ? kNoString : intern(r.shapes),
                                             r.detail == kNone ? kNoString : intern(r.detail)});
    }
    raws = {}; // the spans are in the lanes now
    for (const auto &[id, f] : in.flows) {
        if (f.start < 0 || f.end < 0)
            continue;
        const auto from = laneIndex.find({f.fromPid, f.fromTid, 0}), to = laneIndex.find({f.toPid, f.toTid, 0});
        if (from == laneIndex.end() || to == laneIndex.end())
            continue;
        if (f.launch)
            t.launches.push_back({f.start - t0, f.end - t0, std::uint32_t(from->second), std::uint32_t(to->second)});
        else
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
        const auto order = in.processOrder.find(pid);
        const std::string &p = in.ids[pid], &q = in.ids[tid];
        keyed.push_back(
            {Key(order != in.processOrder.end() ? order->second : numeric(p), numeric(p), p, numeric(q), q, depth),
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
    for (Launch &x : t.launches) {
        x.fromLane = newIndex[x.fromLane];
        x.toLane = newIndex[x.toLane];
    }
    for (auto &[key, samples] : in.counters) {
        const auto p = in.processNames.find(key.first);
        Counter c{p != in.processNames.end() ? p->second : "process " + in.ids[key.first], key.second, {}};
        std::stable_sort(samples.begin(), samples.end(),
                         [](const auto &a, const auto &b) { return a.first < b.first; });
        for (const auto &[ts, value] : samples)
            c.samples.emplace_back(ts - t0, value);
        t.counters.push_back(std::move(c));
    }
    return t;
}

} // namespace

Expected<Trace> fromChromeJson(const std::string &text, const std::string &name)
{
    return parse(text, name);
}

Expected<Trace> readChromeTrace(const std::filesystem::path &path)
{
    Expected<std::shared_ptr<const MappedFile>> file = MappedFile::open(path);
    if (!file)
        return file.status();
    const std::span<const std::byte> bytes = (*file)->bytes();
    // Read in place from the mapping: only the chunk being parsed is copied.
    Expected<Trace> t = parse(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()), {});
    if (!t)
        return t.status().withContext("'" + path.string() + "'");
    return t;
}

} // namespace opscope::trace
