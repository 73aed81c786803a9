#include "passes/constantfolding.h"

#include "passes/evaluate.h"
#include "passes/passutil.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace opscope::passes {

namespace {

bool neverFolded(const Node &node)
{
    static const std::set<std::string> ops{"RandomUniform",    "RandomNormal",     "RandomUniformLike",
                                           "RandomNormalLike", "Multinomial",      "Bernoulli",
                                           "QuantizeLinear",   "DequantizeLinear", "DynamicQuantizeLinear"};
    return node.hasSubgraphs() || ops.count(node.opType) > 0;
}

// Ops whose output can be far larger than their inputs: only folded when shape inference knows
// the output and it is under the limit.
bool expands(const Node &node)
{
    static const std::set<std::string> ops{"Expand", "Tile",     "ConstantOfShape", "Range",   "Pad",
                                           "Resize", "Upsample", "OneHot",          "EyeLike", "MatMul",
                                           "Gemm",   "Einsum",   "ConvTranspose",   "Conv",    "Col2Im"};
    return ops.count(node.opType) > 0;
}

std::optional<std::uint64_t> staticOutputBytes(const Graph &graph, const Node &node)
{
    std::uint64_t total = 0;
    for (ValueId v : node.outputs) {
        if (!v.valid())
            continue;
        const auto shape = staticShape(graph, v);
        const DataType dt = elementType(graph, v);
        if (!shape || dt == DataType::Undefined || dt == DataType::String)
            return std::nullopt;
        const ElementCount c = countElements(*shape);
        if (!c.ok())
            return std::nullopt;
        total += static_cast<std::uint64_t>(c.count) * dataTypeSize(dt);
    }
    return total;
}

// Shape/Size of a static shape, and Gather(Shape(x), const index) of a known dim.
std::optional<Tensor> foldShapeOnly(const Graph &graph, const Node &node)
{
    if (isOp(node, "Shape") || isOp(node, "Size")) {
        const auto shape = staticShape(graph, node.inputs.at(0));
        if (!shape)
            return std::nullopt;
        if (node.opType == "Size") {
            const ElementCount c = countElements(*shape);
            if (!c.ok())
                return std::nullopt;
            return int64Tensor({}, {c.count});
        }
        const auto rank = static_cast<std::int64_t>(shape->size());
        auto clampAxis = [rank](std::int64_t a) {
            return std::clamp(a < 0 ? a + rank : a, std::int64_t(0), rank);
        };
        const std::int64_t start = clampAxis(attrInt(node, "start", 0));
        const std::int64_t end = clampAxis(attrInt(node, "end", rank));
        std::vector<std::int64_t> dims;
        for (std::int64_t i = start; i < end; ++i)
            dims.push_back((*shape)[static_cast<std::size_t>(i)]);
        return int64Tensor({static_cast<std::int64_t>(dims.size())}, dims);
    }
    if (isOp(node, "Gather") && node.inputs.size() == 2 && attrInt(node, "axis", 0) == 0) {
        const NodeId shapeNode = graph.producer(node.inputs[0]);
        if (!shapeNode.valid() || !isOp(graph.node(shapeNode), "Shape") ||
            attrInt(graph.node(shapeNode), "start", 0) != 0 || graph.node(shapeNode).attribute("end"))
            return std::nullopt;
        const Value &x = graph.value(graph.node(shapeNode).inputs.at(0));
        const auto indices = constantInts(graph, node.inputs[1]);
        if (!indices || !x.type.isTensor() || !x.type.shape)
            return std::nullopt;
        const auto &dims = x.type.shape->dims;
        const auto rank = static_cast<std::int64_t>(dims.size());
        std::vector<std::int64_t> picked;
        for (std::int64_t i : *indices) {
            const std::int64_t a = i < 0 ? i + rank : i;
            if (a < 0 || a >= rank || !dims[static_cast<std::size_t>(a)].isKnown())
                return std::nullopt;
            picked.push_back(dims[static_cast<std::size_t>(a)].value);
        }
        return int64Tensor(constantTensor(graph, node.inputs[1])->dims, picked);
    }
    return std::nullopt;
}

// Rank 0 by its type, or as a Gather of one element by a scalar index (types inside bodies are
// often unknown).
bool isScalar(const Graph &graph, ValueId v)
{
    if (knownRank(graph, v) == 0u)
        return true;
    const NodeId p = graph.producer(v);
    if (!p.valid() || !isOp(graph.node(p), "Gather") || graph.node(p).inputs.size() != 2)
        return false;
    const Tensor *idx = constantTensor(graph, graph.node(p).inputs[1]);
    return idx && idx->dims.empty();
}

// Integer Casts and Unsqueeze-to-1-D do not change which dims a shape piece names.
ValueId throughShapePlumbing(const Graph &graph, ValueId v)
{
    for (;;) {
        const NodeId p = graph.producer(v);
        if (!p.valid())
            return v;
        const Node &n = graph.node(p);
        const bool intCast = isOp(n, "Cast") && (attrInt(n, "to", 0) == 7 || attrInt(n, "to", 0) == 6);
        const bool unsqueeze = isOp(n, "Unsqueeze") && isScalar(graph, n.inputs[0]);
        if (!intCast && !unsqueeze)
            return v;
        v = n.inputs[0];
    }
}

// The dims of `x` a shape piece holds (Shape(x), a Slice or Gather of it), in order.
std::optional<std::vector<std::int64_t>> dimsOfShapeOf(const Graph &graph, ValueId piece, ValueId x)
{
    const auto rank = knownRank(graph, x);
    if (!rank)
        return std::nullopt;
    const auto r = static_cast<std::int64_t>(*rank);
    auto shapeOfX = [&](ValueId v) {
        const NodeId p = graph.producer(throughShapePlumbing(graph, v));
        return p.valid() && isOp(graph.node(p), "Shape") && attrInt(graph.node(p), "start", 0) == 0 &&
               !graph.node(p).attribute("end") && graph.node(p).inputs[0] == x;
    };
    const ValueId v = throughShapePlumbing(graph, piece);
    if (shapeOfX(v)) {
        std::vector<std::int64_t> all(*rank);
        std::iota(all.begin(), all.end(), 0);
        return all;
    }
    const NodeId p = graph.producer(v);
    if (!p.valid())
        return std::nullopt;
    const Node &n = graph.node(p);
    auto norm = [r](std::int64_t i) { return std::clamp(i < 0 ? i + r : i, std::int64_t(0), r); };
    if (isOp(n, "Gather") && n.inputs.size() == 2 && attrInt(n, "axis", 0) == 0 && shapeOfX(n.inputs[0])) {
        const auto idx = constantInts(graph, n.inputs[1]);
        if (!idx || idx->size() != 1)
            return std::nullopt;
        const std::int64_t i = (*idx)[0] < 0 ? (*idx)[0] + r : (*idx)[0];
        if (i < 0 || i >= r)
            return std::nullopt;
        return std::vector<std::int64_t>{i};
    }
    if (isOp(n, "Slice") && shapeOfX(n.inputs[0])) {
        std::vector<std::int64_t> starts, ends, axes{0}, steps{1};
        if (n.inputs.size() >= 3) {
            const auto s = constantInts(graph, n.inputs[1]), e = constantInts(graph, n.inputs[2]);
            if (!s || !e)
                return std::nullopt;
            starts = *s;
            ends = *e;
            if (n.inputs.size() > 3 && n.inputs[3].valid()) {
                const auto a = constantInts(graph, n.inputs[3]);
                if (!a)
                    return std::nullopt;
                axes = *a;
            }
            if (n.inputs.size() > 4 && n.inputs[4].valid()) {
                const auto st = constantInts(graph, n.inputs[4]);
                if (!st)
                    return std::nullopt;
                steps = *st;
            }
        } else {
            starts = attrInts(n, "starts");
            ends = attrInts(n, "ends");
            axes = attrInts(n, "axes", {0});
        }
        if (starts.size() != 1 || ends.size() != 1 || axes != std::vector<std::int64_t>{0} ||
            steps != std::vector<std::int64_t>{1})
            return std::nullopt;
        std::vector<std::int64_t> dims;
        for (std::int64_t i = norm(starts[0]); i < norm(ends[0]); ++i)
            dims.push_back(i);
        return dims;
    }
    return std::nullopt;
}

// Reshape(x, Concat(Shape(x)[0:1], [-1]))-style shapes, written by exporters for dynamic batch
// sizes, as a constant: a dim copied to its own position is 0 (Reshape's "copy"), a known dim its
// value. Needs allowzero = 0.
std::optional<Tensor> constantReshapeShape(const Graph &graph, const Node &node)
{
    if (!isOp(node, "Reshape") || node.inputs.size() < 2 || constantTensor(graph, node.inputs[1]) ||
        attrInt(node, "allowzero", 0) != 0)
        return std::nullopt;
    const ValueId x = node.inputs[0];
    std::vector<ValueId> pieces{node.inputs[1]};
    const NodeId concat = graph.producer(node.inputs[1]);
    if (concat.valid() && isOp(graph.node(concat), "Concat"))
        pieces = graph.node(concat).inputs;
    std::vector<std::int64_t> shape;
    std::optional<std::pair<std::size_t, std::int64_t>> moved; // (position, input dim) of an unknown dim
    for (ValueId piece : pieces) {
        if (const auto c = constantInts(graph, piece)) {
            shape.insert(shape.end(), c->begin(), c->end());
            continue;
        }
        const auto dims = dimsOfShapeOf(graph, piece, x);
        if (!dims)
            return std::nullopt;
        for (std::int64_t j : *dims) {
            if (j == static_cast<std::int64_t>(shape.size()))
                shape.push_back(0);
            else if (const auto d = knownDim(graph, x, static_cast<std::size_t>(j)))
                shape.push_back(*d);
            else if (!moved)
                moved = {shape.size(), j}, shape.push_back(-1);
            else
                return std::nullopt;
        }
    }
    if (std::count(shape.begin(), shape.end(), -1) > 1)
        return std::nullopt;
    if (moved) {
        // An unknown dim moved to another position can be Reshape's -1 when everything else accounts
        // for the other input dims exactly: copied in place (0), or known dims whose product the
        // constants equal.
        const std::size_t rank = *knownRank(graph, x);
        std::vector<bool> copied(rank, false);
        std::int64_t constants = 1;
        for (std::size_t i = 0; i < shape.size(); ++i) {
            if (i == moved->first)
                continue;
            if (shape[i] == 0) {
                if (i >= rank)
                    return std::nullopt;
                copied[i] = true;
            } else {
                constants *= shape[i];
            }
        }
        std::int64_t rest = 1;
        for (std::size_t k = 0; k < rank; ++k) {
            if (copied[k] || static_cast<std::int64_t>(k) == moved->second)
                continue;
            const auto d = knownDim(graph, x, k);
            if (!d)
                return std::nullopt;
            rest *= *d;
        }
        if (copied[static_cast<std::size_t>(moved->second)] || rest != constants)
            return std::nullopt;
    }
    return int64Tensor({static_cast<std::int64_t>(shape.size())}, shape);
}

void replaceByConstants(Graph &graph, NodeId id, std::vector<Tensor> results)
{
    const std::vector<ValueId> outputs = graph.node(id).outputs;
    const std::vector<ValueId> inputs = graph.node(id).inputs;
    graph.removeNode(id);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        if (!outputs[k].valid())
            continue;
        if (isUnread(graph, outputs[k])) {
            graph.removeValue(outputs[k]);
            continue;
        }
        Tensor &t = results[k];
        const std::string name = graph.value(outputs[k]).name;
        t.name = name;
        t.external.reset();
        graph.value(outputs[k]).type = TypeInfo::tensor(t.dtype, Shape::fromSizes(t.dims));
        graph.addInitializer(name, std::move(t));
    }
    for (ValueId in : inputs)
        eraseConstantIfUnused(graph, in);
}

} // namespace

