#include "clocksync.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

namespace opscope::dist {

namespace {

constexpr int kClockTag = 2, kLinkTag = 3;

Status check(int code, const char *what)
{
    return code == MPI_SUCCESS ? Status::ok() : Status::io(std::string(what) + ": " + mpiError(code));
}

} // namespace

double steadySeconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Expected<std::vector<ClockOffset>> measureClockOffsets(MpiContext &mpi, int rounds)
{
    std::vector<ClockOffset> offsets;
    // Blocking calls on purpose: sleeping between polls would lengthen every round trip.
    if (mpi.rank() == 0) {
        offsets.resize(std::size_t(mpi.size()));
        offsets[0].at = steadySeconds();
        for (int r = 1; r < mpi.size(); ++r) {
            ClockOffset best;
            best.roundTrip = std::numeric_limits<double>::infinity();
            for (int i = 0; i < rounds; ++i) {
                double stamp = 0.0;
                const double t0 = steadySeconds();
                OPSCOPE_TRY(check(MPI_Send(&t0, 1, MPI_DOUBLE, r, kClockTag, mpi.comm()), "clock ping"));
                OPSCOPE_TRY(check(MPI_Recv(&stamp, 1, MPI_DOUBLE, r, kClockTag, mpi.comm(), MPI_STATUS_IGNORE),
                                  "clock pong"));
                const double t1 = steadySeconds();
                if (t1 - t0 < best.roundTrip)
                    best = {stamp - 0.5 * (t0 + t1), t1 - t0, 0.5 * (t0 + t1)};
            }
            offsets[std::size_t(r)] = best;
        }
    } else {
        for (int i = 0; i < rounds; ++i) {
            double ping = 0.0;
            OPSCOPE_TRY(check(MPI_Recv(&ping, 1, MPI_DOUBLE, 0, kClockTag, mpi.comm(), MPI_STATUS_IGNORE), "clock ping"));
            const double stamp = steadySeconds();
            OPSCOPE_TRY(check(MPI_Send(&stamp, 1, MPI_DOUBLE, 0, kClockTag, mpi.comm()), "clock pong"));
        }
    }
    return offsets;
}

double offsetAt(const ClockOffset &start, const ClockOffset &end, double t)
{
    if (end.at <= start.at)
        return start.offset;
    const double f = std::clamp((t - start.at) / (end.at - start.at), 0.0, 1.0);
    return start.offset + f * (end.offset - start.offset);
}

Expected<schedule::LinkModel> measureLink(MpiContext &mpi)
{
    schedule::LinkModel link;
    if (mpi.size() < 2)
        return link;
    double result[2] = {0.0, 0.0};
    if (mpi.rank() <= 1) {
        const int peer = 1 - mpi.rank();
        const auto pingPong = [&](std::vector<std::byte> &buffer, int rounds) -> Expected<double> {
            double best = std::numeric_limits<double>::infinity();
            for (int i = 0; i < rounds; ++i) {
                const double t0 = steadySeconds();
                const int n = int(buffer.size());
                if (mpi.rank() == 0) {
                    OPSCOPE_TRY(check(MPI_Send(buffer.data(), n, MPI_BYTE, peer, kLinkTag, mpi.comm()), "link ping"));
                    OPSCOPE_TRY(check(MPI_Recv(buffer.data(), n, MPI_BYTE, peer, kLinkTag, mpi.comm(), MPI_STATUS_IGNORE),
                                      "link pong"));
                } else {
                    OPSCOPE_TRY(check(MPI_Recv(buffer.data(), n, MPI_BYTE, peer, kLinkTag, mpi.comm(), MPI_STATUS_IGNORE),
                                      "link ping"));
                    OPSCOPE_TRY(check(MPI_Send(buffer.data(), n, MPI_BYTE, peer, kLinkTag, mpi.comm()), "link pong"));
                }
                best = std::min(best, steadySeconds() - t0);
            }
            return best;
        };
        std::vector<std::byte> small(8), large(std::size_t(4) << 20);
        Expected<double> a = pingPong(small, 50);
        if (!a)
            return a.status();
        Expected<double> b = pingPong(large, 8);
        if (!b)
            return b.status();
        result[0] = 0.5 * *a;
        result[1] = double(large.size()) / std::max(1e-9, 0.5 * *b - result[0]);
    }
    OPSCOPE_TRY(check(MPI_Bcast(result, 2, MPI_DOUBLE, 0, mpi.comm()), "link broadcast"));
    link.latencySeconds = result[0];
    link.bytesPerSecond = result[1];
    return link;
}

} // namespace opscope::dist
