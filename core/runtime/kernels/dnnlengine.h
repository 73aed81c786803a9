#pragma once
// The one oneDNN CPU engine every oneDNN-backed kernel (conv, pooling, int8 conv) shares, and a
// stream per thread: creating a stream on every call cost more than the primitive itself on small
// tensors (an audio model's 1-D convolutions: ~3 µs of work). The temporaries around a primitive
// (reordered inputs and outputs, scratchpads) are the call's workspace (KernelContext::workspace).

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

} // namespace opscope::kernels