Expected<bool> foldConstants(Graph &graph, const std::map<std::string, int> &opsets,
                             const PassOptions &options, std::vector<PatternMatch> *folded)
{
    Expected<std::vector<NodeId>> order = graph.topologicalOrder();
    if (!order)
        return order.status();
    bool changed = false;
    // Each folded node is a match of its own (the passes panel counts them, Next match visits
    // them); its replacement is an initializer, not a node.
    auto record = [&](NodeId id, const char *rule) {
        if (folded)
            folded->push_back({rule, {}, {id}, {graph.node(id).name}, {}, {}});
    };
    // A fold replaces each output by one tensor. A node with more outputs than its op makes
    // (Size(x) -> (a, b) from a model above libonnx's schemas, found by fuzzing) is left for the
    // runtime to refuse: indexing the results past their end corrupted the heap.
    auto fold = [&](NodeId id, const char *rule, std::vector<Tensor> results) {
        if (results.size() != graph.node(id).outputs.size())
            return false;
        record(id, rule);
        replaceByConstants(graph, id, std::move(results));
        return true;
    };
    for (NodeId id : *order) {
        const Node &node = graph.node(id);
        if (!node.alive || neverFolded(node))
            continue;
        if (isOp(node, "Constant")) {
            const Attribute *value = node.attribute("value");
            if (value && value->type == AttributeType::Tensor && fold(id, "Constant → initializer", {value->t})) {
                changed = true;
                continue;
            }
        }
        if (std::optional<Tensor> shape = constantReshapeShape(graph, node)) {
            const ValueId old = node.inputs[1];
            record(id, "Reshape shape → constant");
            graph.setNodeInput(id, 1,
                               addConstant(graph, graph.value(old).name + "_const", std::move(*shape)));
            changed = true;
            continue;
        }
        if (std::optional<Tensor> shape = foldShapeOnly(graph, node)) {
            // Built by push_back, not {…}: GCC 12 mistook the inlined initializer_list copy for a
            // delete of a stack address (-Wfree-nonheap-object, a false positive).
            std::vector<Tensor> results;
            results.push_back(std::move(*shape));
            if (fold(id, "static shape → constant", std::move(results))) {
                changed = true;
                continue;
            }
        }
        bool allConstant = true;
        for (ValueId v : node.inputs)
            allConstant = allConstant && (!v.valid() || constantTensor(graph, v) != nullptr);
        if (!allConstant)
            continue;
        const auto known = staticOutputBytes(graph, node);
        if (known ? *known > options.foldSizeLimit : expands(node))
            continue;
        Expected<std::vector<Tensor>> results = evaluateNode(graph, id, opsets);
        if (!results)
            continue; // no kernel, or the model is wrong here: running it will say so
        std::uint64_t bytes = 0;
        for (const Tensor &t : *results)
            bytes += t.byteSize();
        if (bytes > options.foldSizeLimit)
            continue;
        if (fold(id, "evaluated once", std::move(*results)))
            changed = true;
    }
    return changed;
}

Expected<bool> ConstantFolding::run(Model &model, PassContext &context)
{
    std::vector<PatternMatch> folded;
    Expected<bool> changed = foldConstants(model.graph, opsetMap(model), context.options(), &folded);
    for (PatternMatch &m : folded)
        context.recordMatch(std::move(m));
    return changed;
}

} // namespace opscope::passes
