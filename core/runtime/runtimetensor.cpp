#include "runtime/runtimetensor.h"

#include "runtime/kernels/kernelutil.h"

#include "ir/types.h"
#include "util/systemmemory.h"

#include <cstdlib>
#include <cstring>
#include <atomic>
#include <mutex>
#include <new>
#include <unordered_map>

#if defined(__unix__)
#include <sys/mman.h>
#endif

namespace opscope {
namespace {

// Recycles tensor buffers by exact (64-byte rounded) size: a model run allocates the same sizes
// every time, so after the first run there is no malloc, no free and no page fault per tensor.
// Bounded: beyond `capBytes` of idle buffers, memory goes back to the system.
class BufferPool
{
public:
    static BufferPool &instance()
    {
        static BufferPool *pool = new BufferPool; // never destroyed: tensors may outlive statics
        return *pool;
    }

    void *take(std::size_t bytes)
    {
        {
            std::lock_guard lock(m_mutex);
            auto it = m_free.find(bytes);
            if (it != m_free.end() && !it->second.empty()) {
                void *p = it->second.back();
                it->second.pop_back();
                m_cached -= bytes;
                return p;
            }
        }
        return std::aligned_alloc(64, bytes);
    }

    void give(void *p, std::size_t bytes)
    {
        if (bypass.load(std::memory_order_relaxed) == 0) {
            std::lock_guard lock(m_mutex);
            if (m_cached + bytes <= capBytes) {
                m_free[bytes].push_back(p);
                m_cached += bytes;
                return;
            }
        }
        std::free(p);
    }

    // While bypassed (a memory plan's sizing run), large buffers are mappings of their own: freed,
    // they leave the process. From malloc they would stay in its heap — glibc raises its mmap
    // threshold after the first large free — and sit resident beside the arena that replaces
    // them (13 MiB of PaddleOCR's detector's 79 MiB peak RSS).
    static constexpr std::size_t directBytes = std::size_t(64) << 10;
    bool direct(std::size_t bytes) const
    {
#if defined(__unix__)
        return bytes >= directBytes && bypass.load(std::memory_order_relaxed) > 0;
#else
        (void)bytes;
        return false;
#endif
    }
    static void *map(std::size_t bytes)
    {
#if defined(__unix__)
        void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return p == MAP_FAILED ? nullptr : p;
#else
        return std::aligned_alloc(64, bytes);
#endif
    }
    static void unmap(void *p, std::size_t bytes)
    {
#if defined(__unix__)
        munmap(p, bytes);
#else
        (void)bytes;
        std::free(p);
#endif
    }

    std::atomic<int> bypass{0};

private:
    static constexpr std::size_t capBytes = std::size_t(1024) << 20;
    std::mutex m_mutex;
    std::unordered_map<std::size_t, std::vector<void *>> m_free;
    std::size_t m_cached = 0;
};

} // namespace

PoolBypass::PoolBypass()
{
    BufferPool::instance().bypass.fetch_add(1);
}

PoolBypass::~PoolBypass()
{
    BufferPool::instance().bypass.fetch_sub(1);
}

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    return Shape::fromSizes(shape).toString();
}

namespace {

std::atomic<std::uint64_t> g_allocationLimit{0};

std::uint64_t allocationLimit()
{
    const std::uint64_t limit = g_allocationLimit.load(std::memory_order_relaxed);
    return limit ? std::min<std::uint64_t>(limit, systemMemoryBytes()) : systemMemoryBytes();
}

std::string allocationLimitText()
{
    return g_allocationLimit.load(std::memory_order_relaxed)
               ? "the " + bytesText(allocationLimit()) + " allowed per allocation"
               : "this machine's " + bytesText(systemMemoryBytes()) + " of memory and swap";
}

} // namespace

void RuntimeTensor::setAllocationLimit(std::uint64_t bytes)
{
    g_allocationLimit.store(bytes, std::memory_order_relaxed);
}

