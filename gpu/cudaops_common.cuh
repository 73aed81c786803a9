#pragma once
// What the CUDA kernel files share (cudaops_*.cu): the launch shape, loads and stores through
// float for the half types, and the dispatch from a DType or an element size to a kernel's type.
// Everything is internal to each file that includes it.

#include "cudaops.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace opscope::gpu {
namespace {

constexpr int kThreads = 256;

inline unsigned gridFor(std::int64_t n)
{
    const std::int64_t blocks = (n + kThreads - 1) / kThreads;
    return unsigned(blocks < 1 ? 1 : (blocks > 65535 * 8 ? 65535 * 8 : blocks));
}

// Loads and stores through float for every floating type.
template<class T>
__device__ __forceinline__ float toF(T v)
{
    return float(v);
}
template<>
__device__ __forceinline__ float toF<__half>(__half v)
{
    return __half2float(v);
}
template<>
__device__ __forceinline__ float toF<__nv_bfloat16>(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}
template<class T>
__device__ __forceinline__ T fromF(float v)
{
    return T(v);
}
template<>
__device__ __forceinline__ __half fromF<__half>(float v)
{
    return __float2half_rn(v);
}
template<>
__device__ __forceinline__ __nv_bfloat16 fromF<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

// Dispatch on the floating types.
template<class F>
cudaError_t onFloat(DType t, F &&f)
{
    switch (t) {
    case DType::F32: f(float{}); break;
    case DType::F16: f(__half{}); break;
    case DType::BF16: f(__nv_bfloat16{}); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

template<class F>
cudaError_t onElementBytes(std::size_t bytes, F &&f)
{
    switch (bytes) {
    case 1: f(std::uint8_t{}); break;
    case 2: f(std::uint16_t{}); break;
    case 4: f(std::uint32_t{}); break;
    case 8: f(std::uint64_t{}); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

template<class F>
cudaError_t onAnyType(DType t, F &&f)
{
    switch (t) {
    case DType::F32: f(float{}); break;
    case DType::F16: f(__half{}); break;
    case DType::BF16: f(__nv_bfloat16{}); break;
    case DType::F64: f(double{}); break;
    case DType::I64: f(std::int64_t{}); break;
    case DType::I32: f(std::int32_t{}); break;
    case DType::I8: f(std::int8_t{}); break;
    case DType::U8: f(std::uint8_t{}); break;
    }
    return cudaSuccess;
}

template<class T>
constexpr bool isFloating()
{
    return std::is_floating_point_v<T> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
}

} // namespace
} // namespace opscope::gpu
