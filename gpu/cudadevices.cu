#include "cudadevices.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <vector>

namespace opscope::gpu {
namespace {

Status cudaStatus(cudaError_t err, const std::string &what)
{
    if (err == cudaSuccess)
        return Status::ok();
    std::string msg = what + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice)
        return Status::unsupported(msg);
    return Status::io(msg);
}

__global__ void axpbKernel(float *data, std::size_t n, float a, float b)
{
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
        data[i] = a * data[i] + b;
}

struct DeviceBuffer
{
    float *ptr = nullptr;
    ~DeviceBuffer()
    {
        if (ptr)
            cudaFree(ptr);
    }
};

} // namespace

bool cudaDriverMissing()
{
    if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD))
        return false;
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY);
    if (driver)
        dlclose(driver);
    return driver == nullptr;
}

CudaVersions cudaVersions()
{
    CudaVersions v;
    cudaRuntimeGetVersion(&v.runtime);
    if (cudaDriverGetVersion(&v.driver) != cudaSuccess)
        v.driver = 0;
    return v;
}

Expected<std::vector<CudaDeviceInfo>> cudaDevices()
{
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        cudaGetLastError(); // clear the sticky error so later calls start clean
        if (err == cudaErrorInsufficientDriver && cudaDriverMissing())
            return Status::unsupported("no usable CUDA device: no NVIDIA driver is installed (libcuda.so.1 did not "
                                       "load); opscope runs on the CPU");
        return cudaStatus(err, "no usable CUDA device");
    }
    std::vector<CudaDeviceInfo> devices;
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        OPSCOPE_TRY(cudaStatus(cudaGetDeviceProperties(&prop, i),
                               "reading properties of CUDA device " + std::to_string(i)));
        CudaDeviceInfo info;
        info.index = i;
        info.name = prop.name;
        info.computeMajor = prop.major;
        info.computeMinor = prop.minor;
        info.totalMemoryBytes = prop.totalGlobalMem;
        info.multiprocessors = prop.multiProcessorCount;
        char bus[32] = {};
        if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess)
            info.pciBusId = bus;
        devices.push_back(std::move(info));
    }
    return devices;
}

Status cudaSelfTest(int device, std::size_t elements)
{
    OPSCOPE_TRY(cudaStatus(cudaSetDevice(device), "selecting CUDA device " + std::to_string(device)));
    std::vector<float> host(elements);
    for (std::size_t i = 0; i < elements; ++i)
        host[i] = static_cast<float>(i % 1000);
    DeviceBuffer buffer;
    OPSCOPE_TRY(cudaStatus(cudaMalloc(&buffer.ptr, elements * sizeof(float)), "allocating device memory"));
    OPSCOPE_TRY(
        cudaStatus(cudaMemcpy(buffer.ptr, host.data(), elements * sizeof(float), cudaMemcpyHostToDevice),
                   "copy to device"));
    axpbKernel<<<256, 256>>>(buffer.ptr, elements, 2.0f, 1.0f);
    OPSCOPE_TRY(cudaStatus(cudaGetLastError(), "launching the self-test kernel"));
    OPSCOPE_TRY(
        cudaStatus(cudaMemcpy(host.data(), buffer.ptr, elements * sizeof(float), cudaMemcpyDeviceToHost),
                   "copy to host"));
    for (std::size_t i = 0; i < elements; ++i)
        if (host[i] != 2.0f * static_cast<float>(i % 1000) + 1.0f)
            return Status::internal("CUDA self-test: element " + std::to_string(i) + " is wrong");
    return Status::ok();
}

} // namespace opscope::gpu
