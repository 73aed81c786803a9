#include "passes/attentionfusion.h"

#include "passes/nodechain.h"
#include "passes/passutil.h"

#include <algorithm>
#include <cstring>

namespace opscope::passes {

namespace {

// v's only reader when it is `op` (v not a graph output), else nullptr.
const Node *onlyReader(const Graph &graph, ValueId v, std::string_view op)
{
    const NodeId c = hasSingleUse(graph, v) ? singleConsumer(graph, v) : NodeId();
    return c.valid() && isOp(graph.node(c), op) ? &graph.node(c) : nullptr;
}

// v = w·c, c·w or w/c with a scalar constant c and v read once: (w, factor), else (v, 1).
ValueId unscale(const Graph &graph, ValueId v, float &factor, std::vector<NodeId> &nodes)
{
    if (const Node *m = singleUseProducer(graph, v, "Mul"))
        for (int side = 0; side < 2; ++side)
            if (const auto c = scalarFloat(graph, m->inputs[side])) {
                factor *= *c;
                nodes.push_back(m->id);
                return m->inputs[1 - side];
            }
    if (const Node *d = singleUseProducer(graph, v, "Div"))
        if (const auto c = scalarFloat(graph, d->inputs[1]); c && *c != 0.0f) {
            factor /= *c;
            nodes.push_back(d->id);
            return d->inputs[0];
        }
    return v;
}

struct Found
{
    ValueId q, k, v, mask, out;
    ValueId whereCondition, whereFill; // Where(cond, scores, fill): a mask as a selection
    float scale = 1.0f;
    bool kTransposed = false, transposeOutput = false;
    std::int64_t heads = 0;
    std::vector<NodeId> nodes;
};

bool rank(const Graph &graph, ValueId v, std::size_t r)
{
    return knownRank(graph, v) == r && elementType(graph, v) == DataType::Float;
}

// The head split in front of an operand: x[B,S,H·D] ──► Reshape[B,S,H,D] ──► Transpose(perm).
// Returns x and H (0 when not there).
std::pair<ValueId, std::int64_t> headSplit(const Graph &graph, ValueId v,
                                           const std::vector<std::int64_t> &perm, std::vector<NodeId> &nodes)
{
    const Node *t = singleUseProducer(graph, v, "Transpose");
    if (!t || !isTransposeWith(*t, perm))
        return {};
    const Node *r = singleUseProducer(graph, t->inputs[0], "Reshape");
    if (!r || !rank(graph, r->inputs[0], 3) || !rank(graph, r->outputs[0], 4))
        return {};
    const auto h = knownDim(graph, r->outputs[0], 2), d = knownDim(graph, r->outputs[0], 3);
    const auto hd = knownDim(graph, r->inputs[0], 2);
    if (!h || !d || !hd || *h * *d != *hd)
        return {};
    nodes.push_back(t->id);
    nodes.push_back(r->id);
    return {r->inputs[0], *h};
}

// Absorbs the head split around q/k/v and the merge after the output, when all are there.
void absorbHeads(const Graph &graph, Found &f)
{
    std::vector<NodeId> nodes;
    const auto [xq, hq] = headSplit(graph, f.q, {0, 2, 1, 3}, nodes);
    const auto [xk, hk] = headSplit(
        graph, f.k,
        f.kTransposed ? std::vector<std::int64_t>{0, 2, 3, 1} : std::vector<std::int64_t>{0, 2, 1, 3}, nodes);
    const auto [xv, hv] = headSplit(graph, f.v, {0, 2, 1, 3}, nodes);
    const Node *t = onlyReader(graph, f.out, "Transpose");
    const bool merge = t && isTransposeWith(*t, {0, 2, 1, 3});
    const Node *r = merge ? onlyReader(graph, t->outputs[0], "Reshape") : nullptr;
    const auto h = merge ? knownDim(graph, t->outputs[0], 2) : std::nullopt;
    const auto dv = merge ? knownDim(graph, t->outputs[0], 3) : std::nullopt;
    const bool merged =
        r && h && dv && rank(graph, r->outputs[0], 3) && knownDim(graph, r->outputs[0], 2) == *h * *dv;
    if (hq && hq == hk && hq == hv && merged) {
        f.q = xq;
        f.k = xk;
        f.v = xv;
        f.heads = hq;
        f.kTransposed = false;
        nodes.push_back(t->id);
        nodes.push_back(r->id);
        f.out = r->outputs[0];
        f.nodes.insert(f.nodes.end(), nodes.begin(), nodes.end());
        return;
    }
    if (merge) {
        f.transposeOutput = true;
        f.out = t->outputs[0];
        f.nodes.push_back(t->id);
    }
}

// From the Softmax: the whole attention, or nullopt.
std::optional<Found> matchAt(const Graph &graph, NodeId softmaxId)
{
    const Node &sm = graph.node(softmaxId);
    const ValueId probs = sm.outputs[0];
    if (!rank(graph, probs, 4) || !hasSingleUse(graph, probs))
        return std::nullopt;
    const std::int64_t axis = attrInt(sm, "axis", -1);
    if (axis != -1 && axis != 3)
        return std::nullopt;
    Found f;
    const NodeId pv = singleConsumer(graph, probs);
    const Node &pvNode = graph.node(pv);
    if (!isOp(pvNode, "MatMul") || pvNode.inputs[0] != probs || !rank(graph, pvNode.inputs[1], 4))
        return std::nullopt;
    f.v = pvNode.inputs[1];
    f.out = pvNode.outputs[0];
    f.nodes = {pv, softmaxId};
    // Scores: [Add(mask)] ← [scale] ← Q·Kᵀ.
    ValueId s = sm.inputs[0];
    if (const Node *add = singleUseProducer(graph, s, "Add")) {
        for (int side = 0; side < 2 && !f.mask.valid(); ++side) {
            const ValueId mask = add->inputs[1 - side], scores = add->inputs[side];
            const NodeId p = graph.producer(scores);
            const bool isScores =
                p.valid() && hasSingleUse(graph, scores) &&
                (isOp(graph.node(p), "MatMul") || isOp(graph.node(p), "Mul") || isOp(graph.node(p), "Div") ||
                 isOp(graph.node(p), "Where") || graph.node(p).opType == "FusedMatMul");
            const auto mr = knownRank(graph, mask);
            if (isScores && mr && *mr <= 4 && elementType(graph, mask) == DataType::Float &&
                sameShape(graph, scores, add->outputs[0])) {
                f.mask = mask;
                f.nodes.push_back(add->id);
                s = scores;
            }
        }
        if (!f.mask.valid())
            return std::nullopt;
    }
    // GPT-2's causal mask: Where(causal, scores, fill) with a scalar fill.
    if (const Node *w = singleUseProducer(graph, s, "Where")) {
        const ValueId cond = w->inputs[0], scores = w->inputs[1], fill = w->inputs[2];
        const auto cr = knownRank(graph, cond);
        if (!scalarFloat(graph, fill) || !cr || *cr > 4 || elementType(graph, cond) != DataType::Bool ||
            !hasSingleUse(graph, scores) || !sameShape(graph, scores, w->outputs[0]))
            return std::nullopt;
        f.whereCondition = cond;
        f.whereFill = fill;
        f.nodes.push_back(w->id);
        s = scores;
    }
    s = unscale(graph, s, f.scale, f.nodes);
    const NodeId qkId = s.valid() && hasSingleUse(graph, s) ? graph.producer(s) : NodeId();
    if (!qkId.valid())
        return std::nullopt;
    const Node &qk = graph.node(qkId);
    bool transB = false;
    if (qk.opType == "FusedMatMul" && (qk.domain == kOpscopeDomain || qk.domain == kMicrosoftDomain)) {
        if (attrInt(qk, "transA", 0) || attrInt(qk, "transBatchA", 0) || attrInt(qk, "transBatchB", 0) ||
            (qk.inputs.size() > 2 && qk.inputs[2].valid()))
            return std::nullopt;
        f.scale *= attrFloat(qk, "alpha", 1.0f);
        transB = attrInt(qk, "transB", 0) != 0;
    } else if (!isOp(qk, "MatMul")) {
        return std::nullopt;
    }
    f.nodes.push_back(qkId);
    f.q = unscale(graph, qk.inputs[0], f.scale, f.nodes);
    ValueId kt = unscale(graph, qk.inputs[1], f.scale, f.nodes);
    if (transB) {
        f.k = kt;
    } else if (const Node *t = lastAxesTranspose(graph, kt); t && hasSingleUse(graph, kt)) {
        f.k = t->inputs[0];
        f.nodes.push_back(t->id);
    } else {
        f.k = kt;
        f.kTransposed = true;
    }
    if (!rank(graph, f.q, 4) || !rank(graph, f.k, 4))
        return std::nullopt;
    absorbHeads(graph, f);
    return f;
}

} // namespace

void AttentionFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        if (!isOp(graph.node(id), "Softmax"))
            continue;
        const auto f = matchAt(graph, id);
        if (!f)
            continue;
        std::int32_t bits;
        std::memcpy(&bits, &f->scale, sizeof bits);
        // The anchor first: the node producing the fused output.
        std::vector<NodeId> nodes = f->nodes;
        const auto anchor = std::find(nodes.begin(), nodes.end(), graph.producer(f->out));
        std::rotate(nodes.begin(), anchor, anchor + 1);
        matches.push_back({f->heads ? "multi-head-attention" : "scaled-dot-product-attention",
                           nodes,
                           {f->q, f->k, f->v, f->mask, f->out, f->whereCondition, f->whereFill},
                           {bits, f->kTransposed, f->heads, f->transposeOutput}});
    }
}

