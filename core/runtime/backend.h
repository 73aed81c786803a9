#pragma once
// A device the executor runs plan queues on. The CPU backend is here; the CUDA backend (gpu/)
// implements the same interface. Each plan device ("cpu:0", "cpu:1", "cuda:0") maps to one backend.

#include "runtime/kernel.h"
#include "runtime/runtimetensor.h"
#include "util/status.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace opscope {

struct HostFallback
{
    std::string op;          // "Conv", or "domain::Op" outside the ONNX domain
    std::uint64_t calls = 0; // since the backend was made
    std::string reason;      // the first call's
    bool operator==(const HostFallback &) const = default;
};

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

    // Which of a node's inputs must be host tensors when this backend runs it: all of them for a
    // host backend; for an accelerator, all when the node runs on the host after all (no kernel
    // of its own), all but the first for ops that only relabel their first input's shape
    // (Reshape, Squeeze…: its bytes stay where they are), none for its own kernels.
    enum class HostInputs { None, All, AllButFirst };
    // Asked with the node's context before `run`; the executor then copies those inputs over.
    virtual HostInputs hostInputs(const KernelContext &ctx) const
    {
        (void)ctx;
        return hostMemory() ? HostInputs::All : HostInputs::None;
    }
    // False for an accelerator whose tensors live in its own memory (RuntimeTensor::onHost): the
    // executor then gives it no host arena, and copies its tensors to the host before a host
    // backend's kernel reads them.
    virtual bool hostMemory() const { return true; }
    // Ops this device handed to the CPU runtime, with how many calls and why (no kernel of its
    // own for them or for those types, or its library could not run them: a missing cuDNN says
    // so here, once per op, instead of every Conv quietly running on the host).
    virtual std::vector<HostFallback> hostFallbacks() const { return {}; }
    // Around all of a node's work on this device, its input copies included, on the thread that
    // does it: a tracer ties what the device records meanwhile to the node (CUPTI's external
    // correlation ids). Nothing for the CPU.
    virtual void enterNode(const Node &node) { (void)node; }
    virtual void leaveNode() {}
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

// A backend for a plan device name ("cpu:3", "cuda:0"); devices this build cannot drive are an error.
Expected<std::unique_ptr<Backend>> makeBackend(const std::string &device, int threads);

// Device kinds beyond "cpu" come from modules core does not know (gpu/ registers "cuda"): the
// composition root (app/) calls their registration before it makes backends.
using BackendFactory = std::function<Expected<std::unique_ptr<Backend>>(int index, int threads)>;
void registerBackendFactory(const std::string &kind, BackendFactory factory);
std::vector<std::string> registeredBackendKinds(); // "cpu" first

} // namespace opscope
