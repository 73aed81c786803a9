#pragma once
// cuBLAS, cuDNN and CUPTI are loaded with dlopen at first use, never linked: they are not Debian
// packages, so a binary that NEEDs them would not start on a machine without CUDA (the package
// must run there, CPU-only). cudalibs.cpp defines the few cuBLAS/cuDNN entry points opscope
// calls as forwarders into the loaded library, so the call sites read as the documented API.
// A function not forwarded there is an undefined symbol at link time: add it to the list.
//
// Call cublasLoaded()/cudnnLoaded() before the first call into a library; the forwarders of a
// library that did not load return its NOT_INITIALIZED status.

#include "util/status.h"

#include <string>

namespace opscope::gpu {

// Ok once the library and every entry point opscope uses are resolved; otherwise a message that
// names the file, where it was searched and what to install. Loads once per process.
Status cublasLoaded();
Status cudnnLoaded();
Status cuptiLoaded(); // CUPTI, for GPU timelines (cuptitracer.h)

// Where the library was loaded from ("" when it did not load), for `devices` and reports.
std::string cublasPath();
std::string cudnnPath();
std::string cuptiPath();

} // namespace opscope::gpu
