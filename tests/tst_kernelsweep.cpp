// Every CPU kernel fed inputs of the wrong rank, count and type: each run ends in outputs or an
// error, never a read past a shape or a buffer. The fuzzers found such kernels one at a time
// (Concat and Split taking axis 0 of a scalar, GroupNorm and LRN reading dim 1 of a vector); this
// sweep meets every registered op with them at once. The inputs carry no declared shape, so the
// load-time checks cannot refuse them and the kernels themselves see the scalars and vectors.
// A second sweep gives each op what its schema asks for (the types of its type constraints, its
// attributes) and then wrong values where a wrong rank cannot reach: a zero-sized dim, int64
// inputs of 0, -1 and 2^40 (shapes, indices, repeats, k), NaN floats, and every attribute set
// to values outside its range (negative, zero, 2^40, empty or long lists, NaN, unknown strings).
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
#include <algorithm>
#include <climits>
#include <limits>
#include <set>
#include <unordered_set>
#include <onnx/defs/schema.h>

using namespace opscope;

namespace {

using Tp = onnx::TensorProto;

// One node of `op`, its inputs graph inputs without a declared shape (so that only the kernel
// sees what they hold), its outputs unnamed in type.
struct Operand
{
    bool omitted = false; // the empty name, as an optional input left out
    DataType type = DataType::Float;
    std::vector<std::int64_t> shape;
};

struct Spec
{
    std::string domain;
    std::string op;
    int opset = 13;
    std::vector<Operand> inputs;
    int outputs = 1;
    std::vector<onnx::AttributeProto> attributes;
    std::int64_t intValue = 1; // every element of every integer input
    float floatValue = 0.5f;   // every element of every float input
};

RuntimeTensor filled(const Operand &operand, const Spec &spec)
{
    RuntimeTensor t = *RuntimeTensor::zeros(operand.type, operand.shape);
    const auto n = std::size_t(t.elementCount());
    switch (operand.type) {
    case DataType::Float: std::ranges::fill(std::span(t.mutableData<float>(), n), spec.floatValue); break;
    case DataType::Double: std::ranges::fill(std::span(t.mutableData<double>(), n), double(spec.floatValue)); break;
    case DataType::Int64: std::ranges::fill(std::span(t.mutableData<std::int64_t>(), n), spec.intValue); break;
    case DataType::Int32:
        std::ranges::fill(std::span(t.mutableData<std::int32_t>(), n),
                          std::int32_t(std::clamp<std::int64_t>(spec.intValue, INT32_MIN, INT32_MAX)));
        break;
    case DataType::Bool: std::ranges::fill(std::span(t.mutableData<bool>(), n), true); break;
    default: break; // zeros
    }
    return t;
}

// "ok", "refused at load", or the run's error kind: what the sweeps count.
std::string runOne(const Spec &spec)
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(spec.opset);
    if (!spec.domain.empty()) {
        auto *o = m.add_opset_import();
        o->set_domain(spec.domain);
        o->set_version(1);
    }
    auto *g = m.mutable_graph();
    g->set_name("sweep");
    std::vector<std::string> names;
    Feeds feeds;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
        const Operand &operand = spec.inputs[i];
        if (operand.omitted) {
            names.emplace_back();
            continue;
        }
        const std::string name = "in" + std::to_string(i);
        onnx::ValueInfoProto vi = test::tensorInfo(name, int(operand.type), {});
        vi.mutable_type()->mutable_tensor_type()->clear_shape();
        *g->add_input() = vi;
        names.push_back(name);
        feeds.emplace_back(name, filled(operand, spec));
    }
    std::vector<std::string> outputs;
    for (int i = 0; i < spec.outputs; ++i)
        outputs.push_back("y" + std::to_string(i));
    onnx::NodeProto n = test::node(spec.op, names, outputs, "n");
    n.set_domain(spec.domain);
    for (const onnx::AttributeProto &a : spec.attributes)
        *n.add_attribute() = a;
    *g->add_node() = n;
    for (const std::string &name : outputs)
        g->add_output()->set_name(name);
    const std::string bytes = m.SerializeAsString();
    Expected<ImportResult> loaded = loadModelFromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())), ".");
    if (!loaded)
        return "refused at load";
    // The passes meet the node too (their selectors index a matched node's inputs), as
    // `optimize --level all` would run them: whatever they do, the graph stays valid. Once per
    // model: the input values the cases vary are feeds, which the passes never see.
    static std::unordered_set<std::string> optimized;
    if (optimized.insert(bytes).second) {
        Model model = loaded->model;
        passes::PipelineSpec pipelineSpec;
        pipelineSpec.level = "all";
        const Expected<std::vector<std::string>> pipeline = passes::resolvePipeline(pipelineSpec);
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

std::pair<std::string, std::string> splitKey(const std::string &key)
{
    const auto sep = key.find("::");
    if (sep == std::string::npos)
        return {std::string(), key};
    return {key.substr(0, sep), key.substr(sep + 2)};
}

std::string describe(const Spec &spec)
{
    std::string text = std::to_string(spec.inputs.size()) + " inputs (";
    for (const Operand &o : spec.inputs) {
        text += o.omitted ? std::string("omitted") : std::string(dataTypeName(o.type)) + shapeText(o.shape);
        text += ' ';
    }
    text += "), ints " + std::to_string(spec.intValue) + ", floats " + std::to_string(spec.floatValue) + ", opset " +
            std::to_string(spec.opset);
    for (const onnx::AttributeProto &a : spec.attributes)
        text += ", " + a.ShortDebugString();
    return text;
}

// The type a schema slot accepts that the sweep can fill, float first; nullopt for sequences,
// optionals and strings-only slots.
std::optional<DataType> pickType(const onnx::OpSchema::FormalParameter &slot)
{
    static const std::vector<std::pair<std::string, DataType>> preferred = {
        {"tensor(float)", DataType::Float}, {"tensor(int64)", DataType::Int64}, {"tensor(bool)", DataType::Bool},
        {"tensor(int32)", DataType::Int32}, {"tensor(double)", DataType::Double}, {"tensor(uint8)", DataType::UInt8},
        {"tensor(int8)", DataType::Int8},   {"tensor(float16)", DataType::Float16}};
    for (const auto &[name, type] : preferred)
        for (const std::string *allowed : slot.GetTypes())
            if (*allowed == name)
                return type;
    return std::nullopt;
}

// A value the schema's required attributes get when they are not the one being swept: the
// smallest that is usually valid, so that the sweep reaches the kernel.
onnx::AttributeProto plausible(const std::string &name, onnx::AttributeProto::AttributeType type)
{
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(type);
    switch (type) {
    case onnx::AttributeProto::INT: a.set_i(1); break;
    case onnx::AttributeProto::FLOAT: a.set_f(1.0f); break;
    case onnx::AttributeProto::STRING: a.set_s(name == "equation" ? "...->..." : ""); break;
    case onnx::AttributeProto::INTS: a.add_ints(1); break;
    case onnx::AttributeProto::FLOATS: a.add_floats(1.0f); break;
    case onnx::AttributeProto::TENSOR: *a.mutable_t() = test::floatTensor("", {}, {1.0f}); break;
    default: break;
    }
    return a;
}

// Values outside what the attribute allows, or at its edges.
std::vector<onnx::AttributeProto> outOfRange(const std::string &name, onnx::AttributeProto::AttributeType type)
{
    std::vector<onnx::AttributeProto> values;
    auto make = [&](auto fill) {
        onnx::AttributeProto a;
        a.set_name(name);
        a.set_type(type);
        fill(a);
        values.push_back(a);
    };
    constexpr std::int64_t huge = std::int64_t(1) << 40;
    switch (type) {
    case onnx::AttributeProto::INT:
        for (std::int64_t v : {std::int64_t(-1), std::int64_t(0), std::int64_t(3), -huge, huge, INT64_MIN})
            make([v](auto &a) { a.set_i(v); });
        break;
    case onnx::AttributeProto::INTS:
        make([](auto &) {});
        for (std::int64_t v : {std::int64_t(-1), std::int64_t(0), huge, INT64_MIN})
            make([v](auto &a) { a.add_ints(v); });
        make([](auto &a) {
            for (int i = 0; i < 9; ++i)
                a.add_ints(2);
        });
        make([](auto &a) {
            for (std::int64_t v : {3, -3, 0, 1})
                a.add_ints(v);
        });
        break;
    case onnx::AttributeProto::FLOAT:
        for (float v : {std::numeric_limits<float>::quiet_NaN(), -1.0f, 0.0f, 1e30f, -std::numeric_limits<float>::infinity()})
            make([v](auto &a) { a.set_f(v); });
        break;
    case onnx::AttributeProto::FLOATS:
        make([](auto &) {});
        make([](auto &a) { a.add_floats(std::numeric_limits<float>::quiet_NaN()); });
        make([](auto &a) {
            for (int i = 0; i < 9; ++i)
                a.add_floats(-1.0f);
        });
        break;
    case onnx::AttributeProto::STRING:
        for (const char *v : {"", "nonsense", "...", "a,b->", "->"})
            make([v](auto &a) { a.set_s(v); });
        break;
    case onnx::AttributeProto::TENSOR:
        make([](auto &a) { *a.mutable_t() = test::floatTensor("", {0}, {}); });
        make([](auto &a) { *a.mutable_t() = test::floatTensor("", {3}, {1, 2, 3}); });
        make([](auto &a) { *a.mutable_t() = test::int64Tensor("", {2, 1}, {1, -1}); });
        break;
    default: break;
    }
    return values;
}

// The schema an op's typed sweep follows (libonnx's newest version), or null: ops without one,
// and the control-flow ops, whose graph attributes the sweep cannot make up.
const onnx::OpSchema *sweepSchema(const std::string &domain, const std::string &op)
{
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(op, INT_MAX, domain);
    if (!schema)
        return nullptr;
    for (const auto &[name, attr] : schema->attributes())
        if (attr.type == onnx::AttributeProto::GRAPH || attr.type == onnx::AttributeProto::GRAPHS)
            return nullptr;
    for (const auto &slot : schema->inputs())
        if (!pickType(slot))
            return nullptr;
    return schema;
}

// The schema's inputs (a variadic one twice), typed; all of them or the required ones only.
std::vector<Operand> typedOperands(const onnx::OpSchema &schema, bool requiredOnly)
{
    std::vector<Operand> operands;
    for (const auto &slot : schema.inputs()) {
        if (requiredOnly && slot.GetOption() == onnx::OpSchema::Optional)
            break;
        const int copies = slot.GetOption() == onnx::OpSchema::Variadic ? 2 : 1;
        for (int i = 0; i < copies; ++i)
            operands.push_back({false, *pickType(slot), {}});
    }
    return operands;
}

// Input 0 of this shape; the others `rest` when given, else the same.
void shapeOperands(std::vector<Operand> &operands, const std::vector<std::int64_t> &first,
                   const std::optional<std::vector<std::int64_t>> &rest)
{
    for (std::size_t i = 0; i < operands.size(); ++i)
        operands[i].shape = i == 0 || !rest ? first : *rest;
}

} // namespace

