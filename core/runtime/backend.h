#pragma once
// A device the executor runs plan queues on. The CPU backend is here; the CUDA backend (gpu/)
// implements the same interface. Each plan device ("cpu:0", "cpu:1", "cuda:0") maps to one backend.

#include "runtime/kernel.h"
#include "runtime/runtimetensor.h"
#include "util/status.h"

#include <memory>
#include <string>

namespace opscope {

class Backend
{
public:
    virtual ~Backend() = default;

    virtual std::string name() const = 0; // "cpu:0"
    virtual int threads() const = 0;      // intra-op threads of this device

    // Memory on the device.
    virtual Expected<RuntimeTensor> allocate(DataType dtype, std::vector<std::int64_t> shape) = 0;
    // Host ↔ device. On the CPU both share the host tensor (no copy).
    virtual Expected<RuntimeTensor> copyIn(const RuntimeTensor &host) = 0;
    virtual Expected<RuntimeTensor> copyOut(const RuntimeTensor &device) = 0;

    // The kernel this device runs for an op at an opset, or nullptr.
    virtual KernelFn kernelFor(const std::string &domain, const std::string &opType, int opset) const = 0;
    // Runs one node; the context's outputs are filled on success.
    virtual Status run(const PreparedNode &node, KernelContext &ctx) = 0;
    // Waits until all work queued on the device is done (asynchronous devices).
    virtual Status synchronize() = 0;
};

class CpuBackend final : public Backend
{
public:
    explicit CpuBackend(int index = 0, int threads = 1);

    std::string name() const override { return "cpu:" + std::to_string(m_index); }
    int threads() const override { return m_threads; }
    Expected<RuntimeTensor> allocate(DataType dtype, std::vector<std::int64_t> shape) override;
    Expected<RuntimeTensor> copyIn(const RuntimeTensor &host) override { return host; }
    Expected<RuntimeTensor> copyOut(const RuntimeTensor &device) override { return device; }
    KernelFn kernelFor(const std::string &domain, const std::string &opType, int opset) const override;
    Status run(const PreparedNode &node, KernelContext &ctx) override;
    Status synchronize() override { return Status::ok(); }

private:
    int m_index;
    int m_threads;
};

// A backend for a plan device name ("cpu:3"); devices this build cannot drive are an error.
Expected<std::unique_ptr<Backend>> makeBackend(const std::string &device, int threads);

} // namespace opscope
