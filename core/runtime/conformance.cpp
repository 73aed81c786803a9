#include "runtime/conformance.h"

#include "util/mappedfile.h"
#include <climits>

#include "onnx/modelio.h"
#include "onnx/protoconvert.h"
#include "runtime/kernels/kernelutil.h"
#include "runtime/backend.h"
#include "runtime/executionplan.h"
#include "runtime/session.h"

#include <algorithm>
#include <optional>
#include <cmath>
#include <fstream>
#include <onnx/onnx_pb.h>
#include <regex>
#include <sstream>

namespace opscope {
namespace {

// The suite stores bfloat16 data as uint16 (numpy has no bfloat16): same bits, other label.
RuntimeTensor asDeclared(RuntimeTensor t, DataType declared)
{
    if (declared == DataType::BFloat16 && t.dtype() == DataType::UInt16) {
        Tensor c = t.toConstant();
        c.dtype = DataType::BFloat16;
        return RuntimeTensor::fromConstant(c);
    }
    return t;
}

std::string fmt(double v)
{
    std::ostringstream os;
    os.precision(3);
    os << v;
    return os.str();
}

} // namespace

Expected<RuntimeTensor> readTensorFile(const std::filesystem::path &path)
{
    Expected<std::shared_ptr<const MappedFile>> file = MappedFile::open(path);
    if (!file)
        return file.status();
    onnx::TensorProto proto;
    const std::span<const std::byte> bytes = (*file)->bytes();
    if (bytes.size() > static_cast<std::size_t>(INT_MAX) ||
        !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return Status::invalid("'" + path.string() + "' is not a TensorProto");
    // Sequence/optional protos parse as TensorProto with unknown fields and no data type.
    if (proto.data_type() == 0)
        return Status::unsupported("'" + path.filename().string() +
                                   "' holds a sequence, map or optional value");
    ExternalFiles files(path.parent_path());
    Expected<Tensor> t = tensorFromProto(proto, files, "'" + path.filename().string() + "'");
    if (!t)
        return t.status();
    return RuntimeTensor::fromConstant(*t);
}

Status compareTensors(const RuntimeTensor &got, const RuntimeTensor &want, double rtol, double atol,
                      double &maxAbsError)
{
    if (got.dtype() != want.dtype())
        return Status::invalid("type " + std::string(dataTypeName(got.dtype())) + ", expected " +
                               std::string(dataTypeName(want.dtype())));
    if (got.shape() != want.shape())
        return Status::invalid("shape " + got.shapeText() + ", expected " + want.shapeText());
    const std::int64_t n = want.elementCount();
    if (want.dtype() == DataType::String) {
        for (std::int64_t i = 0; i < n; ++i)
            if (got.strings()[std::size_t(i)] != want.strings()[std::size_t(i)])
                return Status::invalid("element " + std::to_string(i) + " is '" +
                                       got.strings()[std::size_t(i)] + "', expected '" +
                                       want.strings()[std::size_t(i)] + "'");
        return Status::ok();
    }
    const bool floating = isFloatingPoint(want.dtype()) || want.dtype() == DataType::Complex64;
    const auto value = [](const RuntimeTensor &t, std::int64_t i) -> double {
        switch (t.dtype()) {
        case DataType::Float16: return kernels::halfToFloat(t.data<std::uint16_t>()[i]);
        case DataType::BFloat16: return kernels::bfloat16ToFloat(t.data<std::uint16_t>()[i]);
        default: return t.valueAsDouble(i);
        }
    };
    for (std::int64_t i = 0; i < n; ++i) {
        const double g = value(got, i), w = value(want, i);
        if (std::isnan(w) || std::isnan(g)) {
            if (std::isnan(w) != std::isnan(g))
                return Status::invalid("element " + std::to_string(i) + " is " + fmt(g) + ", expected " +
                                       fmt(w));
            continue;
        }
        if (std::isinf(w) || std::isinf(g)) {
            if (g != w)
                return Status::invalid("element " + std::to_string(i) + " is " + fmt(g) + ", expected " +
                                       fmt(w));
            continue;
        }
        const double err = std::abs(g - w);
        maxAbsError = std::max(maxAbsError, err);
        const bool ok = floating ? err <= atol + rtol * std::abs(w) : got.valueAsInt(i) == want.valueAsInt(i);
        if (!ok)
            return Status::invalid("element " + std::to_string(i) + " is " + fmt(g) + ", expected " + fmt(w) +
                                   " (abs error " + fmt(err) + ")");
    }
    return Status::ok();
}

bool sameBits(const RuntimeTensor &a, const RuntimeTensor &b)
{
    if (a.dtype() != b.dtype() || a.shape() != b.shape())
        return false;
    if (a.dtype() == DataType::String)
        return a.strings() == b.strings();
    return a.byteSize() == b.byteSize() && (a.byteSize() == 0 || std::memcmp(a.bytes(), b.bytes(), a.byteSize()) == 0);
}

ConformanceResult runConformanceTest(const std::filesystem::path &testDir, const ConformanceOptions &options)
{
    ConformanceResult r;
    r.name = testDir.filename().string();
    const auto unsupported = [&r](const std::string &why) {
        r.outcome = ConformanceResult::Outcome::Unsupported;
        r.detail = why;
        return r;
    };
    const auto fail = [&r](const std::string &why) {
        r.outcome = ConformanceResult::Outcome::Fail;
        r.detail = why;
        return r;
    };
    LoadOptions load;
    load.runChecker = false;
    Expected<ImportResult> model = loadModel(testDir / "model.onnx", load);
    if (!model)
        return fail("load: " + model.status().message());
    SessionOptions so;
    so.threads = options.threads;
    so.checkMemory = false;
    so.planMemory = options.planMemory && !options.backend;
    Expected<std::unique_ptr<InferenceSession>> session = InferenceSession::create(model->model, so);
    if (!session)
        return session.status().kind() == ErrorKind::Unsupported ? unsupported(session.status().message())
                                                                 : fail(session.status().message());
    const InferenceSession &s = **session;
    std::vector<const IoInfo *> feedInfos;
    for (const IoInfo &i : s.inputs())
        if (!i.hasDefault)
            feedInfos.push_back(&i);
    for (const IoInfo &io : s.outputs())
        if (io.type.isKnown() && io.type.kind != TypeInfo::Kind::Tensor)
            return unsupported("output '" + io.name + "' is a " + io.type.toString() +
                               " (sequences, maps and optionals are not supported)");
    for (const IoInfo *io : feedInfos)
        if (io->type.isKnown() && io->type.kind != TypeInfo::Kind::Tensor)
            return unsupported("input '" + io->name + "' is a " + io->type.toString() +
                               " (sequences, maps and optionals are not supported)");

    std::vector<std::filesystem::path> sets;
    for (const auto &e : std::filesystem::directory_iterator(testDir))
        if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
            sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty())
        return fail("no test_data_set_* folders");

    for (const auto &set : sets) {
        Feeds feeds;
        const auto inputs = numberedTensorFiles(set, "input");
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            Expected<RuntimeTensor> t = readTensorFile(inputs[i]);
            if (!t)
                return t.status().kind() == ErrorKind::Unsupported ? unsupported(t.status().message())
                                                                   : fail(t.status().message());
            if (i >= feedInfos.size())
                return fail("more input files than model inputs");
            feeds.emplace_back(feedInfos[i]->name, asDeclared(std::move(*t), feedInfos[i]->type.elemType));
        }
        if (const Status fits = s.checkFeeds(feeds); !fits) {
            r.outcome = ConformanceResult::Outcome::InvalidData;
            r.detail = "the test data contradicts the model: " + fits.message();
            return r;
        }
        std::optional<ExecutionPlan> devicePlan;
        ExecOptions onDevice;
        if (options.backend) {
            Expected<ExecutionPlan> p = serialPlan(s.model().graph, options.backend->name());
            if (!p)
                return fail(p.status().message());
            devicePlan = std::move(*p);
            onDevice.threads = options.threads;
            onDevice.backends = {options.backend};
        }
        Expected<std::vector<RuntimeTensor>> outs =
            options.backend ? s.run(feeds, &*devicePlan, &onDevice) : s.run(feeds);
        if (!outs)
            return outs.status().kind() == ErrorKind::Unsupported ? unsupported(outs.status().message())
                                                                  : fail("run: " + outs.status().message());
        if (options.planMemory && !options.backend) {
            ExecOptions exec;
            exec.threads = options.threads;
            MemoryRunStats stats;
            exec.memoryStats = &stats;
            Expected<std::vector<RuntimeTensor>> again = s.run(feeds, nullptr, &exec);
            if (!again)
                return fail("run from the memory plan: " + again.status().message());
            // The first data set's plan was sized by a run on these very feeds: every output it
            // put in the arena must be written there. One the kernel allocated itself means
            // arena bytes reserved for nothing (a kernel that bypasses newOutputTensor, or a
            // sizing run that missed that it does).
            if (set == sets.front() && stats.elsewhere != 0)
                return fail(std::to_string(stats.elsewhere) +
                            " output(s) the memory plan put in the arena were allocated by their kernel instead");
            for (std::size_t i = 0; i < outs->size() && i < again->size(); ++i)
                if (!sameBits((*outs)[i], (*again)[i]))
                    return fail("output '" + s.outputs()[i].name + "' differs when run from the memory plan");
            if (const std::shared_ptr<const MemoryPlan> plan = s.memoryPlan(feeds))
                if (const Status valid = verifyMemoryPlan(s.prepared(), s.prepared().plan, *plan); !valid)
                    return fail(valid.message());
        }
        const auto expected = numberedTensorFiles(set, "output");
        if (expected.size() != outs->size())
            return fail(std::to_string(outs->size()) + " outputs, expected " +
                        std::to_string(expected.size()));
        for (std::size_t i = 0; i < expected.size(); ++i) {
            Expected<RuntimeTensor> want = readTensorFile(expected[i]);
            if (!want)
                return want.status().kind() == ErrorKind::Unsupported ? unsupported(want.status().message())
                                                                      : fail(want.status().message());
            const Status same = compareTensors((*outs)[i], asDeclared(std::move(*want), (*outs)[i].dtype()),
                                               options.rtol, options.atol, r.maxAbsError);
            if (!same)
                return fail("output '" + s.outputs()[i].name + "': " + same.message());
        }
    }
    r.outcome = ConformanceResult::Outcome::Pass;
    return r;
}

std::vector<std::filesystem::path> findConformanceTests(const std::filesystem::path &root)
{
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    if (std::filesystem::exists(root / "model.onnx", ec)) {
        out.push_back(root);
        return out;
    }
    for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file() && it->path().filename() == "model.onnx")
            out.push_back(it->path().parent_path());
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::filesystem::path> numberedTensorFiles(const std::filesystem::path &dir,
                                                       const std::string &prefix)
{
    std::vector<std::pair<int, std::filesystem::path>> files;
    const std::regex re(prefix + "_([0-9]+)\\.pb");
    for (const auto &e : std::filesystem::directory_iterator(dir)) {
        std::smatch m;
        const std::string name = e.path().filename().string();
        if (std::regex_match(name, m, re))
            files.emplace_back(std::stoi(m[1]), e.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::filesystem::path> out;
    for (auto &f : files)
        out.push_back(f.second);
    return out;
}

} // namespace opscope
