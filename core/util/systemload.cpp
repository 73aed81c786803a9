#include "util/systemload.h"

#include <algorithm>
#include <fstream>
#include <sched.h>
#include <thread>

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

} // namespace opscope
