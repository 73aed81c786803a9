#pragma once
// A tensor during execution. Storage is shared and, once a kernel has written it, never mutated
// again: views (Reshape, Squeeze, Identity...) alias their input's storage, and initializers are
// used in place from the model's (possibly memory-mapped) buffers.

#include "ir/datatype.h"
#include "ir/tensor.h"
#include "util/status.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace opscope {

// Memory of an accelerator (gpu/'s CUDA backend): a tensor in it is the device's, and host code
// never dereferences its bytes. The tensor keeps the memory's owner alive, so a tensor that
// outlives its run (a graph output, a cached weight) can still be copied to the host.
class AcceleratorMemory
{
public:
    virtual ~AcceleratorMemory() = default;
    virtual std::string deviceName() const = 0; // "cuda:0"
    // Copies `bytes` from device memory at `src` to host memory at `dst`, synchronously (the
    // device's queued work that writes `src` finishes first).
    virtual Status copyToHost(const std::byte *src, std::byte *dst, std::size_t bytes) const = 0;
};

class RuntimeTensor
{
public:
    RuntimeTensor() = default;

    // New, uninitialized host memory (64-byte aligned). Fails for absurd sizes instead of throwing.
    static Expected<RuntimeTensor> allocate(DataType dtype, std::vector<std::int64_t> shape);
    // A block of host memory (64-byte aligned) from the same recycling pool: a planned arena.
    static Expected<std::shared_ptr<std::byte>> allocateBlock(std::size_t bytes);
    // The most one tensor or arena may take, for the whole process (0: this machine's memory and
    // swap, the default). A harness that runs untrusted models small (the `run` fuzz target)
    // sets one, so a legal model whose outputs alone are gigabytes is refused as too large.
    static void setAllocationLimit(std::uint64_t bytes);
    // A tensor in `data`, which `owner` keeps alive (a range of an arena). The caller checked
    // that the bytes fit.
    static RuntimeTensor inBlock(DataType dtype, std::vector<std::int64_t> shape, std::shared_ptr<const void> owner,
                                 std::byte *data);
    // A tensor in device memory at `data` (kept alive by `owner`), of `memory`'s device.
    static RuntimeTensor onDevice(DataType dtype, std::vector<std::int64_t> shape, std::shared_ptr<const void> owner,
                                  std::byte *data, std::shared_ptr<const AcceleratorMemory> memory);
    // Zero-filled.
    static Expected<RuntimeTensor> zeros(DataType dtype, std::vector<std::int64_t> shape);
    // Shares the IR tensor's bytes; no copy.
    static RuntimeTensor fromConstant(const Tensor &tensor);
    template<class T>
    static RuntimeTensor fromValues(DataType dtype, std::vector<std::int64_t> shape,
                                    const std::vector<T> &values);
    static RuntimeTensor fromStrings(std::vector<std::int64_t> shape, std::vector<std::string> values);

    // Same bytes, another shape (element count must match).
    RuntimeTensor reshaped(std::vector<std::int64_t> shape) const;

    bool isValid() const { return m_dtype != DataType::Undefined; }
    DataType dtype() const { return m_dtype; }
    const std::vector<std::int64_t> &shape() const { return m_shape; }
    std::size_t rank() const { return m_shape.size(); }
    std::int64_t dim(std::size_t i) const { return m_shape[i]; }
    std::int64_t elementCount() const { return m_count; }
    std::size_t byteSize() const { return static_cast<std::size_t>(m_count) * dataTypeSize(m_dtype); }

    // Host memory (every tensor but an accelerator's): kernels of the CPU runtime may read it.
    bool onHost() const { return !m_device; }
    const AcceleratorMemory *deviceMemory() const { return m_device.get(); }
    const std::shared_ptr<const AcceleratorMemory> &acceleratorMemoryShared() const { return m_device; }
    const std::shared_ptr<const void> &owner() const { return m_owner; }
    // This tensor when on the host, else a host copy of it (a device-to-host copy).
    Expected<RuntimeTensor> toHost() const;

    // On a device these point into its memory: only that device's code may dereference them.
    const std::byte *bytes() const { return m_data; }
    std::byte *mutableBytes() { return m_data; } // only for the kernel that allocated it
    template<class T>
    const T *data() const
    {
        return reinterpret_cast<const T *>(m_data);
    }
    template<class T>
    T *mutableData()
    {
        return reinterpret_cast<T *>(m_data);
    }
    const std::vector<std::string> &strings() const { return *m_strings; }
    std::vector<std::string> &mutableStrings() { return *m_strings; }

    // Element i converted to double / int64 (any numeric dtype); for shape inputs and tests. On a
    // device tensor these copy it to the host first (slow, but never a wild read); no kernel
    // reads a device tensor through them (the CUDA kernels take such inputs only on the host),
    // so a failed copy here, which reads as zeros, is never a silent result: the device's error
    // is sticky and fails the run at its next launch or synchronization. Code that can report
    // should call toHost().
    double valueAsDouble(std::int64_t i) const;
    std::int64_t valueAsInt(std::int64_t i) const;
    std::vector<std::int64_t> toInt64Vector() const;

    // An IR constant with a copy of the bytes (constant folding, saving outputs).
    Tensor toConstant() const;
    std::string shapeText() const;

private:
    DataType m_dtype = DataType::Undefined;
    std::vector<std::int64_t> m_shape;
    std::int64_t m_count = 0;
    std::shared_ptr<const void> m_owner;
    std::byte *m_data = nullptr;
    std::shared_ptr<std::vector<std::string>> m_strings;
    std::shared_ptr<const AcceleratorMemory> m_device; // null: host memory
};

template<class T>
RuntimeTensor RuntimeTensor::fromValues(DataType dtype, std::vector<std::int64_t> shape,
                                        const std::vector<T> &values)
{
    RuntimeTensor t = *allocate(dtype, std::move(shape));
    if (!values.empty()) // memcpy from an empty vector's null data is undefined, even for 0 bytes
        std::memcpy(t.m_data, values.data(), std::min(t.byteSize(), values.size() * sizeof(T)));
    return t;
}

std::string shapeText(const std::vector<std::int64_t> &shape);

// While one lives (in any thread), freed tensor buffers go back to the system instead of the
// recycling pool. For a memory plan's sizing run: the planned runs never reuse its per-tensor
// buffers, and pooled they would stay resident next to the arena.
class PoolBypass
{
public:
    PoolBypass();
    ~PoolBypass();
    PoolBypass(const PoolBypass &) = delete;
    PoolBypass &operator=(const PoolBypass &) = delete;
};

} // namespace opscope
