#include "passes/layernormfusion.h"

#include "passes/passutil.h"

#include <cmath>
#include <set>

namespace opscope::passes {

namespace {

// The (normalized to negative) axes a keepdims ReduceMean averages, when constant.
std::optional<std::vector<std::int64_t>> meanAxes(const Graph &graph, const Node &n, std::size_t rank)
{
    if (!isOp(n, "ReduceMean") || attrInt(n, "keepdims", 1) != 1)
        return std::nullopt;
    std::vector<std::int64_t> axes = attrInts(n, "axes");
    if (n.inputs.size() > 1 && n.inputs[1].valid()) {
        const auto a = constantInts(graph, n.inputs[1]);
        if (!a)
            return std::nullopt;
        axes = *a;
    }
    if (axes.empty())
        return std::nullopt;
    for (std::int64_t &a : axes)
        a = a >= 0 ? a - static_cast<std::int64_t>(rank) : a;
    std::sort(axes.begin(), axes.end());
    // Trailing and contiguous: [-k, …, -1].
    for (std::size_t i = 0; i < axes.size(); ++i)
        if (axes[i] != -static_cast<std::int64_t>(axes.size() - i))
            return std::nullopt;
    return axes;
}

bool isConstantValue(const Graph &graph, ValueId v, float value, float tolerance = 0.0f)
{
    const auto f = scalarFloat(graph, v);
    return f && std::fabs(*f - value) <= tolerance;
}

// γ/β: a float constant whose dims (right-aligned) cover only the last `k` axes.
bool normalizedShaped(const Graph &graph, ValueId v, std::size_t k)
{
    const Tensor *t = constantTensor(graph, v);
    if (!t || t->dtype != DataType::Float)
        return false;
    for (std::size_t i = 0; i + k < t->dims.size(); ++i)
        if (t->dims[i] != 1)
            return false;
    return true;
}

// Reciprocal(v), or 1/v as exporters write torch.rsqrt: Div(1, v).
bool isReciprocal(const Graph &graph, const Node &n)
{
    return isOp(n, "Reciprocal") || (isOp(n, "Div") && isConstantValue(graph, n.inputs[0], 1.0f));
}

} // namespace

void LayerNormFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &sub = graph.node(id);
        if (!isOp(sub, "Sub") || sub.inputs.size() != 2)
            continue;
        const ValueId x = sub.inputs[0], d = sub.outputs[0];
        const Node *mean = producerNode(graph, sub.inputs[1]);
        const auto rank = knownRank(graph, x);
        if (!mean || mean->inputs.empty() || mean->inputs[0] != x || !rank ||
            elementType(graph, x) != DataType::Float || !hasSingleUse(graph, sub.inputs[1]))
            continue;
        const auto axes = meanAxes(graph, *mean, *rank);
        std::set<NodeId> readers;
        for (const Use &u : graph.uses(d))
            readers.insert(u.node);
        if (!axes || readers.size() != 2 || keepsName(graph, d))
            continue;
        // The square and the division (or multiplication by the reciprocal) read d.
        const Node *square = nullptr, *divide = nullptr;
        for (const Use &u : graph.uses(d)) {
            const Node &n = graph.node(u.node);
            if ((isOp(n, "Pow") && n.inputs[0] == d && isConstantValue(graph, n.inputs[1], 2.0f)) ||
                (isOp(n, "Mul") && n.inputs.size() == 2 && n.inputs[0] == d && n.inputs[1] == d))
                square = &n;
            else if (isOp(n, "Div") && n.inputs[0] == d)
                divide = &n;
            else if (isOp(n, "Mul"))
                divide = &n;
        }
        if (!square || !divide || !hasSingleUse(graph, square->outputs[0]))
            continue;
        const NodeId varId = singleConsumer(graph, square->outputs[0]);
        if (!varId.valid() || meanAxes(graph, graph.node(varId), *rank) != axes)
            continue;
        const Node &var = graph.node(varId);
        const NodeId addEpsId = singleConsumer(graph, var.outputs[0]);
        if (!addEpsId.valid() || !isOp(graph.node(addEpsId), "Add"))
            continue;
        const Node &addEps = graph.node(addEpsId);
        const ValueId eps = otherOperand(addEps, var.outputs[0]);
        if (!scalarFloat(graph, eps))
            continue;
        const NodeId sqrtId = singleConsumer(graph, addEps.outputs[0]);
        if (!sqrtId.valid() || !isOp(graph.node(sqrtId), "Sqrt"))
            continue;
        const Node &sqrtNode = graph.node(sqrtId);
        std::vector<NodeId> nodes{divide->id, mean->id, id, square->id, varId, addEpsId, sqrtId};
        if (isOp(*divide, "Div")) {
            if (divide->inputs[1] != sqrtNode.outputs[0] || !hasSingleUse(graph, sqrtNode.outputs[0]))
                continue;
        } else {
            // d · Reciprocal(√…)
            const NodeId recip = singleConsumer(graph, sqrtNode.outputs[0]);
            if (!recip.valid() || !isReciprocal(graph, graph.node(recip)) ||
                otherOperand(*divide, d) != graph.node(recip).outputs[0] ||
                !hasSingleUse(graph, graph.node(recip).outputs[0]))
                continue;
            nodes.push_back(recip);
        }
        // Optional γ then β.
        ValueId gamma, beta, out = divide->outputs[0];
        const std::size_t k = axes->size();
        if (const NodeId m = singleConsumer(graph, out);
            m.valid() && isOp(graph.node(m), "Mul") &&
            normalizedShaped(graph, otherOperand(graph.node(m), out), k)) {
            gamma = otherOperand(graph.node(m), out);
            nodes.push_back(m);
            out = graph.node(m).outputs[0];
        }
        if (const NodeId a = singleConsumer(graph, out);
            a.valid() && isOp(graph.node(a), "Add") &&
            normalizedShaped(graph, otherOperand(graph.node(a), out), k)) {
            beta = otherOperand(graph.node(a), out);
            nodes.push_back(a);
            out = graph.node(a).outputs[0];
        }
        matches.push_back({gamma.valid() ? "layernorm" : "layernorm-no-affine",
                           nodes,
                           {x, gamma, beta, out, eps},
                           {-static_cast<std::int64_t>(k)}});
    }
    // After the LayerNorm matches: inside a LayerNorm, (x−mean) is also RMS-normalized; applying
    // the LayerNorm first leaves that RMS match stale, so it is skipped.
    selectRms(graph, matches);
}

