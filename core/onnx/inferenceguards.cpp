// Guards around libonnx's shape inference: the inference functions of some ops index by the
// inferred rank or read attributes and shapes without checking them (see each guard). A tripped
// guard fails that node's inference and is named in the import's error.

#include "onnx/schemacheck.h"
#include "onnx/schemacheckdetail.h"

#include <algorithm>
#include <functional>
#include <mutex>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <optional>
#include <set>
#include <unordered_map>

namespace opscope {

namespace schemadetail {

const std::map<std::string, int> &shapeInputs()
{
    static const std::map<std::string, int> table = {{"ConstantOfShape", 0}, {"Reshape", 1}, {"Expand", 1},
                                                     {"Resize", 3},          {"Upsample", 1}, {"Tile", 1}};
    return table;
}

std::string canonicalDomain(const std::string &domain)
{
    return domain == "ai.onnx" ? std::string() : domain;
}

// Names as a user reads them in a one-line error: control characters escaped.
std::string shown(const std::string &name)
{
    std::string out;
    for (char c : name) {
        if (c == '\n')
            out += "\\n";
        else if (static_cast<unsigned char>(c) < 0x20)
            out += '?';
        else
            out += c;
    }
    return out;
}

std::string nodeLabel(const onnx::NodeProto &n)
{
    if (n.name().empty())
        return "an unnamed " + shown(n.op_type()) + " node"; // "a Einsum node" read badly
    return "node '" + shown(n.name()) + "' (" + shown(n.op_type()) + ")";
}

// Ops whose inference and kernels divide by or index with their window attributes.
bool isWindowOp(const std::string &op)
{
    static const std::set<std::string> ops = {"Conv",        "ConvInteger", "QLinearConv", "ConvTranspose",
                                              "MaxPool",     "AveragePool", "LpPool",      "MaxUnpool",
                                              "DeformConv",  "Col2Im",      "FusedConv",   "NhwcConv",
                                              "QLinearAveragePool"};
    return ops.count(op) > 0;
}

void wrapInference(const std::string &op,
                   const std::function<onnx::InferenceFunction(onnx::InferenceFunction)> &wrap)
{
    std::set<const onnx::OpSchema *> done;
    for (int version = 1; version <= 30; ++version) {
        const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(op, version, "");
        if (!s || !done.insert(s).second)
            continue;
        const_cast<onnx::OpSchema *>(s)->TypeAndShapeInferenceFunction(wrap(s->GetTypeAndShapeInferenceFunction()));
    }
}

} // namespace schemadetail

namespace {

using onnx::AttributeProto;
using namespace schemadetail;

// ---- guards around inference functions that index by inferred ranks ------------------------

thread_local std::vector<std::string> *t_guardFindings = nullptr;

int rankOf(const onnx::TypeProto *t)
{
    if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape())
        return -1;
    return t->tensor_type().shape().dim_size();
}

// Inputs whose rank the spec fixes and whose dims some libonnx inference function reads by
// position without checking the rank first (Gemm-6 reads A's dim 1 of a rank-1 A: a read past
// the end of a protobuf list, then a crash in MergeFrom).
struct FixedRank
{
    const char *op;
    int input, rank;
};
constexpr FixedRank fixedRanks[] = {
    {"Gemm", 0, 2},    {"Gemm", 1, 2},     {"LSTM", 0, 3},         {"LSTM", 1, 3},         {"LSTM", 2, 3},
    {"GRU", 0, 3},     {"GRU", 1, 3},      {"GRU", 2, 3},          {"RNN", 0, 3},          {"RNN", 1, 3},
    {"RNN", 2, 3},     {"RoiAlign", 0, 4}, {"RoiAlign", 1, 2},     {"RoiAlign", 2, 1},     {"MaxRoiPool", 0, 4},
    {"MaxRoiPool", 1, 2}, {"DepthToSpace", 0, 4}, {"SpaceToDepth", 0, 4},
    // STFT-17's signal is [batch, length, 1 or 2]; its inference read dims 1 and 2 of a rank-1
    // signal (found by fuzzing: a crash in `info`).
    {"STFT", 0, 3},
};

std::string fixedRankProblem(const std::string &op, int input, int rank)
{
    for (const FixedRank &f : fixedRanks)
        if (op == f.op && input == f.input && rank >= 0 && rank != f.rank)
            return "input " + std::to_string(input) + " has rank " + std::to_string(rank) + "; " + op +
                   " takes rank " + std::to_string(f.rank) + " there";
    return {};
}

// Ops whose `axis` indexes input 0's dims, and the range libonnx's inference assumes without
// checking every time: [-r, r) — Flatten [-r, r]. LayerNormalization with axis −2^31 indexed far
// before its shape.
struct AxisRange
{
    const char *op;
    bool inclusiveUpper;
};
constexpr AxisRange axisRanges[] = {
    {"LayerNormalization", false}, {"Softmax", false}, {"LogSoftmax", false}, {"Hardmax", false},
    {"Gather", false},             {"GatherElements", false}, {"ScatterElements", false},
    {"Concat", false},             {"Split", false},   {"ArgMax", false},     {"ArgMin", false},
    {"Flatten", true},
};

std::string axisProblem(const std::string &op, std::int64_t axis, int rank)
{
    if (rank < 0)
        return {};
    for (const AxisRange &a : axisRanges)
        if (op == a.op) {
            const std::int64_t hi = a.inclusiveUpper ? rank : rank - 1;
            if (axis < -std::int64_t(rank) || axis > hi)
                return "axis " + std::to_string(axis) + " is out of range for an input of rank " + std::to_string(rank);
        }
    return {};
}

// The one rule both the guard (during inference) and the naming pass (after it) apply.
std::string windowRankProblem(const std::string &op, int inputRank, int weightRank,
                              const std::map<std::string, int> &listSizes)
{
    if (inputRank >= 0 && inputRank < 3)
        return "its input has rank " + std::to_string(inputRank) + "; " + op +
               " needs [N, C, D1, …] (rank 3 or more)";
    if (inputRank >= 0 && weightRank >= 0 && weightRank != inputRank)
        return "its weight has rank " + std::to_string(weightRank) + " but its input has rank " +
               std::to_string(inputRank) + "; they must be equal";
    if (inputRank < 0)
        return {};
    const int spatial = inputRank - 2;
    for (const auto &[name, size] : listSizes) {
        const int want = name == "pads" ? 2 * spatial : spatial;
        if (size != want)
            return "attribute '" + name + "' has " + std::to_string(size) + " entries; a rank-" +
                   std::to_string(inputRank) + " input needs " + std::to_string(want);
    }
    return {};
}

int weightIndex(const std::string &op)
{
    if (op == "QLinearConv")
        return 3;
    if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose" || op == "DeformConv")
        return 1;
    return -1;
}

constexpr const char *windowLists[] = {"kernel_shape", "strides", "dilations", "pads"};

// Wraps the inference function of every registered version of `op`: `problem` looks at the
// context first; a non-empty answer is recorded for runGuardedShapeInference and fails this
// node's inference instead of letting libonnx's function run on it. The registry's schemas are
// not const objects, it only hands out const pointers; installed once (call_once below), before
// any inference runs.
constexpr const char *kSkipInference = "skip";

void guardInference(const std::string &op, std::function<std::string(onnx::InferenceContext &)> problem)
{
    wrapInference(op, [op, problem](onnx::InferenceFunction original) -> onnx::InferenceFunction {
        return [original, op, problem](onnx::InferenceContext &ctx) {
            if (const std::string p = problem(ctx); !p.empty()) {
                // "skip": the node is valid but libonnx's inference cannot take it; inference
                // passes over it (error mode 0) and the import goes on.
                if (t_guardFindings && p != kSkipInference)
                    t_guardFindings->push_back(op + ": " + p);
                fail_shape_inference(op, ": ", p);
            }
            original(ctx);
        };
    });
}

// The length of a shape input may only be known during inference (a declared dim, constant
// data, or a value data propagation computed): the same bound as checkShapeInputLength's.
std::string shapeInputTooLong(onnx::InferenceContext &ctx, std::size_t i)
{
    std::int64_t length = -1;
    if (ctx.getNumInputs() > i) {
        const onnx::TypeProto *t = ctx.getInputType(i);
        if (t && t->tensor_type().shape().dim_size() == 1 && t->tensor_type().shape().dim(0).has_dim_value())
            length = t->tensor_type().shape().dim(0).dim_value();
        if (const onnx::TensorProto *data = ctx.getInputData(i); data && data->dims_size() == 1)
            length = std::max(length, data->dims(0));
        if (const onnx::TensorShapeProto *sym = ctx.getSymbolicInput(i))
            length = std::max<std::int64_t>(length, sym->dim_size());
    }
    if (length <= kMaxTensorRank)
        return {};
    return "its shape input has " + std::to_string(length) + " entries; ranks above " +
           std::to_string(kMaxTensorRank) + " are not supported";
}

// libonnx 1.12 finds SAME padding's residual by subtracting the stride in a loop (`while
// (residual >= stride) residual -= stride`): a MaxPool over a declared spatial dim of 2^40 with
// stride 2 kept `info` busy for hours (found by fuzzing). Such a node is left uninferred; its
// kernel sizes it at run time, where a tensor that large is refused.
std::string slowSamePadding(onnx::InferenceContext &ctx)
{
    // Any auto_pad but NOTSET and VALID takes that path in libonnx, a misspelt one too
    // ("SMAE_UPPER" hung `optimize`, found by fuzzing).
    const AttributeProto *pad = ctx.getAttribute("auto_pad");
    if (!pad || pad->s().empty() || pad->s() == "NOTSET" || pad->s() == "VALID" || ctx.getNumInputs() == 0 ||
        !ctx.getInputType(0))
        return {};
    const onnx::TypeProto &t = *ctx.getInputType(0);
    if (!t.has_tensor_type() || !t.tensor_type().has_shape())
        return {};
    const onnx::TensorShapeProto &shape = t.tensor_type().shape();
    const AttributeProto *strides = ctx.getAttribute("strides");
    for (int d = 2; d < shape.dim_size(); ++d) {
        const std::int64_t stride = strides && d - 2 < strides->ints_size() ? strides->ints(d - 2) : 1;
        if (stride > 1 && shape.dim(d).has_dim_value() && shape.dim(d).dim_value() / stride > (1 << 24))
            return kSkipInference;
    }
    return {};
}

void guardInputKinds();

void installGuards()
{
    installInferenceGaps();
    // An axis left out takes the schema version's default (LayerNormalization −1, Softmax 1 or
    // −1, Gather 0, …), which a rank-0 input puts out of range for every one of these ops:
    // LayerNormalization of a scalar with its Mean output crashed libonnx 1.12's inference
    // (found by fuzzing). So each version's function is guarded with its own default.
    for (const AxisRange &a : axisRanges) {
        const std::string op = a.op;
        std::set<const onnx::OpSchema *> done;
        for (int version = 1; version <= 30; ++version) {
            auto *schema = const_cast<onnx::OpSchema *>(onnx::OpSchemaRegistry::Schema(op, version, ""));
            if (!schema || !done.insert(schema).second)
                continue;
            std::optional<std::int64_t> byDefault;
            if (const auto it = schema->attributes().find("axis");
                it != schema->attributes().end() && it->second.default_value.has_i())
                byDefault = it->second.default_value.i();
            const onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
            schema->TypeAndShapeInferenceFunction([original, op, byDefault](onnx::InferenceContext &ctx) {
                const AttributeProto *axis = ctx.getAttribute("axis");
                // The default only for a scalar, where every op's default is out of range: at
                // rank 1, Softmax-1..10's default 1 is legal (the input is coerced to [n, 1]).
                const bool scalar = ctx.getNumInputs() > 0 && rankOf(ctx.getInputType(0)) == 0;
                if ((axis || (byDefault && scalar)) && ctx.getNumInputs() > 0) {
                    const std::string p = axisProblem(op, axis ? axis->i() : *byDefault, rankOf(ctx.getInputType(0)));
                    if (!p.empty()) {
                        if (t_guardFindings)
                            t_guardFindings->push_back(op + ": " + p);
                        fail_shape_inference(op, ": ", p);
                    }
                }
                if (original)
                    original(ctx);
            });
        }
    }
    // MaxUnpool's inference reads dim 1 of the indices' shape without asking whether there is one
    // (ONNX 1.12): with no shape or rank < 2 there, the node is left uninferred.
    guardInference("MaxUnpool", [](onnx::InferenceContext &ctx) {
        if (ctx.getNumInputs() != 2 || rankOf(ctx.getInputType(0)) < 0)
            return std::string();
        return rankOf(ctx.getInputType(1)) < 2 ? std::string(kSkipInference) : std::string();
    });
    std::set<std::string> ranked;
    for (const FixedRank &f : fixedRanks)
        ranked.insert(f.op);
    for (const std::string &op : ranked)
        guardInference(op, [op](onnx::InferenceContext &ctx) {
            for (std::size_t i = 0; i < ctx.getNumInputs() && i < 3; ++i)
                if (std::string p = fixedRankProblem(op, int(i), rankOf(ctx.getInputType(i))); !p.empty())
                    return p;
            return std::string();
        });
    for (const auto &[op, index] : shapeInputs())
        guardInference(op, [i = std::size_t(index)](onnx::InferenceContext &ctx) { return shapeInputTooLong(ctx, i); });
    for (const char *op : {"Conv", "ConvInteger", "QLinearConv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool",
                           "MaxUnpool"}) {
        const std::string name = op;
        const int wIndex = weightIndex(name);
        guardInference(name, [name, wIndex](onnx::InferenceContext &ctx) {
            const int inRank = ctx.getNumInputs() > 0 ? rankOf(ctx.getInputType(0)) : -1;
            const int wRank =
                wIndex >= 0 && ctx.getNumInputs() > std::size_t(wIndex) ? rankOf(ctx.getInputType(std::size_t(wIndex))) : -1;
            std::map<std::string, int> sizes;
            for (const char *list : windowLists)
                if (const AttributeProto *a = ctx.getAttribute(list))
                    sizes[list] = a->ints_size();
            if (std::string p = windowRankProblem(name, inRank, wRank, sizes); !p.empty())
                return p;
            return slowSamePadding(ctx);
        });
    }
    guardInputKinds(); // last: it wraps the others, so it runs first
}

// What kind of value a type is, as ONNX spells a type string's head: "tensor", "seq", …
std::string kindOf(const onnx::TypeProto &t)
{
    switch (t.value_case()) {
    case onnx::TypeProto::kTensorType: return "tensor";
    case onnx::TypeProto::kSequenceType: return "seq";
    case onnx::TypeProto::kMapType: return "map";
    case onnx::TypeProto::kOptionalType: return "optional";
    case onnx::TypeProto::kSparseTensorType: return "sparse_tensor";
    default: return {};
    }
}

std::string kindWords(const std::string &kind)
{
    return kind == "seq" ? "sequence" : kind == "sparse_tensor" ? "sparse tensor" : kind == "optional" ? "optional value" : kind;
}

// Inference functions assume their type constraints hold: with check_type off (it would refuse
// models whose element types libonnx infers wrongly), LayerNormalization's crashed on a sequence
// where a tensor belongs (fuzz_loader, round 17). A value of a kind no type its parameter allows
// has (a sequence for a tensor, a tensor for a sequence, …) is refused before any of them runs:
// every op, every version, every domain libonnx knows.
void guardInputKinds()
{
    std::set<const onnx::OpSchema *> done;
    for (const onnx::OpSchema &copy : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
        const onnx::OpSchema *s =
            onnx::OpSchemaRegistry::Schema(copy.Name(), copy.SinceVersion(), copy.domain());
        if (!s || !done.insert(s).second || s->inputs().empty())
            continue;
        std::vector<std::set<std::string>> kinds; // by formal input: the kinds its types allow
        for (const auto &formal : s->inputs()) {
            std::set<std::string> k;
            for (const std::string *type : formal.GetTypes())
                if (type)
                    k.insert(type->substr(0, type->find('(')));
            kinds.push_back(std::move(k));
        }
        const bool variadic = s->inputs().back().GetOption() == onnx::OpSchema::Variadic;
        const std::string op = s->Name();
        const onnx::InferenceFunction original = s->GetTypeAndShapeInferenceFunction();
        const_cast<onnx::OpSchema *>(s)->TypeAndShapeInferenceFunction(
            [original, op, kinds, variadic](onnx::InferenceContext &ctx) {
                for (std::size_t i = 0; i < ctx.getNumInputs(); ++i) {
                    const std::size_t f = std::min(i, kinds.size() - 1);
                    if (f != i && !variadic)
                        break;
                    const onnx::TypeProto *t = ctx.getInputType(i);
                    const std::string kind = t ? kindOf(*t) : std::string();
                    if (kind.empty() || kinds[f].empty() || kinds[f].count(kind))
                        continue;
                    std::string allowed;
                    for (const std::string &k : kinds[f])
                        allowed += (allowed.empty() ? "" : " or ") + kindWords(k);
                    const std::string p = "its input " + std::to_string(i) + " is a " + kindWords(kind) + ", but " +
                                          op + " takes a " + allowed + " there";
                    if (t_guardFindings)
                        t_guardFindings->push_back(op + ": " + p);
                    fail_type_inference(op, ": ", p);
                }
                if (original)
                    original(ctx);
            });
    }
}

// After inference: the rank of every named value the graph knows.
void collectRanks(const onnx::GraphProto &g, std::unordered_map<std::string, int> &ranks)
{
    for (const auto &vi : g.input())
        ranks[vi.name()] = rankOf(&vi.type());
    for (const auto &vi : g.value_info())
        ranks[vi.name()] = rankOf(&vi.type());
    for (const auto &t : g.initializer())
        ranks[t.name()] = t.dims_size();
}

std::string nameGuardedNode(const onnx::GraphProto &g)
{
    std::unordered_map<std::string, int> ranks;
    collectRanks(g, ranks);
    auto rank = [&](const onnx::NodeProto &n, int i) {
        if (i < 0 || i >= n.input_size())
            return -1;
        const auto it = ranks.find(n.input(i));
        return it == ranks.end() ? -1 : it->second;
    };
    for (const auto &n : g.node()) {
        if (canonicalDomain(n.domain()).empty()) {
            for (int i = 0; i < 3; ++i)
                if (std::string p = fixedRankProblem(n.op_type(), i, rank(n, i)); !p.empty())
                    return nodeLabel(n) + ": " + p;
            for (const auto &a : n.attribute())
                if (a.name() == "axis")
                    if (std::string p = axisProblem(n.op_type(), a.i(), rank(n, 0)); !p.empty())
                        return nodeLabel(n) + ": " + p;
        }
        if (isWindowOp(n.op_type()) && canonicalDomain(n.domain()).empty()) {
            std::map<std::string, int> sizes;
            for (const auto &a : n.attribute())
                for (const char *list : windowLists)
                    if (a.name() == list)
                        sizes[list] = a.ints_size();
            const std::string problem =
                windowRankProblem(n.op_type(), rank(n, 0), rank(n, weightIndex(n.op_type())), sizes);
            if (!problem.empty())
                return nodeLabel(n) + ": " + problem;
        }
        for (const auto &a : n.attribute()) {
            if (a.has_g())
                if (std::string s = nameGuardedNode(a.g()); !s.empty())
                    return s;
            for (const auto &sub : a.graphs())
                if (std::string s = nameGuardedNode(sub); !s.empty())
                    return s;
        }
    }
    return {};
}

// libonnx infers nodes in file order and hands an inference function a null type for an input
// nothing has produced yet; some functions (EyeLike's, via propagateShape) dereference it. So
// inference runs only when every node reads names defined before it, in its graph or an
// enclosing one (dangling names and cycles are then reported by the importer in its own words).
bool definedBeforeUse(const onnx::GraphProto &g, std::vector<std::set<std::string>> &scopes)
{
    scopes.emplace_back();
    for (const auto &vi : g.input())
        scopes.back().insert(vi.name());
    for (const auto &t : g.initializer())
        scopes.back().insert(t.name());
    for (const auto &sp : g.sparse_initializer())
        scopes.back().insert(sp.values().name());
    bool ok = true;
    for (const auto &n : g.node()) {
        for (const auto &in : n.input())
            if (!in.empty() && std::none_of(scopes.begin(), scopes.end(),
                                            [&](const std::set<std::string> &sc) { return sc.count(in) > 0; }))
                ok = false;
        for (const auto &a : n.attribute()) {
            if (a.has_g())
                ok = definedBeforeUse(a.g(), scopes) && ok;
            for (const auto &sub : a.graphs())
                ok = definedBeforeUse(sub, scopes) && ok;
        }
        for (const auto &out : n.output())
            scopes.back().insert(out);
        if (!ok)
            break;
    }
    scopes.pop_back();
    return ok;
}

} // namespace

void ensureShapeInferenceGuards()
{
    static std::once_flag once;
    std::call_once(once, installGuards);
}

Status runGuardedShapeInference(onnx::ModelProto &proto, std::vector<std::string> &warnings)
{
    ensureShapeInferenceGuards();
    std::vector<std::set<std::string>> scopes;
    if (!definedBeforeUse(proto.graph(), scopes)) {
        warnings.push_back("shape inference skipped: a node reads a tensor that no earlier node, initializer or "
                           "input defines (the graph is not in topological order, or a name is dangling)");
        return Status::ok();
    }
    std::vector<std::string> findings;
    t_guardFindings = &findings;
    try {
        onnx::ShapeInferenceOptions options;
        options.check_type = false;
        options.error_mode = 0; // keep going past nodes it cannot infer
        onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception &e) {
        warnings.push_back(std::string("shape inference stopped: ") + e.what());
    }
    t_guardFindings = nullptr;
    if (findings.empty())
        return Status::ok();
    const std::string named = nameGuardedNode(proto.graph());
    return Status::invalid(!named.empty() ? named : "shape inference stopped at " + findings.front());
}

} // namespace opscope
