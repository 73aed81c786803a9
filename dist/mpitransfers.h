#pragma once
// Send/Recv between MPI ranks for one partitioned plan (schedule/partition.h). An edge is a Recv
// whose Send runs on another rank; edges are numbered in Recv slot order, so every rank numbers
// them alike from the same partitioned graph. Edge e's messages carry tags 2e (header: element
// type and shape) and 2e+1 (the bytes, in pieces below MPI's int counts) on a communicator of their
// own: MPI keeps messages of one (source, tag) in order, so runs never mix and the two sides may
// post in any order. Sends never wait for the receiver — both ranks' queues may be waiting for
// each other's later steps — and a receive that waits past the timeout ends the job, naming the
// edge, instead of hanging.
//
//     rank 0: … ─► x ─► Send ══ MPI_Isend (2e, 2e+1) ══╗
//     rank 1:                                         ╚═► Recv (MPI_Irecv into its arena) ─► …

#include "mpicontext.h"
#include "runtime/executor.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace opscope::dist {

struct CrossRankEdge
{
    NodeId send, recv; // in the partitioned graph
    int fromRank = 0, toRank = 0;
    std::string tensor; // the value sent
    std::string sendName, recvName;
};

// Every Recv of `graph` whose Send's device is on another rank, in Recv slot order.
std::vector<CrossRankEdge> crossRankEdges(const Graph &graph, const std::vector<int> &deviceOf,
                                          const std::vector<int> &rankOfDevice);

// A tensor as bytes and back: feeds and outputs that travel between ranks outside a plan.
std::vector<std::byte> encodeTensor(const RuntimeTensor &t);
Expected<RuntimeTensor> decodeTensor(std::span<const std::byte> bytes);

class MpiTransfers final : public RemoteTransfers
{
public:
    // `comm`: a communicator for this plan's transfers alone (the caller dups it, on every rank).
    MpiTransfers(MPI_Comm comm, int rank, std::vector<CrossRankEdge> edges, std::chrono::duration<double> timeout);
    ~MpiTransfers() override;

    bool receivesRemotely(NodeId recv) const override;
    bool sendsRemotely(NodeId send) const override;
    Status awaitArrival(const PreparedNode &recv) override;
    Status receive(const PreparedNode &recv, KernelContext &ctx) override;
    Status send(const PreparedNode &send, const RuntimeTensor &tensor) override;

    // At the end of a run: every send it posted delivered and its buffer freed.
    Status finishRun();

    const std::vector<CrossRankEdge> &edges() const { return m_edges; }
    std::uint64_t messagesSent() const { return m_messages.load(); } // edges sent, all runs
    std::uint64_t bytesSent() const { return m_bytes.load(); }

private:
    struct Pending
    {
        std::vector<MPI_Request> requests;
        std::vector<std::int64_t> header;
        std::unique_ptr<std::byte[]> data;
        std::size_t capacity = 0;
        std::size_t edge = 0;
    };
    // Send buffers of finished sends, by edge, for the next run's: a fresh multi-MiB buffer per
    // send cost its page faults every time (a 4 MiB transfer took 2.5x its in-process copy).
    std::vector<std::vector<std::pair<std::unique_ptr<std::byte[]>, std::size_t>>> m_spare;
    std::string describe(const CrossRankEdge &e) const;
    void progress(); // the thread that completes sends while every queue computes

    MPI_Comm m_comm;
    int m_rank;
    std::vector<CrossRankEdge> m_edges;
    std::chrono::duration<double> m_timeout;
    std::unordered_map<std::uint32_t, std::size_t> m_byRecv;               // recv slot → edge
    std::vector<std::vector<std::int64_t>> m_headers; // by edge: what awaitArrival received
    std::unordered_multimap<std::uint32_t, std::size_t> m_bySend;          // send slot → edges
    std::atomic<std::uint64_t> m_messages{0}, m_bytes{0};
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::vector<Pending> m_pending;
    std::chrono::steady_clock::time_point m_lastSend;
    bool m_stop = false;
    std::thread m_progress;
};

} // namespace opscope::dist