void LayerNormFusion::selectRms(const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &var = graph.node(id);
        if (!isOp(var, "ReduceMean") || var.inputs.empty() || !hasSingleUse(graph, var.inputs[0]) ||
            !hasSingleUse(graph, var.outputs[0]))
            continue;
        const Node *square = producerNode(graph, var.inputs[0]);
        if (!square || (!isOp(*square, "Pow") && !isOp(*square, "Mul")) || square->inputs.size() != 2)
            continue; // any producer, a Constant node without inputs too
        const ValueId x = square->inputs[0];
        const bool squares = (isOp(*square, "Pow") && isConstantValue(graph, square->inputs[1], 2.0f)) ||
                             (isOp(*square, "Mul") && square->inputs.size() == 2 && square->inputs[1] == x);
        const auto rank = knownRank(graph, x);
        if (!squares || !rank || elementType(graph, x) != DataType::Float)
            continue;
        const auto axes = meanAxes(graph, var, *rank);
        const NodeId addEpsId = singleConsumer(graph, var.outputs[0]);
        if (!axes || !isOp(graph.node(addEpsId), "Add"))
            continue;
        const Node &addEps = graph.node(addEpsId);
        const ValueId eps = otherOperand(addEps, var.outputs[0]);
        if (!scalarFloat(graph, eps) || !hasSingleUse(graph, addEps.outputs[0]))
            continue;
        const NodeId sqrtId = singleConsumer(graph, addEps.outputs[0]);
        const Node &sqrtNode = graph.node(sqrtId);
        if (!isOp(sqrtNode, "Sqrt") || !hasSingleUse(graph, sqrtNode.outputs[0]))
            continue;
        std::vector<NodeId> nodes{square->id, id, addEpsId, sqrtId};
        // x / √…  or  x · Reciprocal(√…)
        NodeId divideId = singleConsumer(graph, sqrtNode.outputs[0]);
        const Node *divide = &graph.node(divideId);
        if (isReciprocal(graph, *divide) && hasSingleUse(graph, divide->outputs[0])) {
            nodes.push_back(divideId);
            const ValueId r = divide->outputs[0];
            divideId = singleConsumer(graph, r);
            divide = &graph.node(divideId);
            if (!isOp(*divide, "Mul") || otherOperand(*divide, r) != x)
                continue;
        } else if (!isOp(*divide, "Div") || divide->inputs[0] != x) {
            continue;
        }
        nodes.insert(nodes.begin(), divideId);
        ValueId gamma, out = divide->outputs[0];
        if (const NodeId mId = hasSingleUse(graph, out) ? singleConsumer(graph, out) : NodeId();
            mId.valid() && isOp(graph.node(mId), "Mul") &&
            normalizedShaped(graph, otherOperand(graph.node(mId), out), axes->size())) {
            gamma = otherOperand(graph.node(mId), out);
            nodes.push_back(mId);
            out = graph.node(mId).outputs[0];
        }
        matches.push_back({"rmsnorm", nodes, {x, gamma, ValueId(), out, eps}, {-std::int64_t(axes->size())}});
    }
}

