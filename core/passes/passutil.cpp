#include "passes/passutil.h"

#include "ir/dependencies.h"
#include "runtime/runtimetensor.h"

#include <algorithm>
#include <map>

namespace opscope::passes {

bool isOp(const Node &node, std::string_view opType)
{
    return node.alive && node.opType == opType && (node.domain.empty() || node.domain == "ai.onnx");
}

bool isOpscopeOp(const Node &node, std::string_view opType)
{
    return node.alive && node.opType == opType && node.domain == kOpscopeDomain;
}

const Tensor *constantTensor(const Graph &graph, ValueId v)
{
    if (!v.valid())
        return nullptr;
    const Value &value = graph.value(v);
    if (!value.alive || !value.isConstant() || value.initializer->dtype == DataType::String)
        return nullptr;
    return &*value.initializer;
}

std::optional<std::vector<double>> constantValues(const Graph &graph, ValueId v)
{
    const Tensor *t = constantTensor(graph, v);
    if (!t || t->dtype == DataType::Complex64 || t->dtype == DataType::Complex128)
        return std::nullopt;
    const RuntimeTensor rt = RuntimeTensor::fromConstant(*t);
    std::vector<double> out(static_cast<std::size_t>(rt.elementCount()));
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = rt.valueAsDouble(static_cast<std::int64_t>(i));
    return out;
}

std::optional<std::vector<float>> constantFloats(const Graph &graph, ValueId v)
{
    const Tensor *t = constantTensor(graph, v);
    if (!t || t->dtype != DataType::Float)
        return std::nullopt;
    const auto span = t->as<float>();
    return std::vector<float>(span.begin(), span.end());
}

bool isFloatConstant(const Graph &graph, ValueId v)
{
    const Tensor *t = v.valid() ? constantTensor(graph, v) : nullptr;
    return t && t->dtype == DataType::Float;
}

std::optional<std::vector<std::int64_t>> constantInts(const Graph &graph, ValueId v)
{
    const Tensor *t = constantTensor(graph, v);
    if (!t || (t->dtype != DataType::Int64 && t->dtype != DataType::Int32))
        return std::nullopt;
    return RuntimeTensor::fromConstant(*t).toInt64Vector();
}

bool isConstantFilledWith(const Graph &graph, ValueId v, double x)
{
    // Element by element, stopping at the first that differs: a weight is not copied to learn
    // that its first value is not zero.
    const Tensor *t = constantTensor(graph, v);
    if (!t || t->dtype == DataType::Complex64 || t->dtype == DataType::Complex128)
        return false;
    const RuntimeTensor rt = RuntimeTensor::fromConstant(*t);
    for (std::int64_t i = 0; i < rt.elementCount(); ++i)
        if (rt.valueAsDouble(i) != x)
            return false;
    return true;
}

std::optional<std::vector<std::int64_t>> staticShape(const Graph &graph, ValueId v)
{
    if (!v.valid())
        return std::nullopt;
    const Value &value = graph.value(v);
    if (value.initializer)
        return value.initializer->dims;
    if (!value.type.isTensor() || !value.type.shape || !value.type.shape->isStatic())
        return std::nullopt;
    std::vector<std::int64_t> dims;
    for (const Dim &d : value.type.shape->dims)
        dims.push_back(d.value);
    return dims;
}

std::optional<std::size_t> knownRank(const Graph &graph, ValueId v)
{
    if (!v.valid())
        return std::nullopt;
    const Value &value = graph.value(v);
    if (value.initializer)
        return value.initializer->dims.size();
    if (!value.type.isTensor() || !value.type.shape)
        return std::nullopt;
    return value.type.shape->dims.size();
}

std::optional<std::int64_t> knownDim(const Graph &graph, ValueId v, std::size_t axis)
{
    if (!v.valid())
        return std::nullopt;
    const Value &value = graph.value(v);
    if (value.initializer)
        return axis < value.initializer->dims.size() ? std::optional(value.initializer->dims[axis])
                                                     : std::nullopt;
    if (!value.type.isTensor() || !value.type.shape || axis >= value.type.shape->dims.size() ||
        !value.type.shape->dims[axis].isKnown())
        return std::nullopt;
    return value.type.shape->dims[axis].value;
}

DataType elementType(const Graph &graph, ValueId v)
{
    if (!v.valid())
        return DataType::Undefined;
    const Value &value = graph.value(v);
    if (value.initializer)
        return value.initializer->dtype;
    return value.type.isTensor() ? value.type.elemType : DataType::Undefined;
}

bool sameShape(const Graph &graph, ValueId a, ValueId b)
{
    const auto sa = staticShape(graph, a), sb = staticShape(graph, b);
    if (sa && sb)
        return *sa == *sb;
    const Value &va = graph.value(a), &vb = graph.value(b);
    if (!va.type.isTensor() || !vb.type.isTensor() || !va.type.shape || !vb.type.shape)
        return false;
    const auto &da = va.type.shape->dims, &db = vb.type.shape->dims;
    if (da.size() != db.size())
        return false;
    for (std::size_t i = 0; i < da.size(); ++i) {
        const bool same = (da[i].isKnown() && da[i].value == db[i].value) ||
                          (da[i].isSymbolic() && db[i].isSymbolic() && da[i].symbol == db[i].symbol);
        if (!same)
            return false;
    }
    return true;
}

std::optional<float> scalarFloat(const Graph &graph, ValueId v)
{
    const Tensor *t = v.valid() ? constantTensor(graph, v) : nullptr;
    if (!t || t->dtype != DataType::Float || t->elementCount() != 1)
        return std::nullopt;
    return t->as<float>()[0];
}

const Node *producerNode(const Graph &graph, ValueId v)
{
    const NodeId p = v.valid() ? graph.producer(v) : NodeId();
    return p.valid() ? &graph.node(p) : nullptr;
}

const Node *singleUseProducer(const Graph &graph, ValueId v, std::string_view op)
{
    const Node *n = producerNode(graph, v);
    return n && isOp(*n, op) && hasSingleUse(graph, v) ? n : nullptr;
}

bool isUnread(const Graph &graph, ValueId v)
{
    return !v.valid() || (graph.uses(v).empty() && !graph.isGraphOutput(v) && !readBySubgraph(graph, v));
}

bool hasSingleUse(const Graph &graph, ValueId v)
{
    return v.valid() && graph.uses(v).size() == 1 && !graph.isGraphOutput(v) && !readBySubgraph(graph, v);
}

NodeId singleConsumer(const Graph &graph, ValueId v)
{
    return hasSingleUse(graph, v) ? graph.uses(v).front().node : NodeId();
}

ValueId otherOperand(const Node &node, ValueId one)
{
    if (node.inputs.size() != 2)
        return ValueId();
    return node.inputs[0] == one ? node.inputs[1] : node.inputs[1] == one ? node.inputs[0] : ValueId();
}

std::int64_t attrInt(const Node &node, std::string_view name, std::int64_t fallback)
{
    const Attribute *a = node.attribute(name);
    return a && a->type == AttributeType::Int ? a->i : fallback;
}

float attrFloat(const Node &node, std::string_view name, float fallback)
{
    const Attribute *a = node.attribute(name);
    return a && a->type == AttributeType::Float ? a->f : fallback;
}

std::string attrString(const Node &node, std::string_view name, std::string fallback)
{
    const Attribute *a = node.attribute(name);
    return a && a->type == AttributeType::String ? a->s : fallback;
}

std::vector<std::int64_t> attrInts(const Node &node, std::string_view name,
                                   std::vector<std::int64_t> fallback)
{
    const Attribute *a = node.attribute(name);
    return a && a->type == AttributeType::Ints ? a->ints : fallback;
}

void setAttribute(Node &node, Attribute attribute)
{
    for (Attribute &a : node.attributes)
        if (a.name == attribute.name) {
            a = std::move(attribute);
            return;
        }
    node.attributes.push_back(std::move(attribute));
}

void removeAttribute(Node &node, std::string_view name)
{
    std::erase_if(node.attributes, [&](const Attribute &a) { return a.name == name; });
}

namespace {
thread_local ModelNameScope::State t_names;

void collectNames(const Graph &g, std::unordered_set<std::string> &out)
{
    for (ValueId v : g.valueIds())
        out.insert(g.value(v).name);
    for (NodeId id : g.nodeIds())
        for (const Attribute &a : g.node(id).attributes) {
            if (a.g)
                collectNames(*a.g, out);
            for (const ClonePtr<Graph> &sub : a.graphs)
                if (sub)
                    collectNames(*sub, out);
        }
}
} // namespace

ModelNameScope::ModelNameScope(const Graph &root)
{
    if (t_names.root == &root) {
        m_nested = true;
        return;
    }
    m_previous = std::make_unique<State>(std::move(t_names));
    t_names = State{&root, {}};
    collectNames(root, t_names.names);
}

ModelNameScope::~ModelNameScope()
{
    if (!m_nested)
        t_names = std::move(*m_previous);
}

bool nameTaken(const Graph &graph, const std::string &name)
{
    if (graph.findValue(name).valid())
        return true;
    return t_names.root ? t_names.names.count(name) > 0 : nameUsedInTree(graph, name);
}

std::string freshValueName(const Graph &graph, const std::string &base)
{
    std::string name = base;
    for (int i = 1; nameTaken(graph, name); ++i)
        name = base + "_" + std::to_string(i);
    if (t_names.root)
        t_names.names.insert(name); // handed out: taken from now on, wherever it is added
    return name;
}

std::string freshNodeName(const Graph &graph, const std::string &base)
{
    if (!graph.findNode(base).valid())
        return base;
    for (int i = 1;; ++i) {
        std::string name = base + "_" + std::to_string(i);
        if (!graph.findNode(name).valid())
            return name;
    }
}

ValueId addConstant(Graph &graph, const std::string &baseName, Tensor tensor)
{
    const std::string name = freshValueName(graph, baseName);
    tensor.name = name;
    tensor.external.reset();
    return graph.addInitializer(name, std::move(tensor));
}

Tensor floatTensor(std::vector<std::int64_t> dims, const std::vector<float> &values)
{
    return Tensor::fromValues(DataType::Float, std::move(dims), values);
}

Tensor int64Tensor(std::vector<std::int64_t> dims, const std::vector<std::int64_t> &values)
{
    return Tensor::fromValues(DataType::Int64, std::move(dims), values);
}

Expected<NodeId> addNodeWithOutputs(Graph &graph, const std::string &opType, std::vector<ValueId> inputs,
                                    std::size_t outputCount, const std::string &nameBase,
                                    std::vector<Attribute> attributes, const std::string &domain)
{
    const std::string name = freshNodeName(graph, nameBase);
    std::vector<ValueId> outputs;
    for (std::size_t i = 0; i < outputCount; ++i) {
        Expected<ValueId> v = graph.createValue(freshValueName(graph, name + "_out" + std::to_string(i)));
        if (!v)
            return v.status();
        outputs.push_back(*v);
    }
    Expected<NodeId> id = graph.addNode(opType, std::move(inputs), std::move(outputs), domain, name);
    if (id)
        graph.node(*id).attributes = std::move(attributes);
    return id;
}

bool keepsName(const Graph &graph, ValueId v)
{
    return graph.isGraphOutput(v) || readBySubgraph(graph, v);
}

bool canTakeName(const Graph &graph, ValueId v)
{
    const Value &value = graph.value(v);
    return !value.isGraphInput && !value.initializer && !value.outerScope && value.producer.valid() &&
           !keepsName(graph, v);
}

bool canBypass(const Graph &graph, NodeId node, ValueId with)
{
    return !keepsName(graph, graph.node(node).outputs.at(0)) || canTakeName(graph, with);
}

Status replaceValue(Graph &graph, ValueId from, ValueId to)
{
    if (from == to)
        return Status::ok();
    if (!keepsName(graph, from)) {
        graph.replaceAllUsesWith(from, to);
        return Status::ok();
    }
    if (canTakeName(graph, to)) {
        graph.replaceAllUsesWith(from, to);
        const std::string name = graph.value(from).name;
        const std::string tmp = freshValueName(graph, name + "_replaced");
        OPSCOPE_TRY(graph.renameValue(from, tmp));
        OPSCOPE_TRY(graph.renameValue(to, name));
        Value &t = graph.value(to);
        const Value &f = graph.value(from);
        if (!t.type.isKnown() || (f.type.isKnown() && f.type.shape && !t.type.shape))
            t.type = f.type;
        t.hasValueInfo = t.hasValueInfo || f.hasValueInfo;
        return Status::ok();
    }
    // Consumers read `to` directly; the output keeps its name through an Identity.
    const std::vector<Use> uses = graph.uses(from);
    for (const Use &u : uses)
        graph.setNodeInput(u.node, u.inputIndex, to);
    const NodeId producer = graph.producer(from);
    if (producer.valid()) {
        // Detach `from` from its producer so the Identity can produce it.
        Node &p = graph.node(producer);
        for (ValueId &out : p.outputs)
            if (out == from) {
                Expected<ValueId> fresh =
                    graph.createValue(freshValueName(graph, graph.value(from).name + "_old"));
                if (!fresh)
                    return fresh.status();
                out = *fresh;
                graph.value(*fresh).producer = producer;
            }
        graph.value(from).producer = NodeId();
    }
    Expected<NodeId> id = graph.addNode("Identity", {to}, {from}, {},
                                        freshNodeName(graph, graph.value(from).name + "_identity"));
    return id ? Status::ok() : id.status();
}

void eraseNode(Graph &graph, NodeId node)
{
    const std::vector<ValueId> outputs = graph.node(node).outputs;
    const std::vector<ValueId> inputs = graph.node(node).inputs;
    graph.removeNode(node);
    for (ValueId out : outputs)
        if (out.valid() && isUnread(graph, out))
            graph.removeValue(out);
    for (ValueId in : inputs)
        eraseConstantIfUnused(graph, in);
}

void eraseUnread(Graph &graph, const std::vector<NodeId> &nodes)
{
    for (bool erased = true; erased;) {
        erased = false;
        for (NodeId n : nodes) {
            const Node &node = graph.node(n);
            if (!node.alive)
                continue;
            const bool unread = std::all_of(node.outputs.begin(), node.outputs.end(),
                                            [&](ValueId v) { return isUnread(graph, v); });
            if (unread) {
                eraseNode(graph, n);
                erased = true;
            }
        }
    }
}

Status bypassNode(Graph &graph, NodeId node, ValueId with)
{
    const ValueId out = graph.node(node).outputs.at(0);
    // Detach first so `with` can take the output's name when that name must stay.
    if (keepsName(graph, out)) {
        const std::vector<ValueId> outs = graph.node(node).outputs;
        graph.removeNode(node);
        OPSCOPE_TRY(replaceValue(graph, out, with));
        for (ValueId o : outs)
            if (o.valid() && graph.value(o).alive && isUnread(graph, o))
                graph.removeValue(o);
        return Status::ok();
    }
    graph.replaceAllUsesWith(out, with);
    eraseNode(graph, node);
    return Status::ok();
}

void eraseConstantIfUnused(Graph &graph, ValueId v)
{
    if (!v.valid())
        return;
    const Value &value = graph.value(v);
    if (value.alive && value.initializer && !value.isGraphInput && isUnread(graph, v))
        graph.removeValue(v);
}

void ensureOpset(Model &model, const std::string &domain, std::int64_t version)
{
    for (OpsetImport &o : model.opsets)
        if (o.domain == domain) {
            o.version = std::max(o.version, version);
            return;
        }
    model.opsets.push_back({domain, version});
}

std::map<std::string, int> opsetMap(const Model &model)
{
    std::map<std::string, int> out;
    for (const OpsetImport &o : model.opsets)
        out[o.domain == "ai.onnx" ? std::string() : o.domain] = static_cast<int>(o.version);
    return out;
}

const Node *lastAxesTranspose(const Graph &graph, ValueId v)
{
    const NodeId p = v.valid() ? graph.producer(v) : NodeId();
    if (!p.valid() || !isOp(graph.node(p), "Transpose"))
        return nullptr;
    const Node &t = graph.node(p);
    const auto rank = knownRank(graph, t.inputs[0]);
    if (!rank || *rank < 2)
        return nullptr;
    std::vector<std::int64_t> perm = attrInts(t, "perm");
    if (perm.empty() && *rank == 2)
        perm = {1, 0}; // no perm: every axis reversed
    if (perm.size() != *rank)
        return nullptr;
    for (std::size_t i = 0; i + 2 < *rank; ++i)
        if (perm[i] != static_cast<std::int64_t>(i))
            return nullptr;
    const auto r = static_cast<std::int64_t>(*rank);
    return perm[*rank - 2] == r - 1 && perm[*rank - 1] == r - 2 ? &t : nullptr;
}

bool isTransposeWith(const Node &node, const std::vector<std::int64_t> &perm)
{
    return isOp(node, "Transpose") && attrInts(node, "perm") == perm;
}

Expected<std::vector<std::int64_t>> trailingAxes(const Graph &graph, const Node &n, ValueId x, std::int64_t axis)
{
    // Far above any rank a real model has; the kernels read at most this many dims too.
    constexpr std::int64_t kDeepest = 64;
    const std::optional<std::size_t> rank = knownRank(graph, x);
    const auto r = rank ? static_cast<std::int64_t>(*rank) : kDeepest;
    if (axis < -r || axis >= r || (axis >= 0 && !rank))
        return Status::unsupported(n.opType + " '" + n.name + "': axis " + std::to_string(axis) +
                                   (rank ? " is outside its input's rank " + std::to_string(*rank)
                                         : std::string(" needs a known rank")));
    std::vector<std::int64_t> axes;
    for (std::int64_t a = axis < 0 ? axis : axis - r; a < 0; ++a)
        axes.push_back(a);
    return axes;
}

} // namespace opscope::passes
