#include "commands.h"
#include "infoformat.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

#ifdef OPSCOPE_HAVE_CUDA
#include "cudadevices.h"
#include "cudalibs.h"
#endif

namespace opscope::cli {
namespace {

std::string cpuModel()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            return colon == std::string::npos ? line : line.substr(colon + 2);
        }
    return "unknown CPU";
}

} // namespace

int runDevices(bool json)
{
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const std::uint64_t memory = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                                 static_cast<std::uint64_t>(sysconf(_SC_PAGE_SIZE));
    nlohmann::ordered_json j;
    j["cpu"] = {{"model", cpuModel()}, {"cores", cores}, {"memory_bytes", memory}};
    j["cuda"] = {{"built", false}, {"devices", nlohmann::ordered_json::array()}};
    std::string cudaText = "not built (configure with the CUDA toolkit present)";
#ifdef OPSCOPE_HAVE_CUDA
    const gpu::CudaVersions versions = gpu::cudaVersions();
    j["cuda"]["built"] = true;
    j["cuda"]["runtime_version"] = versions.runtime;
    j["cuda"]["driver_version"] = versions.driver;
    const auto devices = gpu::cudaDevices();
    if (!devices) {
        j["cuda"]["error"] = devices.status().message();
        cudaText = devices.status().message();
    } else {
        cudaText = std::to_string(devices->size()) + " device(s)";
        for (const gpu::CudaDeviceInfo &d : *devices) {
            j["cuda"]["devices"].push_back({{"index", d.index},
                                            {"name", d.name},
                                            {"compute_capability", std::to_string(d.computeMajor) + "." +
                                                                       std::to_string(d.computeMinor)},
                                            {"memory_bytes", d.totalMemoryBytes},
                                            {"multiprocessors", d.multiprocessors},
                                            {"pci_bus_id", d.pciBusId}});
            cudaText += "\n  cuda:" + std::to_string(d.index) + "  " + d.name + ", sm_" +
                        std::to_string(d.computeMajor) + std::to_string(d.computeMinor) + ", " +
                        humanBytes(d.totalMemoryBytes) + ", " + std::to_string(d.multiprocessors) + " SMs";
        }
    }
    // Loaded with dlopen at first use (gpu/cudalibs.h): say where from, or why not.
    const auto library = [&](const char *key, const char *label, const Status &loaded, const std::string &path) {
        j["cuda"]["libraries"][key] = loaded ? path : loaded.message();
        std::string text = loaded ? path : loaded.message();
        for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1))
            text.insert(at + 1, "          "); // under the label
        cudaText += std::string("\n  ") + label + text;
    };
    library("cublas", "cuBLAS  ", gpu::cublasLoaded(), gpu::cublasPath());
    library("cudnn", "cuDNN   ", gpu::cudnnLoaded(), gpu::cudnnPath());
#endif
    if (json) {
        std::cout << j.dump(2) << '\n';
    } else {
        std::cout << "cpu    " << cpuModel() << ", " << cores << " cores, " << humanBytes(memory) << '\n';
        std::cout << "cuda   " << cudaText << '\n';
    }
    return ExitOk;
}

} // namespace opscope::cli
