#include "schedule/costmodel.h"

#include "runtime/kernels/gemm.h"
#include "util/numbers.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <omp.h>
#include <unistd.h>

namespace opscope::schedule {

namespace {

std::vector<std::int64_t> dimsOf(const Graph &g, ValueId v)
{
    std::vector<std::int64_t> dims;
    if (!v.valid())
        return dims;
    const Value &value = g.value(v);
    if (value.initializer)
        return value.initializer->dims;
    if (value.type.isTensor() && value.type.shape)
        for (const Dim &d : value.type.shape->dims)
            dims.push_back(d.isKnown() ? d.value : 1);
    return dims;
}

double elements(const std::vector<std::int64_t> &dims)
{
    double n = 1.0;
    for (std::int64_t d : dims)
        n *= double(std::max<std::int64_t>(d, 0));
    return n;
}

double elementBytes(const Graph &g, ValueId v)
{
    if (!v.valid())
        return 0.0;
    const Value &value = g.value(v);
    const DataType t = value.initializer ? value.initializer->dtype : value.type.elemType;
    const std::size_t size = t == DataType::Undefined || t == DataType::String ? 4 : dataTypeSize(t);
    return elements(dimsOf(g, v)) * double(size);
}

} // namespace

OpCost estimateCost(const Graph &graph, NodeId id)
{
    const Node &n = graph.node(id);
    OpCost c;
    for (ValueId v : n.inputs)
        c.bytes += elementBytes(graph, v);
    for (ValueId v : n.outputs)
        c.outputBytes += elementBytes(graph, v);
    c.bytes += c.outputBytes;
    const double out = n.outputs.empty() ? 0.0 : elements(dimsOf(graph, n.outputs[0]));
    const std::string &op = n.opType;
    if ((op == "Conv" || op == "FusedConv" || op == "NchwcConv" || op == "NhwcConv" ||
         op == "ConvTranspose") &&
        n.inputs.size() >= 2) {
        const auto w = dimsOf(graph, n.inputs[1]);
        double perOutput = 1.0; // MACs per output element: C_in/group · kernel
        for (std::size_t i = 1; i < w.size(); ++i)
            perOutput *= double(w[i]);
        c.flops = 2.0 * out * perOutput;
    } else if ((op == "MatMul" || op == "Gemm" || op == "FusedMatMul" || op == "FusedGemm" ||
                op == "MatMulInteger" || op == "QLinearMatMul") &&
               n.inputs.size() >= 2) {
        const auto a = dimsOf(graph, n.inputs[0]);
        const bool transA = n.attribute("transA") && n.attribute("transA")->i;
        const std::int64_t k = a.empty() ? 1 : transA && a.size() >= 2 ? a[a.size() - 2] : a.back();
        c.flops = 2.0 * out * double(std::max<std::int64_t>(k, 1));
    } else if ((op == "Attention" || op == "MultiHeadAttention") && n.inputs.size() >= 3) {
        // Q·Kᵀ and P·V: 2·Sk multiply-adds per element of Q and of the output.
        const auto k = dimsOf(graph, n.inputs[1]);
        const bool heads = k.size() == 3, kT = n.attribute("k_transposed") && n.attribute("k_transposed")->i;
        const std::int64_t sk = heads ? k[1] : k.size() == 4 ? k[kT ? 3 : 2] : 1;
        c.flops = 2.0 * double(std::max<std::int64_t>(sk, 1)) * (elements(dimsOf(graph, n.inputs[0])) + out);
    } else if (op == "LSTM" || op == "GRU" || op == "RNN") {
        c.flops = 8.0 * out * 64.0; // gates: a rough multiple of the output
    } else {
        c.flops = out; // elementwise-like: one op per output element
    }
    return c;
}

double CostModel::seconds(const OpCost &cost, std::size_t device) const
{
    const DeviceModel &d = devices.at(device);
    return d.overheadSeconds + std::max(cost.flops / d.flopsPerSecond, cost.bytes / d.bytesPerSecond);
}

double CostModel::transferSeconds(double bytes, std::size_t from, std::size_t to) const
{
    if (from == to)
        return 0.0;
    const bool remote = from < processOf.size() && to < processOf.size() && processOf[from] != processOf[to];
    const LinkModel &l = remote ? remoteLink : link;
    return l.latencySeconds + bytes / l.bytesPerSecond;
}

namespace {

std::filesystem::path defaultCacheFile()
{
    const char *xdg = std::getenv("XDG_CACHE_HOME");
    const char *home = std::getenv("HOME");
    const std::filesystem::path base = xdg && *xdg     ? xdg
                                       : home && *home ? std::filesystem::path(home) / ".cache"
                                                       : "/tmp";
    return base / "opscope" / "calibration.json";
}

// 2: the sgemm is measured on one thread (version 1 let OpenMP use every core).
constexpr int kCalibrationVersion = 2;

struct Measured
{
    double gflops = 0.0, gbps = 0.0;
};

Measured measure()
{
    using Clock = std::chrono::steady_clock;
    Measured m;
    // sgemm 256³ on one thread: what one CPU device sustains on dense compute. (oneDNN's sgemm
    // runs on OpenMP: pinned to one thread here, or a 2-core machine measures 2× per device.)
    const int previousThreads = omp_get_max_threads();
    omp_set_num_threads(1);
    const std::int64_t n = 256;
    std::vector<float> a(std::size_t(n * n), 0.5f), b(std::size_t(n * n), 0.25f), c(std::size_t(n * n));
    double best = 1e30;
    for (int i = 0; i < 5; ++i) {
        const auto t0 = Clock::now();
        (void)kernels::gemmF32(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    m.gflops = 2.0 * double(n * n * n) / best / 1e9;
    omp_set_num_threads(previousThreads);
    // memcpy of 32 MiB: memory bandwidth (read + write).
    std::vector<char> src(32u << 20, 1), dst(32u << 20);
    best = 1e30;
    for (int i = 0; i < 5; ++i) {
        const auto t0 = Clock::now();
        std::memcpy(dst.data(), src.data(), src.size());
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    m.gbps = 2.0 * double(src.size()) / best / 1e9;
    return m;
}

} // namespace

CostModel calibratedCpuModel(int devices, int threadsPerDevice, const std::string &cacheFile)
{
    const std::filesystem::path file =
        cacheFile.empty() ? defaultCacheFile() : std::filesystem::path(cacheFile);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    Measured m;
    try {
        std::ifstream in(file);
        if (in) {
            const nlohmann::json j = nlohmann::json::parse(in);
            if (j.value("host", "") == host && j.value("version", 0) == kCalibrationVersion) {
                m.gflops = j.value("cpu_gflops_per_thread", 0.0);
                m.gbps = j.value("cpu_gbytes_per_s", 0.0);
            }
        }
    } catch (const std::exception &) {
        m = {}; // a broken cache is measured again
    }
    if (m.gflops <= 0.0 || m.gbps <= 0.0) {
        m = measure();
        std::error_code ec;
        std::filesystem::create_directories(file.parent_path(), ec);
        std::ofstream out(file.string() + ".tmp");
        out << nlohmann::json{{"version", kCalibrationVersion},
                              {"host", host},
                              {"cpu_gflops_per_thread", m.gflops},
                              {"cpu_gbytes_per_s", m.gbps}}
                   .dump(2);
        out.close();
        std::filesystem::rename(file.string() + ".tmp", file, ec);
    }
    CostModel model;
    for (int i = 0; i < devices; ++i)
        model.devices.push_back(
            {"cpu:" + std::to_string(i), m.gflops * 1e9 * threadsPerDevice, m.gbps * 1e9, 3e-6, 0});
    // Between CPU "devices" of one machine a transfer is a memcpy.
    model.link = {1e-6, m.gbps * 1e9};
    return model;
}

Expected<CostModel> simulatedModel(const std::string &spec, const CostModel &cpuBaseline)
{
    // [HOSTSx]kind:count[:link][@eth]
    if (const auto x = spec.find('x'); x != std::string::npos && x > 0 &&
                                       spec.find_first_not_of("0123456789") == x) {
        const int hosts = int(parseWholeNumber(std::string_view(spec).substr(0, x), 0, 1 << 20).value_or(0));
        std::string one = spec.substr(x + 1);
        const auto at = one.find('@');
        const std::string between = at == std::string::npos ? "ib" : one.substr(at + 1);
        if (at != std::string::npos)
            one = one.substr(0, at);
        if (hosts < 1 || hosts > 1024)
            return Status::invalid("host count in '" + spec + "' must be 1 to 1024");
        if (const auto inner = one.find('x'); inner != std::string::npos && inner > 0 &&
                                              one.find_first_not_of("0123456789") == inner)
            return Status::invalid("'" + spec + "' gives the host count twice: write HOSTSxkind:count (4xgpu:8)");
        if (between != "ib" && between != "eth")
            return Status::invalid("link between hosts in '" + spec + "' must be ib or eth");
        Expected<CostModel> host = simulatedModel(one, cpuBaseline);
        if (!host)
            return host.status();
        if (std::size_t(hosts) * host->devices.size() > 4096)
            return Status::invalid("'" + spec + "' is more than 4096 devices");
        CostModel m;
        m.link = host->link;
        // GPU to GPU across hosts (NCCL over GPUDirect RDMA): latency well above a link inside one.
        m.remoteLink = between == "ib" ? LinkModel{8e-6, 2.5e10} : LinkModel{2.5e-5, 1.25e10};
        for (int h = 0; h < hosts; ++h)
            for (DeviceModel d : host->devices) {
                d.name = "host" + std::to_string(h) + ":" + d.name;
                m.devices.push_back(d);
                m.processOf.push_back(h);
            }
        return m;
    }
    // kind:count[:link]
    if (spec.find('@') != std::string::npos)
        return Status::invalid("'" + spec + "': @ib and @eth name the link between hosts, which needs a host count "
                               "(2xgpu:4@eth)");
    const auto colon = spec.find(':');
    if (colon == std::string::npos)
        return Status::invalid("device spec '" + spec + "' must be kind:count (cpu:4, gpu:8, gpu:8:pcie)");
    const std::string kind = spec.substr(0, colon);
    const std::string rest = spec.substr(colon + 1);
    const auto colon2 = rest.find(':');
    const int count = int(parseWholeNumber(std::string_view(rest).substr(0, colon2), 0, 1 << 20).value_or(0));
    const std::string link = colon2 == std::string::npos ? "" : rest.substr(colon2 + 1);
    if (count < 1 || count > 1024)
        return Status::invalid("device count in '" + spec + "' must be a whole number from 1 to 1024");
    if (!link.empty() && kind == "cpu")
        return Status::invalid("'" + spec + "': CPU devices take no link (cpu:4; gpu:8:pcie names a GPU link)");
    if (!link.empty() && link != "pcie" && link != "nvlink")
        return Status::invalid("link in '" + spec + "' must be pcie or nvlink (gpu:8:pcie)");
    CostModel m;
    if (kind == "cpu") {
        const DeviceModel base = cpuBaseline.devices.empty() ? DeviceModel{} : cpuBaseline.devices.front();
        for (int i = 0; i < count; ++i)
            m.devices.push_back({"cpu:" + std::to_string(i), base.flopsPerSecond, base.bytesPerSecond,
                                 base.overheadSeconds, 0});
        m.link = cpuBaseline.link;
    } else if (kind == "gpu") {
        // An H100-class device: ~50 TFLOP/s sustained fp32 tensor-core work, 3 TB/s HBM, 5 µs launches.
        for (int i = 0; i < count; ++i)
            m.devices.push_back({"gpu:" + std::to_string(i), 5e13, 3e12, 5e-6, 80ull << 30, true, true});
        m.link = link == "pcie" ? LinkModel{1e-5, 2.5e10} : LinkModel{3e-6, 4e11}; // PCIe 4 x16 / NVLink 4
    } else {
        return Status::invalid("unknown device kind '" + kind + "' (cpu or gpu)");
    }
    return m;
}

} // namespace opscope::schedule
