#include "runtime/backend.h"

#include "util/numbers.h"

#include <map>
#include <mutex>

namespace opscope {
namespace {

struct Factories
{
    std::mutex mutex;
    std::map<std::string, BackendFactory> byKind;
};

Factories &factories()
{
    static Factories *f = new Factories; // never destroyed: backends may be made during exit
    return *f;
}

} // namespace

void registerBackendFactory(const std::string &kind, BackendFactory factory)
{
    Factories &f = factories();
    std::lock_guard lock(f.mutex);
    f.byKind[kind] = std::move(factory);
}

std::vector<std::string> registeredBackendKinds()
{
    Factories &f = factories();
    std::lock_guard lock(f.mutex);
    std::vector<std::string> kinds{"cpu"};
    for (const auto &[kind, factory] : f.byKind)
        kinds.push_back(kind);
    return kinds;
}

CpuBackend::CpuBackend(int index, int threads) : m_index(index), m_threads(std::max(1, threads)) {}

Expected<RuntimeTensor> CpuBackend::allocate(DataType dtype, std::vector<std::int64_t> shape)
{
    return RuntimeTensor::allocate(dtype, std::move(shape));
}

KernelFn CpuBackend::kernelFor(const std::string &domain, const std::string &opType, int opset) const
{
    return KernelRegistry::cpu().find(domain, opType, opset);
}

Status CpuBackend::run(const PreparedNode &node, KernelContext &ctx)
{
    return node.kernel(ctx);
}

Expected<std::unique_ptr<Backend>> makeBackend(const std::string &device, int threads)
{
    const auto colon = device.find(':');
    const std::string kind = device.substr(0, colon);
    int index = 0;
    if (colon != std::string::npos) {
        // "cuda:1abc" was cuda:1 and "cpu: 2" cpu:2 with stoi; a negative index is not a number here.
        const std::optional<std::int64_t> n = parseWholeNumber(std::string_view(device).substr(colon + 1), 0, 1023);
        if (!n)
            return Status::invalid("device '" + device + "' has no valid index: write kind:N with N from 0 to 1023 "
                                   "(cpu:0, cuda:1)");
        index = int(*n);
    }
    if (kind == "cpu")
        return std::unique_ptr<Backend>(new CpuBackend(index, threads));
    BackendFactory factory;
    {
        Factories &f = factories();
        std::lock_guard lock(f.mutex);
        if (auto it = f.byKind.find(kind); it != f.byKind.end())
            factory = it->second;
    }
    if (factory)
        return factory(index, threads);
    std::string known;
    for (const std::string &k : registeredBackendKinds())
        known += (known.empty() ? "" : ", ") + k + ":N";
    return Status::unsupported("device '" + device + "' is not available in this build (known: " + known +
                               (kind == "cuda" ? "; configure with -DOPSCOPE_WITH_CUDA=ON for CUDA)" : ")"));
}

} // namespace opscope
