#include "cudalibs.h"

// The headers only declare; this file defines the entry points as forwarders (see cudalibs.h).
// Each definition must match its declaration exactly or the compiler rejects it as a conflicting
// C function, so a signature cannot drift from the library's header.
#include <cublas_api.h>
#include <cudnn.h>
#include <cupti.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace opscope::gpu {
namespace {

// Resolved once per process; a library is never unloaded (CUDA libraries keep threads and
// driver state that outlive dlclose).
struct Library
{
    std::string path;
    Status status = Status::ok();
    std::vector<void *> symbols;
};

// The dynamic loader's own search first (LD_LIBRARY_PATH, the ld.so cache, /usr/lib), so a
// user's setting wins; then the toolkit's usual folders, which need no setting at all.
std::vector<std::string> candidates(const std::string &soname)
{
    std::vector<std::string> out{soname};
    for (const char *env : {"CUDA_HOME", "CUDA_PATH"}) {
        if (const char *dir = std::getenv(env); dir && *dir) {
            out.push_back(std::string(dir) + "/lib64/" + soname);
            out.push_back(std::string(dir) + "/lib/" + soname);
        }
    }
    out.push_back("/usr/local/cuda/lib64/" + soname);
    out.push_back("/usr/local/cuda/targets/x86_64-linux/lib/" + soname);
    return out;
}

Library load(const std::string &soname, const std::string &what, const std::string &install,
             std::initializer_list<const char *> names)
{
    Library lib;
    void *handle = nullptr;
    std::string failures; // files that exist but did not load: their loader message says why
    for (const std::string &path : candidates(soname)) {
        handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            lib.path = path;
            break;
        }
        // "<path>: cannot open shared object file" only says this candidate is not there; any
        // other message (a dependency missing, a wrong architecture) is what the user must fix.
        if (const char *err = dlerror(); err && !std::string(err).starts_with(path + ": cannot open shared object"))
            failures += std::string("\n  ") + err;
    }
    if (!handle) {
        lib.status = Status::unsupported(
            what + " is not available: " + soname + " did not load (searched LD_LIBRARY_PATH, the system's " +
            "library folders, $CUDA_HOME/lib64 and /usr/local/cuda/lib64)" + failures + "\n" + install);
        return lib;
    }
    // The file the loader picked, not the name asked for: which setting found it.
    if (Dl_info info{}; dladdr(dlsym(handle, *names.begin()), &info) && info.dli_fname)
        lib.path = info.dli_fname;
    for (const char *name : names) {
        void *sym = dlsym(handle, name);
        if (!sym) {
            lib.status = Status::unsupported(what + " at " + lib.path + " has no " + name +
                                             ": it is older than the version opscope was built against. " + install);
            lib.symbols.clear();
            return lib;
        }
        lib.symbols.push_back(sym);
    }
    return lib;
}

// The entry points, in one list per library: the index of a name is its slot in symbols.
#define OPSCOPE_CUBLAS_FUNCTIONS(X)                                                                            \
    X(cublasCreate_v2)                                                                                         \
    X(cublasDestroy_v2)                                                                                        \
    X(cublasSetStream_v2)                                                                                      \
    X(cublasSetMathMode)                                                                                       \
    X(cublasGemmStridedBatchedEx)                                                                              \
    X(cublasGetStatusName)                                                                                     \
    X(cublasGetStatusString)

#define OPSCOPE_CUDNN_FUNCTIONS(X)                                                                             \
    X(cudnnCreate)                                                                                             \
    X(cudnnDestroy)                                                                                            \
    X(cudnnSetStream)                                                                                          \
    X(cudnnGetErrorString)                                                                                     \
    X(cudnnCreateTensorDescriptor)                                                                             \
    X(cudnnDestroyTensorDescriptor)                                                                            \
    X(cudnnSetTensorNdDescriptor)                                                                              \
    X(cudnnCreateFilterDescriptor)                                                                             \
    X(cudnnDestroyFilterDescriptor)                                                                            \
    X(cudnnSetFilterNdDescriptor)                                                                              \
    X(cudnnCreateConvolutionDescriptor)                                                                        \
    X(cudnnDestroyConvolutionDescriptor)                                                                       \
    X(cudnnSetConvolutionNdDescriptor)                                                                         \
    X(cudnnSetConvolutionGroupCount)                                                                           \
    X(cudnnSetConvolutionMathType)                                                                             \
    X(cudnnFindConvolutionForwardAlgorithm)                                                                    \
    X(cudnnConvolutionForward)                                                                                 \
    X(cudnnFindConvolutionBackwardDataAlgorithm)                                                               \
    X(cudnnConvolutionBackwardData)                                                                            \
    X(cudnnCreatePoolingDescriptor)                                                                            \
    X(cudnnDestroyPoolingDescriptor)                                                                           \
    X(cudnnSetPoolingNdDescriptor)                                                                             \
    X(cudnnPoolingForward)

