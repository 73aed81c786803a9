#include "passes/lowering.h"

#include "passes/fusionutil.h"
#include "passes/layoutnhwc.h"
#include "passes/lowerextended.h"
#include "passes/passutil.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace opscope::passes {

namespace {

// Appends `act` after value x; returns the activation's output.
Expected<ValueId> addActivation(Graph &graph, const Model &model, ValueId x, const ActivationSpec &act,
                                const std::string &base)
{
    std::vector<ValueId> inputs{x};
    std::vector<Attribute> attrs;
    const auto param = [&](std::size_t i, float fallback) {
        return i < act.params.size() ? act.params[i] : fallback;
    };
    if (act.op == "LeakyRelu") {
        attrs.push_back(Attribute::makeFloat("alpha", param(0, 0.01f)));
    } else if (act.op == "HardSigmoid") {
        attrs.push_back(Attribute::makeFloat("alpha", param(0, 0.2f)));
        attrs.push_back(Attribute::makeFloat("beta", param(1, 0.5f)));
    } else if (act.op == "Clip") {
        const float lo = param(0, std::numeric_limits<float>::lowest()),
                    hi = param(1, std::numeric_limits<float>::max());
        if (model.opsetVersion("") >= 11) {
            inputs.push_back(addConstant(graph, base + "_min", floatTensor({}, {lo})));
            inputs.push_back(addConstant(graph, base + "_max", floatTensor({}, {hi})));
        } else {
            attrs.push_back(Attribute::makeFloat("min", lo));
            attrs.push_back(Attribute::makeFloat("max", hi));
        }
    } else if (act.op == "HardSwish" && model.opsetVersion("") < 14) {
        // HardSwish arrived in opset 14: x·HardSigmoid(x; 1/6, ½) below it.
        Expected<NodeId> h = addNodeWithOutputs(
            graph, "HardSigmoid", {x}, 1, base + "_HardSigmoid",
            {Attribute::makeFloat("alpha", 1.0f / 6.0f), Attribute::makeFloat("beta", 0.5f)});
        if (!h)
            return h.status();
        Expected<NodeId> m =
            addNodeWithOutputs(graph, "Mul", {x, graph.node(*h).outputs[0]}, 1, base + "_hardswish");
        if (!m)
            return m.status();
        return graph.node(*m).outputs[0];
    } else if (act.op == "Swish") {
        // x·Sigmoid(α·x), in standard ops whichever the target
        ValueId z = x;
        if (param(0, 1.0f) != 1.0f) {
            Expected<NodeId> m = addNodeWithOutputs(
                graph, "Mul", {x, addConstant(graph, base + "_alpha", floatTensor({}, {param(0, 1.0f)}))}, 1,
                base + "_swish_scale");
            if (!m)
                return m.status();
            z = graph.node(*m).outputs[0];
        }
        Expected<NodeId> s = addNodeWithOutputs(graph, "Sigmoid", {z}, 1, base + "_Sigmoid");
        if (!s)
            return s.status();
        Expected<NodeId> m =
            addNodeWithOutputs(graph, "Mul", {x, graph.node(*s).outputs[0]}, 1, base + "_swish");
        if (!m)
            return m.status();
        return graph.node(*m).outputs[0];
    } else if (act.op != "Relu" && act.op != "Sigmoid" && act.op != "Tanh" && act.op != "HardSwish") {
        return Status::unsupported("unknown fused activation '" + act.op + "'");
    }
    Expected<NodeId> n = addNodeWithOutputs(graph, act.op, inputs, 1, base + "_" + act.op, attrs);
    if (!n)
        return n.status();
    return graph.node(*n).outputs[0];
}

// FusedConv's `activation_post` = [scale, shift] written out after `x` as Mul then Add.
Expected<ValueId> addPost(Graph &graph, const Node &fused, ValueId x, const std::string &base)
{
    const Attribute *post = fused.attribute("activation_post");
    if (!post || post->floats.size() != 2)
        return x;
    // Mul by the scale unless it is 1, then Add the shift unless it is 0.
    const struct
    {
        const char *op, *suffix;
        float value, identity;
    } steps[] = {{"Mul", "_scale", post->floats[0], 1.0f}, {"Add", "_shift", post->floats[1], 0.0f}};
    for (const auto &step : steps) {
        if (step.value == step.identity)
            continue;
        Expected<NodeId> n = addNodeWithOutputs(
            graph, step.op, {x, addConstant(graph, base + step.suffix, floatTensor({}, {step.value}))}, 1,
            base + "_post" + step.suffix);
        if (!n)
            return n.status();
        x = graph.node(*n).outputs[0];
    }
    return x;
}

std::vector<Attribute> withoutActivation(std::vector<Attribute> attrs)
{
    std::erase_if(attrs, [](const Attribute &a) { return a.name.rfind("activation", 0) == 0; });
    return attrs;
}

// Replaces `node` by a chain: a new node (op, inputs, attrs) then optional steps; output kept.
Status replaceChain(Graph &graph, NodeId node, ValueId chainOut)
{
    const ValueId out = graph.node(node).outputs[0];
    graph.value(chainOut).type = graph.value(out).type;
    return bypassNode(graph, node, chainOut);
}

// LayerNormalization below opset 17, spelled out: (x − mean)/√(var + ε)·γ + β over the trailing axes.
Expected<bool> lowerLayerNorm(Model &, Graph &graph, NodeId id)
{
    const Node n = graph.node(id);
    const std::string base = n.name;
    const Expected<std::vector<std::int64_t>> axes = trailingAxes(graph, n, n.inputs[0], attrInt(n, "axis", -1));
    if (!axes)
        return axes.status();
    const std::vector<Attribute> reduce{Attribute::makeInts("axes", *axes), Attribute::makeInt("keepdims", 1)};
    const ValueId eps =
        addConstant(graph, base + "_epsilon", floatTensor({}, {attrFloat(n, "epsilon", 1e-5f)}));
    auto step = [&](const char *op, std::vector<ValueId> ins,
                    std::vector<Attribute> attrs = {}) -> Expected<ValueId> {
        Expected<NodeId> s =
            addNodeWithOutputs(graph, op, std::move(ins), 1, base + "_" + op, std::move(attrs));
        if (!s)
            return s.status();
        return graph.node(*s).outputs[0];
    };
    const ValueId x = n.inputs[0];
    Expected<ValueId> mean = step("ReduceMean", {x}, reduce);
    if (!mean)
        return mean.status();
    Expected<ValueId> d = step("Sub", {x, *mean});
    if (!d)
        return d.status();
    Expected<ValueId> sq = step("Mul", {*d, *d});
    if (!sq)
        return sq.status();
    Expected<ValueId> var = step("ReduceMean", {*sq}, reduce);
    if (!var)
        return var.status();
    Expected<ValueId> ve = step("Add", {*var, eps});
    if (!ve)
        return ve.status();
    Expected<ValueId> sd = step("Sqrt", {*ve});
    if (!sd)
        return sd.status();
    Expected<ValueId> norm = step("Div", {*d, *sd});
    if (!norm)
        return norm.status();
    Expected<ValueId> y = step("Mul", {*norm, n.inputs[1]});
    if (!y)
        return y.status();
    if (n.inputs.size() > 2 && n.inputs[2].valid()) {
        y = step("Add", {*y, n.inputs[2]});
        if (!y)
            return y.status();
    }
    OPSCOPE_TRY(replaceChain(graph, id, *y));
    return true;
}

Expected<bool> lowerNode(Model &model, Graph &graph, NodeId id)
{
    if (Expected<bool> done = lowerExtendedOp(model, graph, id); !done || *done)
        return done;
    const Node n = graph.node(id);
    const std::string base = n.name;
    if (n.opType == "FusedConv" || n.opType == "FusedGemm") {
        const bool conv = n.opType == "FusedConv";
        Expected<NodeId> core =
            addNodeWithOutputs(graph, conv ? "Conv" : "Gemm", n.inputs, 1, base + (conv ? "_conv" : "_gemm"),
                               withoutActivation(n.attributes));
        if (!core)
            return core.status();
        ValueId out = graph.node(*core).outputs[0];
        if (const auto act = activationFromAttributes(n)) {
            Expected<ValueId> a = addActivation(graph, model, out, *act, base);
            if (!a)
                return a.status();
            out = *a;
        }
        Expected<ValueId> post = addPost(graph, n, out, base);
        if (!post)
            return post.status();
        OPSCOPE_TRY(replaceChain(graph, id, *post));
        return true;
    }
    if (n.opType == "FusedMatMul") {
        // transA / transB: the Transposes written out again.
        std::vector<ValueId> operands{n.inputs[0], n.inputs[1]};
        for (std::size_t i = 0; i < 2; ++i) {
            if (!attrInt(n, i == 0 ? "transA" : "transB", 0))
                continue;
            const auto rank = knownRank(graph, operands[i]);
            if (!rank || *rank < 2)
                return Status::unsupported("FusedMatMul '" + base +
                                           "' with a transposed operand of unknown rank");
            std::vector<std::int64_t> perm(*rank);
            std::iota(perm.begin(), perm.end(), 0);
            std::swap(perm[*rank - 1], perm[*rank - 2]);
            Expected<NodeId> t = addNodeWithOutputs(graph, "Transpose", {operands[i]}, 1, base + "_transpose",
                                                    {Attribute::makeInts("perm", perm)});
            if (!t)
                return t.status();
            operands[i] = graph.node(*t).outputs[0];
        }
        Expected<NodeId> mm = addNodeWithOutputs(graph, "MatMul", operands, 1, base + "_matmul");
        if (!mm)
            return mm.status();
        ValueId out = graph.node(*mm).outputs[0];
        const float alpha = attrFloat(n, "alpha", 1.0f);
        if (alpha != 1.0f) {
            const ValueId a = addConstant(graph, base + "_alpha", floatTensor({}, {alpha}));
            Expected<NodeId> mul = addNodeWithOutputs(graph, "Mul", {out, a}, 1, base + "_scale");
            if (!mul)
                return mul.status();
            out = graph.node(*mul).outputs[0];
        }
        if (n.inputs.size() > 2 && n.inputs[2].valid()) {
            Expected<NodeId> add = addNodeWithOutputs(graph, "Add", {out, n.inputs[2]}, 1, base + "_bias");
            if (!add)
                return add.status();
            out = graph.node(*add).outputs[0];
        }
        OPSCOPE_TRY(replaceChain(graph, id, out));
        return true;
    }
    if (n.opType == "ChannelShuffle") {
        const auto shape = [&]() -> std::optional<std::vector<std::int64_t>> {
            const Value &x = graph.value(n.inputs[0]);
            if (!x.type.isTensor() || !x.type.shape || x.type.shape->dims.size() != 4)
                return std::nullopt;
            std::vector<std::int64_t> d;
            for (const Dim &dim : x.type.shape->dims)
                d.push_back(dim.isKnown() ? dim.value : -1);
            return d;
        }();
        const std::int64_t g = attrInt(n, "group", 1);
        if (!shape || (*shape)[1] < 0 || (*shape)[2] < 0 || (*shape)[3] < 0 || g <= 0 || (*shape)[1] % g != 0)
            return Status::unsupported("ChannelShuffle '" + base +
                                       "' needs a static [N,C,H,W] input to be lowered");
        const std::int64_t c = (*shape)[1], h = (*shape)[2], w = (*shape)[3];
        const ValueId split = addConstant(graph, base + "_split", int64Tensor({5}, {0, g, c / g, h, w}));
        const ValueId merge = addConstant(graph, base + "_merge", int64Tensor({4}, {0, c, h, w}));
        Expected<NodeId> r1 = addNodeWithOutputs(graph, "Reshape", {n.inputs[0], split}, 1, base + "_split");
        if (!r1)
            return r1.status();
        Expected<NodeId> t =
            addNodeWithOutputs(graph, "Transpose", {graph.node(*r1).outputs[0]}, 1, base + "_transpose",
                               {Attribute::makeInts("perm", {0, 2, 1, 3, 4})});
        if (!t)
            return t.status();
        Expected<NodeId> r2 =
            addNodeWithOutputs(graph, "Reshape", {graph.node(*t).outputs[0], merge}, 1, base + "_merge");
        if (!r2)
            return r2.status();
        OPSCOPE_TRY(replaceChain(graph, id, graph.node(*r2).outputs[0]));
        return true;
    }
    if (n.opType == "LayerNormalization")
        return lowerLayerNorm(model, graph, id);
    if (n.opType == "Send" || n.opType == "Recv") {
        // Outside opscope's runtime a transfer is the tensor itself.
        Expected<NodeId> identity =
            addNodeWithOutputs(graph, "Identity", {n.inputs.at(0)}, 1, base + "_identity");
        if (!identity)
            return identity.status();
        OPSCOPE_TRY(replaceChain(graph, id, graph.node(*identity).outputs[0]));
        return true;
    }
    if (n.opType == "Gelu") {
        // x·(erf(x/√2) + 1)·0.5
        const ValueId x = n.inputs[0];
        const ValueId sqrt2 = addConstant(graph, base + "_sqrt2", floatTensor({}, {1.41421356f}));
        const ValueId one = addConstant(graph, base + "_one", floatTensor({}, {1.0f}));
        const ValueId half = addConstant(graph, base + "_half", floatTensor({}, {0.5f}));
        ValueId v = x;
        for (const auto &[op, operand] : std::vector<std::pair<const char *, ValueId>>{
                 {"Div", sqrt2}, {"Erf", ValueId()}, {"Add", one}, {"Mul", x}, {"Mul", half}}) {
            std::vector<ValueId> ins{v};
            if (operand.valid())
                ins.push_back(operand);
            Expected<NodeId> step = addNodeWithOutputs(graph, op, ins, 1, base + "_" + op);
            if (!step)
                return step.status();
            v = graph.node(*step).outputs[0];
        }
        OPSCOPE_TRY(replaceChain(graph, id, v));
        return true;
    }
    return Status::unsupported("opscope has no lowering for " + std::string(kOpscopeDomain) +
                               "::" + n.opType);
}

void setRoiAlignDefaults(Graph &graph)
{
    for (NodeId id : graph.nodeIds()) {
        Node &n = graph.node(id);
        if (isOp(n, "RoiAlign") && !n.attribute("coordinate_transformation_mode"))
            setAttribute(n, Attribute::makeString("coordinate_transformation_mode", "output_half_pixel"));
        for (Attribute &a : n.attributes) {
            if (a.g)
                setRoiAlignDefaults(*a.g);
            for (auto &g : a.graphs)
                setRoiAlignDefaults(*g);
        }
    }
}

// ONNX's LayerNormalization needs opset 17. From 13 on, no op the model can use changed meaning up
// to 17 except RoiAlign's default coordinate mode, which is then written explicitly; so the
// model's opset is raised instead of giving up the fused op. false: below 13 (Softmax, Squeeze
// and the Reduce ops changed at 13).
bool upgradeToOpset17(Model &model)
{
    const std::int64_t v = model.opsetVersion("");
    if (v >= 17)
        return true;
    if (v < 13)
        return false;
    setRoiAlignDefaults(model.graph);
    for (OpsetImport &o : model.opsets)
        if (o.domain.empty() || o.domain == "ai.onnx")
            o.version = 17;
    return true;
}

// ONNX Runtime's com.microsoft form, when it has one. false: lower to ONNX instead.
Expected<bool> toOrt(Model &model, Graph &graph, NodeId id)
{
    if (Expected<bool> done = extendedOpToOrt(model, graph, id); !done || *done)
        return done;
    Node &n = graph.node(id);
    const auto act = activationFromAttributes(n);
    static const std::set<std::string> convActs{"Relu",        "LeakyRelu", "Clip",
                                                "HardSigmoid", "Sigmoid",   "Tanh"};
    static const std::set<std::string> gemmActs{"Relu", "LeakyRelu", "HardSigmoid", "Sigmoid", "Tanh"};
    if ((n.opType == "FusedConv" || n.opType == "FusedGemm") && act && act->op == "Swish") {
        // ONNX Runtime fuses no Swish into a convolution: Conv (or Gemm) then its QuickGelu.
        const bool conv = n.opType == "FusedConv";
        const std::string base = n.name;
        Expected<NodeId> core =
            addNodeWithOutputs(graph, conv ? "Conv" : "Gemm", n.inputs, 1, base + (conv ? "_conv" : "_gemm"),
                               withoutActivation(n.attributes));
        if (!core)
            return core.status();
        Expected<NodeId> q = addNodeWithOutputs(
            graph, "QuickGelu", {graph.node(*core).outputs[0]}, 1, base + "_swish",
            {Attribute::makeFloat("alpha", act->params.empty() ? 1.0f : act->params[0])}, kMicrosoftDomain);
        if (!q)
            return q.status();
        ensureOpset(model, kMicrosoftDomain, 1);
        Expected<ValueId> post = addPost(graph, graph.node(id), graph.node(*q).outputs[0], base);
        if (!post)
            return post.status();
        OPSCOPE_TRY(replaceChain(graph, id, *post));
        return true;
    }
    if (n.opType == "FusedConv" && act && convActs.count(act->op)) {
        ensureOpset(model, kMicrosoftDomain, 1);
        if (!n.attribute("activation_post")) {
            n.domain = kMicrosoftDomain;
            return true;
        }
        // ONNX Runtime's FusedConv has no post-op: its Mul/Add follow.
        const Node fused = n;
        std::vector<Attribute> attrs = fused.attributes;
        std::erase_if(attrs, [](const Attribute &a) { return a.name == "activation_post"; });
        Expected<NodeId> ort = addNodeWithOutputs(graph, "FusedConv", fused.inputs, 1, fused.name + "_ort",
                                                  std::move(attrs), kMicrosoftDomain);
        if (!ort)
            return ort.status();
        Expected<ValueId> post = addPost(graph, fused, graph.node(*ort).outputs[0], fused.name);
        if (!post)
            return post.status();
        OPSCOPE_TRY(replaceChain(graph, id, *post));
        return true;
    }
    if (n.opType == "FusedGemm" && act && gemmActs.count(act->op)) {
        n.domain = kMicrosoftDomain;
        removeAttribute(n, "activation_params");
        if (!act->params.empty())
            setAttribute(n, Attribute::makeFloat("activation_alpha", act->params[0]));
        if (act->params.size() > 1)
            setAttribute(n, Attribute::makeFloat("activation_beta", act->params[1]));
        ensureOpset(model, kMicrosoftDomain, 1);
        return true;
    }
    if (n.opType == "LayerNormalization" && upgradeToOpset17(model)) {
        n.domain.clear();
        return true;
    }
    if (n.opType == "Gelu" && attrString(n, "approximate", "none") == "none") {
        // A bias Add in front becomes BiasGelu's second input.
        const ValueId x = n.inputs[0];
        const NodeId add = graph.producer(x);
        if (add.valid() && isOp(graph.node(add), "Add") && hasSingleUse(graph, x)) {
            const Node &a = graph.node(add);
            for (int side = 0; side < 2; ++side) {
                const Tensor *bias = constantTensor(graph, a.inputs[side]);
                const auto last = knownRank(graph, a.inputs[1 - side]);
                if (!bias || bias->dims.size() != 1 || !last || *last < 1 ||
                    knownDim(graph, a.inputs[1 - side], *last - 1) != bias->dims[0])
                    continue;
                const ValueId z = a.inputs[1 - side], b = a.inputs[side];
                Expected<NodeId> bg = addNodeWithOutputs(
                    graph, "BiasGelu", {z, b}, 1, graph.node(id).name + "_biasgelu", {}, kMicrosoftDomain);
                if (!bg)
                    return bg.status();
                ensureOpset(model, kMicrosoftDomain, 1);
                OPSCOPE_TRY(replaceChain(graph, id, graph.node(*bg).outputs[0]));
                eraseUnread(graph, {add});
                return true;
            }
        }
        n.domain = kMicrosoftDomain;
        ensureOpset(model, kMicrosoftDomain, 1);
        return true;
    }
    if (n.opType == "FusedMatMul") {
        const std::vector<ValueId> inputs = n.inputs;
        const float alpha = attrFloat(n, "alpha", 1.0f);
        const bool transposes = attrInt(n, "transA", 0) || attrInt(n, "transB", 0);
        if (inputs.size() <= 2 || !inputs[2].valid()) {
            if (alpha == 1.0f && !transposes) {
                n.opType = "MatMul";
                n.domain.clear();
                removeAttribute(n, "alpha");
                return true;
            }
            n.domain = kMicrosoftDomain;
            ensureOpset(model, kMicrosoftDomain, 1);
            return true;
        }
        std::vector<Attribute> attrs = n.attributes;
        Expected<NodeId> mm =
            alpha == 1.0f && !transposes
                ? addNodeWithOutputs(graph, "MatMul", {inputs[0], inputs[1]}, 1, n.name + "_matmul")
                : addNodeWithOutputs(graph, "FusedMatMul", {inputs[0], inputs[1]}, 1, n.name + "_matmul",
                                     std::move(attrs), kMicrosoftDomain);
        if (!mm)
            return mm.status();
        graph.value(graph.node(*mm).outputs[0]).type = graph.value(graph.node(id).outputs[0]).type;
        Expected<NodeId> add = addNodeWithOutputs(graph, "Add", {graph.node(*mm).outputs[0], inputs[2]}, 1,
                                                  graph.node(id).name + "_bias");
        if (!add)
            return add.status();
        ensureOpset(model, kMicrosoftDomain, 1);
        OPSCOPE_TRY(replaceChain(graph, id, graph.node(*add).outputs[0]));
        return true;
    }
    return false;
}

bool usesDomain(const Graph &graph, const std::string &domain)
{
    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        if (n.domain == domain)
            return true;
        for (const Attribute &a : n.attributes) {
            if (a.g && usesDomain(*a.g, domain))
                return true;
            for (const auto &g : a.graphs)
                if (usesDomain(*g, domain))
                    return true;
        }
    }
    return false;
}

