#pragma once
// One process of an MPI job (OpenMPI): MPI started for threads — the executor's queue threads send
// and receive at once — with errors returned as values, and the collectives the distributed
// profile needs. Waiting ranks sleep between polls instead of spinning as MPI's blocking calls do:
// on a machine with as many ranks as cores, a spinning rank takes the core another rank computes on.

#include "util/status.h"

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

namespace opscope::dist {

// How a rank waits: Sleep between polls after a short spin (waits between phases, which may last
// seconds), or Spin throughout, yielding the core each time (a transfer or the start of a timed
// run, where a sleeping rank would wake tens of µs late and the makespan would measure that).
enum class Waiting
{
    Sleep,
    Spin,
};

class MpiContext
{
public:
    // MPI_Init_thread with MPI_THREAD_MULTIPLE; an MPI without it is an error a user can act on.
    static Expected<std::unique_ptr<MpiContext>> start(int *argc, char ***argv);
    ~MpiContext(); // MPI_Finalize
    MpiContext(const MpiContext &) = delete;
    MpiContext &operator=(const MpiContext &) = delete;

    // How long a collective may wait for the other ranks before the job is ended as hung (a rank
    // stopped or stuck), naming what was waited for; ≤ 0: forever.
    void setTimeout(std::chrono::duration<double> timeout) { m_timeout = timeout; }
    std::chrono::duration<double> timeout() const { return m_timeout; }

    int rank() const { return m_rank; }
    int size() const { return m_size; }
    MPI_Comm comm() const { return m_comm; }

    // `bytes` of the root on every rank (any size: sent in pieces below MPI's int counts).
    Status broadcast(std::vector<std::byte> &bytes, int root = 0);
    Status broadcast(std::string &text, int root = 0);
    // Every rank's bytes on the root, by rank (other ranks get an empty list).
    Expected<std::vector<std::vector<std::byte>>> gather(const std::vector<std::byte> &mine, int root = 0);
    // `timeout` ≤ 0 waits forever.
    Status barrier(std::chrono::duration<double> timeout = {}, Waiting waiting = Waiting::Sleep);

    // Whether every rank got here without an error: all ranks return the same status, naming the
    // ranks that failed and why ("rank 1: cannot open …"). Ranks that agree can all stop cleanly;
    // a rank alone with an error would leave the others waiting for it.
    Status agree(const Status &mine);
    // The same waiting up to `timeout` instead (rank 0's serial runs: as long as they take).
    Status agree(const Status &mine, std::chrono::duration<double> timeout);

    // Ends the whole job: the message (prefixed with this rank) on stderr, then MPI_Abort. For
    // failures while the ranks are running a plan, when the others may be waiting for this one.
    [[noreturn]] void abort(const std::string &message) const;

    // Polls `request` until done, sleeping between polls. A collective that waits past `timeout`
    // ends the job (abort): the other ranks are waiting in it too.
    Status wait(MPI_Request &request, std::chrono::duration<double> timeout, const std::string &what,
                Waiting waiting = Waiting::Sleep) const;

private:
    MpiContext() = default;
    Status collective(MPI_Request &request, const std::string &what);
    int m_rank = 0, m_size = 1;
    MPI_Comm m_comm = MPI_COMM_NULL;
    std::chrono::duration<double> m_timeout{0.0};
};

// What this process is waiting for (a formatted line, or null): what it says on stderr if mpirun
// ends it meanwhile (another rank died, Ctrl-C). MpiContext::start installs the handler.
void setWaitingFor(const char *line);

// Started by mpirun (or another MPI launcher): what decides whether --ranks can mean anything.
bool launchedByMpi();

// A message for an MPI error code.
std::string mpiError(int code);

// Polls until every request is done; `timeout` ≤ 0 waits forever.
Status waitAll(std::vector<MPI_Request> &requests, std::chrono::duration<double> timeout, const std::string &what,
               Waiting waiting = Waiting::Sleep);

} // namespace opscope::dist
