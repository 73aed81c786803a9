#include "runtime/backend.h"

namespace opscope {

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
        try {
            index = std::stoi(device.substr(colon + 1));
        } catch (const std::exception &) {
            return Status::invalid("device '" + device + "' has no valid index");
        }
    }
    if (kind == "cpu")
        return std::unique_ptr<Backend>(new CpuBackend(index, threads));
    return Status::unsupported("device '" + device + "' is not available in this runtime (known: cpu:N)");
}

} // namespace opscope
