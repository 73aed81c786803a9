#include "passes/matmultransposefusion.h"

#include "passes/nodechain.h"
#include "passes/passutil.h"

namespace opscope::passes {

namespace {

bool isMatMulLike(const Node &n)
{
    if (isOp(n, "MatMul"))
        return true;
    return (n.domain == kOpscopeDomain || n.domain == kMicrosoftDomain) && n.opType == "FusedMatMul" &&
           attrInt(n, "transBatchA", 0) == 0 && attrInt(n, "transBatchB", 0) == 0;
}

bool hasBias(const Node &n)
{
    return n.inputs.size() > 2 && n.inputs[2].valid();
}

bool rankAtLeast2(const Graph &graph, ValueId v)
{
    const auto r = knownRank(graph, v);
    return r && *r >= 2;
}

} // namespace

void MatMulTransposeFusion::select(const Model &, const Graph &graph, std::vector<Match> &matches) const
{
    for (NodeId id : graph.nodeIds()) {
        const Node &n = graph.node(id);
        if (isOp(n, "Gemm")) {
            for (int side = 0; side < 2; ++side)
                if (const Node *t = lastAxesTranspose(graph, n.inputs[side]);
                    t && knownRank(graph, t->inputs[0]) == 2) {
                    matches.push_back({"gemm-transpose", {id}, {}, {}});
                    break;
                }
            continue;
        }
        if (!isMatMulLike(n) || !rankAtLeast2(graph, n.inputs[0]) || !rankAtLeast2(graph, n.inputs[1]) ||
            elementType(graph, n.inputs[0]) != DataType::Float)
            continue;
        // A Transpose of the product (its only reader) folds into swapped operands.
        const NodeId c =
            hasSingleUse(graph, n.outputs[0]) && !hasBias(n) ? singleConsumer(graph, n.outputs[0]) : NodeId();
        const Node *out =
            c.valid() && lastAxesTranspose(graph, graph.node(c).outputs[0]) ? &graph.node(c) : nullptr;
        const bool operandTransposed =
            lastAxesTranspose(graph, n.inputs[0]) || lastAxesTranspose(graph, n.inputs[1]);
        if (out || operandTransposed)
            matches.push_back(
                {out ? "transpose-of-matmul" : "matmul-transposed-operand", {id}, {}, {out ? 1 : -1}});
    }
}

Expected<bool> MatMulTransposeFusion::apply(Model &model, Graph &graph, const Match &m) const
{
    const NodeId id = m.nodes[0];
    if (isOp(graph.node(id), "Gemm")) {
        for (int side = 0; side < 2; ++side) {
            const Node &gemm = graph.node(id);
            const Node *t = lastAxesTranspose(graph, gemm.inputs[side]);
            if (!t || knownRank(graph, t->inputs[0]) != 2)
                continue;
            const char *flag = side == 0 ? "transA" : "transB";
            const NodeId tid = t->id;
            const bool was = attrInt(gemm, flag, 0) != 0;
            graph.setNodeInput(id, std::uint32_t(side), t->inputs[0]);
            setAttribute(graph.node(id), Attribute::makeInt(flag, was ? 0 : 1));
            eraseUnread(graph, {tid});
        }
        return true;
    }
    const Node n = graph.node(id);
    ValueId a = n.inputs[0], b = n.inputs[1], out = n.outputs[0];
    bool ta = attrInt(n, "transA", 0) != 0, tb = attrInt(n, "transB", 0) != 0;
    std::vector<NodeId> consumed{id};
    if (m.ints[0] >= 0) {
        // (op(a)·op(b))ᵀ = op(b)ᵀ·op(a)ᵀ
        const NodeId t = singleConsumer(graph, out);
        if (!t.valid() || !lastAxesTranspose(graph, graph.node(t).outputs[0]))
            return false;
        std::swap(a, b);
        std::swap(ta, tb);
        ta = !ta;
        tb = !tb;
        out = graph.node(t).outputs[0];
        consumed.push_back(t);
    }
    for (auto [operand, flag] : {std::pair{&a, &ta}, std::pair{&b, &tb}})
        if (const Node *t = lastAxesTranspose(graph, *operand)) {
            consumed.push_back(t->id);
            *operand = t->inputs[0];
            *flag = !*flag;
        }
    const float alpha = attrFloat(n, "alpha", 1.0f);
    NodeChain chain(graph, n.name);
    ValueId y;
    if (!ta && !tb && alpha == 1.0f && !hasBias(n)) {
        y = chain.op("MatMul", {a, b});
    } else {
        std::vector<Attribute> attrs{Attribute::makeInt("transA", ta), Attribute::makeInt("transB", tb)};
        if (alpha != 1.0f)
            attrs.push_back(Attribute::makeFloat("alpha", alpha));
        std::vector<ValueId> inputs{a, b};
        if (hasBias(n))
            inputs.push_back(n.inputs[2]);
        y = chain.op("FusedMatMul", inputs, attrs, kOpscopeDomain);
        ensureOpset(model, kOpscopeDomain, 1);
    }
    OPSCOPE_TRY(chain.finish(out, y, consumed));
    return true;
}

} // namespace opscope::passes
