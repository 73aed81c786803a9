#include "cudabackend.h"

#include "cudadevices.h"
#include "cudaexec.h"
#include "cudalibs.h"
#include "cuptitracer.h"
#include "indexing.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

namespace opscope::gpu {

Status cudaCheck(cudaError_t err, const std::string &what)
{
    if (err == cudaSuccess)
        return Status::ok();
    const std::string msg = what + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
    if (err == cudaErrorMemoryAllocation)
        return Status::io(msg);
    if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice)
        return Status::unsupported(msg);
    return Status::internal(msg);
}

Status cublasCheck(cublasStatus_t st, const std::string &what)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return Status::ok();
    const std::string msg = what + ": " + cublasGetStatusName(st) + " (" + cublasGetStatusString(st) + ")";
    // Not supported is a property of the shapes and types, not a fault: the host runs the node.
    return st == CUBLAS_STATUS_NOT_SUPPORTED ? Status::unsupported(msg) : Status::internal(msg);
}

Status cudnnCheck(cudnnStatus_t st, const std::string &what)
{
    if (st == CUDNN_STATUS_SUCCESS)
        return Status::ok();
    const std::string msg = what + ": " + cudnnGetErrorString(st);
    // cuDNN 9's NOT_SUPPORTED family is 3000–3999 (a sub-code says which limit was hit).
    const int code = int(st);
    return code >= int(CUDNN_STATUS_NOT_SUPPORTED) && code < int(CUDNN_STATUS_INTERNAL_ERROR)
               ? Status::unsupported(msg)
               : Status::internal(msg);
}

std::optional<DType> cudaType(DataType t)
{
    switch (t) {
    case DataType::Float: return DType::F32;
    case DataType::Float16: return DType::F16;
    case DataType::BFloat16: return DType::BF16;
    case DataType::Double: return DType::F64;
    case DataType::Int64: return DType::I64;
    case DataType::Int32: return DType::I32;
    case DataType::Int8: return DType::I8;
    case DataType::UInt8:
    case DataType::Bool: return DType::U8;
    default: return std::nullopt;
    }
}

bool isFloatType(DataType t)
{
    return t == DataType::Float || t == DataType::Float16 || t == DataType::BFloat16;
}

bool allInputsOfType(const KernelContext &ctx, bool (*ok)(DataType), std::size_t count)
{
    for (std::size_t i = 0; i < count && i < ctx.inputCount(); ++i)
        if (const RuntimeTensor *t = ctx.input(i); t && !ok(t->dtype()))
            return false;
    return true;
}

const CudaOp *CudaOpTable::find(const std::string &domain, const std::string &op) const
{
    const std::string d = domain == "ai.onnx" ? "" : domain;
    auto it = m_ops.find({d, op});
    return it == m_ops.end() ? nullptr : &it->second;
}

std::vector<std::string> CudaOpTable::opTypes() const
{
    std::vector<std::string> out;
    for (const auto &[key, op] : m_ops)
        out.push_back(key.first.empty() ? key.second : key.first + "::" + key.second);
    return out;
}

const CudaOpTable &cudaOps()
{
    static const CudaOpTable table = [] {
        CudaOpTable t;
        registerCudaElementwiseOps(t);
        registerCudaTensorOps(t);
        registerCudaBlasOps(t);
        registerCudaDnnOps(t);
        return t;
    }();
    return table;
}

std::vector<std::string> cudaOpTypes()
{
    return cudaOps().opTypes();
}

// The device's stream and memory: shared by the backend and every tensor it allocated, so a
// tensor that outlives the backend still frees (stream-ordered) into a live stream.
struct CudaDeviceState
{
    int device = 0;
    cudaStream_t stream = nullptr;
    std::size_t maxPitch = 0; // cudaDevAttrMaxPitch: cudaMemcpy2D refuses wider pitches
    ~CudaDeviceState()
    {
        if (!stream)
            return;
        int previous = 0;
        cudaGetDevice(&previous);
        cudaSetDevice(device);
        cudaStreamSynchronize(stream);
        cudaStreamDestroy(stream);
        cudaSetDevice(previous);
    }
};

