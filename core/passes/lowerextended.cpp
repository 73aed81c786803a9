#include "passes/lowerextended.h"

#include "passes/nodechain.h"
#include "passes/passutil.h"

namespace opscope::passes {

namespace {

Status finishLowering(Graph &graph, NodeChain &chain, NodeId id, ValueId y)
{
    return chain.finish(graph.node(id).outputs[0], y, {id});
}

ValueId reduceMean(Model &model, NodeChain &chain, ValueId x, const std::vector<std::int64_t> &axes)
{
    // Opset 18 moved ReduceMean's axes from an attribute to an input.
    if (model.opsetVersion("") >= 18)
        return chain.op("ReduceMean", {x, chain.ints(axes, "axes")}, {Attribute::makeInt("keepdims", 1)});
    return chain.op("ReduceMean", {x},
                    {Attribute::makeInts("axes", axes), Attribute::makeInt("keepdims", 1)});
}

Expected<bool> lowerRmsNorm(Model &model, Graph &graph, NodeId id)
{
    const Node n = graph.node(id);
    const Expected<std::vector<std::int64_t>> trailing = trailingAxes(graph, n, n.inputs[0], attrInt(n, "axis", -1));
    if (!trailing)
        return trailing.status();
    const std::vector<std::int64_t> &axes = *trailing;
    NodeChain c(graph, n.name);
    const ValueId x = n.inputs[0];
    const ValueId ms = reduceMean(model, c, c.op("Mul", {x, x}), axes);
    const ValueId rms =
        c.op("Sqrt", {c.op("Add", {ms, c.scalar(attrFloat(n, "epsilon", 1e-5f), "epsilon")})});
    const ValueId y = c.op("Mul", {c.op("Div", {x, rms}), n.inputs[1]});
    OPSCOPE_TRY(finishLowering(graph, c, id, y));
    return true;
}

Expected<bool> lowerEltwise(Graph &graph, NodeId id)
{
    const Node n = graph.node(id);
    const Attribute *a = n.attribute("coefficients");
    const std::vector<float> coef = a ? a->floats : std::vector<float>{};
    if (coef.size() != n.inputs.size() || coef.empty())
        return Status::invalid("Eltwise '" + n.name + "' has " + std::to_string(coef.size()) +
                               " coefficients for " + std::to_string(n.inputs.size()) + " inputs");
    NodeChain c(graph, n.name);
    auto term = [&](std::size_t i) {
        return coef[i] == 1.0f ? n.inputs[i]
                               : c.op("Mul", {n.inputs[i], c.scalar(coef[i], "c" + std::to_string(i))});
    };
    ValueId acc = coef[0] == -1.0f ? c.op("Neg", {n.inputs[0]}) : term(0);
    if (coef.size() == 1 && acc == n.inputs[0])
        acc = c.op("Identity", {acc});
    for (std::size_t i = 1; i < coef.size(); ++i)
        acc = coef[i] == -1.0f ? c.op("Sub", {acc, n.inputs[i]}) : c.op("Add", {acc, term(i)});
    OPSCOPE_TRY(finishLowering(graph, c, id, acc));
    return true;
}

Expected<bool> lowerAttention(Graph &graph, NodeId id)
{
    const Node n = graph.node(id);
    const std::int64_t heads = attrInt(n, "num_heads", 0);
    NodeChain c(graph, n.name);
    const auto transpose = [&](ValueId v, std::vector<std::int64_t> perm) {
        return c.op("Transpose", {v}, {Attribute::makeInts("perm", std::move(perm))});
    };
    ValueId q = n.inputs[0], k = n.inputs[1], v = n.inputs[2];
    bool kTransposed = attrInt(n, "k_transposed", 0) != 0;
    if (heads > 0) {
        const ValueId split = c.ints({0, 0, heads, -1}, "split");
        q = transpose(c.op("Reshape", {q, split}), {0, 2, 1, 3});
        k = transpose(c.op("Reshape", {k, split}), {0, 2, 3, 1});
        v = transpose(c.op("Reshape", {v, split}), {0, 2, 1, 3});
        kTransposed = true;
    }
    if (!kTransposed)
        k = transpose(k, {0, 1, 3, 2});
    ValueId s = c.op("MatMul", {q, k});
    if (const float scale = attrFloat(n, "scale", 1.0f); scale != 1.0f)
        s = c.op("Mul", {s, c.scalar(scale, "scale")});
    if (n.inputs.size() > 3 && n.inputs[3].valid())
        s = c.op("Add", {s, n.inputs[3]});
    ValueId y = c.op("MatMul", {c.op("Softmax", {s}, {Attribute::makeInt("axis", 3)}), v});
    if (heads > 0)
        y = c.op("Reshape", {transpose(y, {0, 2, 1, 3}), c.ints({0, 0, -1}, "merge")});
    else if (attrInt(n, "transpose_output", 0))
        y = transpose(y, {0, 2, 1, 3});
    OPSCOPE_TRY(finishLowering(graph, c, id, y));
    return true;
}

// MultiHeadAttention's attention_bias is [B or 1, H or 1, Sq, Sk]: a mask that broadcasts along
// the queries is expanded first (Expand broadcasts both ways, so its batch dim is kept).
Expected<bool> attentionToOrt(Model &model, Graph &graph, NodeId id)
{
    const Node n = graph.node(id);
    const std::int64_t heads = attrInt(n, "num_heads", 0);
    if (heads <= 0)
        return false;
    ValueId mask = n.inputs.size() > 3 ? n.inputs[3] : ValueId();
    NodeChain c(graph, n.name);
    if (mask.valid()) {
        const auto sq = knownDim(graph, n.inputs[0], 1), sk = knownDim(graph, n.inputs[1], 1);
        const bool fits = knownRank(graph, mask) == 4u && sq && sk && knownDim(graph, mask, 2) == sq &&
                          knownDim(graph, mask, 3) == sk;
        if (!fits) {
            ValueId shape;
            if (sq && sk) {
                shape = c.ints({1, 1, *sq, *sk}, "bias_shape");
            } else {
                // Symbolic sequence lengths (PyTorch's usual export): the shape is read from the
                // query and key at run time, so ORT still gets its MultiHeadAttention.
                auto length = [&](ValueId v, const char *name) {
                    return c.op("Slice", {c.op("Shape", {v}), c.ints({1}, std::string(name) + "_from"),
                                          c.ints({2}, std::string(name) + "_to")});
                };
                shape = c.op("Concat", {c.ints({1, 1}, "bias_lead"), length(n.inputs[0], "sq"), length(n.inputs[1], "sk")},
                             {Attribute::makeInt("axis", 0)});
            }
            mask = c.op("Expand", {mask, shape});
        }
    }
    const ValueId y = c.op(
        "MultiHeadAttention", {n.inputs[0], n.inputs[1], n.inputs[2], {}, {}, mask},
        {Attribute::makeInt("num_heads", heads), Attribute::makeFloat("scale", attrFloat(n, "scale", 1.0f))},
        kMicrosoftDomain);
    if (!mask.valid() && c.ok())
        graph.node(c.lastNode()).inputs.resize(3); // optional inputs at the end are dropped
    OPSCOPE_TRY(finishLowering(graph, c, id, y));
    ensureOpset(model, kMicrosoftDomain, 1);
    return true;
}

} // namespace

Expected<bool> lowerExtendedOp(Model &model, Graph &graph, NodeId id)
{
    const Node n = graph.node(id);
    if (n.domain != kOpscopeDomain)
        return false;
    NodeChain c(graph, n.name);
    const ValueId x = n.inputs.empty() ? ValueId() : n.inputs[0];
    if (n.opType == "Swish") {
        const float alpha = attrFloat(n, "alpha", 1.0f);
        const ValueId z = alpha == 1.0f ? x : c.op("Mul", {x, c.scalar(alpha, "alpha")});
        OPSCOPE_TRY(finishLowering(graph, c, id, c.op("Mul", {x, c.op("Sigmoid", {z})})));
        return true;
    }
    if (n.opType == "HardSwish") {
        const ValueId y = model.opsetVersion("") >= 14
                              ? c.op("HardSwish", {x})
                              : c.op("Mul", {x, c.op("HardSigmoid", {x},
                                                     {Attribute::makeFloat("alpha", 1.0f / 6.0f),
                                                      Attribute::makeFloat("beta", 0.5f)})});
        OPSCOPE_TRY(finishLowering(graph, c, id, y));
        return true;
    }
    if (n.opType == "Gelu" && attrString(n, "approximate", "none") == "tanh") {
        const ValueId cube = c.op("Mul", {x, c.op("Mul", {x, x})});
        const ValueId inner = c.op("Add", {x, c.op("Mul", {cube, c.scalar(0.044715f, "k")})});
        const ValueId t = c.op("Tanh", {c.op("Mul", {inner, c.scalar(0.7978845608f, "sqrt_2_over_pi")})});
        const ValueId y =
            c.op("Mul", {c.op("Mul", {x, c.scalar(0.5f, "half")}), c.op("Add", {t, c.scalar(1.0f, "one")})});
        OPSCOPE_TRY(finishLowering(graph, c, id, y));
        return true;
    }
    if (n.opType == "RMSNormalization")
        return lowerRmsNorm(model, graph, id);
    if (n.opType == "Eltwise")
        return lowerEltwise(graph, id);
    if (n.opType == "Attention")
        return lowerAttention(graph, id);
    return false;
}

Expected<bool> extendedOpToOrt(Model &model, Graph &graph, NodeId id)
{
    Node &n = graph.node(id);
    if (n.domain != kOpscopeDomain)
        return false;
    if (n.opType == "Swish") {
        // QuickGelu's alpha defaults to 1.702: always written.
        setAttribute(n, Attribute::makeFloat("alpha", attrFloat(n, "alpha", 1.0f)));
        n.opType = "QuickGelu";
        n.domain = kMicrosoftDomain;
        ensureOpset(model, kMicrosoftDomain, 1);
        return true;
    }
    if (n.opType == "Gelu" && attrString(n, "approximate", "none") == "tanh") {
        removeAttribute(n, "approximate");
        n.opType = "FastGelu";
        n.domain = kMicrosoftDomain;
        ensureOpset(model, kMicrosoftDomain, 1);
        return true;
    }
    if (n.opType == "RMSNormalization") {
        n.opType = "SimplifiedLayerNormalization";
        n.domain.clear();
        setAttribute(n, Attribute::makeInt("stash_type", 1));
        return true;
    }
    if (n.opType == "Attention")
        return attentionToOrt(model, graph, id);
    return false;
}

Expected<bool> fuseSkipLayerNorm(Model &model, Graph &graph)
{
    bool changed = false;
    for (NodeId id : graph.nodeIds()) {
        const Node ln = graph.node(id);
        const bool isLn =
            (ln.domain.empty() || ln.domain == kOpscopeDomain) && ln.opType == "LayerNormalization";
        if (!isLn || ln.inputs.size() < 2 || (ln.outputs.size() > 1 && ln.outputs[1].valid()) ||
            (ln.outputs.size() > 2 && ln.outputs[2].valid()) || attrInt(ln, "stash_type", 1) != 1)
            continue;
        const NodeId addId = graph.producer(ln.inputs[0]);
        if (!addId.valid() || !isOp(graph.node(addId), "Add"))
            continue;
        const Node add = graph.node(addId);
        const ValueId sum = add.outputs[0];
        const auto rank = knownRank(graph, sum);
        const std::int64_t axis = attrInt(ln, "axis", -1);
        const auto hidden = rank ? knownDim(graph, sum, *rank - 1) : std::nullopt;
        const Tensor *gamma = constantTensor(graph, ln.inputs[1]);
        const Tensor *beta =
            ln.inputs.size() > 2 && ln.inputs[2].valid() ? constantTensor(graph, ln.inputs[2]) : nullptr;
        if (rank != 3u || (axis != -1 && axis != 2) || !hidden ||
            elementType(graph, sum) != DataType::Float || !sameShape(graph, add.inputs[0], add.inputs[1]) ||
            !sameShape(graph, add.inputs[0], sum) || !gamma ||
            gamma->dims != std::vector<std::int64_t>{*hidden} ||
            (ln.inputs.size() > 2 && ln.inputs[2].valid() && (!beta || beta->dims != gamma->dims)))
            continue;
        // The residual sum is read elsewhere (the next block's skip): output 3 carries it.
        const bool sumUsed = graph.isGraphOutput(sum) || graph.uses(sum).size() > 1 || keepsName(graph, sum);
        std::vector<ValueId> inputs{add.inputs[0], add.inputs[1], ln.inputs[1]};
        if (beta)
            inputs.push_back(ln.inputs[2]);
        // Outputs: y, and when the sum is needed, two omitted (mean, inverse std) then the sum.
        const std::string name = freshNodeName(graph, ln.name + "_skip");
        Expected<ValueId> y = graph.createValue(freshValueName(graph, name + "_out0"));
        Expected<ValueId> sumOut = graph.createValue(freshValueName(graph, name + "_sum"));
        if (!y || !sumOut)
            return (y ? sumOut.status() : y.status());
        std::vector<ValueId> outputs{*y};
        if (sumUsed)
            outputs.insert(outputs.end(), {ValueId(), ValueId(), *sumOut});
        else
            graph.removeValue(*sumOut);
        Expected<NodeId> skip =
            graph.addNode("SkipLayerNormalization", inputs, outputs, kMicrosoftDomain, name);
        if (!skip)
            return skip.status();
        graph.node(*skip).attributes = {Attribute::makeFloat("epsilon", attrFloat(ln, "epsilon", 1e-5f))};
        graph.value(*y).type = graph.value(ln.outputs[0]).type;
        OPSCOPE_TRY(bypassNode(graph, id, *y));
        if (sumUsed) {
            graph.value(*sumOut).type = graph.value(sum).type;
            OPSCOPE_TRY(replaceValue(graph, sum, *sumOut));
        }
        eraseUnread(graph, {addId});
        ensureOpset(model, kMicrosoftDomain, 1);
        changed = true;
    }
    return changed;
}

} // namespace opscope::passes
