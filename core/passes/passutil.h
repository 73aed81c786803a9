#pragma once
// Small helpers every pass uses: reading constants and static shapes, reading attributes with
// their ONNX defaults spelled out, and graph edits that keep the model's interface intact (a graph
// output keeps its name when the value behind it is replaced).

#include "ir/model.h"
#include "util/status.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace opscope::passes {

// The domain of opscope's own fused operators (documented in docs/operators.md).
inline constexpr const char *kOpscopeDomain = "ai.opscope";
inline constexpr const char *kMicrosoftDomain = "com.microsoft";

// The most elements a pass may synthesize for a constant sized by a shape (LayerNorm's default γ of
// ones, a per-channel broadcast): a declared dim of 2^31 must not become an 8 GB tensor (the
// pipeline fuzzer's model did, and took 17 GB and two minutes). Bigger: the rewrite is skipped.
inline constexpr std::int64_t kMaxSynthesizedElements = std::int64_t(1) << 24;

bool isOp(const Node &node, std::string_view opType); // in the default ONNX domain
bool isOpscopeOp(const Node &node, std::string_view opType);

// The initializer behind a value (not one a graph input can override), or nullptr.
const Tensor *constantTensor(const Graph &graph, ValueId v);
// A constant's elements as doubles (numeric dtypes only).
std::optional<std::vector<double>> constantValues(const Graph &graph, ValueId v);
// A constant's elements as float, for float32 constants only. This copies every element: a
// selector asking "is it a scalar?" or "is it constant?" uses scalarFloat or isFloatConstant,
// which never touch a weight's bytes (a 2 GiB model's weights stay mapped, not read).
std::optional<std::vector<float>> constantFloats(const Graph &graph, ValueId v);
bool isFloatConstant(const Graph &graph, ValueId v);
std::optional<std::vector<std::int64_t>> constantInts(const Graph &graph, ValueId v);
// Every element of a numeric constant equals `x`.
bool isConstantFilledWith(const Graph &graph, ValueId v, double x);
// The value of a one-element float32 constant (v may be invalid).
std::optional<float> scalarFloat(const Graph &graph, ValueId v);

// Fully static shape from the value's type (shape inference or an initializer), else nullopt.
std::optional<std::vector<std::int64_t>> staticShape(const Graph &graph, ValueId v);
std::optional<std::size_t> knownRank(const Graph &graph, ValueId v);
std::optional<std::int64_t> knownDim(const Graph &graph, ValueId v, std::size_t axis);
// The axes from `axis` to the last, negative (-k..-1): what a normalization over the trailing
// dims of `x` reduces, as a lowering spells it out. Unsupported (the node stays as it is, its
// kernel judges it) for an axis outside x's rank, a non-negative axis of an unknown rank, or a
// negative one beyond any tensor's rank: an axis of -2^40 listed 2^40 axes and never ended.
Expected<std::vector<std::int64_t>> trailingAxes(const Graph &graph, const Node &n, ValueId x, std::int64_t axis);
DataType elementType(const Graph &graph, ValueId v); // Undefined when unknown
// Same known shape, symbolic dims compared by name.
bool sameShape(const Graph &graph, ValueId a, ValueId b);

// Nothing reads v: no node input, not a graph output, and no subgraph (at any depth) reads its
// name. Every "can this value go?" question goes through here; uses() alone misses the bodies.
bool isUnread(const Graph &graph, ValueId v);
// Exactly one consumer node, not a graph output, and no subgraph reads it.
bool hasSingleUse(const Graph &graph, ValueId v);
NodeId singleConsumer(const Graph &graph, ValueId v); // invalid unless hasSingleUse
// The node computing v, or nullptr (a graph input, an initializer, an invalid id).
const Node *producerNode(const Graph &graph, ValueId v);
// v's producer when it is `op` (default domain) and v has no other reader, else nullptr.
const Node *singleUseProducer(const Graph &graph, ValueId v, std::string_view op);
// The other input of a two-input node, given one of them (invalid if `one` is not an input).
ValueId otherOperand(const Node &node, ValueId one);