namespace {

// Makes `device` current for the calling thread while it lives.
class DeviceScope
{
public:
    explicit DeviceScope(int device)
    {
        cudaGetDevice(&m_previous);
        if (m_previous != device)
            cudaSetDevice(device);
        m_device = device;
    }
    ~DeviceScope()
    {
        if (m_previous != m_device)
            cudaSetDevice(m_previous);
    }

private:
    int m_previous = 0;
    int m_device = 0;
};

class CudaMemory final : public AcceleratorMemory
{
public:
    explicit CudaMemory(std::shared_ptr<CudaDeviceState> state) : m_state(std::move(state)) {}
    std::string deviceName() const override { return "cuda:" + std::to_string(m_state->device); }
    Status copyToHost(const std::byte *src, std::byte *dst, std::size_t bytes) const override
    {
        DeviceScope scope(m_state->device);
        OPSCOPE_TRY(cudaCheck(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, m_state->stream),
                              "device-to-host copy"));
        return cudaCheck(cudaStreamSynchronize(m_state->stream), "device-to-host copy");
    }
    const std::shared_ptr<CudaDeviceState> &state() const { return m_state; }

private:
    std::shared_ptr<CudaDeviceState> m_state;
};

Expected<RuntimeTensor> allocateOn(const std::shared_ptr<CudaDeviceState> &state,
                                   const std::shared_ptr<const AcceleratorMemory> &memory, DataType dtype,
                                   std::vector<std::int64_t> shape)
{
    const std::size_t elem = dataTypeSize(dtype);
    if (dtype == DataType::String || elem == 0)
        return Status::unsupported("cannot place a " + std::string(dataTypeName(dtype)) + " tensor in GPU memory");
    std::uint64_t count = 1;
    for (std::int64_t d : shape) {
        if (d < 0)
            return Status::invalid("tensor shape " + shapeText(shape) + " has a negative dimension");
        if (d != 0 && count > (std::uint64_t(1) << 60) / std::uint64_t(d))
            return Status::invalid("tensor of shape " + shapeText(shape) + " is too large to allocate");
        count *= std::uint64_t(d);
    }
    if (count > (std::uint64_t(1) << 60) / elem)
        return Status::invalid("tensor of shape " + shapeText(shape) + " is too large to allocate");
    const std::size_t bytes = std::max<std::size_t>(256, (count * elem + 255) / 256 * 256);
    void *p = nullptr;
    const cudaError_t err = cudaMallocAsync(&p, bytes, state->stream);
    if (err != cudaSuccess) {
        cudaGetLastError(); // clears the sticky-free allocation error
        std::size_t freeBytes = 0, totalBytes = 0;
        cudaMemGetInfo(&freeBytes, &totalBytes);
        return Status::io("out of GPU memory on cuda:" + std::to_string(state->device) + ": a " + shapeText(shape) +
                          " tensor needs " + std::to_string(bytes >> 20) + " MiB, " +
                          std::to_string(freeBytes >> 20) + " MiB of " + std::to_string(totalBytes >> 20) +
                          " MiB are free (" + cudaGetErrorString(err) + ")");
    }
    std::shared_ptr<const void> owner(p, [state](const void *q) {
        DeviceScope scope(state->device);
        cudaFreeAsync(const_cast<void *>(q), state->stream);
    });
    return RuntimeTensor::onDevice(dtype, std::move(shape), std::move(owner), static_cast<std::byte *>(p), memory);
}

Expected<RuntimeTensor> upload(const std::shared_ptr<CudaDeviceState> &state,
                               const std::shared_ptr<const AcceleratorMemory> &memory, const RuntimeTensor &host)
{
    Expected<RuntimeTensor> dev = allocateOn(state, memory, host.dtype(), host.shape());
    if (!dev)
        return dev.status();
    // From pageable memory the copy returns once the bytes are staged: the host tensor may go.
    if (host.byteSize())
        OPSCOPE_TRY(cudaCheck(cudaMemcpyAsync(dev->mutableBytes(), host.bytes(), host.byteSize(),
                                              cudaMemcpyHostToDevice, state->stream),
                              "host-to-device copy"));
    return dev;
}

} // namespace

// Device copies of initializers by their host bytes: weights go over once per backend. An entry
// holds a weak reference to the bytes' owner: bytes freed with their session and reallocated at
// the same address for another model's weights are a different entry, not a stale hit.
struct ConstantCache
{
    struct Entry
    {
        std::weak_ptr<const void> hostOwner;
        RuntimeTensor device;
    };
    std::mutex mutex;
    std::map<std::pair<const std::byte *, std::size_t>, Entry> byBytes;
};

