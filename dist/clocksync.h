#pragma once
// Clocks and links between ranks, measured by ping-pong at start (and, for clocks, again at the
// end, so a drift between the two is corrected for). Not cached as the CPU calibration is: it costs
// milliseconds, and what it measures depends on where this launch put the ranks.

#include "mpicontext.h"
#include "schedule/costmodel.h"

#include <vector>

namespace opscope::dist {

// steady_clock (CLOCK_MONOTONIC) in seconds since its epoch: each rank's own clock.
double steadySeconds();

struct ClockOffset
{
    double offset = 0.0;    // this rank's clock minus rank 0's, seconds
    double roundTrip = 0.0; // of the ping-pong the estimate came from
    double at = 0.0;        // rank 0's clock when measured
};

// Rank 0 ping-pongs with every other rank; the round with the shortest round trip gives the
// offset (the reply's stamp taken as halfway through it, as NTP does). On rank 0: one per rank
// (its own is 0); elsewhere empty.
Expected<std::vector<ClockOffset>> measureClockOffsets(MpiContext &mpi, int rounds = 32);

// The offset of a rank at rank 0's time `t`, interpolated between a measurement at the start
// and one at the end (drift corrected).
double offsetAt(const ClockOffset &start, const ClockOffset &end, double t);

// Latency (half the shortest round trip of an 8-byte ping-pong) and bandwidth (of a 4 MiB one)
// between rank 0 and rank 1, on every rank. One rank: the default link.
Expected<schedule::LinkModel> measureLink(MpiContext &mpi);

} // namespace opscope::dist
