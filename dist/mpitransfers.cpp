#include "mpitransfers.h"

#include "runtime/kernel.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace opscope::dist {

namespace {

constexpr std::size_t kPiece = std::size_t(1) << 30;
constexpr std::size_t kMaxRank = 32;
constexpr std::size_t kHeader = 2 + kMaxRank; // dtype, rank, dims

thread_local std::string t_waitingText;

Status check(int code, const std::string &what)
{
    return code == MPI_SUCCESS ? Status::ok() : Status::io(what + ": " + mpiError(code));
}

} // namespace

std::vector<CrossRankEdge> crossRankEdges(const Graph &graph, const std::vector<int> &deviceOf,
                                          const std::vector<int> &rankOfDevice)
{
    std::vector<CrossRankEdge> edges;
    const auto rankOf = [&](NodeId n) {
        if (n.index >= deviceOf.size() || deviceOf[n.index] < 0 || std::size_t(deviceOf[n.index]) >= rankOfDevice.size())
            return -1;
        return rankOfDevice[std::size_t(deviceOf[n.index])];
    };
    for (NodeId n : graph.nodeIds()) { // slot order
        const Node &recv = graph.node(n);
        if (recv.opType != "Recv" || recv.inputs.empty() || !recv.inputs[0].valid())
            continue;
        const NodeId send = graph.producer(recv.inputs[0]);
        if (!send.valid())
            continue;
        const int from = rankOf(send), to = rankOf(n);
        if (from < 0 || to < 0 || from == to)
            continue;
        // Named by what the Send hands on (the producer's tensor), as a user knows it.
        const Node &sendNode = graph.node(send);
        const std::string tensor = !sendNode.inputs.empty() && sendNode.inputs[0].valid()
                                       ? graph.value(sendNode.inputs[0]).name
                                       : graph.value(recv.inputs[0]).name;
        edges.push_back({send, n, from, to, tensor, sendNode.name, recv.name});
    }
    return edges;
}

std::vector<std::byte> encodeTensor(const RuntimeTensor &t)
{
    std::vector<std::int64_t> header{std::int64_t(t.dtype()), std::int64_t(t.shape().size())};
    header.insert(header.end(), t.shape().begin(), t.shape().end());
    std::vector<std::byte> out(header.size() * sizeof(std::int64_t) + t.byteSize());
    std::memcpy(out.data(), header.data(), header.size() * sizeof(std::int64_t));
    if (t.byteSize())
        std::memcpy(out.data() + header.size() * sizeof(std::int64_t), t.bytes(), t.byteSize());
    return out;
}

Expected<RuntimeTensor> decodeTensor(std::span<const std::byte> bytes)
{
    std::int64_t head[2];
    if (bytes.size() < sizeof head)
        return Status::invalid("a tensor from another rank is truncated");
    std::memcpy(head, bytes.data(), sizeof head);
    const std::size_t rank = std::size_t(head[1]);
    if (head[1] < 0 || bytes.size() < (2 + rank) * sizeof(std::int64_t))
        return Status::invalid("a tensor from another rank is truncated");
    std::vector<std::int64_t> shape(rank);
    if (rank)
        std::memcpy(shape.data(), bytes.data() + sizeof head, rank * sizeof(std::int64_t));
    Expected<RuntimeTensor> t = RuntimeTensor::allocate(DataType(head[0]), shape);
    if (!t)
        return t.status();
    const std::size_t at = (2 + rank) * sizeof(std::int64_t);
    if (bytes.size() - at != t->byteSize())
        return Status::invalid("a tensor from another rank has " + std::to_string(bytes.size() - at) +
                               " bytes for " + t->shapeText());
    if (t->byteSize())
        std::memcpy(t->mutableBytes(), bytes.data() + at, t->byteSize());
    return t;
}

