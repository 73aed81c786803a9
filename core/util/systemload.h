#pragma once
// How busy the machine is: profiles taken while other processes want the CPUs measure waiting for
// a core, not the model (a 0.3 ms run took 116 ms in one iteration with two other busy processes
// on two cores). Linux /proc; elsewhere "unknown".

#include <optional>
#include <string>

namespace opscope {

// The 1-minute load average (runnable and uninterruptible tasks, this process's included).
std::optional<double> loadAverage();
// The cores this process may run on (its affinity mask), at least 1.
unsigned usableCores();

// CPU time the machine and this process had spent at one moment: two samples around a timed
// stretch say how many cores *other* processes kept busy during it — at once, where the load
// average lags a minute behind (a build started beside a run went unnoticed).
struct CpuSample
{
    double machineBusySeconds = 0.0; // all CPUs: user, nice, system, irq, softirq, steal
    double selfSeconds = 0.0;        // this process: user + system
    double wallSeconds = 0.0;        // steady clock
    unsigned machineCores = 0;       // CPUs /proc/stat lists
    bool valid = false;
};
CpuSample sampleCpu();
// Cores other processes kept busy on average between `before` and `after`; nullopt when either
// sample failed or no time passed.
std::optional<double> othersBusyCores(const CpuSample &before, const CpuSample &after);

// One sentence when other processes left fewer cores than `ourThreads` wanted while timing
// ("other processes kept 1.4 of 2 cores busy while timing …"), with what to do about it; empty
// when they did not. `what`: "timing", "profiling".
std::string contentionNote(double othersBusy, unsigned machineCores, int ourThreads, const std::string &what);

} // namespace opscope
