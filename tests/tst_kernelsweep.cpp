// Every CPU kernel fed inputs of the wrong rank, count and type: each run ends in outputs or an
// error, never a read past a shape or a buffer. The fuzzers found such kernels one at a time
// (Concat and Split taking axis 0 of a scalar, GroupNorm and LRN reading dim 1 of a vector); this
// sweep meets every registered op with them at once. The inputs carry no declared shape, so the
// load-time checks cannot refuse them and the kernels themselves see the scalars and vectors.
// It asserts little in a plain build (a read past a vector rarely crashes there): the ASan/UBSan
// run of the suite (scripts/sanitize-tests.sh asan, part of .ci/run) is what makes it bite.

#include "ir/verifier.h"
#include "onnx/extraarity.h"
#include "onnx/modelio.h"
#include "passes/pipeline.h"
#include "passes/registry.h"
#include "runtime/kernel.h"
#include "runtime/session.h"
#include "testsupport.h"

#include <QTest>
#include <cstring>
#include <climits>
#include <onnx/defs/schema.h>

using namespace opscope;

namespace {

using Tp = onnx::TensorProto;

struct Case
{
    int inputs = 1;
    int rank = 0;        // of input 0; the others are scalars when `mixed`, else of this rank too
    bool mixed = false;
    bool intTail = false; // inputs after the first are int64 (indices, shapes, axes, k)
    int opset = 13;
    bool hole = false; // input 1 omitted (the empty name), as an optional input is
};

RuntimeTensor filled(DataType type, int rank)
{
    const std::vector<std::int64_t> shape(static_cast<std::size_t>(rank), 2);
    RuntimeTensor t = *RuntimeTensor::allocate(type, shape);
    // Small values: an int64 input read as a shape, a count or an index stays in range of tiny
    // tensors (1), a float input is neither 0 nor a NaN maker.
    if (type == DataType::Int64)
        for (std::int64_t &v : std::span(t.mutableData<std::int64_t>(), std::size_t(t.elementCount())))
            v = 1;
    else
        for (float &v : std::span(t.mutableData<float>(), std::size_t(t.elementCount())))
            v = 0.5f;
    return t;
}

// "ok", "refused at load", or the run's error kind: what the sweep counts.
std::string runOne(const std::string &domainAndOp, const Case &c)
{
    const auto sep = domainAndOp.find("::");
    const std::string domain = sep == std::string::npos ? std::string() : domainAndOp.substr(0, sep);
    const std::string op = sep == std::string::npos ? domainAndOp : domainAndOp.substr(sep + 2);
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(c.opset);
    if (!domain.empty()) {
        auto *o = m.add_opset_import();
        o->set_domain(domain);
        o->set_version(1);
    }
    auto *g = m.mutable_graph();
    g->set_name("sweep");
    std::vector<std::string> names;
    Feeds feeds;
    for (int i = 0; i < c.inputs; ++i) {
        if (c.hole && i == 1) {
            names.emplace_back();
            continue;
        }
        const std::string name = "in" + std::to_string(i);
        const bool isInt = c.intTail && i > 0;
        onnx::ValueInfoProto vi = test::tensorInfo(name, isInt ? Tp::INT64 : Tp::FLOAT, {});
        vi.mutable_type()->mutable_tensor_type()->clear_shape();
        *g->add_input() = vi;
        names.push_back(name);
        feeds.emplace_back(name, filled(isInt ? DataType::Int64 : DataType::Float, i > 0 && c.mixed ? 0 : c.rank));
    }
    onnx::NodeProto n = test::node(op, names, {"y"}, "n");
    n.set_domain(domain);
    *g->add_node() = n;
    onnx::ValueInfoProto y;
    y.set_name("y");
    *g->add_output() = y;
    const std::string bytes = m.SerializeAsString();
    Expected<ImportResult> loaded = loadModelFromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())), ".");
    if (!loaded)
        return "refused at load";
    // The passes meet the node too (their selectors index a matched node's inputs), as
    // `optimize --level all` would run them: whatever they do, the graph stays valid.
    {
        Model model = loaded->model;
        passes::PipelineSpec spec;
        spec.level = "all";
        const Expected<std::vector<std::string>> pipeline = passes::resolvePipeline(spec);
        if (!pipeline)
            return "internal: " + pipeline.status().message();
        passes::PipelineOptions po;
        po.verify = true;
        po.keepSnapshots = false;
        (void)passes::runPipeline(model, *pipeline, po);
        if (Status st = verifyGraph(model.graph); !st)
            return "internal: the passes left an invalid graph: " + st.message();
    }
    SessionOptions options;
    options.threads = 1;
    Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(loaded->model, options);
    if (!s)
        return "refused at load";
    const auto out = (*s)->run(feeds);
    if (out)
        return "ok";
    switch (out.status().kind()) {
    case ErrorKind::InvalidInput: return "invalid input";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::Internal: return "internal: " + out.status().message();
    default: return "other";
    }
}

} // namespace

class TestKernelSweep : public QObject
{
    Q_OBJECT
private slots:
    // Ops libonnx has no schema for are held to opscope's own table of input and output counts
    // (onnx/extraarity.h): a kernel added for such an op without an entry would be unchecked.
    void everyKernelOpHasAnArity()
    {
        QStringList missing;
        for (const std::string &key : KernelRegistry::cpu().opTypes()) {
            const auto sep = key.find("::");
            const std::string domain = sep == std::string::npos ? std::string() : key.substr(0, sep);
            const std::string op = sep == std::string::npos ? key : key.substr(sep + 2);
            if (!onnx::OpSchemaRegistry::Schema(op, INT_MAX, domain) && !extraArity(domain, op))
                missing << QString::fromStdString(key);
        }
        QVERIFY2(missing.isEmpty(), qPrintable("no schema and no arity: " + missing.join(", ")));
    }

    void everyKernelRefusesWhatItCannotRun_data()
    {
        QTest::addColumn<QString>("op");
        for (const std::string &op : KernelRegistry::cpu().opTypes())
            QTest::newRow(op.c_str()) << QString::fromStdString(op);
    }

    // No assertion on which cases run and which are refused (that is each kernel's own test):
    // each case must end, and never as an internal error, which would be a kernel tripping on
    // input it should have refused.
    void everyKernelRefusesWhatItCannotRun()
    {
        QFETCH(QString, op);
        std::vector<Case> cases;
        for (int opset : {13, 21}) {
            cases.push_back({0, 0, false, false, opset, false}); // no inputs at all
            for (int rank : {0, 1, 3}) {
                cases.push_back({1, rank, false, false, opset, false});
                for (int inputs : {2, 3, 5})
                    for (int variant = 0; variant < 8; ++variant)
                        cases.push_back({inputs, rank, bool(variant & 1), bool(variant & 2), opset, bool(variant & 4)});
            }
        }
        for (const Case &c : cases) {
            const std::string result = runOne(op.toStdString(), c);
            QVERIFY2(result.rfind("internal", 0) != 0,
                     qPrintable(QStringLiteral("%1 inputs, rank %2%3%4%5, opset %6: %7")
                                    .arg(c.inputs)
                                    .arg(c.rank)
                                    .arg(c.mixed ? ", the rest scalars" : "")
                                    .arg(c.intTail ? ", the rest int64" : "")
                                    .arg(c.hole ? ", input 1 omitted" : "")
                                    .arg(c.opset)
                                    .arg(QString::fromStdString(result))));
        }
    }
};

QTEST_GUILESS_MAIN(TestKernelSweep)
#include "tst_kernelsweep.moc"