// A macro, not a function, so that a failing case ends the test function (QVERIFY returns from
// the function it is in) instead of every later case adding its own failure.
#define EXPECT_NO_INTERNAL_ERROR(...)                                                                       \
    do {                                                                                                    \
        const Spec spec_ = __VA_ARGS__;                                                                     \
        const std::string result_ = runOne(spec_);                                                          \
        QVERIFY2(result_.rfind("internal", 0) != 0, (describe(spec_) + ": " + result_).c_str());            \
    } while (false)

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
            const auto [domain, op] = splitKey(key);
            if (!onnx::OpSchemaRegistry::Schema(op, INT_MAX, domain) && !extraArity(domain, op))
                missing << QString::fromStdString(key);
        }
        QVERIFY2(missing.isEmpty(), qPrintable("no schema and no arity: " + missing.join(", ")));
    }

    void everyKernelRefusesWhatItCannotRun_data() { opRows(); }

    // No assertion on which cases run and which are refused (that is each kernel's own test):
    // each case must end, and never as an internal error, which would be a kernel tripping on
    // input it should have refused.
    void everyKernelRefusesWhatItCannotRun()
    {
        QFETCH(QString, op);
        const auto [domain, name] = splitKey(op.toStdString());
        for (int opset : {13, 21}) {
            // no inputs at all, then 1, 2, 3 and 5 of rank 0, 1 and 3: the rest scalars or of
            // the same rank, float or int64 (indices, shapes, axes, k), input 1 omitted or not.
            EXPECT_NO_INTERNAL_ERROR({domain, name, opset});
            for (int rank : {0, 1, 3}) {
                const std::vector<std::int64_t> shape(std::size_t(rank), 2);
                EXPECT_NO_INTERNAL_ERROR({domain, name, opset, {{false, DataType::Float, shape}}});
                for (int inputs : {2, 3, 5})
                    for (int variant = 0; variant < 8; ++variant) {
                        Spec spec{domain, name, opset};
                        for (int i = 0; i < inputs; ++i) {
                            const bool mixed = variant & 1, intTail = variant & 2, hole = variant & 4;
                            spec.inputs.push_back({hole && i == 1, intTail && i > 0 ? DataType::Int64 : DataType::Float,
                                                   i > 0 && mixed ? std::vector<std::int64_t>() : shape});
                        }
                        EXPECT_NO_INTERNAL_ERROR(spec);
                    }
            }
        }
    }

    void everyKernelMeetsBadValues_data() { opRows(); }

    // The inputs the schema asks for, of the types it allows, then values a wrong rank cannot
    // reach: a zero-sized dim, integers of 0, -1 and 2^40 read as shapes, indices, repeats or
    // counts, NaN floats.
    void everyKernelMeetsBadValues()
    {
        QFETCH(QString, op);
        const auto [domain, name] = splitKey(op.toStdString());
        if (!baseSpec(domain, name, false))
            QSKIP("neither a schema without graph attributes nor an arity to follow");
        using Shape = std::vector<std::int64_t>;
        const std::vector<std::pair<Shape, std::optional<Shape>>> shapes = {
            {{}, std::nullopt},           {{2}, std::nullopt},     {{2, 2, 2}, std::nullopt},
            {{2, 0, 2}, std::nullopt},    {{0}, Shape{}},          {{1, 2, 3, 3}, std::nullopt},
            {{1, 2, 3, 3}, Shape{2}},     {{1, 2, 3, 3}, Shape{}}, {{2, 3}, Shape{0}},
            {{std::int64_t(1) << 40, 2, 0}, std::nullopt}};
        for (bool requiredOnly : {false, true}) {
            for (const auto &[first, rest] : shapes) {
                for (std::int64_t ints : {std::int64_t(1), std::int64_t(0), std::int64_t(-1), std::int64_t(1) << 40})
                    for (float floats : {0.5f, std::numeric_limits<float>::quiet_NaN()}) {
                        Spec spec = *baseSpec(domain, name, requiredOnly);
                        shapeOperands(spec.inputs, first, rest);
                        spec.intValue = ints;
                        spec.floatValue = floats;
                        EXPECT_NO_INTERNAL_ERROR(spec);
                    }
            }
        }
    }

    void everyAttributeOutOfRange_data() { opRows(); }

    // Each attribute the schema lists, set to values outside its range, on inputs the op could
    // otherwise run: a load-time check, a kernel's error or a result, never a crash.
    void everyAttributeOutOfRange()
    {
        QFETCH(QString, op);
        const auto [domain, name] = splitKey(op.toStdString());
        const std::optional<Spec> base = baseSpec(domain, name, false);
        const std::vector<std::pair<std::string, onnx::AttributeProto::AttributeType>> attributes =
            sweptAttributes(domain, name);
        if (!base || attributes.empty())
            QSKIP("no attributes to sweep");
        for (const auto &[attrName, type] : attributes)
            for (const onnx::AttributeProto &value : outOfRange(attrName, type))
                for (const std::vector<std::int64_t> &shape : {std::vector<std::int64_t>{2, 2, 2},
                                                               std::vector<std::int64_t>{1, 2, 3, 3}}) {
                    Spec spec = *base;
                    shapeOperands(spec.inputs, shape, std::nullopt);
                    std::erase_if(spec.attributes, [&](const auto &a) { return a.name() == attrName; });
                    spec.attributes.push_back(value);
                    EXPECT_NO_INTERNAL_ERROR(spec);
                }
    }

    void everySchemaInfersDeclaredRanks_data()
    {
        QTest::addColumn<QString>("op");
        std::set<std::string> keys; // domain::name, each version once
        for (const onnx::OpSchema &schema : onnx::OpSchemaRegistry::get_all_schemas())
            keys.insert((schema.domain().empty() ? "" : schema.domain() + "::") + schema.Name());
        for (const std::string &key : keys)
            QTest::newRow(key.c_str()) << QString::fromStdString(key);
    }

    // libonnx's inference functions read input dims by position, often without asking the rank
    // first: a crash in `info` on a model whose declared ranks are wrong (STFT's rank-1 signal,
    // LayerNormalization of a scalar, Gemm-6 of vectors — each once found by fuzzing). The
    // kernel sweeps leave shapes undeclared (they aim at kernels), so here every schema libonnx
    // has — kernel or not — is loaded with its inputs declared at ranks 0 to 4, all alike or the
    // first alone, dims of 2, 0 or 1: loading ends in a model or an error, never a crash (the guards in
    // onnx/inferenceguards.cpp refuse what libonnx cannot take).
    void everySchemaInfersDeclaredRanks()
    {
        QFETCH(QString, op);
        const auto [domain, name] = splitKey(op.toStdString());
        const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(name, INT_MAX, domain);
        QVERIFY(schema);
        for (std::int64_t dim : {2, 0, 1})
            for (bool requiredOnly : {false, true})
                for (int rank = 0; rank <= 4; ++rank)
                    for (bool firstOnly : {false, true}) {
                        onnx::ModelProto m;
                        m.set_ir_version(8);
                        auto *o = m.add_opset_import();
                        o->set_domain(domain);
                        o->set_version(schema->SinceVersion());
                        if (!domain.empty())
                            m.add_opset_import()->set_version(17);
                        auto *g = m.mutable_graph();
                        g->set_name("ranks");
                        std::vector<std::string> names;
                        for (const auto &slot : schema->inputs()) {
                            if (requiredOnly && slot.GetOption() == onnx::OpSchema::Optional)
                                break;
                            const int copies = slot.GetOption() == onnx::OpSchema::Variadic ? 2 : 1;
                            for (int c = 0; c < copies; ++c) {
                                const std::string in = "in" + std::to_string(names.size());
                                const int r = firstOnly && !names.empty() ? 1 : rank;
                                *g->add_input() = test::tensorInfo(in, int(pickType(slot).value_or(DataType::Float)),
                                                                   std::vector<std::int64_t>(std::size_t(r), dim));
                                names.push_back(in);
                            }
                        }
                        std::vector<std::string> outputs;
                        for (int i = 0; i < std::max(1, schema->min_output()); ++i)
                            outputs.push_back("y" + std::to_string(i));
                        onnx::NodeProto n = test::node(name, names, outputs, "n");
                        n.set_domain(domain);
                        for (const auto &[attrName, attr] : schema->attributes())
                            if (attr.required)
                                *n.add_attribute() = plausible(attrName, attr.type);
                        *g->add_node() = n;
                        for (const std::string &out : outputs)
                            g->add_output()->set_name(out);
                        const std::string bytes = m.SerializeAsString();
                        (void)loadModelFromBytes(std::as_bytes(std::span(bytes.data(), bytes.size())), ".");
                    }
    }

    // Cast of NaN, ±inf and out-of-range floats to integers is undefined behaviour in C++ (UBSan
    // stopped the run fuzzer on Cast(inf) to int64): the kernel gives what x86 and ONNX Runtime
    // give, the wide type's minimum, truncated for the narrow types; in-range values truncate.
    void castOfNonFiniteFloatsIsDefined()
    {
        const float inf = std::numeric_limits<float>::infinity();
        const std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 1e30f, 2.7f, -2.7f};
        const std::vector<std::pair<DataType, std::vector<std::int64_t>>> expected = {
            {DataType::Int64, {INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, 2, -2}},
            {DataType::Int32, {INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN, 2, -2}},
            {DataType::Int8, {0, 0, 0, 0, 2, -2}}, // INT32_MIN's low byte
        };
        for (const auto &[to, want] : expected) {
            onnx::ModelProto m;
            m.set_ir_version(8);
            m.add_opset_import()->set_version(13);
            auto *g = m.mutable_graph();
            g->set_name("cast");
            *g->add_input() = test::tensorInfo("x", Tp::FLOAT, {6});
            onnx::NodeProto n = test::node("Cast", {"x"}, {"y"}, "cast");
            auto *a = n.add_attribute();
            a->set_name("to");
            a->set_type(onnx::AttributeProto::INT);
            a->set_i(int(to));
            *g->add_node() = n;
            *g->add_output() = test::tensorInfo("y", int(to), {6});
            Expected<std::unique_ptr<InferenceSession>> s = InferenceSession::create(test::modelOrFail(m), {});
            QVERIFY2(s, s ? "" : s.status().message().c_str());
            const auto out = (*s)->run({{"x", RuntimeTensor::fromValues(DataType::Float, {6}, x)}});
            QVERIFY2(out, out ? "" : out.status().message().c_str());
            for (std::size_t i = 0; i < want.size(); ++i)
                QCOMPARE((*out)[0].valueAsInt(std::int64_t(i)), want[i]);
        }
    }

