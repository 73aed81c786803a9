#include "runtime/kernel.h"

#include "runtime/preparedgraph.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace opscope {

Expected<RuntimeTensor> KernelContext::newOutputTensor(std::size_t i, DataType dtype,
                                                       std::vector<std::int64_t> shape) const
{
    if (i < m_planned.size() && m_planned[i].data && dtype != DataType::String) {
        const ElementCount c = countElements(shape);
        const std::size_t elem = dataTypeSize(dtype);
        if (c.ok() && elem > 0 && std::uint64_t(c.count) <= m_planned[i].bytes / elem)
            return RuntimeTensor::inBlock(dtype, std::move(shape), *m_planned[i].owner, m_planned[i].data);
    }
    Expected<RuntimeTensor> t = RuntimeTensor::allocate(dtype, std::move(shape));
    if (!t)
        return t.status().withContext(where());
    if (m_trackAllocations && t->bytes())
        m_handedOut.push_back(t->bytes());
    return t;
}

bool KernelContext::handedOut(const std::byte *bytes) const
{
    return std::find(m_handedOut.begin(), m_handedOut.end(), bytes) != m_handedOut.end();
}

std::byte *KernelContext::workspace(std::uint64_t bytes, bool planned)
{
    if (planned)
        m_workspaceAsked = std::max(m_workspaceAsked, bytes);
    if (bytes == 0)
        return nullptr;
    m_workspaceFromPlan = planned && m_plannedWorkspace.data && bytes <= m_plannedWorkspace.bytes;
    if (m_workspaceFromPlan)
        return m_plannedWorkspace.data;
    if (m_workspacePerCall) {
        m_ownWorkspace.reset(static_cast<std::byte *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
        return m_ownWorkspace.get();
    }
    // Unplanned (no plan, a body, a size the plan did not see): this thread's buffer.
    return threadScratch(1, bytes);
}

std::byte *threadScratch(int slot, std::uint64_t bytes)
{
    struct Buffer
    {
        std::unique_ptr<std::byte, decltype(&std::free)> data{nullptr, &std::free};
        std::uint64_t size = 0;
    };
    thread_local Buffer buffers[2];
    Buffer &b = buffers[slot & 1];
    if (b.size < bytes) {
        const std::uint64_t rounded = (bytes + 4095) / 4096 * 4096;
        b.data.reset(static_cast<std::byte *>(std::aligned_alloc(64, rounded)));
        b.size = b.data ? rounded : 0;
    }
    return b.data.get();
}

Expected<RuntimeTensor *> KernelContext::allocateOutput(std::size_t i, DataType dtype,
                                                        std::vector<std::int64_t> shape)
{
    if (i >= m_outputs.size())
        return Status::internal(where() + ": output " + std::to_string(i) + " does not exist");
    Expected<RuntimeTensor> t = newOutputTensor(i, dtype, std::move(shape));
    if (!t)
        return t.status();
    m_outputs[i] = std::move(*t);
    return &m_outputs[i];
}

const Attribute *KernelContext::attr(std::string_view name) const
{
    for (const Attribute &a : m_prepared.attributes)
        if (a.name == name)
            return &a;
    return nullptr;
}

std::int64_t KernelContext::attrInt(std::string_view name, std::int64_t fallback) const
{
    const Attribute *a = attr(name);
    return a ? a->i : fallback;
}

float KernelContext::attrFloat(std::string_view name, float fallback) const
{
    const Attribute *a = attr(name);
    return a ? a->f : fallback;
}

std::string KernelContext::attrString(std::string_view name, std::string fallback) const
{
    const Attribute *a = attr(name);
    return a ? a->s : fallback;
}

std::vector<std::int64_t> KernelContext::attrInts(std::string_view name,
                                                  std::vector<std::int64_t> fallback) const
{
    const Attribute *a = attr(name);
    return a ? a->ints : fallback;
}

std::vector<float> KernelContext::attrFloats(std::string_view name) const
{
    const Attribute *a = attr(name);
    return a ? a->floats : std::vector<float>();
}

std::vector<std::string> KernelContext::attrStrings(std::string_view name) const
{
    const Attribute *a = attr(name);
    return a ? a->strings : std::vector<std::string>();
}

Status KernelContext::requireInputs(std::size_t count) const
{
    for (std::size_t i = 0; i < count; ++i)
        if (!input(i))
            return fail("input " + std::to_string(i) + " is required");
    return Status::ok();
}

std::string KernelContext::where() const
{
    return "node '" + node().name + "' (" + node().opType + ")";
}

Status KernelContext::fail(const std::string &message) const
{
    return Status::invalid(where() + ": " + message);
}

Status KernelContext::unsupported(const std::string &message) const
{
    return Status::unsupported(where() + ": " + message);
}

const PreparedGraph *KernelContext::subgraph(std::string_view attrName) const
{
    for (const auto &[name, g] : m_prepared.subgraphs)
        if (name == attrName)
            return g;
    return nullptr;
}

void KernelRegistry::add(const std::string &domain, const std::string &opType, int sinceVersion, KernelFn fn)
{
    auto &list = m_entries[{domain == "ai.onnx" ? std::string() : domain, opType}];
    list.push_back({sinceVersion, fn});
    std::sort(list.begin(), list.end(),
              [](const Entry &a, const Entry &b) { return a.sinceVersion < b.sinceVersion; });
}

KernelFn KernelRegistry::find(const std::string &domain, const std::string &opType, int opset) const
{
    const auto it = m_entries.find({domain == "ai.onnx" ? std::string() : domain, opType});
    if (it == m_entries.end())
        return nullptr;
    KernelFn best = nullptr;
    for (const Entry &e : it->second)
        if (e.sinceVersion <= opset)
            best = e.fn;
    return best;
}

std::vector<std::string> KernelRegistry::opTypes() const
{
    std::vector<std::string> out;
    for (const auto &[key, entries] : m_entries)
        out.push_back(key.first.empty() ? key.second : key.first + "::" + key.second);
    return out;
}

const KernelRegistry &KernelRegistry::cpu()
{
    static const KernelRegistry registry = [] {
        KernelRegistry r;
        registerElementwiseKernels(r);
        registerActivationKernels(r);
        registerReduceKernels(r);
        registerShapeKernels(r);
        registerIndexingKernels(r);
        registerMatMulKernels(r);
        registerConvKernels(r);
        registerNormKernels(r);
        registerMiscKernels(r);
        registerControlFlowKernels(r);
        registerFusedKernels(r);
        registerAttentionKernels(r);
        registerLayoutKernels(r);
        return r;
    }();
    return registry;
}

} // namespace opscope
