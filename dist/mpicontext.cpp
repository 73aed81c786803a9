#include "mpicontext.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sched.h>
#include <thread>
#include <unistd.h>

namespace opscope::dist {

namespace {

constexpr std::size_t kPiece = std::size_t(1) << 30; // MPI counts are ints: 1 GiB pieces
constexpr int kGatherTag = 1;

Status check(int code, const std::string &what)
{
    if (code == MPI_SUCCESS)
        return Status::ok();
    return Status::io(what + ": " + mpiError(code));
}

// Read by the signal handler, which may only write(2) what is already formatted.
std::atomic<const char *> g_waitingFor{nullptr};
int g_rank = 0;

extern "C" void onSignal(int sig)
{
    const char *text = g_waitingFor.load();
    static const char interrupted[] = "opscope-cli: interrupted\n";
    if (!text && sig == SIGINT && g_rank == 0)
        text = interrupted;
    if (text && ::write(STDERR_FILENO, text, std::strlen(text)) < 0) {
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

} // namespace

void setWaitingFor(const char *line) { g_waitingFor.store(line); }

std::string mpiError(int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
        return "MPI error " + std::to_string(code);
    return std::string(text, std::size_t(length));
}

bool launchedByMpi()
{
    for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
        if (const char *s = std::getenv(v); s && *s)
            return true;
    return false;
}

Status waitAll(std::vector<MPI_Request> &requests, std::chrono::duration<double> timeout, const std::string &what,
               Waiting waiting)
{
    if (requests.empty())
        return Status::ok();
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        int done = 0;
        OPSCOPE_TRY(check(MPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE), what));
        if (done)
            return Status::ok();
        // A short spin catches a message already on its way; after it, sleeping keeps a waiting
        // rank off the cores (MPI's own blocking calls spin, starving ranks that share a core).
        // The spin yields, so a rank sharing its core with another still lets that one run.
        if (waiting == Waiting::Spin || std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1))
            sched_yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        if (timeout.count() > 0 && std::chrono::steady_clock::now() - start > timeout) {
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%.3g", timeout.count());
            return Status::io(what + ": nothing arrived within " + seconds + " s");
        }
    }
}

Expected<std::unique_ptr<MpiContext>> MpiContext::start(int *argc, char ***argv)
{
    int initialized = 0;
    MPI_Initialized(&initialized);
    int provided = 0;
    if (!initialized && MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return Status::io("MPI could not start (MPI_Init_thread failed)");
    if (initialized)
        MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        MPI_Finalize();
        return Status::unsupported("this MPI library does not allow calls from several threads "
                                   "(MPI_THREAD_MULTIPLE), which the executor's queues need");
    }
    std::unique_ptr<MpiContext> c(new MpiContext);
    MPI_Comm_dup(MPI_COMM_WORLD, &c->m_comm);
    MPI_Comm_set_errhandler(c->m_comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->m_comm, &c->m_rank);
    MPI_Comm_size(c->m_comm, &c->m_size);
    g_rank = c->m_rank;
    struct sigaction sa{};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    return c;
}

MpiContext::~MpiContext()
{
    if (m_comm != MPI_COMM_NULL)
        MPI_Comm_free(&m_comm);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Finalize();
}

Status MpiContext::wait(MPI_Request &request, std::chrono::duration<double> timeout, const std::string &what,
                        Waiting waiting) const
{
    std::vector<MPI_Request> one{request};
    const Status st = waitAll(one, timeout, what, waiting);
    request = one[0];
    return st;
}

Status MpiContext::broadcast(std::vector<std::byte> &bytes, int root)
{
    std::uint64_t size = bytes.size();
    MPI_Request r = MPI_REQUEST_NULL;
    OPSCOPE_TRY(check(MPI_Ibcast(&size, 1, MPI_UINT64_T, root, m_comm, &r), "broadcast"));
    OPSCOPE_TRY(collective(r, "broadcast"));
    bytes.resize(size);
    for (std::size_t at = 0; at < size; at += kPiece) {
        const int n = int(std::min<std::size_t>(kPiece, size - at));
        OPSCOPE_TRY(check(MPI_Ibcast(bytes.data() + at, n, MPI_BYTE, root, m_comm, &r), "broadcast"));
        OPSCOPE_TRY(collective(r, "broadcast"));
    }
    return Status::ok();
}

