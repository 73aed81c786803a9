#include "passes/redundantnodes.h"

#include "passes/passutil.h"

#include <numeric>
#include <set>

namespace opscope::passes {

namespace {

bool isView(const Node &n)
{
    return isOp(n, "Reshape") || isOp(n, "Flatten") || isOp(n, "Squeeze") || isOp(n, "Unsqueeze");
}

bool losslessCast(DataType from, DataType to)
{
    using D = DataType;
    if (from == to || from == D::Bool)
        return true;
    static const std::set<std::pair<D, D>> exact{
        {D::Float16, D::Float}, {D::Float16, D::Double}, {D::BFloat16, D::Float}, {D::BFloat16, D::Double},
        {D::Float, D::Double},  {D::Int8, D::Int16},     {D::Int8, D::Int32},     {D::Int8, D::Int64},
        {D::Int8, D::Float16},  {D::Int8, D::Float},     {D::Int8, D::Double},    {D::UInt8, D::Int16},
        {D::UInt8, D::Int32},   {D::UInt8, D::Int64},    {D::UInt8, D::UInt16},   {D::UInt8, D::UInt32},
        {D::UInt8, D::UInt64},  {D::UInt8, D::Float16},  {D::UInt8, D::Float},    {D::UInt8, D::Double},
        {D::Int16, D::Int32},   {D::Int16, D::Int64},    {D::Int16, D::Float},    {D::Int16, D::Double},
        {D::UInt16, D::Int32},  {D::UInt16, D::Int64},   {D::UInt16, D::UInt32},  {D::UInt16, D::UInt64},
        {D::UInt16, D::Float},  {D::UInt16, D::Double},  {D::Int32, D::Int64},    {D::Int32, D::Double},
        {D::UInt32, D::Int64},  {D::UInt32, D::UInt64},  {D::UInt32, D::Double}};
    return exact.count({from, to}) > 0;
}

// Reshape whose constant shape keeps every dim: 0 copies, -1 takes what is left, k equals a known k.
bool reshapeKeepsShape(const Graph &graph, const Node &node)
{
    if (node.inputs.size() < 2 || attrInt(node, "allowzero", 0) != 0)
        return false;
    const auto shape = constantInts(graph, node.inputs[1]);
    const Value &x = graph.value(node.inputs[0]);
    if (!shape || !x.type.isTensor() || !x.type.shape || x.type.shape->dims.size() != shape->size())
        return false;
    int inferred = 0;
    for (std::size_t i = 0; i < shape->size(); ++i) {
        const std::int64_t s = (*shape)[i];
        const Dim &d = x.type.shape->dims[i];
        if (s == 0)
            continue;
        if (s == -1) {
            ++inferred;
            continue;
        }
        if (!d.isKnown() || d.value != s)
            return false;
    }
    return inferred <= 1;
}

bool viewKeepsShape(const Graph &graph, const Node &node)
{
    const ValueId in = node.inputs.empty() ? ValueId() : node.inputs[0];
    const ValueId out = node.outputs.empty() ? ValueId() : node.outputs[0];
    if (!in.valid() || !out.valid())
        return false;
    if (sameShape(graph, in, out))
        return true;
    return isOp(node, "Reshape") && reshapeKeepsShape(graph, node);
}

bool allEqual(const std::optional<std::vector<std::int64_t>> &v, std::int64_t x)
{
    return v && std::all_of(v->begin(), v->end(), [x](std::int64_t e) { return e == x; });
}

bool identityPerm(const std::vector<std::int64_t> &perm)
{
    for (std::size_t i = 0; i < perm.size(); ++i)
        if (perm[i] != static_cast<std::int64_t>(i))
            return false;
    return true;
}

std::optional<std::vector<std::int64_t>> transposePerm(const Graph &graph, const Node &node)
{
    if (const Attribute *p = node.attribute("perm"))
        return p->ints;
    const auto rank = knownRank(graph, node.inputs.at(0));
    if (!rank)
        return std::nullopt;
    std::vector<std::int64_t> perm(*rank);
    std::iota(perm.rbegin(), perm.rend(), 0);
    return perm;
}

// A Slice parameter: an input from opset 10 on, an attribute before. Empty when omitted (the
// default); nullopt when it is an input that is not constant.
std::optional<std::vector<std::int64_t>> sliceParam(const Graph &graph, const Node &node, std::size_t input,
                                                    const char *attr)
{
    if (node.inputs.size() > 1) {
        if (node.inputs.size() > input && node.inputs[input].valid())
            return constantInts(graph, node.inputs[input]);
        return std::vector<std::int64_t>{};
    }
    if (const Attribute *a = node.attribute(attr))
        return a->ints;
    return std::vector<std::int64_t>{};
}

bool unusedOutput(const Graph &graph, const Node &node, std::size_t i)
{
    return node.outputs.size() <= i || isUnread(graph, node.outputs[i]);
}

void selectSingle(const Graph &graph, const Node &node, std::vector<Match> &matches)
{
    auto bypass = [&](const char *rule) { matches.push_back({rule, {node.id}, {node.inputs.at(0)}, {}}); };
    if (node.inputs.empty() || !node.inputs[0].valid())
        return;
    if (isOp(node, "Identity"))
        return bypass("identity");
    if (isOp(node, "Dropout")) {
        const bool training = node.inputs.size() > 2 && node.inputs[2].valid() &&
                              !isConstantFilledWith(graph, node.inputs[2], 0.0);
        if (!training && unusedOutput(graph, node, 1))
            bypass("dropout");
        return;
    }
    if (isOp(node, "Cast")) {
        const DataType in = elementType(graph, node.inputs[0]);
        if (in != DataType::Undefined && static_cast<std::int64_t>(in) == attrInt(node, "to", -1))
            bypass("cast-same-type");
        return;
    }
    if (isOp(node, "Concat") && node.inputs.size() == 1)
        return bypass("concat-single");
    if (isView(node) || isOp(node, "Expand")) {
        if (viewKeepsShape(graph, node))
            bypass("noop-view");
        return;
    }
    if (isOp(node, "Slice")) {
        const auto steps = sliceParam(graph, node, 4, "steps");
        if (steps && (steps->empty() || allEqual(steps, 1)) &&
            sameShape(graph, node.inputs[0], node.outputs[0]))
            bypass("noop-slice");
        return;
    }
    if (isOp(node, "Pad")) {
        const auto pads = node.inputs.size() > 1
                              ? constantInts(graph, node.inputs[1])
                              : std::optional(attrInts(node, "pads", attrInts(node, "paddings")));
        if (allEqual(pads, 0))
            bypass("noop-pad");
        return;
    }
    if (isOp(node, "Tile")) {
        if (node.inputs.size() > 1 && allEqual(constantInts(graph, node.inputs[1]), 1))
            bypass("noop-tile");
        return;
    }
    if (isOp(node, "Transpose")) {
        if (const auto perm = transposePerm(graph, node); perm && identityPerm(*perm))
            bypass("noop-transpose");
        return;
    }
    if (isOp(node, "MaxPool") || isOp(node, "AveragePool")) {
        const std::string autoPad = attrString(node, "auto_pad", "NOTSET");
        if (allEqual(attrInts(node, "kernel_shape"), 1) && !attrInts(node, "kernel_shape").empty() &&
            allEqual(attrInts(node, "strides", {1}), 1) && allEqual(attrInts(node, "pads", {0}), 0) &&
            allEqual(attrInts(node, "dilations", {1}), 1) && (autoPad == "NOTSET" || autoPad == "VALID") &&
            unusedOutput(graph, node, 1))
            bypass("noop-pool");
        return;
    }
}

void selectPair(const Graph &graph, const Node &node, std::vector<Match> &matches)
{
    if (node.inputs.empty() || !node.inputs[0].valid())
        return;
    const NodeId innerId = graph.producer(node.inputs[0]);
    if (!innerId.valid())
        return;
    const Node &inner = graph.node(innerId);
    if (inner.inputs.empty() || !inner.inputs[0].valid())
        return;
    const ValueId x = inner.inputs[0];
    if (isView(node) && isView(inner) && sameShape(graph, x, node.outputs[0])) {
        matches.push_back({"view-pair", {node.id, innerId}, {x}, {}});
        return;
    }
    if (isOp(node, "Cast") && isOp(inner, "Cast")) {
        const DataType a = elementType(graph, x);
        const auto b = static_cast<DataType>(attrInt(inner, "to", 0));
        if (a != DataType::Undefined && attrInt(node, "to", -1) == static_cast<std::int64_t>(a) &&
            losslessCast(a, b))
            matches.push_back({"cast-roundtrip", {node.id, innerId}, {x}, {}});
        return;
    }
    if (isOp(node, "Reshape") && isOp(inner, "Reshape") && node.inputs.size() > 1) {
        const auto shape = constantInts(graph, node.inputs[1]);
        if (shape && (attrInt(node, "allowzero", 0) != 0 ||
                      std::find(shape->begin(), shape->end(), 0) == shape->end()))
            matches.push_back({"reshape-reshape", {node.id, innerId}, {x}, {}});
        return;
    }
    if (isOp(node, "Transpose") && isOp(inner, "Transpose")) {
        const auto p1 = transposePerm(graph, inner), p2 = transposePerm(graph, node);
        if (!p1 || !p2 || p1->size() != p2->size() ||
            std::any_of(p2->begin(), p2->end(), [&](std::int64_t p) { return p < 0 || p >= std::int64_t(p1->size()); }))
            return; // a perm out of range (refused at load; a pass may build one only from valid ones)
        std::vector<std::int64_t> q(p2->size());
        for (std::size_t i = 0; i < q.size(); ++i)
            q[i] = (*p1)[static_cast<std::size_t>((*p2)[i])];
        matches.push_back({"transpose-transpose", {node.id, innerId}, {x}, q});
        return;
    }
    if (isOp(node, "Slice") && isOp(inner, "Concat")) {
        const auto starts = sliceParam(graph, node, 1, "starts"), ends = sliceParam(graph, node, 2, "ends");
        const auto axes = sliceParam(graph, node, 3, "axes"), steps = sliceParam(graph, node, 4, "steps");
        const auto rank = knownRank(graph, x);
        if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 || !rank ||
            !(steps->empty() || allEqual(steps, 1)))
            return;
        const auto r = static_cast<std::int64_t>(*rank);
        std::int64_t axis = axes->empty() ? 0 : (*axes)[0];
        axis = axis < 0 ? axis + r : axis;
        std::int64_t concatAxis = attrInt(inner, "axis", 0);
        concatAxis = concatAxis < 0 ? concatAxis + r : concatAxis;
        if (axis != concatAxis)
            return;
        std::int64_t offset = 0, total = 0;
        std::vector<std::int64_t> sizes;
        for (ValueId in : inner.inputs) {
            const auto d = knownDim(graph, in, static_cast<std::size_t>(axis));
            if (!d || knownRank(graph, in) != *rank)
                return;
            sizes.push_back(*d);
            total += sizes.back();
        }
        auto clampIndex = [total](std::int64_t i) {
            return std::clamp(i < 0 ? i + total : i, std::int64_t(0), total);
        };
        const std::int64_t start = clampIndex((*starts)[0]), end = clampIndex((*ends)[0]);
        for (std::size_t k = 0; k < sizes.size(); offset += sizes[k], ++k)
            if (start == offset && end == offset + sizes[k] && sizes[k] > 0) {
                matches.push_back({"concat-slice", {node.id, innerId}, {inner.inputs[k]}, {}});
                return;
            }
    }
}

} // namespace

void RedundantNodeElimination::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const std::size_t before = matches.size();
        selectSingle(graph, graph.node(id), matches);
        if (matches.size() == before)
            selectPair(graph, graph.node(id), matches);
    }
}

Expected<bool> RedundantNodeElimination::apply(Model &, Graph &graph, const Match &match) const
{
    const NodeId node = match.nodes[0];
    const ValueId x = match.values[0];
    if (match.rule == "reshape-reshape") {
        graph.setNodeInput(node, 0, x);
    } else if (match.rule == "transpose-transpose" && !identityPerm(match.ints)) {
        graph.setNodeInput(node, 0, x);
        setAttribute(graph.node(node), Attribute::makeInts("perm", match.ints));
    } else {
        if (!canBypass(graph, node, x))
            return false;
        OPSCOPE_TRY(bypassNode(graph, node, x));
    }
    // The first node of a pair goes when nothing else reads it.
    for (std::size_t i = 1; i < match.nodes.size(); ++i) {
        const Node &inner = graph.node(match.nodes[i]);
        if (inner.alive && unusedOutput(graph, inner, 0))
            eraseNode(graph, match.nodes[i]);
    }
    return true;
}

} // namespace opscope::passes
