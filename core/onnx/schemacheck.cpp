#include "onnx/schemacheck.h"

#include "ir/tensor.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <set>
#include <unordered_map>

namespace opscope {
namespace {

using onnx::AttributeProto;

// Ranks beyond any real model's (ONNX Runtime's kernels stop well below): a bound that keeps
// libonnx from building millions of dims out of one bad shape tensor.
constexpr std::int64_t kMaxTensorRank = 64;

// Ops whose output rank is the length of a 1-D input (by input index): libonnx makes one dim per
// entry. Checked on declared lengths before inference and guarded during it.
const std::map<std::string, int> shapeInputs = {{"ConstantOfShape", 0}, {"Reshape", 1}, {"Expand", 1},
                                                {"Resize", 3},          {"Upsample", 1}, {"Tile", 1}};

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
        return "a " + shown(n.op_type()) + " node";
    return "node '" + shown(n.name()) + "' (" + shown(n.op_type()) + ")";
}

const char *attributeTypeName(int type)
{
    switch (type) {
    case AttributeProto::FLOAT: return "a float";
    case AttributeProto::INT: return "an int";
    case AttributeProto::STRING: return "a string";
    case AttributeProto::TENSOR: return "a tensor";
    case AttributeProto::GRAPH: return "a graph";
    case AttributeProto::SPARSE_TENSOR: return "a sparse tensor";
    case AttributeProto::TYPE_PROTO: return "a type";
    case AttributeProto::FLOATS: return "a list of floats";
    case AttributeProto::INTS: return "a list of ints";
    case AttributeProto::STRINGS: return "a list of strings";
    case AttributeProto::TENSORS: return "a list of tensors";
    case AttributeProto::GRAPHS: return "a list of graphs";
    case AttributeProto::SPARSE_TENSORS: return "a list of sparse tensors";
    case AttributeProto::TYPE_PROTOS: return "a list of types";
    default: return "undefined";
    }
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

std::string listText(const google::protobuf::RepeatedField<std::int64_t> &v)
{
    std::string s = "[";
    for (int i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

// Value ranges libonnx and our kernels rely on, by op and attribute: {op, attribute, minimum}.
struct AttributeRange
{
    const char *op; // nullptr: every window op
    const char *attribute;
    std::int64_t minimum;
};

constexpr AttributeRange attributeRanges[] = {
    {nullptr, "strides", 1},           {nullptr, "dilations", 1},        {nullptr, "kernel_shape", 1},
    {nullptr, "pads", 0},              {nullptr, "group", 1},            {"ConvTranspose", "output_padding", 0},
    {"ConvTranspose", "output_shape", 0},
    {"Split", "num_outputs", 1},       {"DepthToSpace", "blocksize", 1}, {"SpaceToDepth", "blocksize", 1},
    {"LRN", "size", 1},                {"Im2Col", "kernel_shape", 1},    {"RoiAlign", "sampling_ratio", 0},
    {"RoiAlign", "output_height", 1},  {"RoiAlign", "output_width", 1},  {"MaxRoiPool", "pooled_shape", 1},
};

std::int64_t newestKnownOpset(const std::string &domain)
{
    const auto &map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    const auto it = map.find(domain);
    return it == map.end() ? 0 : it->second.second;
}

class StructureChecker
{
public:
    explicit StructureChecker(const onnx::ModelProto &model)
    {
        for (const auto &o : model.opset_import())
            m_opsets[canonicalDomain(o.domain())] = o.version();
        for (const auto &f : model.functions())
            m_functions[{f.domain(), f.name()}] = &f;
    }

    Status run(const onnx::ModelProto &model)
    {
        // Version 0 (or below) of an operator set exists for no domain: every schema lookup would
        // come back empty and no node would be checked (the fuzzer's ai.onnx version 0 model).
        for (const auto &o : model.opset_import())
            if (o.version() <= 0)
                return Status::invalid("the model imports operator set '" +
                                       (o.domain().empty() ? std::string("ai.onnx") : shown(o.domain())) +
                                       "' at version " + std::to_string(o.version()) + "; versions start at 1");
        OPSCOPE_TRY(checkFunctionCycles());
        OPSCOPE_TRY(graph(model.graph(), m_opsets));
        for (const auto &f : model.functions()) {
            std::map<std::string, std::int64_t> opsets = m_opsets;
            for (const auto &o : f.opset_import())
                opsets[canonicalDomain(o.domain())] = o.version();
            for (const auto &n : f.node())
                OPSCOPE_TRY(node(n, opsets, nullptr).withContext("function '" + shown(f.name()) + "'"));
        }
        return Status::ok();
    }

private:
    using FunctionKey = std::pair<std::string, std::string>;

    // libonnx expands local functions into their callers recursively: a cycle never ends.
    Status checkFunctionCycles()
    {
        std::map<FunctionKey, int> state; // 1: on the current path, 2: done
        std::vector<std::string> path;
        std::function<Status(const FunctionKey &)> visit = [&](const FunctionKey &key) -> Status {
            state[key] = 1;
            path.push_back(key.second);
            std::vector<FunctionKey> callees;
            collectCalls(m_functions.at(key)->node(), callees);
            for (const FunctionKey &callee : callees) {
                if (!m_functions.count(callee))
                    continue;
                if (state[callee] == 1) {
                    std::string chain;
                    for (const std::string &p : path)
                        chain += shown(p) + " → ";
                    return Status::invalid("model-local function '" + shown(callee.second) +
                                           "' calls itself (" + chain + shown(callee.second) +
                                           "); ONNX functions cannot be recursive");
                }
                if (state[callee] == 0)
                    OPSCOPE_TRY(visit(callee));
            }
            path.pop_back();
            state[key] = 2;
            return Status::ok();
        };
        for (const auto &[key, f] : m_functions)
            if (state[key] == 0)
                OPSCOPE_TRY(visit(key));
        return Status::ok();
    }

    static void collectCalls(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                             std::vector<FunctionKey> &out)
    {
        for (const auto &n : nodes) {
            out.emplace_back(n.domain(), n.op_type());
            for (const auto &a : n.attribute()) {
                if (a.has_g())
                    collectCalls(a.g().node(), out);
                for (const auto &g : a.graphs())
                    collectCalls(g.node(), out);
            }
        }
    }

    // libonnx's inference reads constant inputs (Reshape's shape, Slice's starts) with ParseData,
    // which copies raw_data's bytes into a vector sized by its own count: raw bytes that are not
    // the tensor's dims × element size overflow it. Checked here, before libonnx sees the tensor.
    static Status tensorPayload(const onnx::TensorProto &t, const std::string &what)
    {
        if (t.data_location() == onnx::TensorProto::EXTERNAL || !t.has_raw_data() ||
            !isKnownDataType(t.data_type()) || t.data_type() == onnx::TensorProto::STRING ||
            t.data_type() == onnx::TensorProto::UNDEFINED)
            return Status::ok(); // external data and typed fields are checked at import
        return checkTensorByteCount(static_cast<DataType>(t.data_type()),
                                    std::vector<std::int64_t>(t.dims().begin(), t.dims().end()), t.raw_data().size(),
                                    what);
    }

    Status graph(const onnx::GraphProto &g, const std::map<std::string, std::int64_t> &opsets)
    {
        for (const auto &t : g.initializer())
            OPSCOPE_TRY(tensorPayload(t, "initializer '" + shown(t.name()) + "'"));
        for (const auto &n : g.node())
            OPSCOPE_TRY(node(n, opsets, &g));
        return Status::ok();
    }

    Status node(const onnx::NodeProto &n, const std::map<std::string, std::int64_t> &opsets,
                const onnx::GraphProto *owner)
    {
        const std::string label = nodeLabel(n);
        for (const auto &a : n.attribute()) {
            if (a.name().empty())
                return Status::invalid(label + " has an attribute without a name");
            if (a.has_t())
                OPSCOPE_TRY(tensorPayload(a.t(), label + " attribute '" + shown(a.name()) + "'"));
            for (const auto &t : a.tensors())
                OPSCOPE_TRY(tensorPayload(t, label + " attribute '" + shown(a.name()) + "'"));
            for (const AttributeRange &r : attributeRanges)
                if (a.name() == r.attribute && (r.op ? n.op_type() == r.op : isWindowOp(n.op_type())))
                    OPSCOPE_TRY(checkRange(label, a, r.minimum));
        }
        const std::string domain = canonicalDomain(n.domain());
        const auto opset = opsets.find(domain);
        // The schema whose inference function libonnx will call. Above the newest opset this
        // libonnx knows (Debian's 1.12: 17) it may be stale (ReduceMean-18 takes axes as an
        // input), so only what its inference dereferences is checked then: required and graph
        // attributes.
        const onnx::OpSchema *schema =
            opset == opsets.end() || m_functions.count({n.domain(), n.op_type()})
                ? nullptr
                : onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset->second), domain);
        if (schema)
            OPSCOPE_TRY(againstSchema(n, *schema, label, opset->second > newestKnownOpset(domain)));
        if (n.op_type() == "Einsum" && domain.empty()) {
            for (const auto &a : n.attribute())
                if (a.name() == "equation")
                    OPSCOPE_TRY(checkEinsumEquation(a.s(), static_cast<std::size_t>(n.input_size()))
                                    .withContext(label));
        }
        if (n.op_type() == "Constant" && domain.empty())
            OPSCOPE_TRY(checkConstant(n, label));
        if (n.op_type() == "If" && domain.empty())
            for (const auto &a : n.attribute())
                if (a.has_g() && a.g().input_size() > 0)
                    return Status::invalid(label + ": its " + a.name() + " declares " +
                                           std::to_string(a.g().input_size()) +
                                           " input(s), but If branches take no inputs (they read "
                                           "outer values by name)");
        if (n.op_type() == "SplitToSequence" && domain.empty() && owner && n.input_size() > 1)
            OPSCOPE_TRY(checkSplitToSequence(n, *owner, label));
        if (domain.empty() && owner)
            OPSCOPE_TRY(checkShapeInputLength(n, *owner, label));
        for (const auto &a : n.attribute()) {
            if (a.has_g())
                OPSCOPE_TRY(graph(a.g(), opsets).withContext(label + " attribute '" + a.name() + "'"));
            for (const auto &g : a.graphs())
                OPSCOPE_TRY(graph(g, opsets).withContext(label + " attribute '" + a.name() + "'"));
        }
        return Status::ok();
    }

    static Status checkRange(const std::string &label, const AttributeProto &a, std::int64_t minimum)
    {
        const bool list = a.type() == AttributeProto::INTS || (a.type() == AttributeProto::UNDEFINED && a.ints_size());
        if (list) {
            for (std::int64_t v : a.ints())
                if (v < minimum)
                    return Status::invalid(label + ": attribute '" + a.name() + "' is " + listText(a.ints()) +
                                           "; every entry must be at least " + std::to_string(minimum));
        } else if (a.type() == AttributeProto::INT && a.i() < minimum) {
            return Status::invalid(label + ": attribute '" + a.name() + "' is " + std::to_string(a.i()) +
                                   "; it must be at least " + std::to_string(minimum));
        }
        return Status::ok();
    }

    static Status againstSchema(const onnx::NodeProto &n, const onnx::OpSchema &schema, const std::string &label,
                                bool stale)
    {
        auto isGraph = [](const onnx::OpSchema::Attribute &a) {
            return a.type == AttributeProto::GRAPH || a.type == AttributeProto::GRAPHS;
        };
        if (stale && n.input_size() < schema.min_input()) // required inputs stay required in later opsets
            return Status::invalid(label + " has " + std::to_string(n.input_size()) + " input(s); " +
                                   shown(n.op_type()) + " needs at least " + std::to_string(schema.min_input()));
        if (stale) // nor may they be empty there (the fuzzer's Einsum(''), Mul('', x) at opsets 20–24)
            for (int i = 0; i < n.input_size() && i < int(schema.inputs().size()); ++i)
                if (n.input(i).empty() && schema.inputs()[std::size_t(i)].GetOption() != onnx::OpSchema::Optional)
                    return Status::invalid(label + ": input " + std::to_string(i) + " ('" +
                                           schema.inputs()[std::size_t(i)].GetName() + "') is empty, but " +
                                           shown(n.op_type()) + " requires it");
        if (stale) {
            // What the older schema's inference dereferences: its required and graph attributes
            // (ScanInferenceFunction reads num_scan_inputs without a null check).
            for (const auto &entry : schema.attributes()) {
                if (!isGraph(entry.second) && !entry.second.required)
                    continue;
                const auto it = std::find_if(n.attribute().begin(), n.attribute().end(),
                                             [&](const AttributeProto &a) { return a.name() == entry.first; });
                if (it == n.attribute().end() && entry.second.required)
                    return Status::invalid(label + " lacks its required attribute '" + entry.first + "'");
                if (it != n.attribute().end() && it->type() != entry.second.type)
                    return Status::invalid(label + ": attribute '" + shown(entry.first) + "' is " +
                                           attributeTypeName(it->type()) + ", but " + shown(n.op_type()) +
                                           " expects " + attributeTypeName(entry.second.type));
            }
            return Status::ok();
        }
        // Fewer inputs than the schema requires: libonnx's inference and every pass index the
        // required ones (MatMul's B) without a check. Trailing optional inputs may be omitted.
        if (n.input_size() < schema.min_input())
            return Status::invalid(label + " has " + std::to_string(n.input_size()) + " input(s); " +
                                   shown(n.op_type()) + "-" + std::to_string(schema.SinceVersion()) +
                                   " needs at least " + std::to_string(schema.min_input()));
        if (n.output_size() < schema.min_output())
            return Status::invalid(label + " has " + std::to_string(n.output_size()) + " output(s); " +
                                   shown(n.op_type()) + "-" + std::to_string(schema.SinceVersion()) +
                                   " produces at least " + std::to_string(schema.min_output()));
        // An empty name stands for an omitted optional input only: ONNX's own Verify refuses one
        // in a required or variadic slot, and passes and kernels would read it as a tensor.
        const auto &formal = schema.inputs();
        for (int i = 0; i < n.input_size() && !formal.empty(); ++i) {
            const auto &param = formal[std::size_t(std::min<int>(i, int(formal.size()) - 1))];
            if (n.input(i).empty() && param.GetOption() != onnx::OpSchema::Optional)
                return Status::invalid(label + ": input " + std::to_string(i) + " ('" + param.GetName() +
                                       "') is empty, but " + shown(n.op_type()) + " requires it");
        }
        if (n.input_size() > schema.max_input())
            return Status::invalid(label + " has " + std::to_string(n.input_size()) + " inputs; " +
                                   shown(n.op_type()) + "-" + std::to_string(schema.SinceVersion()) +
                                   " takes at most " + std::to_string(schema.max_input()));
        if (n.output_size() > schema.max_output())
            return Status::invalid(label + " has " + std::to_string(n.output_size()) + " outputs; " +
                                   shown(n.op_type()) + "-" + std::to_string(schema.SinceVersion()) +
                                   " produces at most " + std::to_string(schema.max_output()));
        const auto &declared = schema.attributes();
        for (const auto &a : n.attribute()) {
            const auto it = declared.find(a.name());
            if (it == declared.end() || !a.ref_attr_name().empty() || a.type() == AttributeProto::UNDEFINED)
                continue; // unknown attributes are the checker's warning; ref attributes bind later
            if (a.type() != it->second.type)
                return Status::invalid(label + ": attribute '" + shown(a.name()) + "' is " +
                                       attributeTypeName(a.type()) + ", but " + shown(n.op_type()) +
                                       " expects " + attributeTypeName(it->second.type));
        }
        for (const auto &entry : declared) {
            const std::string &name = entry.first; // not a structured binding: clang 14 cannot capture those
            if (!entry.second.required)
                continue;
            const bool present = std::any_of(n.attribute().begin(), n.attribute().end(),
                                             [&](const AttributeProto &a) { return a.name() == name; });
            if (!present)
                return Status::invalid(label + " lacks its required attribute '" + name + "'");
        }
        return Status::ok();
    }

    static Status checkConstant(const onnx::NodeProto &n, const std::string &label)
    {
        int values = 0;
        for (const auto &a : n.attribute())
            if (a.name() == "value" || a.name() == "sparse_value" || a.name().rfind("value_", 0) == 0)
                ++values;
        if (values != 1)
            return Status::invalid(label + " has " + std::to_string(values) +
                                   " value attributes; a Constant needs exactly one (value, value_float, "
                                   "value_ints, …)");
        return Status::ok();
    }

    // libonnx divides the split axis by a scalar `split` read from the initializer.
    static Status checkSplitToSequence(const onnx::NodeProto &n, const onnx::GraphProto &g,
                                       const std::string &label)
    {
        for (const auto &t : g.initializer()) {
            if (t.name() != n.input(1))
                continue;
            const bool scalar = t.dims_size() == 0 || (t.dims_size() == 1 && t.dims(0) == 1);
            if (!scalar)
                return Status::ok();
            std::int64_t v = 1;
            if (t.int64_data_size())
                v = t.int64_data(0);
            else if (t.int32_data_size())
                v = t.int32_data(0);
            else if (t.data_type() == onnx::TensorProto::INT64 && t.raw_data().size() == 8)
                std::memcpy(&v, t.raw_data().data(), 8);
            else if (t.data_type() == onnx::TensorProto::INT32 && t.raw_data().size() == 4) {
                std::int32_t w = 0;
                std::memcpy(&w, t.raw_data().data(), 4);
                v = w;
            }
            if (v <= 0)
                return Status::invalid(label + ": its scalar split '" + shown(t.name()) + "' is " +
                                       std::to_string(v) + "; it must be a positive chunk length");
        }
        return Status::ok();
    }

    // Ops whose output rank is the length of a 1-D input: libonnx makes one dim per entry, so a
    // declared length of 2^40 is 2^40 dims (minutes of allocation, then out of memory).
    static Status checkShapeInputLength(const onnx::NodeProto &n, const onnx::GraphProto &g, const std::string &label)
    {
        const auto it = shapeInputs.find(n.op_type());
        if (it == shapeInputs.end() || n.input_size() <= it->second || n.input(it->second).empty())
            return Status::ok();
        const std::string &name = n.input(it->second);
        std::int64_t length = -1;
        auto fromInfo = [&](const onnx::ValueInfoProto &vi) {
            if (vi.name() == name && vi.type().tensor_type().shape().dim_size() == 1 &&
                vi.type().tensor_type().shape().dim(0).has_dim_value())
                length = vi.type().tensor_type().shape().dim(0).dim_value();
        };
        for (const auto &vi : g.input())
            fromInfo(vi);
        for (const auto &vi : g.value_info())
            fromInfo(vi);
        for (const auto &t : g.initializer())
            if (t.name() == name && t.dims_size() == 1)
                length = t.dims(0);
        if (length > kMaxTensorRank)
            return Status::invalid(label + ": its shape input '" + shown(name) + "' has " + std::to_string(length) +
                                   " entries, a tensor of rank " + std::to_string(length) + "; ranks above " +
                                   std::to_string(kMaxTensorRank) + " are not supported");
        return Status::ok();
    }

    std::map<std::string, std::int64_t> m_opsets;
    std::map<FunctionKey, const onnx::FunctionProto *> m_functions;
};

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
    std::set<const onnx::OpSchema *> done;
    for (int version = 1; version <= 30; ++version) {
        const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(op, version, "");
        if (!s || !done.insert(s).second)
            continue;
        onnx::InferenceFunction original = s->GetTypeAndShapeInferenceFunction();
        const_cast<onnx::OpSchema *>(s)->TypeAndShapeInferenceFunction(
            [original, op, problem](onnx::InferenceContext &ctx) {
                if (const std::string p = problem(ctx); !p.empty()) {
                    // "skip": the node is valid but libonnx's inference cannot take it; inference
                    // passes over it (error mode 0) and the import goes on.
                    if (t_guardFindings && p != kSkipInference)
                        t_guardFindings->push_back(op + ": " + p);
                    fail_shape_inference(op, ": ", p);
                }
                original(ctx);
            });
    }
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

void installGuards()
{
    for (const AxisRange &a : axisRanges) {
        const std::string op = a.op;
        guardInference(op, [op](onnx::InferenceContext &ctx) {
            const AttributeProto *axis = ctx.getAttribute("axis");
            if (!axis || ctx.getNumInputs() == 0)
                return std::string();
            return axisProblem(op, axis->i(), rankOf(ctx.getInputType(0)));
        });
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
    for (const auto &[op, index] : shapeInputs)
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
            return windowRankProblem(name, inRank, wRank, sizes);
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

Status checkModelStructure(const onnx::ModelProto &model)
{
    StructureChecker checker(model);
    return checker.run(model);
}

Status checkEinsumEquation(const std::string &equation, std::size_t inputCount)
{
    const std::string where = "Einsum equation '" + shown(equation) + "'";
    std::string eq;
    for (char c : equation)
        if (c != ' ')
            eq += c;
    const std::size_t arrow = eq.find("->");
    if (arrow != std::string::npos && eq.find("->", arrow + 2) != std::string::npos)
        return Status::invalid(where + " has more than one '->'");
    const std::string lhs = eq.substr(0, arrow);
    const std::string rhs = arrow == std::string::npos ? std::string() : eq.substr(arrow + 2);
    auto term = [&](const std::string &t, bool output) -> Status {
        int ellipses = 0;
        std::set<char> seen;
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (t.compare(i, 3, "...") == 0) {
                ++ellipses;
                i += 2;
                continue;
            }
            const char c = t[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                return Status::invalid(where + ": '" + std::string(1, c) +
                                       "' is not a letter or '...'");
            if (output && !seen.insert(c).second)
                return Status::invalid(where + ": output index '" + std::string(1, c) + "' appears twice");
            if (output && lhs.find(c) == std::string::npos)
                return Status::invalid(where + ": output index '" + std::string(1, c) +
                                       "' appears in no input");
        }
        if (ellipses > 1)
            return Status::invalid(where + ": a term has more than one '...'");
        return Status::ok();
    };
    std::size_t terms = 0;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = lhs.find(',', start);
        OPSCOPE_TRY(term(lhs.substr(start, comma - start), false));
        ++terms;
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    if (terms != inputCount)
        return Status::invalid(where + " has " + std::to_string(terms) + " input term(s) for " +
                               std::to_string(inputCount) + " input(s)");
    if (arrow != std::string::npos)
        OPSCOPE_TRY(term(rhs, true));
    return Status::ok();
}

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
