#pragma once
// Inside the CUDA backend: what one of its kernels gets to run a node (the device's stream and
// library handles, device memory, inputs made device-resident) and the table of its kernels.
// Host C++ (g++): the library headers are C APIs; the device code is in cudaops_*.cu.

#include "cudaops.h"
#include "runtime/kernel.h"
#include "runtime/runtimetensor.h"
#include "util/status.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace opscope::gpu {

struct CudaDeviceState; // stream, memory pool: shared with the tensors it allocated

Status cudaCheck(cudaError_t err, const std::string &what);
Status cublasCheck(cublasStatus_t st, const std::string &what);
Status cudnnCheck(cudnnStatus_t st, const std::string &what);

// The CUDA type of a tensor type, if the kernels have one.
std::optional<DType> cudaType(DataType t);
bool isFloatType(DataType t); // float32, float16, bfloat16

class CudaExec
{
public:
    int device = 0;
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    bool allowTf32 = false;
    std::size_t maxPitch = 0; // cudaDevAttrMaxPitch

    // cuDNN's handle, made on first use (its libraries load only then).
    Expected<cudnnHandle_t> dnn();
    // New device memory on this stream (the pool's: no cudaMalloc once warm).
    Expected<RuntimeTensor> allocate(DataType dtype, std::vector<std::int64_t> shape);
    // Input i on the device: as is when it is already, an initializer's cached copy, else a
    // copy of the host tensor made now.
    Expected<RuntimeTensor> input(const KernelContext &ctx, std::size_t i);
    // Device bytes for this call only (cuDNN's workspace), stream-ordered like every allocation.
    Expected<void *> scratch(std::size_t bytes);
    // Copies `rows` rows of `width` bytes, device to device on this stream, between rows
    // `dstPitch` and `srcPitch` bytes apart (planRowCopy: past the device's pitch limit, flat or
    // row by row, else Unsupported so the host runs the node).
    Status copyRows(std::byte *dst, std::size_t dstPitch, const std::byte *src, std::size_t srcPitch,
                    std::size_t width, std::size_t rows, const char *what);
    // Sets output i and checks the launch.
    Status finish(KernelContext &ctx, std::size_t i, RuntimeTensor t, cudaError_t launch, const char *what);

    std::shared_ptr<CudaDeviceState> state;
    struct Caches *caches = nullptr;
    std::shared_ptr<KernelCache> nodeCache; // the running node's (Caches::slot's key)
    RuntimeTensor scratchBlock;
};

using CudaKernel = Status (*)(CudaExec &, KernelContext &);
// Whether the kernel takes this call (types, attributes); else the node runs on the host.
using CudaAccepts = bool (*)(const KernelContext &);

struct CudaOp
{
    CudaKernel run = nullptr;
    CudaAccepts accepts = nullptr;
    // Only relabels input 0's shape (Reshape, Squeeze…): the CPU kernel runs on the device
    // tensor itself, its other inputs brought to the host.
    bool view = false;
};

class CudaOpTable
{
public:
    void add(const std::string &domain, const std::string &op, CudaOp entry) { m_ops[{domain, op}] = entry; }
    void add(const std::string &op, CudaOp entry) { add("", op, entry); }
    const CudaOp *find(const std::string &domain, const std::string &op) const;
    std::vector<std::string> opTypes() const;

private:
    std::map<std::pair<std::string, std::string>, CudaOp> m_ops;
};

const CudaOpTable &cudaOps();
void registerCudaElementwiseOps(CudaOpTable &t);
void registerCudaTensorOps(CudaOpTable &t);
void registerCudaBlasOps(CudaOpTable &t);
void registerCudaDnnOps(CudaOpTable &t);

// Per-node cached state of the library kernels (cuDNN descriptors and algorithm, by node and
// input shape), kept by the backend. Keyed by the node's KernelCache and checked against a weak
// reference to it: a backend outlives sessions, and a later session's node can sit at a freed
// one's address (the ONNX suite on the GPU ran 12 convolutions and pools with the previous
// test's descriptors before this check).
struct Caches
{
    std::mutex mutex;
    struct Entry
    {
        std::weak_ptr<KernelCache> owner;
        std::shared_ptr<void> state;
    };
    std::unordered_map<const KernelCache *, Entry> byNode;

    // The node's state slot (empty when new or when the node it belonged to is gone); the
    // caller holds `mutex`.
    std::shared_ptr<void> &slot(const std::shared_ptr<KernelCache> &node)
    {
        auto [it, added] = byNode.try_emplace(node.get());
        Entry &e = it->second;
        if (e.owner.expired() || e.owner.lock() != node) {
            e.owner = node;
            e.state.reset();
        }
        // Now and then drop the entries of nodes that are gone (their sessions ended).
        if (added && (byNode.size() & (byNode.size() - 1)) == 0)
            for (auto i = byNode.begin(); i != byNode.end();)
                i = i->second.owner.expired() ? byNode.erase(i) : std::next(i);
        return e.state;
    }
};

// Helpers for kernels.
bool allInputsOfType(const KernelContext &ctx, bool (*ok)(DataType), std::size_t count);

} // namespace opscope::gpu
