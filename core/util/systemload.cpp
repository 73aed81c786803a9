#include "util/systemload.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sched.h>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

namespace opscope {

std::optional<double> loadAverage()
{
    std::ifstream in("/proc/loadavg");
    double one = 0.0;
    if (!(in >> one) || one < 0.0)
        return std::nullopt;
    return one;
}

unsigned usableCores()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return unsigned(CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

CpuSample sampleCpu()
{
    CpuSample s;
    std::ifstream in("/proc/stat");
    std::string label;
    std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (!(in >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || label != "cpu")
        return s;
    std::string line;
    while (std::getline(in, line))
        if (line.size() > 3 && line.compare(0, 3, "cpu") == 0 && std::isdigit(static_cast<unsigned char>(line[3])))
            ++s.machineCores;
    const long tick = sysconf(_SC_CLK_TCK);
    if (tick <= 0 || s.machineCores == 0)
        return s;
    s.machineBusySeconds = double(user + nice + system + irq + softirq + steal) / double(tick);
    rusage self{};
    if (getrusage(RUSAGE_SELF, &self) != 0)
        return s;
    s.selfSeconds = double(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                    double(self.ru_utime.tv_usec + self.ru_stime.tv_usec) * 1e-6;
    s.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    s.valid = true;
    return s;
}

std::optional<double> othersBusyCores(const CpuSample &before, const CpuSample &after)
{
    const double wall = after.wallSeconds - before.wallSeconds;
    // /proc/stat counts in ticks (10 ms): shorter stretches say nothing.
    if (!before.valid || !after.valid || wall < 0.05)
        return std::nullopt;
    const double others =
        (after.machineBusySeconds - before.machineBusySeconds) - (after.selfSeconds - before.selfSeconds);
    return std::max(0.0, others / wall);
}

std::string contentionNote(double othersBusy, unsigned machineCores, int ourThreads, const std::string &what)
{
    // A quarter core of slack: a desktop's background work is not worth a sentence.
    if (machineCores == 0 || othersBusy + double(ourThreads) <= double(machineCores) + 0.25)
        return {};
    char text[480];
    std::snprintf(text, sizeof text,
                  "other processes kept %.1f of the %u cores busy while %s on %d thread%s: times include "
                  "waiting for a core%s",
                  othersBusy, machineCores, what.c_str(), ourThreads, ourThreads == 1 ? "" : "s",
                  ourThreads > 1 ? "; with several threads far more, as each parallel step waits for its slowest "
                                   "thread — time on an idle machine, or with fewer threads"
                                 : "; time on an idle machine");
    return text;
}

} // namespace opscope