Expected<RuntimeTensor> RuntimeTensor::allocate(DataType dtype, std::vector<std::int64_t> shape)
{
    // Hot path: count without building any message; only a failure pays for one.
    const ElementCount c = countElements(shape);
    if (!c.ok())
        return checkedElementCount(shape, "tensor of shape " + opscope::shapeText(shape)).status();
    const std::int64_t count = c.count;
    RuntimeTensor t;
    t.m_dtype = dtype;
    t.m_shape = std::move(shape);
    t.m_count = count;
    if (dtype == DataType::String) {
        t.m_strings = std::make_shared<std::vector<std::string>>(static_cast<std::size_t>(count));
        return t;
    }
    const std::size_t elem = dataTypeSize(dtype);
    if (elem == 0)
        return Status::unsupported("cannot allocate a tensor of type " + std::string(dataTypeName(dtype)));
    if (static_cast<std::uint64_t>(count) > (std::uint64_t(1) << 62) / elem)
        return Status::invalid("tensor of shape " + opscope::shapeText(t.m_shape) +
                               " is too large to allocate");
    const std::size_t bytes =
        std::max<std::size_t>(64, (static_cast<std::size_t>(count) * elem + 63) / 64 * 64);
    if (bytes > allocationLimit())
        return Status::invalid("tensor of shape " + opscope::shapeText(t.m_shape) + " needs " +
                               bytesText(bytes) + ", more than " + allocationLimitText());
    BufferPool &pool = BufferPool::instance();
    const bool direct = pool.direct(bytes);
    void *p = direct ? BufferPool::map(bytes) : pool.take(bytes);
    if (!p)
        return Status::io("out of memory allocating " + std::to_string(bytes >> 20) +
                          " MiB for a tensor of shape " + opscope::shapeText(t.m_shape));
    if (direct)
        t.m_owner = std::shared_ptr<const void>(p, [bytes](const void *q) { BufferPool::unmap(const_cast<void *>(q), bytes); });
    else
        t.m_owner = std::shared_ptr<const void>(
            p, [bytes](const void *q) { BufferPool::instance().give(const_cast<void *>(q), bytes); });
    t.m_data = static_cast<std::byte *>(p);
    return t;
}

Expected<std::shared_ptr<std::byte>> RuntimeTensor::allocateBlock(std::size_t bytes)
{
    bytes = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
    if (bytes > allocationLimit())
        return Status::invalid("a memory arena of " + bytesText(bytes) + " is more than " + allocationLimitText());
    void *p = BufferPool::instance().take(bytes);
    if (!p)
        return Status::io("out of memory allocating a " + bytesText(bytes) + " memory arena");
    return std::shared_ptr<std::byte>(static_cast<std::byte *>(p),
                                      [bytes](std::byte *q) { BufferPool::instance().give(q, bytes); });
}

RuntimeTensor RuntimeTensor::inBlock(DataType dtype, std::vector<std::int64_t> shape, std::shared_ptr<const void> owner,
                                     std::byte *data)
{
    RuntimeTensor t;
    t.m_dtype = dtype;
    t.m_count = countElements(shape).count;
    t.m_shape = std::move(shape);
    t.m_owner = std::move(owner);
    t.m_data = data;
    return t;
}

RuntimeTensor RuntimeTensor::onDevice(DataType dtype, std::vector<std::int64_t> shape,
                                      std::shared_ptr<const void> owner, std::byte *data,
                                      std::shared_ptr<const AcceleratorMemory> memory)
{
    RuntimeTensor t = inBlock(dtype, std::move(shape), std::move(owner), data);
    t.m_device = std::move(memory);
    return t;
}

Expected<RuntimeTensor> RuntimeTensor::toHost() const
{
    if (!m_device)
        return *this;
    Expected<RuntimeTensor> host = allocate(m_dtype, m_shape);
    if (!host)
        return host.status();
    if (byteSize() > 0)
        OPSCOPE_TRY(m_device->copyToHost(m_data, host->m_data, byteSize())
                        .withContext("copying a " + shapeText() + " tensor from " + m_device->deviceName()));
    return host;
}

Expected<RuntimeTensor> RuntimeTensor::zeros(DataType dtype, std::vector<std::int64_t> shape)
{
    Expected<RuntimeTensor> t = allocate(dtype, std::move(shape));
    if (t && dtype != DataType::String)
        std::memset(t->m_data, 0, t->byteSize());
    return t;
}

