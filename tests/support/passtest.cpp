#include "passtest.h"

#include "ir/summary.h"
#include "onnx/modelio.h"
#include "runtime/conformance.h"
#include "runtime/randominputs.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <random>

namespace opscope::test {

onnx::AttributeProto intAttr(const std::string &name, std::int64_t v)
{
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
    return a;
}

onnx::AttributeProto floatAttr(const std::string &name, float v)
{
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(v);
    return a;
}

onnx::AttributeProto intsAttr(const std::string &name, const std::vector<std::int64_t> &v)
{
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INTS);
    for (std::int64_t x : v)
        a.add_ints(x);
    return a;
}

onnx::AttributeProto stringAttr(const std::string &name, const std::string &v)
{
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(v);
    return a;
}

onnx::AttributeProto graphAttr(const std::string &name, const onnx::GraphProto &g)
{
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::GRAPH);
    *a.mutable_g() = g;
    return a;
}

ModelBuilder::ModelBuilder(int opset)
{
    m_proto.set_ir_version(8);
    m_proto.set_producer_name("opscope-tests");
    auto *o = m_proto.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m_proto.mutable_graph()->set_name("test");
}

ModelBuilder &ModelBuilder::input(const std::string &name, const std::vector<std::int64_t> &dims,
                                  int elemType)
{
    auto *vi = m_proto.mutable_graph()->add_input();
    vi->set_name(name);
    auto *t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elemType);
    auto *shape = t->mutable_shape();
    for (std::int64_t d : dims) {
        auto *dim = shape->add_dim();
        if (d < 0)
            dim->set_dim_param("N");
        else
            dim->set_dim_value(d);
    }
    return *this;
}

ModelBuilder &ModelBuilder::constant(const std::string &name, const std::vector<std::int64_t> &dims,
                                     const std::vector<float> &values)
{
    *m_proto.mutable_graph()->add_initializer() = floatTensor(name, dims, values);
    return *this;
}

ModelBuilder &ModelBuilder::randomConstant(const std::string &name, const std::vector<std::int64_t> &dims,
                                           float lo, float hi)
{
    std::int64_t n = 1;
    for (std::int64_t d : dims)
        n *= d;
    std::mt19937 rng(static_cast<std::uint32_t>(std::hash<std::string>{}(name)));
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float &x : v)
        x = dist(rng);
    return constant(name, dims, v);
}

ModelBuilder &ModelBuilder::intConstant(const std::string &name, const std::vector<std::int64_t> &dims,
                                        const std::vector<std::int64_t> &values)
{
    auto *t = m_proto.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (std::int64_t d : dims)
        t->add_dims(d);
    for (std::int64_t v : values)
        t->add_int64_data(v);
    return *this;
}

ModelBuilder &ModelBuilder::op(const std::string &type, const std::vector<std::string> &inputs,
                               const std::vector<std::string> &outputs,
                               const std::vector<onnx::AttributeProto> &attrs, const std::string &domain)
{
    onnx::NodeProto n = node(type, inputs, outputs);
    n.set_domain(domain);
    for (const auto &a : attrs)
        *n.add_attribute() = a;
    *m_proto.mutable_graph()->add_node() = n;
    return *this;
}

ModelBuilder &ModelBuilder::output(const std::string &name, int elemType)
{
    auto *vi = m_proto.mutable_graph()->add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(elemType);
    return *this;
}

Model ModelBuilder::build() const
{
    const std::string bytes = m_proto.SerializeAsString();
    Expected<ImportResult> loaded =
        loadModelFromBytes(std::span(reinterpret_cast<const std::byte *>(bytes.data()), bytes.size()),
                           std::filesystem::current_path());
    if (!loaded) {
        QTest::qFail(("building the test model: " + loaded.status().message()).c_str(), __FILE__, __LINE__);
        return {};
    }
    // Outputs are declared without shapes on purpose (inference fills them); the rest is worth a look.
    for (const std::string &w : loaded->warnings)
        if (w.find("Field 'shape' of 'type' is required") == std::string::npos)
            qWarning("test model: %s", w.c_str());
    return loaded->model;
}

std::map<std::string, std::size_t> countOps(const Model &model)
{
    return opHistogram(model.graph);
}

int opCount(const std::map<std::string, std::size_t> &ops, const std::string &op)
{
    const auto it = ops.find(op);
    return it == ops.end() ? 0 : int(it->second);
}

PassOutcome runAndCompare(const Model &model, const std::vector<std::string> &passes,
                          std::vector<std::int64_t> batchSizes, std::vector<std::uint64_t> seeds, double rtol,
                          double atol)
{
    PassOutcome out;
    out.after = model;
    out.opsBefore = countOps(model);
    passes::PipelineOptions options;
    options.verify = true;
    out.result = passes::runPipeline(out.after, passes, options);
    out.opsAfter = countOps(out.after);
    if (!out.result.status) {
        QTest::qFail(("pipeline: " + out.result.status.message()).c_str(), __FILE__, __LINE__);
        return out;
    }
    auto before = InferenceSession::create(model);
    auto after = InferenceSession::create(out.after);
    if (!before || !after) {
        QTest::qFail(("session: " + (before ? after.status() : before.status()).message()).c_str(), __FILE__,
                     __LINE__);
        return out;
    }
    for (std::int64_t batch : batchSizes)
        for (std::uint64_t seed : seeds) {
            RandomInputOptions ro;
            ro.seed = seed;
            ro.dims["N"] = batch;
            Expected<Feeds> feeds = randomFeeds(**before, {}, ro);
            if (!feeds) {
                QTest::qFail(("feeds: " + feeds.status().message()).c_str(), __FILE__, __LINE__);
                return out;
            }
            auto want = (*before)->run(*feeds);
            auto got = (*after)->run(*feeds);
            if (!want || !got) {
                QTest::qFail(("run: " + (want ? got.status() : want.status()).message()).c_str(), __FILE__,
                             __LINE__);
                return out;
            }
            if (want->size() != got->size()) {
                QTest::qFail("output count changed", __FILE__, __LINE__);
                return out;
            }
            for (std::size_t i = 0; i < want->size(); ++i) {
                double diff = 0.0;
                const Status same = compareTensors((*got)[i], (*want)[i], rtol, atol, diff);
                out.maxAbsDiff = std::max(out.maxAbsDiff, diff);
                if (!same) {
                    QTest::qFail(("output " + std::to_string(i) + " (seed " + std::to_string(seed) +
                                  ", N=" + std::to_string(batch) + "): " + same.message())
                                     .c_str(),
                                 __FILE__, __LINE__);
                    return out;
                }
            }
        }
    out.compared = true;
    return out;
}

std::vector<std::string> checkerFindings(const Model &model)
{
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "m.onnx";
    std::vector<std::string> out;
    if (!saveModel(model, path)) {
        out.push_back("save failed");
        return out;
    }
    Expected<ImportResult> back = loadModel(path);
    if (!back) {
        out.push_back(back.status().message());
        return out;
    }
    for (const std::string &w : back->warnings)
        if (w.find("checker") != std::string::npos)
            out.push_back(w);
    return out;
}

} // namespace opscope::test
