#include "layout/layoutio.h"

#include <cmath>
#include <cstring>

namespace opscope::layout {

namespace {

constexpr char kRequestMagic[8] = {'O', 'P', 'S', 'L', 'A', 'Y', 'Q', '1'};
constexpr char kResultMagic[8] = {'O', 'P', 'S', 'L', 'A', 'Y', 'R', '1'};
// Far beyond any layout (a 1e6-point canvas is ~14 m at 100 %): a bigger number is corruption.
constexpr double kMaxCoordinate = 1e9;

class Writer
{
public:
    void bytes(const void *p, std::size_t n) { m_out.append(static_cast<const char *>(p), n); }
    void u64(std::uint64_t v) { bytes(&v, sizeof v); }
    void f64(double v) { bytes(&v, sizeof v); }
    std::string take() { return std::move(m_out); }

private:
    std::string m_out;
};

class Reader
{
public:
    explicit Reader(std::string_view in) : m_in(in) {}
    bool magic(const char (&m)[8])
    {
        if (m_in.size() - m_at < 8 || std::memcmp(m_in.data() + m_at, m, 8) != 0)
            return false;
        m_at += 8;
        return true;
    }
    bool u64(std::uint64_t &v) { return raw(&v, sizeof v); }
    bool f64(double &v) { return raw(&v, sizeof v) && std::isfinite(v) && std::fabs(v) <= kMaxCoordinate; }
    // A count of items of `itemBytes` each that must still fit in what is left.
    bool count(std::uint64_t &v, std::size_t itemBytes)
    {
        return u64(v) && v <= (m_in.size() - m_at) / itemBytes;
    }
    bool atEnd() const { return m_at == m_in.size(); }

private:
    bool raw(void *p, std::size_t n)
    {
        if (m_in.size() - m_at < n)
            return false;
        std::memcpy(p, m_in.data() + m_at, n);
        m_at += n;
        return true;
    }
    std::string_view m_in;
    std::size_t m_at = 0;
};

} // namespace

std::string encodeRequest(const LayoutRequest &request)
{
    Writer w;
    w.bytes(kRequestMagic, 8);
    w.u64(request.fast ? 1 : 0);
    w.u64(request.nodes.size());
    for (const auto &n : request.nodes) {
        w.f64(n.width);
        w.f64(n.height);
    }
    w.u64(request.edges.size());
    for (const auto &e : request.edges) {
        w.u64(e.from);
        w.u64(e.to);
    }
    return w.take();
}

Expected<LayoutRequest> decodeRequest(std::string_view bytes)
{
    Reader r(bytes);
    LayoutRequest q;
    std::uint64_t fast = 0, nodes = 0, edges = 0;
    if (!r.magic(kRequestMagic) || !r.u64(fast) || fast > 1 || !r.count(nodes, 16))
        return Status::invalid("not a layout request (bad header)");
    q.fast = fast == 1;
    q.nodes.resize(nodes);
    for (auto &n : q.nodes)
        if (!r.f64(n.width) || !r.f64(n.height) || n.width < 0 || n.height < 0)
            return Status::invalid("layout request: a node size is not a sane number");
    if (!r.count(edges, 16))
        return Status::invalid("layout request: truncated edge list");
    q.edges.resize(edges);
    for (auto &e : q.edges) {
        std::uint64_t from = 0, to = 0;
        if (!r.u64(from) || !r.u64(to) || from >= nodes || to >= nodes)
            return Status::invalid("layout request: an edge names a node that does not exist");
        e.from = std::size_t(from);
        e.to = std::size_t(to);
    }
    if (!r.atEnd())
        return Status::invalid("layout request: trailing bytes");
    return q;
}

std::string encodeResult(const LayoutResult &result)
{
    Writer w;
    w.bytes(kResultMagic, 8);
    w.f64(result.width);
    w.f64(result.height);
    w.u64(result.centers.size());
    for (const Point &p : result.centers) {
        w.f64(p.x);
        w.f64(p.y);
    }
    w.u64(result.edges.size());
    for (const auto &path : result.edges) {
        w.u64(path.size());
        for (const Point &p : path) {
            w.f64(p.x);
            w.f64(p.y);
        }
    }
    return w.take();
}

Expected<LayoutResult> decodeResult(std::string_view bytes, const LayoutRequest &request)
{
    Reader r(bytes);
    LayoutResult out;
    std::uint64_t centers = 0, edges = 0;
    if (!r.magic(kResultMagic) || !r.f64(out.width) || !r.f64(out.height) || !r.count(centers, 16))
        return Status::invalid("the layout helper's answer is not a layout (bad header)");
    if (centers != request.nodes.size())
        return Status::invalid("the layout helper placed " + std::to_string(centers) + " nodes of " +
                               std::to_string(request.nodes.size()));
    out.centers.resize(centers);
    for (Point &p : out.centers)
        if (!r.f64(p.x) || !r.f64(p.y))
            return Status::invalid("the layout helper's answer is truncated or corrupt (node positions)");
    if (!r.count(edges, 8) || edges != request.edges.size())
        return Status::invalid("the layout helper's answer does not match the request's edges");
    out.edges.resize(edges);
    for (auto &path : out.edges) {
        std::uint64_t points = 0;
        if (!r.count(points, 16))
            return Status::invalid("the layout helper's answer is truncated or corrupt (edge paths)");
        path.resize(points);
        for (Point &p : path)
            if (!r.f64(p.x) || !r.f64(p.y))
                return Status::invalid("the layout helper's answer is truncated or corrupt (edge paths)");
    }
    if (!r.atEnd())
        return Status::invalid("the layout helper's answer has trailing bytes");
    return out;
}

std::uint64_t requestDigest(const LayoutRequest &request)
{
    // FNV-1a over the encoding: cheap, stable, and 64 bits leave collisions to chance alone.
    const std::string bytes = encodeRequest(request);
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

} // namespace opscope::layout