struct CudaExecShared
{
    std::shared_ptr<const AcceleratorMemory> memory;
    ConstantCache *constants = nullptr;
    cudnnHandle_t *dnn = nullptr;
};

// Passed through CudaExec without widening its header: the backend's shared parts.
thread_local const CudaExecShared *tlsShared = nullptr;

Expected<cudnnHandle_t> CudaExec::dnn()
{
    if (!tlsShared || !tlsShared->dnn)
        return Status::internal("cuDNN handle outside a CUDA backend call");
    cudnnHandle_t &h = *tlsShared->dnn;
    if (!h) {
        OPSCOPE_TRY(cudnnLoaded());
        if (Status st = cudnnCheck(cudnnCreate(&h), "creating the cuDNN handle"); !st) {
            h = nullptr;
            return st;
        }
        cudnnSetStream(h, stream);
    }
    return h;
}

Expected<RuntimeTensor> CudaExec::allocate(DataType dtype, std::vector<std::int64_t> shape)
{
    return allocateOn(state, tlsShared->memory, dtype, std::move(shape));
}

Expected<RuntimeTensor> CudaExec::input(const KernelContext &ctx, std::size_t i)
{
    const RuntimeTensor *t = ctx.input(i);
    if (!t)
        return Status::internal("input " + std::to_string(i) + " is missing");
    if (!t->onHost()) {
        if (t->deviceMemory() != tlsShared->memory.get())
            return Status::unsupported("input " + std::to_string(i) + " is on " + t->deviceMemory()->deviceName() +
                                       ", not on cuda:" + std::to_string(device));
        return *t;
    }
    if (ctx.isConstantInput(i) && t->dtype() != DataType::String) {
        ConstantCache &c = *tlsShared->constants;
        std::lock_guard lock(c.mutex);
        auto key = std::make_pair(t->bytes(), t->byteSize());
        const std::shared_ptr<const void> &owner = t->owner();
        if (auto it = c.byBytes.find(key); it != c.byBytes.end()) {
            const ConstantCache::Entry &e = it->second;
            const bool sameOwner = owner && !e.hostOwner.expired() && !e.hostOwner.owner_before(owner) &&
                                   !owner.owner_before(e.hostOwner);
            if (sameOwner && e.device.dtype() == t->dtype())
                return e.device.reshaped(t->shape());
            c.byBytes.erase(it);
        }
        Expected<RuntimeTensor> dev = upload(state, tlsShared->memory, *t);
        if (dev && owner) {
            // Weights of sessions that ended leave with them.
            for (auto it = c.byBytes.begin(); it != c.byBytes.end();)
                it = it->second.hostOwner.expired() ? c.byBytes.erase(it) : std::next(it);
            c.byBytes[key] = {owner, *dev};
        }
        return dev;
    }
    return upload(state, tlsShared->memory, *t);
}

Expected<void *> CudaExec::scratch(std::size_t bytes)
{
    if (bytes == 0)
        return static_cast<void *>(nullptr);
    if (!scratchBlock.isValid() || scratchBlock.byteSize() < bytes) {
        Expected<RuntimeTensor> t = allocate(DataType::UInt8, {std::int64_t(bytes)});
        if (!t)
            return t.status();
        scratchBlock = std::move(*t);
    }
    return static_cast<void *>(scratchBlock.mutableBytes());
}

Status CudaExec::copyRows(std::byte *dst, std::size_t dstPitch, const std::byte *src, std::size_t srcPitch,
                          std::size_t width, std::size_t rows, const char *what)
{
    switch (planRowCopy(dstPitch, srcPitch, width, rows, maxPitch)) {
    case RowCopy::Nothing: return Status::ok();
    case RowCopy::Flat:
        return cudaCheck(cudaMemcpyAsync(dst, src, width * rows, cudaMemcpyDeviceToDevice, stream), what);
    case RowCopy::Strided:
        return cudaCheck(cudaMemcpy2DAsync(dst, dstPitch, src, srcPitch, width, rows, cudaMemcpyDeviceToDevice, stream),
                         what);
    case RowCopy::ByRow:
        for (std::size_t r = 0; r < rows; ++r)
            OPSCOPE_TRY(cudaCheck(cudaMemcpyAsync(dst + r * dstPitch, src + r * srcPitch, width,
                                                  cudaMemcpyDeviceToDevice, stream),
                                  what));
        return Status::ok();
    case RowCopy::TooMany: break;
    }
    return Status::unsupported(std::string(what) + ": " + std::to_string(rows) + " rows " +
                               std::to_string(std::max(dstPitch, srcPitch)) +
                               " bytes apart, past the device's copy pitch limit of " + std::to_string(maxPitch));
}

