#pragma once
// The CUDA backend: runs a plan's queues on an NVIDIA GPU through opscope's runtime. Its tensors
// live in device memory (a stream-ordered pool per device); its kernels are cuBLAS (MatMul,
// Gemm), cuDNN (Conv, ConvTranspose, pooling) and its own (cudaops.h). A node it has no kernel
// for, or none for those types or attributes, runs on the host CPU runtime with its inputs
// copied over, and is listed by hostFallbacks(). Plain C++ header: callers need no CUDA headers.

#include "runtime/backend.h"

#include <memory>

namespace opscope::gpu {

struct CudaBackendOptions
{
    bool allowTf32 = false; // float32 GEMMs and convolutions on TF32 tensor cores (not bit-exact)
};

// cuda:`device`. Fails with a message when the device is missing or the driver cannot run it.
Expected<std::unique_ptr<Backend>> makeCudaBackend(int device, int threads, const CudaBackendOptions &options = {});

// Registers "cuda" with core's backend registry, so that makeBackend("cuda:0") works; the
// composition root (app/) calls it once. OPSCOPE_CUDA_TF32=1 in the environment allows TF32.
void registerCudaBackend();

// The ops the CUDA backend has kernels of its own for ("Conv", "com.microsoft::FusedConv"…).
std::vector<std::string> cudaOpTypes();

} // namespace opscope::gpu