MpiTransfers::MpiTransfers(MPI_Comm comm, int rank, std::vector<CrossRankEdge> edges,
                           std::chrono::duration<double> timeout)
    : m_comm(comm), m_rank(rank), m_edges(std::move(edges)), m_timeout(timeout)
{
    m_headers.resize(m_edges.size());
    m_spare.resize(m_edges.size());
    for (std::size_t e = 0; e < m_edges.size(); ++e) {
        if (m_edges[e].toRank == m_rank)
            m_byRecv.emplace(m_edges[e].recv.index, e);
        if (m_edges[e].fromRank == m_rank)
            m_bySend.emplace(m_edges[e].send.index, e);
    }
    m_progress = std::thread([this] { progress(); });
}

MpiTransfers::~MpiTransfers()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_cv.notify_all();
    m_progress.join();
}

bool MpiTransfers::receivesRemotely(NodeId recv) const { return m_byRecv.count(recv.index) != 0; }
bool MpiTransfers::sendsRemotely(NodeId send) const { return m_bySend.count(send.index) != 0; }

std::string MpiTransfers::describe(const CrossRankEdge &e) const
{
    return "'" + e.tensor + "' from rank " + std::to_string(e.fromRank) + " to rank " + std::to_string(e.toRank) +
           " (edge " + e.recvName + ")";
}

Status MpiTransfers::awaitArrival(const PreparedNode &recv)
{
    const std::size_t e = m_byRecv.at(recv.node->id.index);
    const CrossRankEdge &edge = m_edges[e];
    const std::string what = "rank " + std::to_string(m_rank) + " receiving " + describe(edge);
    t_waitingText = "opscope-cli: rank " + std::to_string(m_rank) + " was ended while waiting for " +
                    describe(edge) + "\n";
    setWaitingFor(t_waitingText.c_str());
    struct Clear
    {
        ~Clear() { setWaitingFor(nullptr); }
    } clear;
    std::vector<std::int64_t> &header = m_headers[e];
    header.assign(kHeader, 0);
    std::vector<MPI_Request> requests(1);
    OPSCOPE_TRY(check(MPI_Irecv(header.data(), int(kHeader), MPI_INT64_T, edge.fromRank, int(2 * e), m_comm,
                                &requests[0]),
                      what));
    return waitAll(requests, m_timeout, what, Waiting::Spin);
}

Status MpiTransfers::receive(const PreparedNode &recv, KernelContext &ctx)
{
    const std::size_t e = m_byRecv.at(recv.node->id.index);
    const CrossRankEdge &edge = m_edges[e];
    const std::string what = "rank " + std::to_string(m_rank) + " receiving " + describe(edge);
    const std::vector<std::int64_t> &header = m_headers[e];
    if (header.size() != kHeader)
        return Status::internal(what + ": received before its header arrived");
    std::vector<MPI_Request> requests;
    const std::size_t rank = std::size_t(header[1]);
    if (header[1] < 0 || rank > kMaxRank)
        return Status::internal(what + ": a malformed header");
    std::vector<std::int64_t> shape(header.begin() + 2, header.begin() + 2 + std::ptrdiff_t(rank));
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, DataType(header[0]), shape);
    if (!out)
        return out.status();
    std::byte *data = (*out)->mutableBytes();
    const std::size_t bytes = (*out)->byteSize();
    for (std::size_t at = 0; at < bytes; at += kPiece) {
        requests.emplace_back();
        OPSCOPE_TRY(check(MPI_Irecv(data + at, int(std::min(kPiece, bytes - at)), MPI_BYTE, edge.fromRank,
                                    int(2 * e + 1), m_comm, &requests.back()),
                          what));
    }
    return waitAll(requests, m_timeout, what, Waiting::Spin);
}