#define OPSCOPE_CUPTI_FUNCTIONS(X)                                                                             \
    X(cuptiActivityEnable)                                                                                     \
    X(cuptiActivityDisable)                                                                                    \
    X(cuptiActivityRegisterCallbacks)                                                                          \
    X(cuptiActivityFlushAll)                                                                                   \
    X(cuptiActivityGetNextRecord)                                                                              \
    X(cuptiActivityGetNumDroppedRecords)                                                                       \
    X(cuptiGetTimestamp)                                                                                       \
    X(cuptiActivityPushExternalCorrelationId)                                                                  \
    X(cuptiActivityPopExternalCorrelationId)                                                                   \
    X(cuptiGetResultString)                                                                                    \
    X(cuptiGetCallbackName)                                                                                    \
    X(cuptiGetVersion)                                                                                         \
    X(cuptiSetThreadIdType)

#define OPSCOPE_ENUM(name) k_##name,
#define OPSCOPE_NAME(name) #name,
enum CublasSlot { OPSCOPE_CUBLAS_FUNCTIONS(OPSCOPE_ENUM) };
enum CudnnSlot { OPSCOPE_CUDNN_FUNCTIONS(OPSCOPE_ENUM) };
enum CuptiSlot { OPSCOPE_CUPTI_FUNCTIONS(OPSCOPE_ENUM) };

// Leaked on purpose: a backend destroyed by another static's destructor at exit (a cached
// session, a test fixture) still calls cublasDestroy/cudnnDestroy through these tables, which
// must not have been destroyed before it. The libraries stay loaded until exit anyway.
const Library &cublas()
{
    static const Library &lib = *new Library(load("libcublas.so.13", "cuBLAS 13",
                                    "Install CUDA 13's cuBLAS (the CUDA toolkit, or the nvidia-cublas wheel) and "
                                    "put its folder on LD_LIBRARY_PATH.",
                                    {OPSCOPE_CUBLAS_FUNCTIONS(OPSCOPE_NAME)}));
    return lib;
}

const Library &cudnn()
{
    static const Library &lib = *new Library(load("libcudnn.so.9", "cuDNN 9",
                                    "Install cuDNN 9 for CUDA 13 (NVIDIA's cudnn9-cuda-13 package, or the "
                                    "nvidia-cudnn wheel) and put its folder on LD_LIBRARY_PATH.",
                                    {OPSCOPE_CUDNN_FUNCTIONS(OPSCOPE_NAME)}));
    return lib;
}
const Library &cupti()
{
    static const Library &lib = *new Library(load("libcupti.so.13", "CUPTI 13",
                                    "Install CUDA 13's CUPTI (the CUDA toolkit's libcupti, or the nvidia-cuda-cupti "
                                    "wheel) and put its folder on LD_LIBRARY_PATH.",
                                    {OPSCOPE_CUPTI_FUNCTIONS(OPSCOPE_NAME)}));
    return lib;
}
#undef OPSCOPE_ENUM
#undef OPSCOPE_NAME

// The function in a slot, typed as the header declares it; null when the library did not load.
template <auto Declared>
auto entry(const Library &lib, int slot)
{
    using Fn = decltype(Declared);
    return lib.symbols.empty() ? Fn(nullptr) : reinterpret_cast<Fn>(lib.symbols[std::size_t(slot)]);
}

} // namespace

Status cublasLoaded() { return cublas().status; }
Status cudnnLoaded() { return cudnn().status; }
std::string cublasPath() { return cublas().path; }
std::string cudnnPath() { return cudnn().path; }
Status cuptiLoaded() { return cupti().status; }
std::string cuptiPath() { return cupti().path; }

} // namespace opscope::gpu

using opscope::gpu::entry;

