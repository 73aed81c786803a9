#pragma once
// CUDA device discovery and a kernel round trip that proves a device works. Plain C++ header:
// callers need no CUDA headers. The CUDA backend (runtime, CUPTI tracer) builds on this.

#include "util/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::gpu {

struct CudaDeviceInfo
{
    int index = 0;
    std::string name;
    int computeMajor = 0;
    int computeMinor = 0;
    std::uint64_t totalMemoryBytes = 0;
    int multiprocessors = 0;
    std::string pciBusId;
};

struct CudaVersions
{
    int runtime = 0; // e.g. 13000
    int driver = 0;  // 0 when no driver is installed
};

CudaVersions cudaVersions();

// The visible devices. No driver or no device is an error value, not a crash: callers (tests,
// `opscope-cli devices`) report it and carry on with the CPU.
Expected<std::vector<CudaDeviceInfo>> cudaDevices();
// No NVIDIA driver at all (libcuda.so.1 does not load): the runtime then reports
// cudaErrorInsufficientDriver, "driver version is insufficient", which blames a version that
// does not exist. Callers say this instead.
bool cudaDriverMissing();

// Copies data to the device, runs a kernel on it, copies it back and checks the result.
Status cudaSelfTest(int device, std::size_t elements = 1 << 20);

} // namespace opscope::gpu