std::int64_t attrInt(const Node &node, std::string_view name, std::int64_t fallback);
float attrFloat(const Node &node, std::string_view name, float fallback);
std::string attrString(const Node &node, std::string_view name, std::string fallback = {});
std::vector<std::int64_t> attrInts(const Node &node, std::string_view name,
                                   std::vector<std::int64_t> fallback = {});
void setAttribute(Node &node, Attribute attribute); // replaces one of the same name
void removeAttribute(Node &node, std::string_view name);

// Names of new values must be unique in the whole model, not only in their graph: ONNX forbids a
// body's name that shadows one of an enclosing graph, and a name added to a graph must not be one a
// body below it already defines. While a ModelNameScope is open on this thread (the pipeline,
// RewritePass and constant-propagation open one around a pass), nameTaken checks every name of
// that model (collected when the scope opens, plus each one freshValueName hands out since);
// without one, the graph and the bodies below it. A scope opened again on the same root reuses it.
class ModelNameScope
{
public:
    explicit ModelNameScope(const Graph &root);
    ~ModelNameScope();
    ModelNameScope(const ModelNameScope &) = delete;
    ModelNameScope &operator=(const ModelNameScope &) = delete;

    struct State
    {
        const Graph *root = nullptr;
        std::unordered_set<std::string> names;
    };

private:
    std::unique_ptr<State> m_previous; // the scope this one replaced; null when nested on the same root
    bool m_nested = false;
};
bool nameTaken(const Graph &graph, const std::string &name);
// `base`, or `base_1`, `base_2`, … : the first that nameTaken does not know.
std::string freshValueName(const Graph &graph, const std::string &base);
std::string freshNodeName(const Graph &graph, const std::string &base);
ValueId addConstant(Graph &graph, const std::string &baseName, Tensor tensor);
Tensor floatTensor(std::vector<std::int64_t> dims, const std::vector<float> &values);
Tensor int64Tensor(std::vector<std::int64_t> dims, const std::vector<std::int64_t> &values);

// A new node with fresh output values; attributes copied from `attributes`.
Expected<NodeId> addNodeWithOutputs(Graph &graph, const std::string &opType, std::vector<ValueId> inputs,
                                    std::size_t outputCount, const std::string &nameBase,
                                    std::vector<Attribute> attributes = {}, const std::string &domain = {});

// A graph output, or read by name inside a subgraph (If/Loop/Scan bodies): its name must stay.
bool keepsName(const Graph &graph, ValueId v);
// Every use of `from` now uses `to`. When `from` is a graph output or read by a subgraph, `to` takes over its
// name (so the model's interface is unchanged) or, if `to` cannot be renamed (a graph input, an initializer,
// another output), an Identity keeps the output.
Status replaceValue(Graph &graph, ValueId from, ValueId to);
// `v` is produced by a node and its name is free to change (so it can take over another's).
bool canTakeName(const Graph &graph, ValueId v);
// Bypassing `node` by `with` needs no Identity to keep a name (rules that remove an Identity-like
// node check this, or they would put an Identity back and never reach a fixed point).
bool canBypass(const Graph &graph, NodeId node, ValueId with);
// Removes a node and those of its outputs nothing reads any more (isUnread).
void eraseNode(Graph &graph, NodeId node);
// Erases those of `nodes` nothing reads any more, repeatedly (a chain goes in any order).
void eraseUnread(Graph &graph, const std::vector<NodeId> &nodes);
// Node computes output 0 = `with`: rewires its consumers to `with` and erases the node.
Status bypassNode(Graph &graph, NodeId node, ValueId with);
// Removes an initializer nothing uses (isUnread).
void eraseConstantIfUnused(Graph &graph, ValueId v);

// v = Transpose(w) swapping only the last two axes of w (known rank ≥ 2): the Transpose, else null.
const Node *lastAxesTranspose(const Graph &graph, ValueId v);
// A Transpose whose perm attribute equals `perm`.
bool isTransposeWith(const Node &node, const std::vector<std::int64_t> &perm);

// Adds (or raises) an opset import.
void ensureOpset(Model &model, const std::string &domain, std::int64_t version);
std::map<std::string, int> opsetMap(const Model &model);

} // namespace opscope::passes