Status MpiContext::broadcast(std::string &text, int root)
{
    std::vector<std::byte> bytes(text.size());
    if (!text.empty()) // memcpy of nothing from an empty string's null data is still undefined
        std::memcpy(bytes.data(), text.data(), text.size());
    OPSCOPE_TRY(broadcast(bytes, root));
    text.assign(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    return Status::ok();
}

Expected<std::vector<std::vector<std::byte>>> MpiContext::gather(const std::vector<std::byte> &mine, int root)
{
    std::uint64_t size = mine.size();
    std::vector<std::uint64_t> sizes(m_rank == root ? std::size_t(m_size) : 0);
    MPI_Request r = MPI_REQUEST_NULL;
    OPSCOPE_TRY(check(MPI_Igather(&size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, root, m_comm, &r),
                      "gather"));
    OPSCOPE_TRY(collective(r, "gather"));
    std::vector<std::vector<std::byte>> all;
    std::vector<MPI_Request> requests;
    if (m_rank == root) {
        all.resize(std::size_t(m_size));
        for (int q = 0; q < m_size; ++q) {
            if (q == root) {
                all[std::size_t(q)] = mine;
                continue;
            }
            all[std::size_t(q)].resize(sizes[std::size_t(q)]);
            for (std::size_t at = 0; at < all[std::size_t(q)].size(); at += kPiece) {
                requests.emplace_back();
                OPSCOPE_TRY(check(MPI_Irecv(all[std::size_t(q)].data() + at,
                                            int(std::min(kPiece, all[std::size_t(q)].size() - at)), MPI_BYTE, q,
                                            kGatherTag, m_comm, &requests.back()),
                                  "gather"));
            }
        }
    } else {
        for (std::size_t at = 0; at < mine.size(); at += kPiece) {
            requests.emplace_back();
            OPSCOPE_TRY(check(MPI_Isend(mine.data() + at, int(std::min(kPiece, mine.size() - at)), MPI_BYTE, root,
                                        kGatherTag, m_comm, &requests.back()),
                              "gather"));
        }
    }
    if (Status st = waitAll(requests, m_timeout, "gather"); !st)
        abort("a rank did not answer (stuck or stopped): " + st.message());
    return all;
}

Status MpiContext::barrier(std::chrono::duration<double> timeout, Waiting waiting)
{
    MPI_Request r = MPI_REQUEST_NULL;
    OPSCOPE_TRY(check(MPI_Ibarrier(m_comm, &r), "barrier"));
    return wait(r, timeout, "waiting for every rank", waiting);
}

Status MpiContext::collective(MPI_Request &request, const std::string &what)
{
    const auto start = std::chrono::steady_clock::now();
    Status st = wait(request, m_timeout, what);
    if (!st && m_timeout.count() > 0 && std::chrono::steady_clock::now() - start >= m_timeout)
        abort("a rank did not answer (stuck or stopped): " + st.message()); // the others wait in it too
    return st;
}

Status MpiContext::agree(const Status &mine, std::chrono::duration<double> timeout)
{
    const auto kept = m_timeout;
    m_timeout = timeout;
    Status st = agree(mine);
    m_timeout = kept;
    return st;
}

Status MpiContext::agree(const Status &mine)
{
    int failed = mine.isOk() ? 0 : 1, anyFailed = 0;
    MPI_Request r = MPI_REQUEST_NULL;
    OPSCOPE_TRY(check(MPI_Iallreduce(&failed, &anyFailed, 1, MPI_INT, MPI_MAX, m_comm, &r), "allreduce"));
    OPSCOPE_TRY(collective(r, "agreeing on what every rank did"));
    if (!anyFailed)
        return Status::ok();
    // A failed rank sends its error's kind (one byte) and message.
    const std::string text = mine.isOk() ? std::string() : char(int(mine.kind())) + mine.message();
    std::vector<std::byte> bytes(text.size());
    if (!text.empty()) // memcpy of nothing from an empty string's null data is still undefined
        std::memcpy(bytes.data(), text.data(), text.size());
    Expected<std::vector<std::vector<std::byte>>> all = gather(bytes);
    if (!all)
        return all.status();
    // The same message from several ranks (every rank failed to open the file) is said once.
    // Every rank returns the kind of the first rank that failed: callers decide by it (skip a
    // schedule or stop), and ranks deciding differently would leave some waiting.
    std::string combined;
    int kind = -1;
    if (m_rank == 0) {
        std::vector<std::pair<std::string, std::vector<int>>> messages;
        for (int q = 0; q < m_size; ++q) {
            const auto &b = (*all)[std::size_t(q)];
            if (b.empty())
                continue;
            if (kind < 0)
                kind = int(b[0]);
            const std::string m(reinterpret_cast<const char *>(b.data()) + 1, b.size() - 1);
            auto it = std::find_if(messages.begin(), messages.end(), [&](const auto &e) { return e.first == m; });
            if (it == messages.end())
                messages.push_back({m, {q}});
            else
                it->second.push_back(q);
        }
        for (const auto &[m, ranks] : messages) {
            if (!combined.empty())
                combined += "; ";
            if (int(ranks.size()) == m_size && m_size > 1) {
                combined += "every rank: ";
            } else {
                combined += ranks.size() == 1 ? "rank " : "ranks ";
                for (std::size_t i = 0; i < ranks.size(); ++i)
                    combined += (i ? ", " : "") + std::to_string(ranks[i]);
                combined += ": ";
            }
            combined += m;
        }
    }
    OPSCOPE_TRY(broadcast(combined));
    MPI_Bcast(&kind, 1, MPI_INT, 0, m_comm);
    return Status::error(kind > 0 ? ErrorKind(kind) : ErrorKind::InvalidInput, combined);
}

void MpiContext::abort(const std::string &message) const
{
    std::fprintf(stderr, "opscope-cli: error: rank %d: %s\n", m_rank, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
}

} // namespace opscope::dist