Expected<bool> LayerNormFusion::apply(Model &model, Graph &graph, const Match &m) const
{
    const ValueId x = m.values[0], out = m.values[3];
    ValueId gamma = m.values[1], beta = m.values[2];
    const std::int64_t axis = m.ints[0];
    const float eps = constantFloats(graph, m.values[4])->at(0);
    const auto rank = *knownRank(graph, x);
    std::vector<std::int64_t> normDims;
    for (std::size_t i = rank - static_cast<std::size_t>(-axis); i < rank; ++i) {
        const auto d = knownDim(graph, x, i);
        if (!d && (!gamma.valid() || (!beta.valid() && m.rule != "rmsnorm")))
            return false; // γ = 1 / β = 0 need the normalized size
        normDims.push_back(d.value_or(0));
    }
    std::int64_t count = 1;
    for (std::int64_t d : normDims) {
        if (d < 0 || (d > 0 && count > kMaxSynthesizedElements / d))
            return false; // a γ of ones that large is not worth making (and may not fit)
        count *= d;
    }
    const std::string base = graph.node(m.nodes[0]).name;
    if (!gamma.valid())
        gamma = addConstant(graph, base + "_gamma",
                            floatTensor(normDims, std::vector<float>(std::size_t(count), 1.0f)));
    if (m.rule == "rmsnorm") {
        Expected<NodeId> rms = addNodeWithOutputs(
            graph, "RMSNormalization", {x, gamma}, 1, base + "_rmsnorm",
            {Attribute::makeInt("axis", axis), Attribute::makeFloat("epsilon", eps)}, kOpscopeDomain);
        if (!rms)
            return rms.status();
        graph.value(graph.node(*rms).outputs[0]).type = graph.value(out).type;
        OPSCOPE_TRY(replaceValue(graph, out, graph.node(*rms).outputs[0]));
        eraseUnread(graph, m.nodes);
        ensureOpset(model, kOpscopeDomain, 1);
        return true;
    }
    const bool standard = model.opsetVersion("") >= 17;
    std::vector<ValueId> inputs{x, gamma};
    if (beta.valid())
        inputs.push_back(beta);
    Expected<NodeId> ln =
        addNodeWithOutputs(graph, "LayerNormalization", inputs, 1, base + "_layernorm",
                           {Attribute::makeInt("axis", axis), Attribute::makeFloat("epsilon", eps)},
                           standard ? "" : kOpscopeDomain);
    if (!ln)
        return ln.status();
    const ValueId lnOut = graph.node(*ln).outputs[0];
    graph.value(lnOut).type = graph.value(out).type;
    OPSCOPE_TRY(replaceValue(graph, out, lnOut));
    // Everything the pattern computed is now unread.
    eraseUnread(graph, m.nodes);
    if (!standard)
        ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