Status MpiTransfers::send(const PreparedNode &send, const RuntimeTensor &tensor)
{
    if (tensor.dtype() == DataType::String)
        return Status::unsupported("string tensors cannot be sent to another rank");
    if (tensor.shape().size() > kMaxRank)
        return Status::unsupported("tensors of rank above " + std::to_string(kMaxRank) +
                                   " cannot be sent to another rank");
    const auto [first, last] = m_bySend.equal_range(send.node->id.index);
    for (auto it = first; it != last; ++it) {
        const std::size_t e = it->second;
        const CrossRankEdge &edge = m_edges[e];
        // A copy the plan's memory cannot reuse while MPI still reads it: the memory plan knows
        // only this rank's steps, and the Send's tensor dies with its last local reader.
        Pending p;
        p.edge = e;
        p.header.assign(kHeader, 0);
        p.header[0] = std::int64_t(tensor.dtype());
        p.header[1] = std::int64_t(tensor.shape().size());
        std::copy(tensor.shape().begin(), tensor.shape().end(), p.header.begin() + 2);
        const std::size_t bytes = tensor.byteSize();
        {
            std::lock_guard lock(m_mutex);
            auto &spare = m_spare[e];
            if (!spare.empty() && spare.back().second >= bytes) {
                p.data = std::move(spare.back().first);
                p.capacity = spare.back().second;
                spare.pop_back();
            }
        }
        if (!p.data) {
            p.capacity = std::max<std::size_t>(1, bytes);
            p.data.reset(new std::byte[p.capacity]);
        }
        if (bytes)
            std::memcpy(p.data.get(), tensor.bytes(), bytes);
        const std::string what = "rank " + std::to_string(m_rank) + " sending " + describe(edge);
        p.requests.emplace_back();
        OPSCOPE_TRY(check(MPI_Isend(p.header.data(), int(kHeader), MPI_INT64_T, edge.toRank, int(2 * e), m_comm,
                                    &p.requests.back()),
                          what));
        for (std::size_t at = 0; at < bytes; at += kPiece) {
            p.requests.emplace_back();
            OPSCOPE_TRY(check(MPI_Isend(p.data.get() + at, int(std::min(kPiece, bytes - at)), MPI_BYTE, edge.toRank,
                                        int(2 * e + 1), m_comm, &p.requests.back()),
                              what));
        }
        m_messages.fetch_add(1);
        m_bytes.fetch_add(bytes);
        {
            std::lock_guard lock(m_mutex);
            m_pending.push_back(std::move(p));
            m_lastSend = std::chrono::steady_clock::now();
        }
        m_cv.notify_all();
    }
    return Status::ok();
}

void MpiTransfers::progress()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_cv.wait(lock, [this] { return m_stop || !m_pending.empty(); });
        if (m_stop)
            return;
        // MPI moves a large message only while some thread of the sender is inside MPI: without
        // this, a send would wait for the end of the run whenever every queue is computing.
        for (auto it = m_pending.begin(); it != m_pending.end();) {
            int done = 0;
            MPI_Testall(int(it->requests.size()), it->requests.data(), &done, MPI_STATUSES_IGNORE);
            if (done && m_spare[it->edge].size() < 4)
                m_spare[it->edge].emplace_back(std::move(it->data), it->capacity);
            it = done ? m_pending.erase(it) : it + 1;
        }
        if (m_pending.empty()) {
            m_cv.notify_all(); // finishRun
            continue;
        }
        // Right after a send the receiver is often already waiting: poll at once (yielding the
        // core) for a while, then every 50 µs, so a long wait for a busy receiver costs no core.
        const bool recent = std::chrono::steady_clock::now() - m_lastSend < std::chrono::microseconds(500);
        lock.unlock();
        if (recent)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        lock.lock();
    }
}

Status MpiTransfers::finishRun()
{
    std::unique_lock lock(m_mutex);
    // wait_for converts to the clock's integer nanoseconds: past ~292 years that overflowed and a
    // --transfer-timeout of 1e10 s failed at once ("within -2147483648 s").
    const std::chrono::duration<double> bounded(std::min(m_timeout.count(), 1e7));
    const bool done = m_cv.wait_for(lock, bounded, [this] { return m_pending.empty(); });
    if (done)
        return Status::ok();
    const CrossRankEdge &edge = m_edges[m_pending.front().edge];
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3g", m_timeout.count());
    return Status::io("rank " + std::to_string(m_rank) + " sending " + describe(edge) + ": not received within " +
                      seconds + " s (--transfer-timeout)");
}

} // namespace opscope::dist
