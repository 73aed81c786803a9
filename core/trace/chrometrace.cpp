#include "trace/chrometrace.h"

// The writer: a process per device, a thread per lane (its label or "queue N"), complete events,
// flow arrows for transfers and launches, counter tracks. The reader is chrometracereader.cpp.

#include "ir/opcategory.h"
#include "util/atomicfile.h"

#include <cstdio>
#include <map>

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
    for (const Counter &c : trace.counters)
        if (pids.emplace(c.device, int(pids.size()) + 1).second)
            devices.push_back(c.device);
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
        out += "{\"name\":\"thread_name\",\"ph\":\"M\"" + ids + ",\"args\":{\"name\":";
        appendString(out, l.label.empty() ? "queue " + std::to_string(l.queue) : l.label);
        out += "}}";
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
            if (s.detail != kNoString) {
                out += ",\"detail\":";
                appendString(out, trace.strings[s.detail]);
            }
            out += "}}";
        }
    }
    // Flow arrows, a start and a finish event each; Perfetto binds a finish to the slice enclosing
    // its timestamp ("bp":"e"). Transfers carry their bytes; launches are cat "launch".
    int flow = 0;
    const auto arrow = [&](const char *kind, double start, double end, std::uint32_t fromLane, std::uint32_t toLane,
                           const std::string &args) {
        if (fromLane >= trace.lanes.size() || toLane >= trace.lanes.size())
            return;
        const Lane &from = trace.lanes[fromLane], &to = trace.lanes[toLane];
        const std::string head = std::string("{\"name\":\"") + kind + "\",\"cat\":\"" + kind + "\",";
        ++flow;
        begin();
        out += head + "\"ph\":\"s\",\"id\":" + std::to_string(flow) + ",\"ts\":";
        appendNumber(out, start * 1e6);
        out += ",\"pid\":" + std::to_string(pids[from.device]) + ",\"tid\":" + std::to_string(from.queue + 1) + args +
               "}";
        begin();
        out += head + "\"ph\":\"f\",\"bp\":\"e\",\"id\":" + std::to_string(flow) + ",\"ts\":";
        appendNumber(out, end * 1e6);
        out += ",\"pid\":" + std::to_string(pids[to.device]) + ",\"tid\":" + std::to_string(to.queue + 1) + "}";
    };
    for (const Transfer &t : trace.transfers)
        arrow("transfer", t.start, t.end, t.fromLane, t.toLane, ",\"args\":{\"bytes\":" + std::to_string(t.bytes) + "}");
    for (const Launch &x : trace.launches)
        arrow("launch", x.start, x.end, x.fromLane, x.toLane, {});
    for (const Counter &c : trace.counters)
        for (const auto &[t, value] : c.samples) {
            begin();
            out += "{\"name\":";
            appendString(out, c.name);
            out += ",\"ph\":\"C\",\"ts\":";
            appendNumber(out, t * 1e6);
            out += ",\"pid\":" + std::to_string(pids[c.device]) + ",\"args\":{\"bytes\":";
            appendNumber(out, value);
            out += "}}";
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

} // namespace opscope::trace
