// Structure checks of a model before any libonnx code reads it (see schemacheck.h); the guards
// around libonnx's shape inference are in inferenceguards.cpp.

#include "onnx/schemacheck.h"

#include "ir/tensor.h"
#include "onnx/extraarity.h"
#include "onnx/schemacheckdetail.h"

#include <climits>
#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#include <set>
#include <unordered_map>

namespace opscope {
namespace {

using onnx::AttributeProto;
using namespace schemadetail;

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
    {"GatherND", "batch_dims", 0}, // libonnx's inference indexes dims by it (fuzzing: -2 crashed it)
};

std::int64_t newestKnownOpset(const std::string &domain)
{
    const auto &map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    const auto it = map.find(domain);
    return it == map.end() ? 0 : it->second.second;
}

// Ops of the default domain whose newest version above libonnx 1.12's opset 17 takes one input
// more than their opset-17 schema (axes as an input).
bool grewAnInputAfter17(const std::string &op)
{
    static const std::set<std::string> ops = {"Pad",           "ReduceL1",  "ReduceL2",  "ReduceLogSum",
                                              "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
                                              "ReduceProd",    "ReduceSumSquare"};
    return ops.count(op) > 0;
}

// The opset an op of `domain` came in, as this libonnx knows it; 0 for an op it does not know.
int firstOpset(const std::string &op, const std::string &domain)
{
    const std::int64_t newest = newestKnownOpset(domain);
    for (int v = 1; v <= newest; ++v)
        if (const onnx::OpSchema *s = onnx::OpSchemaRegistry::Schema(op, v, domain))
            return s->SinceVersion();
    return 0;
}

class StructureChecker
{
public:
    explicit StructureChecker(const onnx::ModelProto &model,
                              const EmbeddedSpans *mapped)
        : m_main(&model.graph()), m_mapped(mapped)
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

    const std::pair<std::uint64_t, std::uint64_t> *strippedSpan(const onnx::GraphProto &g,
                                                                 const onnx::TensorProto &t) const
    {
        if (&g != m_main || !m_mapped || !isKnownDataType(t.data_type()) || t.data_type() == onnx::TensorProto::STRING ||
            t.data_type() == onnx::TensorProto::UNDEFINED ||
            t.raw_data().size() != dataTypeSize(static_cast<DataType>(t.data_type())))
            return nullptr;
        const auto it = m_mapped->find(t.name());
        return it == m_mapped->end() ? nullptr : &it->second;
    }

