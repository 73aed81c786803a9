#include "tracewire.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <cmath>
#include <limits>
#include <numeric>

namespace opscope::dist {

using nlohmann::json;

std::vector<std::byte> traceToBytes(const trace::Trace &t)
{
    json j;
    j["name"] = t.name;
    j["strings"] = t.strings;
    json lanes = json::array();
    for (const trace::Lane &l : t.lanes) {
        json spans = json::array();
        for (const trace::Span &s : l.spans)
            spans.push_back({s.start, s.end, s.name, s.op, s.category, s.shapes});
        lanes.push_back({{"device", l.device}, {"queue", l.queue}, {"spans", std::move(spans)}});
    }
    j["lanes"] = std::move(lanes);
    json transfers = json::array();
    for (const trace::Transfer &x : t.transfers)
        transfers.push_back({x.start, x.end, x.bytes, x.fromLane, x.toLane});
    j["transfers"] = std::move(transfers);
    json counters = json::array();
    for (const trace::Counter &c : t.counters)
        counters.push_back({{"device", c.device}, {"name", c.name}, {"samples", c.samples}});
    j["counters"] = std::move(counters);
    const std::vector<std::uint8_t> packed = json::to_msgpack(j);
    std::vector<std::byte> out(packed.size());
    std::transform(packed.begin(), packed.end(), out.begin(), [](std::uint8_t b) { return std::byte(b); });
    return out;
}

Expected<trace::Trace> traceFromBytes(std::span<const std::byte> bytes)
{
    try {
        const auto *p = reinterpret_cast<const std::uint8_t *>(bytes.data());
        const json j = json::from_msgpack(p, p + bytes.size());
        trace::Trace t;
        t.name = j.at("name").get<std::string>();
        t.strings = j.at("strings").get<std::vector<std::string>>();
        for (const json &l : j.at("lanes")) {
            trace::Lane lane{l.at("device").get<std::string>(), l.at("queue").get<std::uint32_t>(), {}};
            for (const json &s : l.at("spans"))
                lane.spans.push_back({s[0].get<double>(), s[1].get<double>(), s[2].get<std::uint32_t>(),
                                      s[3].get<std::uint32_t>(), s[4].get<std::uint8_t>(), s[5].get<std::uint32_t>()});
            t.lanes.push_back(std::move(lane));
        }
        for (const json &x : j.at("transfers"))
            t.transfers.push_back({x[0].get<double>(), x[1].get<double>(), x[2].get<std::uint64_t>(),
                                   x[3].get<std::uint32_t>(), x[4].get<std::uint32_t>()});
        for (const json &c : j.at("counters"))
            t.counters.push_back({c.at("device").get<std::string>(), c.at("name").get<std::string>(),
                                  c.at("samples").get<std::vector<std::pair<double, double>>>()});
        return t;
    } catch (const std::exception &e) {
        return Status::internal(std::string("a trace from another rank could not be read: ") + e.what());
    }
}

trace::Trace mergeRankTraces(const std::vector<trace::Trace> &traces, const std::vector<double> &shift,
                             const std::vector<CrossRankEdge> &edges, const std::string &name,
                             const std::vector<std::string> &labels)
{
    trace::Trace all;
    all.name = name;
    // (rank, recv name) → the bytes its own recorder saw, (rank, node name) → (lane, span end).
    std::map<std::pair<int, std::string>, std::uint64_t> recvBytes;
    std::map<std::pair<int, std::string>, std::pair<std::uint32_t, double>> spanOf;
    for (std::size_t r = 0; r < traces.size(); ++r) {
        const trace::Trace &t = traces[r];
        const double dt = r < shift.size() ? shift[r] : 0.0;
        const auto base = std::uint32_t(all.lanes.size());
        for (const trace::Lane &l : t.lanes) {
            // Devices are named by rank already ("rank1:cpu:0"); each rank's host becomes a
            // process of its own too, so a rank's setup sits beside its devices.
            trace::Lane lane{l.device == "host" ? "rank" + std::to_string(r) + ":host" : l.device, l.queue, {}};
            for (trace::Span s : l.spans) {
                const std::string &spanName = t.strings[s.name];
                s.start += dt, s.end += dt;
                s.name = all.intern(spanName);
                s.op = all.intern(t.strings[s.op]);
                if (s.shapes != trace::kNoString)
                    s.shapes = all.intern(t.strings[s.shapes]);
                if (s.category != trace::kIdleCategory)
                    spanOf[{int(r), spanName}] = {std::uint32_t(all.lanes.size()), s.end};
                lane.spans.push_back(s);
            }
            all.lanes.push_back(std::move(lane));
        }
        for (trace::Transfer x : t.transfers) {
            if (x.fromLane == x.toLane) {
                // A Recv whose Send ran on another rank: its recorder found no Send; the edge
                // below puts the transfer where it belongs.
                const trace::Lane &to = t.lanes[x.toLane];
                for (const trace::Span &s : to.spans)
                    if (s.end == x.end && s.category != trace::kIdleCategory)
                        recvBytes[{int(r), t.strings[s.name]}] = x.bytes;
                continue;
            }
            x.start += dt, x.end += dt;
            x.fromLane += base;
            x.toLane += base;
            all.transfers.push_back(x);
        }
        for (trace::Counter c : t.counters) {
            for (auto &sample : c.samples)
                sample.first += dt;
            all.counters.push_back(std::move(c));
        }
    }
    for (const CrossRankEdge &e : edges)
        for (const std::string &label : labels) {
        const auto send = spanOf.find({e.fromRank, e.sendName + label});
        const auto recv = spanOf.find({e.toRank, e.recvName + label});
        if (send == spanOf.end() || recv == spanOf.end())
            continue;
        const auto bytes = recvBytes.find({e.toRank, e.recvName + label});
        // The Send's span ends after MPI took the tensor, which a small message may beat to the
        // receiver: the transfer starts no later than the Recv ended.
        all.transfers.push_back({std::min(send->second.second, recv->second.second), recv->second.second,
                                 bytes != recvBytes.end() ? bytes->second : 0, send->second.first,
                                 recv->second.first});
        }
    // Sorted lanes (as Trace::sortLanes), with the transfers following their lanes.
    std::vector<std::uint32_t> order(all.lanes.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const trace::Lane &x = all.lanes[a], &y = all.lanes[b];
        return x.device != y.device ? x.device < y.device : x.queue < y.queue;
    });
    std::vector<std::uint32_t> newIndex(order.size());
    std::vector<trace::Lane> sorted;
    for (std::uint32_t i = 0; i < order.size(); ++i) {
        newIndex[order[i]] = i;
        sorted.push_back(std::move(all.lanes[order[i]]));
    }
    all.lanes = std::move(sorted);
    for (trace::Transfer &x : all.transfers)
        x.fromLane = newIndex[x.fromLane], x.toLane = newIndex[x.toLane];
    for (trace::Lane &l : all.lanes)
        std::stable_sort(l.spans.begin(), l.spans.end(),
                         [](const trace::Span &a, const trace::Span &b) { return a.start < b.start; });
    // On the merged clock the first rank to start is at 0.
    double t0 = std::numeric_limits<double>::infinity();
    for (const trace::Lane &l : all.lanes)
        if (!l.spans.empty())
            t0 = std::min(t0, l.spans.front().start);
    if (std::isfinite(t0) && t0 != 0.0) {
        for (trace::Lane &l : all.lanes)
            for (trace::Span &s : l.spans)
                s.start -= t0, s.end -= t0;
        for (trace::Transfer &x : all.transfers)
            x.start -= t0, x.end -= t0;
        for (trace::Counter &c : all.counters)
            for (auto &sample : c.samples)
                sample.first -= t0;
    }
    return all;
}

} // namespace opscope::dist
