#pragma once
// How busy the machine is: profiles taken while other processes want the CPUs measure waiting for
// a core, not the model (a 0.3 ms run took 116 ms in one iteration with two other busy processes
// on two cores). Linux /proc; elsewhere "unknown".

#include <optional>

namespace opscope {

// The 1-minute load average (runnable and uninterruptible tasks, this process's included).
std::optional<double> loadAverage();
// The cores this process may run on (its affinity mask), at least 1.
unsigned usableCores();

} // namespace opscope
