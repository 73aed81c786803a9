#pragma once
// The one oneDNN CPU engine every oneDNN-backed kernel (conv, pooling, int8 conv) shares.

#include <oneapi/dnnl/dnnl.hpp>

namespace opscope::kernels {

inline dnnl::engine &dnnlEngine()
{
    static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
}

} // namespace opscope::kernels