// What a lowering wrote, by the fused op's type: as ONNX Runtime's op, or as standard ONNX.
struct LoweredCounts
{
    std::map<std::string, int> toOrt, toOnnx;
};

Expected<bool> lowerGraph(Model &model, Graph &graph, bool ort, LoweredCounts &counts)
{
    bool changed = false;
    // Gelu last: BiasGelu absorbs the bias Add a FusedMatMul in front of it becomes.
    std::vector<NodeId> order = graph.nodeIds();
    std::stable_partition(order.begin(), order.end(),
                          [&](NodeId id) { return graph.node(id).opType != "Gelu"; });
    for (NodeId id : order) {
        for (Attribute &a : graph.node(id).attributes) {
            if (a.g) {
                Expected<bool> sub = lowerGraph(model, *a.g, ort, counts);
                if (!sub)
                    return sub.status();
                changed = changed || *sub;
            }
            for (auto &g : a.graphs) {
                Expected<bool> sub = lowerGraph(model, *g, ort, counts);
                if (!sub)
                    return sub.status();
                changed = changed || *sub;
            }
        }
        if (graph.node(id).domain != kOpscopeDomain)
            continue;
        const std::string opType = graph.node(id).opType; // the node may be gone after lowering
        if (ort) {
            Expected<bool> done = toOrt(model, graph, id);
            if (!done)
                return done.status();
            if (*done) {
                ++counts.toOrt[opType];
                changed = true;
                continue;
            }
        }
        ++counts.toOnnx[opType];
        Expected<bool> lowered = lowerNode(model, graph, id);
        if (!lowered)
            return lowered.status();
        changed = true;
    }
    return changed;
}