RuntimeTensor RuntimeTensor::fromConstant(const Tensor &tensor)
{
    RuntimeTensor t;
    t.m_dtype = tensor.dtype;
    t.m_shape = tensor.dims;
    t.m_count = tensor.elementCount();
    if (tensor.dtype == DataType::String) {
        t.m_strings = std::make_shared<std::vector<std::string>>(tensor.strings ? *tensor.strings
                                                                                : std::vector<std::string>());
        return t;
    }
    t.m_owner = tensor.data; // keeps the (mapped) buffer alive
    t.m_data = tensor.data ? const_cast<std::byte *>(tensor.data->bytes().data()) : nullptr;
    return t;
}

RuntimeTensor RuntimeTensor::fromStrings(std::vector<std::int64_t> shape, std::vector<std::string> values)
{
    RuntimeTensor t;
    t.m_dtype = DataType::String;
    t.m_shape = std::move(shape);
    t.m_count = static_cast<std::int64_t>(values.size());
    t.m_strings = std::make_shared<std::vector<std::string>>(std::move(values));
    return t;
}

RuntimeTensor RuntimeTensor::reshaped(std::vector<std::int64_t> shape) const
{
    RuntimeTensor t = *this;
    t.m_shape = std::move(shape);
    return t;
}

double RuntimeTensor::valueAsDouble(std::int64_t i) const
{
    if (m_device) {
        Expected<RuntimeTensor> host = toHost();
        return host ? host->valueAsDouble(i) : 0.0;
    }
    switch (m_dtype) {
    case DataType::Float: return data<float>()[i];
    case DataType::Double: return data<double>()[i];
    case DataType::Int64: return static_cast<double>(data<std::int64_t>()[i]);
    case DataType::Int32: return data<std::int32_t>()[i];
    case DataType::Int16: return data<std::int16_t>()[i];
    case DataType::Int8: return data<std::int8_t>()[i];
    case DataType::UInt8: return data<std::uint8_t>()[i];
    case DataType::UInt16: return data<std::uint16_t>()[i];
    case DataType::UInt32: return data<std::uint32_t>()[i];
    case DataType::UInt64: return static_cast<double>(data<std::uint64_t>()[i]);
    case DataType::Bool: return data<std::uint8_t>()[i] ? 1.0 : 0.0;
    // Half types too: the inspector's statistics of float16 weights read as zeros without them.
    case DataType::Float16: return kernels::halfToFloat(data<std::uint16_t>()[i]);
    case DataType::BFloat16: return kernels::bfloat16ToFloat(data<std::uint16_t>()[i]);
    default: return 0.0;
    }
}

std::int64_t RuntimeTensor::valueAsInt(std::int64_t i) const
{
    if (m_device) {
        Expected<RuntimeTensor> host = toHost();
        return host ? host->valueAsInt(i) : 0;
    }
    switch (m_dtype) {
    case DataType::Int64: return data<std::int64_t>()[i];
    case DataType::Int32: return data<std::int32_t>()[i];
    case DataType::UInt64: return static_cast<std::int64_t>(data<std::uint64_t>()[i]);
    default: return static_cast<std::int64_t>(valueAsDouble(i));
    }
}

std::vector<std::int64_t> RuntimeTensor::toInt64Vector() const
{
    if (m_device) {
        Expected<RuntimeTensor> host = toHost();
        return host ? host->toInt64Vector() : std::vector<std::int64_t>{};
    }
    std::vector<std::int64_t> out(static_cast<std::size_t>(m_count));
    for (std::int64_t i = 0; i < m_count; ++i)
        out[static_cast<std::size_t>(i)] = valueAsInt(i);
    return out;
}

Tensor RuntimeTensor::toConstant() const
{
    Tensor t;
    t.dtype = m_dtype;
    t.dims = m_shape;
    if (m_dtype == DataType::String) {
        t.strings = std::make_shared<const std::vector<std::string>>(*m_strings);
        return t;
    }
    if (m_device) {
        Expected<RuntimeTensor> host = toHost();
        return host ? host->toConstant() : Tensor{};
    }
    std::vector<std::byte> copy(m_data, m_data + byteSize());
    t.data = Buffer::fromBytes(std::move(copy));
    return t;
}

std::string RuntimeTensor::shapeText() const
{
    return opscope::shapeText(m_shape);
}

} // namespace opscope
