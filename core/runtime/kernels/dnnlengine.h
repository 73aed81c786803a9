#pragma once
// The one oneDNN CPU engine every oneDNN-backed kernel (conv, pooling, int8 conv) shares, a
// stream per thread, and per-thread scratch buffers for the temporaries around a primitive
// (reordered inputs and outputs). Creating a stream or allocating those on every call cost more
// than the primitive itself on small tensors (an audio model's 1-D convolutions: ~3 µs of work).

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>

namespace opscope::kernels {

inline dnnl::engine &dnnlEngine()
{
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

// In-order CPU stream: a primitive executed on it runs on the calling thread.
inline dnnl::stream &dnnlStream()
{
    thread_local dnnl::stream stream(dnnlEngine());
    return stream;
}

// A 64-byte aligned buffer of at least `bytes` for this thread; `slot` 0–3 keeps several alive at
// once. Valid until the same thread asks for the same slot again.
inline void *dnnlScratch(int slot, std::size_t bytes)
{
    struct Buffer
    {
        std::unique_ptr<void, decltype(&std::free)> data{nullptr, &std::free};
        std::size_t size = 0;
    };
    thread_local Buffer buffers[4];
    Buffer &b = buffers[slot & 3];
    if (b.size < bytes) {
        const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
        b.data.reset(std::aligned_alloc(64, rounded));
        b.size = b.data ? rounded : 0;
        if (!b.data)
            throw dnnl::error(dnnl_out_of_memory, "scratch buffer");
    }
    return b.data.get();
}

// A memory object of `desc` in a scratch slot.
inline dnnl::memory dnnlScratchMemory(const dnnl::memory::desc &desc, int slot)
{
    return dnnl::memory(desc, dnnlEngine(), dnnlScratch(slot, desc.get_size()));
}

} // namespace opscope::kernels