std::string countsText(const std::map<std::string, int> &counts)
{
    std::string text;
    int total = 0;
    for (const auto &[op, n] : counts) {
        text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + op;
        total += n;
    }
    return std::to_string(total) + " (" + text + ")";
}

Expected<bool> lowerModel(Model &model, bool ort, PassContext &context)
{
    // Regions layout-nhwc converted go back to NCHW first: neither target has those layouts.
    Expected<bool> stripped = stripLayouts(model.graph);
    if (!stripped)
        return stripped.status();
    LoweredCounts counts;
    Expected<bool> changed = lowerGraph(model, model.graph, ort, counts);
    // Fusions undone here look, in a report, like work that went nowhere: say where it went.
    if (changed && !counts.toOnnx.empty())
        context.note("wrote " + countsText(counts.toOnnx) +
                     " of opscope's fused ops back as the standard ONNX ops they stand for" +
                     (ort ? " (ONNX Runtime has no op for them)"
                          : ": --target onnx writes only ops every ONNX runtime has, so fusions show in the "
                            "written model only with --target ort (ONNX Runtime's com.microsoft ops) or none "
                            "(opscope's own); opscope fuses them again when it runs the model"));
    if (changed && !counts.toOrt.empty())
        context.note("wrote " + countsText(counts.toOrt) + " of opscope's fused ops as ONNX Runtime's com.microsoft ops");
    if (*stripped)
        context.note("converted the NHWC regions of layout-nhwc back to NCHW (neither ONNX nor ONNX Runtime has "
                     "opscope's blocked layouts)");
    if (changed)
        *changed = *changed || *stripped;
    if (changed && ort) {
        Expected<bool> skip = fuseSkipLayerNorm(model, model.graph);
        if (!skip)
            return skip.status();
        *changed = *changed || *skip;
    }
    if (changed && !usesDomain(model.graph, kOpscopeDomain))
        std::erase_if(model.opsets, [](const OpsetImport &o) { return o.domain == kOpscopeDomain; });
    return changed;
}

} // namespace

Expected<bool> LowerToOnnx::run(Model &model, PassContext &context)
{
    return lowerModel(model, false, context);
}

Expected<bool> LowerToOrt::run(Model &model, PassContext &context)
{
    return lowerModel(model, true, context);
}

} // namespace opscope::passes