Expected<bool> AttentionFusion::apply(Model &model, Graph &graph, const Match &m) const
{
    float scale;
    const auto bits = static_cast<std::int32_t>(m.ints[0]);
    std::memcpy(&scale, &bits, sizeof scale);
    std::vector<Attribute> attrs{Attribute::makeFloat("scale", scale)};
    if (m.ints[1])
        attrs.push_back(Attribute::makeInt("k_transposed", 1));
    if (m.ints[2])
        attrs.push_back(Attribute::makeInt("num_heads", m.ints[2]));
    if (m.ints[3])
        attrs.push_back(Attribute::makeInt("transpose_output", 1));
    std::vector<ValueId> inputs{m.values[0], m.values[1], m.values[2]};
    NodeChain chain(graph, graph.node(m.nodes[0]).name);
    // A selection mask becomes additive: Where(cond, 0, fill) (s + 0 = s, s + fill ≈ fill: both
    // vanish in the Softmax the same way), added to the other mask when there is one.
    ValueId mask = m.values[3];
    const Tensor *cond = m.values[5].valid() ? constantTensor(graph, m.values[5]) : nullptr;
    if (cond && cond->dtype == DataType::Bool) {
        // A constant causal mask: the additive form is a constant too.
        const float fill = constantFloats(graph, m.values[6])->at(0);
        std::vector<float> additive;
        for (std::byte b : cond->bytes())
            additive.push_back(b != std::byte{0} ? 0.0f : fill);
        const ValueId selected =
            addConstant(graph, graph.node(m.nodes[0]).name + "_mask", floatTensor(cond->dims, additive));
        mask = mask.valid() ? chain.op("Add", {selected, mask}) : selected;
    } else if (m.values[5].valid()) {
        const ValueId selected = chain.op("Where", {m.values[5], chain.scalar(0.0f, "keep"), m.values[6]});
        mask = mask.valid() ? chain.op("Add", {selected, mask}) : selected;
    }
    if (mask.valid())
        inputs.push_back(mask);
    const ValueId y = chain.op("Attention", inputs, std::move(attrs), kOpscopeDomain);
    OPSCOPE_TRY(chain.finish(m.values[4], y, m.nodes));
    ensureOpset(model, kOpscopeDomain, 1);
    return true;
}

} // namespace opscope::passes