// Forwarders. A library that did not load answers NOT_INITIALIZED (its callers asked
// cublasLoaded()/cudnnLoaded() first and report that status instead).
#define OPSCOPE_BLAS(name, ...)                                                                                \
    if (auto fn = entry<&::name>(opscope::gpu::cublas(), opscope::gpu::k_##name))                            \
        return fn(__VA_ARGS__);                                                                                \
    return CUBLAS_STATUS_NOT_INITIALIZED
#define OPSCOPE_CUPTI(name, ...)                                                                               \
    if (auto fn = entry<&::name>(opscope::gpu::cupti(), opscope::gpu::k_##name))                             \
        return fn(__VA_ARGS__);                                                                                \
    return CUPTI_ERROR_NOT_INITIALIZED
#define OPSCOPE_DNN(name, ...)                                                                                 \
    if (auto fn = entry<&::name>(opscope::gpu::cudnn(), opscope::gpu::k_##name))                             \
        return fn(__VA_ARGS__);                                                                                \
    return CUDNN_STATUS_NOT_INITIALIZED

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) { OPSCOPE_BLAS(cublasCreate_v2, handle); }
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) { OPSCOPE_BLAS(cublasDestroy_v2, handle); }
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    OPSCOPE_BLAS(cublasSetStream_v2, handle, stream);
}
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    OPSCOPE_BLAS(cublasSetMathMode, handle, mode);
}
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void *beta, void *C, cudaDataType Ctype,
                                          int ldc, long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    // The header overloads this name in C++ (a legacy computeType), so the pointer type is named.
    using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                                  const void *, cudaDataType, int, long long int, const void *, cudaDataType, int,
                                  long long int, const void *, void *, cudaDataType, int, long long int, int,
                                  cublasComputeType_t, cublasGemmAlgo_t);
    if (auto fn = entry<static_cast<Fn>(&::cublasGemmStridedBatchedEx)>(opscope::gpu::cublas(),
                                                                      opscope::gpu::k_cublasGemmStridedBatchedEx))
        return fn(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C,
                  Ctype, ldc, strideC, batchCount, computeType, algo);
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
const char *cublasGetStatusName(cublasStatus_t status)
{
    auto fn = entry<&::cublasGetStatusName>(opscope::gpu::cublas(), opscope::gpu::k_cublasGetStatusName);
    return fn ? fn(status) : "CUBLAS_STATUS_NOT_INITIALIZED";
}
const char *cublasGetStatusString(cublasStatus_t status)
{
    auto fn = entry<&::cublasGetStatusString>(opscope::gpu::cublas(), opscope::gpu::k_cublasGetStatusString);
    return fn ? fn(status) : "cuBLAS did not load";
}

cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) { OPSCOPE_DNN(cudnnCreate, handle); }
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) { OPSCOPE_DNN(cudnnDestroy, handle); }
cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId)
{
    OPSCOPE_DNN(cudnnSetStream, handle, streamId);
}
const char *cudnnGetErrorString(cudnnStatus_t status)
{
    auto fn = entry<&::cudnnGetErrorString>(opscope::gpu::cudnn(), opscope::gpu::k_cudnnGetErrorString);
    return fn ? fn(status) : "cuDNN did not load";
}
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *tensorDesc)
{
    OPSCOPE_DNN(cudnnCreateTensorDescriptor, tensorDesc);
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc)
{
    OPSCOPE_DNN(cudnnDestroyTensorDescriptor, tensorDesc);
}
cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensorDesc, cudnnDataType_t dataType, int nbDims,
                                         const int dimA[], const int strideA[])
{
    OPSCOPE_DNN(cudnnSetTensorNdDescriptor, tensorDesc, dataType, nbDims, dimA, strideA);
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc)
{
    OPSCOPE_DNN(cudnnCreateFilterDescriptor, filterDesc);
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc)
{
    OPSCOPE_DNN(cudnnDestroyFilterDescriptor, filterDesc);
}
cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t filterDesc, cudnnDataType_t dataType,
                                         cudnnTensorFormat_t format, int nbDims, const int filterDimA[])
{
    OPSCOPE_DNN(cudnnSetFilterNdDescriptor, filterDesc, dataType, format, nbDims, filterDimA);
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *convDesc)
{
    OPSCOPE_DNN(cudnnCreateConvolutionDescriptor, convDesc);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc)
{
    OPSCOPE_DNN(cudnnDestroyConvolutionDescriptor, convDesc);
}
cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc, int arrayLength,
                                              const int padA[], const int filterStrideA[], const int dilationA[],
                                              cudnnConvolutionMode_t mode, cudnnDataType_t computeType)
{
    OPSCOPE_DNN(cudnnSetConvolutionNdDescriptor, convDesc, arrayLength, padA, filterStrideA, dilationA, mode,
                computeType);
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount)
{
    OPSCOPE_DNN(cudnnSetConvolutionGroupCount, convDesc, groupCount);
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc, cudnnMathType_t mathType)
{
    OPSCOPE_DNN(cudnnSetConvolutionMathType, convDesc, mathType);
}
cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                                                   const cudnnFilterDescriptor_t wDesc,
                                                   const cudnnConvolutionDescriptor_t convDesc,
                                                   const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
                                                   int *returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t *perfResults)
{
    OPSCOPE_DNN(cudnnFindConvolutionForwardAlgorithm, handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount,
                returnedAlgoCount, perfResults);
}
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc,
                                      const void *x, const cudnnFilterDescriptor_t wDesc, const void *w,
                                      const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                                      void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
                                      const cudnnTensorDescriptor_t yDesc, void *y)
{
    OPSCOPE_DNN(cudnnConvolutionForward, handle, alpha, xDesc, x, wDesc, w, convDesc, algo, workSpace,
                workSpaceSizeInBytes, beta, yDesc, y);
}
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc,
                                                        const cudnnTensorDescriptor_t dyDesc,
                                                        const cudnnConvolutionDescriptor_t convDesc,
                                                        const cudnnTensorDescriptor_t dxDesc,
                                                        const int requestedAlgoCount, int *returnedAlgoCount,
                                                        cudnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    OPSCOPE_DNN(cudnnFindConvolutionBackwardDataAlgorithm, handle, wDesc, dyDesc, convDesc, dxDesc,
                requestedAlgoCount, returnedAlgoCount, perfResults);
}
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void *alpha,
                                           const cudnnFilterDescriptor_t wDesc, const void *w,
                                           const cudnnTensorDescriptor_t dyDesc, const void *dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                                           size_t workSpaceSizeInBytes, const void *beta,
                                           const cudnnTensorDescriptor_t dxDesc, void *dx)
{
    OPSCOPE_DNN(cudnnConvolutionBackwardData, handle, alpha, wDesc, w, dyDesc, dy, convDesc, algo, workSpace,
                workSpaceSizeInBytes, beta, dxDesc, dx);
}
cudnnStatus_t cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t *poolingDesc)
{
    OPSCOPE_DNN(cudnnCreatePoolingDescriptor, poolingDesc);
}
cudnnStatus_t cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t poolingDesc)
{
    OPSCOPE_DNN(cudnnDestroyPoolingDescriptor, poolingDesc);
}
cudnnStatus_t cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t poolingDesc, const cudnnPoolingMode_t mode,
                                          const cudnnNanPropagation_t maxpoolingNanOpt, int nbDims,
                                          const int windowDimA[], const int paddingA[], const int strideA[])
{
    OPSCOPE_DNN(cudnnSetPoolingNdDescriptor, poolingDesc, mode, maxpoolingNanOpt, nbDims, windowDimA, paddingA,
                strideA);
}
cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc, const void *alpha,
                                  const cudnnTensorDescriptor_t xDesc, const void *x, const void *beta,
                                  const cudnnTensorDescriptor_t yDesc, void *y)
{
    OPSCOPE_DNN(cudnnPoolingForward, handle, poolingDesc, alpha, xDesc, x, beta, yDesc, y);
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) { OPSCOPE_CUPTI(cuptiActivityEnable, kind); }
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) { OPSCOPE_CUPTI(cuptiActivityDisable, kind); }
CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    OPSCOPE_CUPTI(cuptiActivityRegisterCallbacks, funcBufferRequested, funcBufferCompleted);
}
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) { OPSCOPE_CUPTI(cuptiActivityFlushAll, flag); }
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes, CUpti_Activity **record)
{
    OPSCOPE_CUPTI(cuptiActivityGetNextRecord, buffer, validBufferSizeBytes, record);
}
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
    OPSCOPE_CUPTI(cuptiActivityGetNumDroppedRecords, context, streamId, dropped);
}
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp) { OPSCOPE_CUPTI(cuptiGetTimestamp, timestamp); }
CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    OPSCOPE_CUPTI(cuptiActivityPushExternalCorrelationId, kind, id);
}
CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
    OPSCOPE_CUPTI(cuptiActivityPopExternalCorrelationId, kind, lastId);
}
CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    OPSCOPE_CUPTI(cuptiGetResultString, result, str);
}
CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    OPSCOPE_CUPTI(cuptiGetCallbackName, domain, cbid, name);
}
CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version) { OPSCOPE_CUPTI(cuptiGetVersion, version); }
CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) { OPSCOPE_CUPTI(cuptiSetThreadIdType, type); }

} // extern "C"