private:
    static void opRows()
    {
        QTest::addColumn<QString>("op");
        for (const std::string &op : KernelRegistry::cpu().opTypes())
            QTest::newRow(op.c_str()) << QString::fromStdString(op);
    }

    // At libonnx's newest opset, the required attributes given plausible values; an op without
    // a schema, float inputs as many as its arity allows. Null: neither to follow.
    static std::optional<Spec> baseSpec(const std::string &domain, const std::string &op, bool requiredOnly)
    {
        Spec spec{domain, op, domain.empty() ? 17 : 13};
        if (const onnx::OpSchema *schema = sweepSchema(domain, op)) {
            spec.inputs = typedOperands(*schema, requiredOnly);
            spec.outputs = std::max(1, schema->min_output());
            for (const auto &[name, attr] : schema->attributes())
                if (attr.required)
                    spec.attributes.push_back(plausible(name, attr.type));
            return spec;
        }
        if (onnx::OpSchemaRegistry::Schema(op, INT_MAX, domain))
            return std::nullopt; // control flow, or inputs the sweep cannot fill
        const std::optional<OpArity> arity = extraArity(domain, op);
        if (!arity)
            return std::nullopt;
        spec.opset = 21;
        // A variadic op's maximum is INT_MAX: two beyond its minimum stand for "many".
        spec.inputs.resize(std::size_t(requiredOnly ? arity->minInputs
                                                    : std::min(arity->maxInputs, arity->minInputs + 2)));
        spec.outputs = std::max(1, arity->minOutputs);
        return spec;
    }

    // The schema's attributes; for an op without one, the names its kin use (FusedConv reads
    // Conv's, the Nchwc ops a pool's, the contrib ops axis, epsilon and num_heads).
    static std::vector<std::pair<std::string, onnx::AttributeProto::AttributeType>>
    sweptAttributes(const std::string &domain, const std::string &op)
    {
        using A = onnx::AttributeProto;
        std::vector<std::pair<std::string, A::AttributeType>> out;
        if (const onnx::OpSchema *schema = sweepSchema(domain, op)) {
            for (const auto &[name, attr] : schema->attributes())
                out.emplace_back(name, attr.type);
            return out;
        }
        return {{"axis", A::INT},           {"epsilon", A::FLOAT},           {"activation", A::STRING},
                {"activation_params", A::FLOATS}, {"activation_alpha", A::FLOAT}, {"activation_beta", A::FLOAT},
                {"activation_post", A::FLOATS}, {"num_heads", A::INT},        {"group", A::INT},
                {"strides", A::INTS},       {"pads", A::INTS},               {"kernel_shape", A::INTS},
                {"dilations", A::INTS},     {"auto_pad", A::STRING},         {"ceil_mode", A::INT},
                {"storage_order", A::INT},  {"count_include_pad", A::INT},   {"alpha", A::FLOAT},
                {"beta", A::FLOAT},         {"transA", A::INT},              {"transB", A::INT},
                {"transBatchA", A::INT},    {"transBatchB", A::INT},         {"scale", A::FLOAT},
                {"block", A::INT},          {"approximate", A::STRING},      {"stash_type", A::INT},
                {"k_transposed", A::INT},   {"transpose_output", A::INT},    {"num_groups", A::INT},
                {"mode", A::STRING},        {"bias", A::FLOAT},              {"layout", A::INT}};
    }
};

QTEST_GUILESS_MAIN(TestKernelSweep)
#include "tst_kernelsweep.moc"
