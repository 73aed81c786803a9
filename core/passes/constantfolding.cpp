#include "passes/constantfolding.h"

#include "passes/evaluate.h"
#include "passes/passutil.h"

#include <set>

namespace opscope::passes {

namespace {

bool neverFolded(const Node &node)
{
    static const std::set<std::string> ops{"RandomUniform",    "RandomNormal",    "RandomUniformLike",
                                           "RandomNormalLike", "Multinomial",     "Bernoulli",
                                           "QuantizeLinear",   "DequantizeLinear", "DynamicQuantizeLinear"};
    return node.hasSubgraphs() || ops.count(node.opType) > 0;
}

// Ops whose output can be far larger than their inputs: only folded when shape inference knows
// the output and it is under the limit.
bool expands(const Node &node)
{
    static const std::set<std::string> ops{"Expand", "Tile", "ConstantOfShape", "Range", "Pad", "Resize",
                                           "Upsample", "OneHot", "EyeLike", "MatMul", "Gemm", "Einsum",
                                           "ConvTranspose", "Conv", "Col2Im"};
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
        auto clampAxis = [rank](std::int64_t a) { return std::clamp(a < 0 ? a + rank : a, std::int64_t(0), rank); };
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
            graph.node(shapeNode).attribute("start") || graph.node(shapeNode).attribute("end"))
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

void replaceByConstants(Graph &graph, NodeId id, std::vector<Tensor> results)
{
    const std::vector<ValueId> outputs = graph.node(id).outputs;
    const std::vector<ValueId> inputs = graph.node(id).inputs;
    graph.removeNode(id);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        if (!outputs[k].valid())
            continue;
        if (graph.uses(outputs[k]).empty() && !graph.isGraphOutput(outputs[k])) {
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

Expected<bool> foldConstants(Graph &graph, const std::map<std::string, int> &opsets, const PassOptions &options)
{
    Expected<std::vector<NodeId>> order = graph.topologicalOrder();
    if (!order)
        return order.status();
    bool changed = false;
    for (NodeId id : *order) {
        const Node &node = graph.node(id);
        if (!node.alive || neverFolded(node))
            continue;
        if (isOp(node, "Constant")) {
            const Attribute *value = node.attribute("value");
            if (value && value->type == AttributeType::Tensor && node.outputs.size() == 1) {
                replaceByConstants(graph, id, {value->t});
                changed = true;
                continue;
            }
        }
        if (std::optional<Tensor> shape = foldShapeOnly(graph, node)) {
            replaceByConstants(graph, id, {std::move(*shape)});
            changed = true;
            continue;
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
        replaceByConstants(graph, id, std::move(*results));
        changed = true;
    }
    return changed;
}

Expected<bool> ConstantFolding::run(Model &model, PassContext &context)
{
    return foldConstants(model.graph, opsetMap(model), context.options());
}

} // namespace opscope::passes