Status CudaExec::finish(KernelContext &ctx, std::size_t i, RuntimeTensor t, cudaError_t launch, const char *what)
{
    OPSCOPE_TRY(cudaCheck(launch, what));
    ctx.setOutput(i, std::move(t));
    return Status::ok();
}

namespace {

class CudaBackend final : public Backend
{
public:
    CudaBackend(int device, int threads, const CudaBackendOptions &options)
        : m_device(device), m_threads(std::max(1, threads)), m_options(options)
    {
    }

    ~CudaBackend() override
    {
        if (!m_state)
            return; // init failed before touching the device (cuda:99 must not become current)
        DeviceScope scope(m_device);
        if (m_state && m_state->stream)
            cudaStreamSynchronize(m_state->stream);
        // Cached weights free into the stream before it goes (the state outlives us if a tensor does).
        {
            std::lock_guard lock(m_constants.mutex);
            m_constants.byBytes.clear();
        }
        if (m_blas)
            cublasDestroy(m_blas);
        if (m_dnn)
            cudnnDestroy(m_dnn);
    }

    Status init()
    {
        int count = 0;
        if (cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) {
            cudaGetLastError();
            // The runtime says "driver version is insufficient" when there is no driver at all:
            // say that instead, which is what a machine without a GPU needs to hear.
            if (err == cudaErrorInsufficientDriver && cudaDriverMissing())
                return Status::unsupported("cuda:" + std::to_string(m_device) +
                                           " is not available: no NVIDIA driver is installed (libcuda.so.1 did not "
                                           "load); run on cpu:0, or install the driver on a machine with a GPU");
            return cudaCheck(err, "cuda:" + std::to_string(m_device) + " is not available (`opscope-cli devices` says more)");
        }
        if (m_device >= count)
            return Status::invalid("cuda:" + std::to_string(m_device) + " does not exist: this machine has " +
                                   std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s"));
        DeviceScope scope(m_device);
        m_state = std::make_shared<CudaDeviceState>();
        m_state->device = m_device;
        OPSCOPE_TRY(cudaCheck(cudaStreamCreateWithFlags(&m_state->stream, cudaStreamNonBlocking), "creating a stream"));
        int maxPitch = 0;
        OPSCOPE_TRY(cudaCheck(cudaDeviceGetAttribute(&maxPitch, cudaDevAttrMaxPitch, m_device), "the copy pitch limit"));
        m_state->maxPitch = std::size_t(std::max(0, maxPitch));
        // Freed blocks stay in the pool: after the first run no cudaMalloc happens in a run.
        cudaMemPool_t pool = nullptr;
        OPSCOPE_TRY(cudaCheck(cudaDeviceGetDefaultMemPool(&pool, m_device), "the device's memory pool"));
        std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
        OPSCOPE_TRY(cudaCheck(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
                              "the memory pool's release threshold"));
        OPSCOPE_TRY(cublasLoaded());
        OPSCOPE_TRY(cublasCheck(cublasCreate(&m_blas), "creating the cuBLAS handle"));
        cublasSetStream(m_blas, m_state->stream);
        // Pedantic without TF32: float32 GEMMs are float32 FMAs, as on the CPU.
        cublasSetMathMode(m_blas, m_options.allowTf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
        m_memory = std::make_shared<CudaMemory>(m_state);
        m_shared.memory = m_memory;
        m_shared.constants = &m_constants;
        m_shared.dnn = &m_dnn;
        const char *sync = std::getenv("OPSCOPE_CUDA_SYNC");
        m_syncEachNode = sync && *sync && std::strcmp(sync, "0") != 0;
        return Status::ok();
    }

    std::string name() const override { return "cuda:" + std::to_string(m_device); }
    int threads() const override { return m_threads; }
    bool hostMemory() const override { return false; }

    Expected<RuntimeTensor> allocate(DataType dtype, std::vector<std::int64_t> shape) override
    {
        DeviceScope scope(m_device);
        return allocateOn(m_state, m_memory, dtype, std::move(shape));
    }
    Expected<RuntimeTensor> copyIn(const RuntimeTensor &host) override
    {
        if (!host.onHost())
            return host;
        DeviceScope scope(m_device);
        return upload(m_state, m_memory, host);
    }
    Expected<RuntimeTensor> copyOut(const RuntimeTensor &device) override { return device.toHost(); }

    KernelFn kernelFor(const std::string &domain, const std::string &opType, int opset) const override
    {
        // Sessions prepare the host kernel of every node: it is the fallback.
        return KernelRegistry::cpu().find(domain, opType, opset);
    }

    HostInputs hostInputs(const KernelContext &ctx) const override
    {
        switch (placement(ctx).place) {
        case Place::Device: return HostInputs::None;
        case Place::View: return HostInputs::AllButFirst;
        case Place::Host:
        case Place::ShapeArithmetic: break;
        }
        return HostInputs::All;
    }

    Status run(const PreparedNode &node, KernelContext &ctx) override
    {
        const Placed placed = placement(ctx);
        if (placed.place != Place::Device) {
            if (placed.place == Place::Host)
                countFallback(ctx.node(), placed.why);
            return node.kernel(ctx);
        }
        Status st = runOnDevice(node, ctx);
        // accepts() looks at shapes and attributes only; the kernel can still find that the
        // device cannot do it (no cuDNN algorithm, a broadcast beyond the kernels' rank, cuDNN
        // not installed). Valid input is never refused for that: the host runs the node, counted
        // as a fallback with the kernel's reason, which `run` prints.
        if (st.kind() == ErrorKind::Unsupported) {
            countFallback(ctx.node(), st.message());
            return runOnHost(node, ctx);
        }
        if (!st)
            return st.withContext("cuda:" + std::to_string(m_device) + ", node '" + ctx.node().name + "' (" +
                                  ctx.node().opType + ")");
        return st;
    }

    void enterNode(const Node &node) override
    {
        if (CuptiTracer *tracer = CuptiTracer::active())
            tracer->beginNode(node.name, node.opType, node.domain);
    }

    void leaveNode() override
    {
        if (CuptiTracer *tracer = CuptiTracer::active())
            tracer->endNode();
    }

    Status synchronize() override
    {
        if (!m_state)
            return Status::ok();
        DeviceScope scope(m_device);
        return cudaCheck(cudaStreamSynchronize(m_state->stream), "running the queued kernels");
    }

    std::vector<HostFallback> hostFallbacks() const override
    {
        std::lock_guard lock(m_fallbackMutex);
        std::vector<HostFallback> all;
        for (const auto &[op, f] : m_fallbacks)
            all.push_back(f);
        return all;
    }

private:
    // Host: no kernel here for the op or its types (a fallback, counted); ShapeArithmetic: small
    // integer work that belongs on the host anyway (not counted).
    enum class Place { Device, View, Host, ShapeArithmetic };
    struct Placed
    {
        Place place;
        const char *why = ""; // Host: for the fallback list
    };

    // Asked twice per node (hostInputs, then run): a table lookup and the op's accepts(), which
    // reads shapes and attributes only — cheaper than carrying the answer between the calls.
    Placed placement(const KernelContext &ctx) const
    {
        const Node &n = ctx.node();
        const CudaOp *op = cudaOps().find(n.domain, n.opType);
        if (op && op->view)
            return {Place::View};
        // Shape arithmetic stays on the host: integer tensors that are all there already (Shape →
        // Gather → Concat → Reshape, Range, ConstantOfShape) would only make the GPU wait for
        // copies back. Control flow is never that: its bodies run on this device.
        bool allHostIntegers = !n.hasSubgraphs();
        for (std::size_t i = 0; i < ctx.inputCount() && allHostIntegers; ++i)
            if (const RuntimeTensor *t = ctx.input(i))
                allHostIntegers = t->onHost() && !isFloatType(t->dtype()) && t->dtype() != DataType::Double;
        if (allHostIntegers)
            return {Place::ShapeArithmetic};
        if (!op)
            return {Place::Host, "no CUDA kernel for the op"};
        if (op->accepts && !op->accepts(ctx))
            return {Place::Host, "the CUDA kernel does not take these types, shapes or attributes"};
        return {Place::Device};
    }

    Status runOnDevice(const PreparedNode &node, KernelContext &ctx)
    {
        const CudaOp *op = cudaOps().find(ctx.node().domain, ctx.node().opType);
        std::lock_guard lock(m_launchMutex); // one stream, one cuBLAS handle: one launcher at a time
        DeviceScope scope(m_device);
        CudaExec exec;
        exec.device = m_device;
        exec.stream = m_state->stream;
        exec.blas = m_blas;
        exec.allowTf32 = m_options.allowTf32;
        exec.maxPitch = m_state->maxPitch;
        exec.state = m_state;
        exec.caches = &m_caches;
        exec.nodeCache = node.cache;
        tlsShared = &m_shared;
        // A launch's error is read with cudaGetLastError, which also returns any earlier call's
        // failure on this thread (a cudaSetDevice elsewhere): start each node clean.
        cudaGetLastError();
        Status st = op->run(exec, ctx);
        tlsShared = nullptr;
        if (st && m_syncEachNode)
            st = cudaCheck(cudaStreamSynchronize(m_state->stream), "after the node (OPSCOPE_CUDA_SYNC)");
        return st;
    }

    // The node's host kernel on host copies of its inputs, after the device kernel declined.
    Status runOnHost(const PreparedNode &node, KernelContext &ctx)
    {
        std::vector<RuntimeTensor> copies(ctx.inputCount());
        std::vector<const RuntimeTensor *> inputs(ctx.inputCount());
        for (std::size_t i = 0; i < ctx.inputCount(); ++i) {
            inputs[i] = ctx.input(i);
            if (inputs[i] && !inputs[i]->onHost()) {
                Expected<RuntimeTensor> host = inputs[i]->toHost();
                if (!host)
                    return host.status().withContext("node '" + ctx.node().name + "' (" + ctx.node().opType + ")");
                copies[i] = std::move(*host);
                inputs[i] = &copies[i];
            }
        }
        // Device ops have no bodies (control flow is placed on the host before it gets here).
        static const SubgraphRunner noBodies = [](const PreparedGraph &, std::vector<RuntimeTensor>)
            -> Expected<std::vector<RuntimeTensor>> { return Status::internal("a body in a device fallback"); };
        std::vector<RuntimeTensor> outputs(ctx.outputCount());
        KernelContext host(node, inputs, outputs, m_threads, noBodies);
        // A sizing run's workspaces are per call here too: nothing left behind for the plan.
        host.setWorkspacePerCall(ctx.workspacePerCall());
        OPSCOPE_TRY(node.kernel(host));
        for (std::size_t i = 0; i < outputs.size(); ++i)
            ctx.setOutput(i, std::move(outputs[i]));
        return Status::ok();
    }

    void countFallback(const Node &n, std::string_view why)
    {
        const std::string key = n.domain.empty() || n.domain == "ai.onnx" ? n.opType : n.domain + "::" + n.opType;
        std::lock_guard lock(m_fallbackMutex);
        HostFallback &f = m_fallbacks[key];
        if (f.calls++ == 0) {
            f.op = key;
            f.reason = std::string(why); // the first call's; later calls copy nothing
        }
    }

    int m_device;
    int m_threads;
    CudaBackendOptions m_options;
    std::shared_ptr<CudaDeviceState> m_state;
    std::shared_ptr<const AcceleratorMemory> m_memory;
    cublasHandle_t m_blas = nullptr;
    cudnnHandle_t m_dnn = nullptr;
    ConstantCache m_constants;
    Caches m_caches;
    CudaExecShared m_shared;
    std::mutex m_launchMutex;
    bool m_syncEachNode = false;
    mutable std::mutex m_fallbackMutex;
    std::map<std::string, HostFallback> m_fallbacks;
};

} // namespace

Expected<std::unique_ptr<Backend>> makeCudaBackend(int device, int threads, const CudaBackendOptions &options)
{
    auto backend = std::make_unique<CudaBackend>(device, threads, options);
    OPSCOPE_TRY(backend->init());
    return std::unique_ptr<Backend>(std::move(backend));
}

void registerCudaBackend()
{
    registerBackendFactory("cuda", [](int index, int threads) {
        CudaBackendOptions options;
        const char *tf32 = std::getenv("OPSCOPE_CUDA_TF32");
        options.allowTf32 = tf32 && *tf32 && std::strcmp(tf32, "0") != 0;
        return makeCudaBackend(index, threads, options);
    });
}

} // namespace opscope::gpu