    Status graph(const onnx::GraphProto &g, const std::map<std::string, std::int64_t> &opsets)
    {
        for (const auto &t : g.initializer()) {
            const std::string what = "initializer '" + shown(t.name()) + "'";
            // Stripped: its bytes are the span in the file, which must fit its shape as well.
            if (const auto *span = strippedSpan(g, t)) {
                OPSCOPE_TRY(checkTensorByteCount(static_cast<DataType>(t.data_type()),
                                                 std::vector<std::int64_t>(t.dims().begin(), t.dims().end()),
                                                 span->second, what));
                continue;
            }
            OPSCOPE_TRY(tensorPayload(t, what));
        }
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
        // A domain the model does not import (a warning: viewable, not runnable) still reaches the
        // passes, whose selectors index a node's inputs: a MatMul without inputs in such a model
        // crashed MatMulTransposeFusion (fuzzing). Held to the op's newest schema, leniently.
        if (!schema && opset == opsets.end() && !m_functions.count({n.domain(), n.op_type()}))
            if (const onnx::OpSchema *newest = onnx::OpSchemaRegistry::Schema(n.op_type(), INT_MAX, domain))
                OPSCOPE_TRY(againstSchema(n, *newest, label, true));
        if (!schema && !m_functions.count({n.domain(), n.op_type()})) {
            // Ops libonnx does not know: opscope's own table of counts.
            if (const std::optional<OpArity> arity = extraArity(domain, n.op_type()))
                OPSCOPE_TRY(againstArity(n, *arity, label));
            // An op the model's opset predates (Einsum, from opset 12, in an opset-5 model) has no
            // schema there, so nothing above checked it, and no runtime implements it at that
            // opset: its kernel met inputs no schema had vetted (an omitted operand).
            if (const int first = opset == opsets.end() ? 0 : firstOpset(n.op_type(), domain); first > 0 && first > opset->second)
                return Status::invalid(label + ": " + shown(n.op_type()) + " came in opset " + std::to_string(first) +
                                       (domain.empty() ? "" : " of " + domain) + ", but the model imports opset " +
                                       std::to_string(opset->second) +
                                       ": raise the model's opset import or use an op of its opset");
        }
        if (n.op_type() == "Einsum" && domain.empty()) {
            for (const auto &a : n.attribute())
                if (a.name() == "equation")
                    OPSCOPE_TRY(checkEinsumEquation(a.s(), static_cast<std::size_t>(n.input_size()))
                                    .withContext(label));
        }
        if (n.op_type() == "Constant" && domain.empty())
            OPSCOPE_TRY(checkConstant(n, label));
        if (n.op_type() == "Transpose" && domain.empty())
            OPSCOPE_TRY(checkPermutation(n, label));
        if (n.op_type() == "MaxPool" || n.op_type() == "AveragePool" || n.op_type() == "LpPool" ||
            n.op_type() == "QLinearAveragePool")
            OPSCOPE_TRY(checkPoolPads(n, label));
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

    // The table's counts for an op libonnx has no schema for; the first minInputs inputs are
    // required, so none of them may be the empty name.
    static Status againstArity(const onnx::NodeProto &n, const OpArity &a, const std::string &label)
    {
        const auto range = [](int lo, int hi) {
            return lo == hi ? std::to_string(lo)
                            : std::to_string(lo) + (hi == std::numeric_limits<int>::max() ? " or more"
                                                                                        : " to " + std::to_string(hi));
        };
        if (n.input_size() < a.minInputs || n.input_size() > a.maxInputs)
            return Status::invalid(label + " has " + std::to_string(n.input_size()) + " input(s); " +
                                   shown(n.op_type()) + " takes " + range(a.minInputs, a.maxInputs));
        if (n.output_size() < a.minOutputs || n.output_size() > a.maxOutputs)
            return Status::invalid(label + " has " + std::to_string(n.output_size()) + " output(s); " +
                                   shown(n.op_type()) + " produces " + range(a.minOutputs, a.maxOutputs));
        for (int i = 0; i < a.minInputs; ++i)
            if (n.input(i).empty())
                return Status::invalid(label + ": input " + std::to_string(i) + " is empty, but " +
                                       shown(n.op_type()) + " requires it");
        for (int i = 0; i < a.minOutputs; ++i)
            if (n.output(i).empty())
                return Status::invalid(label + ": output " + std::to_string(i) + " is empty, but " +
                                       shown(n.op_type()) + " always produces it");
        return Status::ok();
    }

    static Status againstSchema(const onnx::NodeProto &n, const onnx::OpSchema &schema, const std::string &label,
                                bool stale)
    {
        auto isGraph = [](const onnx::OpSchema::Attribute &a) {
            return a.type == AttributeProto::GRAPH || a.type == AttributeProto::GRAPHS;
        };
        // Fewer inputs than the schema requires: libonnx's inference and every pass index the
        // required ones (MatMul's B) without a check. Trailing optional inputs may be omitted.
        // Required inputs stay required in later opsets, so this holds above libonnx's too.
        if (n.input_size() < schema.min_input())
            return Status::invalid(label + " has " + std::to_string(n.input_size()) + " input(s); " +
                                   shown(n.op_type()) + "-" + std::to_string(schema.SinceVersion()) +
                                   " needs at least " + std::to_string(schema.min_input()));
        // An empty name stands for an omitted optional input only: ONNX's own Verify refuses one
        // in a required or variadic slot, and passes and kernels would read it as a tensor (the
        // fuzzer's Einsum(''), Mul('', x) at opsets 20–24 too). Above libonnx's newest opset only
        // the old schema's own slots are checked: a later opset may add optional inputs after them.
        const auto &formal = schema.inputs();
        for (int i = 0; i < n.input_size() && !formal.empty(); ++i) {
            if (stale && i >= int(formal.size()))
                break;
            const auto &param = formal[std::size_t(std::min<int>(i, int(formal.size()) - 1))];
            if (n.input(i).empty() && param.GetOption() != onnx::OpSchema::Optional)
                return Status::invalid(label + ": input " + std::to_string(i) + " ('" + param.GetName() +
                                       "') is empty, but " + shown(n.op_type()) + " requires it");
        }
        // Outputs are checked above libonnx's newest opset too: later opsets added inputs to ops
        // (ReduceMean-18's axes) but neither outputs nor optional ones. A node with more outputs
        // than its op makes leaves the extras unwritten for every pass and the executor
        // (Size(x) -> (a, b) at opset 25, found by fuzzing, overran constant folding's results);
        // one with fewer has a kernel write an output that is not there (TopK with one).
        // Inputs too: the ops that gained an input after opset 17 gained one, their axes (Pad-18,
        // the Reduce ops at 18). Any other op over its count is wrong at every opset: a MatMul
        // with a third input at opset 21 (fuzzing) had MatMulScaleFusion scale it as a bias.
        if (const int extra = stale && grewAnInputAfter17(n.op_type()) ? 1 : 0;
            schema.max_input() < std::numeric_limits<int>::max() - extra && n.input_size() > schema.max_input() + extra)
            return Status::invalid(label + " has " + std::to_string(n.input_size()) + " inputs; " +
                                   shown(n.op_type()) + " takes at most " + std::to_string(schema.max_input() + extra));
        if (n.output_size() < schema.min_output())
            return Status::invalid(label + " has " + std::to_string(n.output_size()) + " output(s); " +
                                   shown(n.op_type()) + "-" + std::to_string(schema.SinceVersion()) +
                                   " produces at least " + std::to_string(schema.min_output()));
        if (n.output_size() > schema.max_output())
            return Status::invalid(label + " has " + std::to_string(n.output_size()) + " outputs; " +
                                   shown(n.op_type()) + "-" + std::to_string(schema.SinceVersion()) +
                                   " produces at most " + std::to_string(schema.max_output()));
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

    // A pooling window of padding alone has no value to take, and a pad of 2^31 on a 5×5 input
    // asked for a 10 GB output that fitted memory and took minutes: like ONNX Runtime, every pad
    // of a pooling op must be smaller than its kernel in that axis.
    static Status checkPoolPads(const onnx::NodeProto &n, const std::string &label)
    {
        const AttributeProto *kernel = nullptr, *pads = nullptr;
        for (const auto &a : n.attribute()) {
            if (a.name() == "kernel_shape")
                kernel = &a;
            else if (a.name() == "pads")
                pads = &a;
        }
        if (!kernel || !pads || pads->ints_size() != 2 * kernel->ints_size())
            return Status::ok(); // a missing or mis-sized list is the schema check's and inference's
        const int rank = kernel->ints_size();
        for (int i = 0; i < 2 * rank; ++i)
            if (pads->ints(i) >= kernel->ints(i % rank))
                return Status::invalid(label + ": pads " + listText(pads->ints()) + " are not all smaller than its kernel_shape " +
                                       listText(kernel->ints()) + "; a pooling window must hold at least one input element");
        return Status::ok();
    }

    // A Transpose's perm must name each axis once, 0 … n−1: passes compose and invert perms by
    // indexing one with the other (redundant-node elimination read perm[−1], found by fuzzing),
    // kernels index dims with them. The input's rank is checked against n where it is known.
    static Status checkPermutation(const onnx::NodeProto &n, const std::string &label)
    {
        for (const auto &a : n.attribute()) {
            if (a.name() != "perm")
                continue;
            std::vector<bool> seen(std::size_t(a.ints_size()), false);
            for (const std::int64_t p : a.ints()) {
                if (p < 0 || p >= a.ints_size() || seen[std::size_t(p)])
                    return Status::invalid(label + ": perm " + listText(a.ints()) + " is not a permutation of 0…" +
                                           std::to_string(a.ints_size() - 1) + " (each axis exactly once)");
                seen[std::size_t(p)] = true;
            }
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

    // A tensor libonnx's inference reads as data: an initializer, or a Constant node's `value`
    // (inference takes both; a guard that looked at initializers alone let a Constant's split of
    // 0 through to a division by zero, fuzz_loader). The last initializer of a name wins, as in
    // libonnx's map.
    static const onnx::TensorProto *inferenceData(const onnx::GraphProto &g, const std::string &name)
    {
        const onnx::TensorProto *found = nullptr;
        for (const auto &t : g.initializer())
            if (t.name() == name)
                found = &t;
        if (found)
            return found;
        for (const auto &n : g.node())
            if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx") && n.output_size() > 0 &&
                n.output(0) == name)
                for (const auto &a : n.attribute())
                    if (a.name() == "value" && a.has_t())
                        found = &a.t();
        return found;
    }

    // libonnx divides the split axis by a scalar `split` read from the initializer or Constant.
    static Status checkSplitToSequence(const onnx::NodeProto &n, const onnx::GraphProto &g,
                                       const std::string &label)
    {
        if (const onnx::TensorProto *found = inferenceData(g, n.input(1))) {
            const onnx::TensorProto &t = *found;
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
                return Status::invalid(label + ": its scalar split '" + shown(n.input(1)) + "' is " +
                                       std::to_string(v) + "; it must be a positive chunk length");
        }
        return Status::ok();
    }

    // Ops whose output rank is the length of a 1-D input: libonnx makes one dim per entry, so a
    // declared length of 2^40 is 2^40 dims (minutes of allocation, then out of memory).
    static Status checkShapeInputLength(const onnx::NodeProto &n, const onnx::GraphProto &g, const std::string &label)
    {
        const auto it = shapeInputs().find(n.op_type());
        if (it == shapeInputs().end() || n.input_size() <= it->second || n.input(it->second).empty())
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
        if (const onnx::TensorProto *t = inferenceData(g, name); t && t->dims_size() == 1)
            length = t->dims(0);
        if (length > kMaxTensorRank)
            return Status::invalid(label + ": its shape input '" + shown(name) + "' has " + std::to_string(length) +
                                   " entries, a tensor of rank " + std::to_string(length) + "; ranks above " +
                                   std::to_string(kMaxTensorRank) + " are not supported");
        return Status::ok();
    }

    std::map<std::string, std::int64_t> m_opsets;
    std::map<FunctionKey, const onnx::FunctionProto *> m_functions;
    const onnx::GraphProto *m_main = nullptr;
    const EmbeddedSpans *m_mapped = nullptr;
};

} // namespace

Status checkModelStructure(const onnx::ModelProto &model,
                           const EmbeddedSpans *mapped)
{
    StructureChecker checker(model, mapped);
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

} // namespace opscope
