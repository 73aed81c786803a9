#include "passes/layoutnhwc.h"

#include "passes/nodechain.h"
#include "passes/passutil.h"
#include "util/systemmemory.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <set>

namespace opscope::passes {

int nativeChannelBlock()
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_supports("avx512f") ? 16 : 8;
#else
    return 8;
#endif
}

namespace {

enum class Role
{
    None,
    Conv,   // anchors a region
    Pool,   // MaxPool / AveragePool
    Norm,   // BatchNormalization (inference) with constant parameters
    Unary,  // elementwise, one tensor input
    Binary, // elementwise: equal channel counts, a per-channel operand or a scalar constant
    Concat, // along channels
    Pad,    // constant, reflect or edge padding of H and W (pads permuted into the layout)
};

bool rank4Float(const Graph &graph, ValueId v)
{
    return v.valid() && knownRank(graph, v) == 4u && elementType(graph, v) == DataType::Float;
}

std::optional<std::int64_t> channels(const Graph &graph, ValueId v)
{
    return knownDim(graph, v, 1);
}

bool isScalarConstant(const Graph &graph, ValueId v)
{
    const Tensor *t = v.valid() ? constantTensor(graph, v) : nullptr;
    return t && t->elementCount() == 1;
}

bool sameDim(const Dim &a, const Dim &b)
{
    return a.isKnown() ? b.isKnown() && a.value == b.value : !a.symbol.empty() && a.symbol == b.symbol;
}

// small = [N, C, 1, 1] with big's N and C.
bool channelVector(const Graph &graph, ValueId small, ValueId big)
{
    const auto &ss = graph.value(small).type.shape, &bs = graph.value(big).type.shape;
    if (!ss || !bs || ss->dims.size() != 4 || bs->dims.size() != 4)
        return false;
    return knownDim(graph, small, 2) == 1 && knownDim(graph, small, 3) == 1 && knownDim(graph, small, 1) &&
           knownDim(graph, small, 1) == knownDim(graph, big, 1) && sameDim(ss->dims[0], bs->dims[0]);
}

// A Pad's pads (begin…, end… over N, C, H, W) when a layout can take it: constant pads, N and C
// untouched (padding channels would break NCHWc blocks), no axes input; else nullopt. Explicit
// Pads that pad-fusion could not fold (reflect or edge mode, a non-zero value, before a MaxPool)
// otherwise cut a region in two, with a conversion out and one back in around each.
std::optional<std::vector<std::int64_t>> layoutPads(const Graph &graph, const Node &n)
{
    if (!isOp(n, "Pad") || n.inputs.empty() || n.outputs.size() != 1)
        return std::nullopt;
    const std::string mode = attrString(n, "mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge")
        return std::nullopt;
    std::vector<std::int64_t> pads;
    if (n.inputs.size() > 1) { // opset 11+: pads (and constant_value, axes) as inputs
        const auto p = constantInts(graph, n.inputs[1]);
        if (!p || (n.inputs.size() > 3 && n.inputs[3].valid()))
            return std::nullopt;
        pads = *p;
    } else {
        pads = attrInts(n, "pads");
    }
    if (pads.size() != 8 || pads[0] || pads[1] || pads[4] || pads[5])
        return std::nullopt;
    return pads;
}

// NCHW pads in a region's physical layout: NHWC [N,H,W,C] or blocked [N,C/b,H,W,b]; and back.
std::vector<std::int64_t> physicalPads(const std::vector<std::int64_t> &p, bool nchwc)
{
    if (nchwc)
        return {p[0], p[1], p[2], p[3], 0, p[4], p[5], p[6], p[7], 0};
    return {p[0], p[2], p[3], p[1], p[4], p[6], p[7], p[5]};
}

std::vector<std::int64_t> plainPads(const std::vector<std::int64_t> &p, bool nchwc)
{
    if (nchwc)
        return {p[0], p[1], p[2], p[3], p[5], p[6], p[7], p[8]};
    return {p[0], p[3], p[1], p[2], p[4], p[7], p[5], p[6]};
}

// The Pad `n` (in either form) with its pads replaced: a new pads constant, or the attribute.
void setPads(Graph &graph, const Node &n, std::vector<ValueId> &inputs, std::vector<Attribute> &attrs,
             const std::vector<std::int64_t> &pads)
{
    if (inputs.size() > 1) {
        inputs[1] = addConstant(graph, n.name + "_pads",
                                Tensor::fromValues(DataType::Int64, {std::int64_t(pads.size())}, pads));
        return;
    }
    std::erase_if(attrs, [](const Attribute &a) { return a.name == "pads"; });
    attrs.push_back(Attribute::makeInts("pads", pads));
}

Role roleOf(const Graph &graph, const Node &n)
{
    if (n.outputs.empty() || !n.outputs[0].valid() || (n.outputs.size() > 1 && n.outputs[1].valid()))
        return Role::None;
    const bool conv = isOp(n, "Conv") || isOpscopeOp(n, "FusedConv");
    if (conv) {
        const Tensor *w = n.inputs.size() > 1 ? constantTensor(graph, n.inputs[1]) : nullptr;
        if (!w || w->dims.size() != 4 || !rank4Float(graph, n.inputs[0]) ||
            (n.inputs.size() > 3 && n.inputs[3].valid()))
            return Role::None;
        const auto cin = channels(graph, n.inputs[0]);
        const std::int64_t group = attrInt(n, "group", 1);
        // Plain or depthwise: the grouped layouts in between gain little and complicate blocking.
        if (!cin || (group != 1 && !(group == *cin && w->dims[0] == group)))
            return Role::None;
        return Role::Conv;
    }
    if (!rank4Float(graph, n.inputs.empty() ? ValueId() : n.inputs[0]))
        return Role::None;
    if (isOp(n, "BatchNormalization")) {
        if (n.inputs.size() != 5 || attrInt(n, "training_mode", 0) != 0)
            return Role::None;
        for (std::size_t i = 1; i < 5; ++i)
            if (!constantTensor(graph, n.inputs[i]))
                return Role::None;
        return Role::Norm;
    }
    if (isOp(n, "GlobalAveragePool") || isOp(n, "GlobalMaxPool"))
        return Role::Pool;
    if (isOp(n, "MaxPool"))
        return attrInt(n, "storage_order", 0) == 0 ? Role::Pool : Role::None;
    if (isOp(n, "AveragePool"))
        // oneDNN counts the cells ceil_mode adds past the padding when padding is included.
        return attrInt(n, "count_include_pad", 0) && attrInt(n, "ceil_mode", 0) ? Role::None : Role::Pool;
    static const std::set<std::string, std::less<>> unary{
        "Relu", "LeakyRelu", "Sigmoid",  "HardSigmoid", "HardSwish", "Tanh", "Elu",
        "Selu", "Softplus",  "Identity", "Abs",         "Neg",       "Erf",  "Sqrt"};
    if ((n.domain.empty() && unary.count(n.opType)) || isOpscopeOp(n, "Swish") || isOpscopeOp(n, "Gelu"))
        return n.inputs.size() == 1 ? Role::Unary : Role::None;
    if (isOp(n, "Clip")) {
        for (std::size_t i = 1; i < n.inputs.size(); ++i)
            if (n.inputs[i].valid() && !isScalarConstant(graph, n.inputs[i]))
                return Role::None;
        return Role::Unary;
    }
    if ((isOp(n, "Add") || isOp(n, "Mul") || isOp(n, "Sub") || isOp(n, "Div") || isOp(n, "Max") ||
         isOp(n, "Min")) &&
        n.inputs.size() == 2) {
        // Two rank-4 operands with the same channel count: both permuted (or blocked) alike, their
        // other axes broadcast exactly as in NCHW — symbolic H/W that shape inference could not
        // prove equal (a residual Add after strided convolutions) included.
        const auto c0 = channels(graph, n.inputs[0]), c1 = channels(graph, n.inputs[1]);
        const bool same = rank4Float(graph, n.inputs[1]) &&
                          (sameShape(graph, n.inputs[0], n.inputs[1]) || (c0 && c1 && *c0 == *c1));
        // A per-channel [N,C,1,1] operand (a squeeze-excitation scale) broadcasts the same way in
        // every layout: [N,C/b,1,1,b] against [N,C/b,H,W,b], [N,1,1,C] against [N,H,W,C].
        const bool perChannel =
            rank4Float(graph, n.inputs[1]) && (channelVector(graph, n.inputs[1], n.inputs[0]) ||
                                               channelVector(graph, n.inputs[0], n.inputs[1]));
        return same || perChannel || isScalarConstant(graph, n.inputs[1]) ? Role::Binary : Role::None;
    }
    if (isOp(n, "Concat")) {
        const std::int64_t axis = attrInt(n, "axis", 0);
        if (axis != 1 && axis != -3)
            return Role::None;
        for (ValueId v : n.inputs)
            if (!rank4Float(graph, v))
                return Role::None;
        return Role::Concat;
    }
    if (layoutPads(graph, n))
        return Role::Pad;
    return Role::None;
}

// Inputs a region's layout applies to (scalar constants and weights stay as they are).
std::vector<std::size_t> layoutInputs(const Graph &graph, const Node &n, Role role)
{
    switch (role) {
    case Role::Conv:
    case Role::Pool:
    case Role::Norm:
    case Role::Pad:
    case Role::Unary: return {0};
    case Role::Binary:
        return isScalarConstant(graph, n.inputs[1]) ? std::vector<std::size_t>{0}
                                                    : std::vector<std::size_t>{0, 1};
    case Role::Concat: {
        std::vector<std::size_t> all(n.inputs.size());
        std::iota(all.begin(), all.end(), 0);
        return all;
    }
    case Role::None: break;
    }
    return {};
}

struct Region
{
    std::vector<NodeId> nodes; // topological order
    std::set<ValueId> inputs;  // read from outside
    std::set<ValueId> outputs; // read outside, or graph outputs
    bool nchwc = false;
    double savedBytes = 0.0, conversionBytes = 0.0;
    int convs = 0, pools = 0;
};

// Float bytes of a value; a dim that is not static (batch, a dynamic image size) counts as 1, so
// models with dynamic sizes are costed per pixel — the comparison only needs the ratio.
double bytes(const Graph &graph, ValueId v)
{
    const auto rank = knownRank(graph, v);
    double n = 4.0;
    for (std::size_t i = 0; rank && i < *rank; ++i)
        n *= double(std::max<std::int64_t>(knownDim(graph, v, i).value_or(1), 1));
    return n;
}

TypeInfo physicalType(const Graph &graph, ValueId v, bool nchwc, std::int64_t block)
{
    TypeInfo t = graph.value(v).type;
    if (!t.shape || t.shape->dims.size() != 4)
        return t;
    std::vector<Dim> d = t.shape->dims;
    if (nchwc)
        t.shape->dims = {d[0], d[1].isKnown() ? Dim::known(d[1].value / block) : Dim{}, d[2], d[3],
                         Dim::known(block)};
    else
        t.shape->dims = {d[0], d[2], d[3], d[1]};
    return t;
}

} // namespace

Expected<bool> LayoutNhwc::run(Model &model, PassContext &context)
{
    Graph &graph = model.graph;
    const std::int64_t block =
        context.options().layoutBlock > 0 ? context.options().layoutBlock : nativeChannelBlock();
    Expected<std::vector<NodeId>> order = graph.topologicalOrder();
    if (!order)
        return order.status();

    // Regions: convolutions, and the other roles when every layout input comes from a region.
    std::map<NodeId, Role> role;
    std::map<NodeId, NodeId> parent; // union-find over region nodes
    std::function<NodeId(NodeId)> find = [&](NodeId x) {
        return parent[x] == x ? x : parent[x] = find(parent[x]);
    };
    for (NodeId id : *order) {
        const Node &n = graph.node(id);
        const Role r = roleOf(graph, n);
        if (r == Role::None)
            continue;
        std::vector<NodeId> producers;
        std::size_t outside = 0;
        for (std::size_t i : layoutInputs(graph, n, r)) {
            const NodeId p = graph.producer(n.inputs[i]);
            if (p.valid() && role.count(p))
                producers.push_back(p);
            else
                ++outside;
        }
        // Unary ops and pools join when their input is in a region; an Add or a Concat when one
        // of its inputs is (a residual Add converts the skip input at the border).
        const bool joins =
            r == Role::Conv || ((r == Role::Binary || r == Role::Concat) ? !producers.empty() : outside == 0);
        if (!joins)
            continue;
        role[id] = r;
        parent[id] = id;
        for (NodeId p : producers)
            parent[find(p)] = find(id);
    }
    std::map<NodeId, Region> regions;
    for (NodeId id : *order)
        if (role.count(id))
            regions[find(id)].nodes.push_back(id);

    bool changed = false;
    int index = 0;
    for (auto &entry : regions) {
        Region &region = entry.second; // a plain reference: clang 14 lambdas cannot capture bindings
        ++index;
        std::set<NodeId> members(region.nodes.begin(), region.nodes.end());
        bool blockable = true;
        for (NodeId id : region.nodes) {
            const Node &n = graph.node(id);
            region.convs += role[id] == Role::Conv;
            region.pools += role[id] == Role::Pool;
            for (std::size_t i : layoutInputs(graph, n, role[id])) {
                const ValueId v = n.inputs[i];
                const NodeId p = graph.producer(v);
                if (p.valid() && members.count(p))
                    continue;
                region.inputs.insert(v);
                const auto c = channels(graph, v);
                // A convolution reads plain NCHW itself; anything else needs whole blocks.
                if (role[id] != Role::Conv && (!c || *c % block != 0))
                    blockable = false;
            }
            const ValueId out = n.outputs[0];
            const auto c = channels(graph, out);
            if (!c || *c % block != 0)
                blockable = false;
            bool outside = keepsName(graph, out); // a graph output, or read by a subgraph
            for (const Use &u : graph.uses(out))
                outside = outside || !members.count(u.node);
            if (outside)
                region.outputs.insert(out);
            if (role[id] == Role::Conv)
                region.savedBytes += bytes(graph, n.inputs[0]) + bytes(graph, out);
        }
        region.nchwc = blockable;
        if (!blockable)
            region.savedBytes *= 0.5; // NHWC kernels gain less than the blocked ones
        for (ValueId v : region.inputs) {
            const auto c = channels(graph, v);
            bool onlyConvs = true;
            for (const Use &u : graph.uses(v))
                if (members.count(u.node) && role[u.node] != Role::Conv)
                    onlyConvs = false;
            // Blocked: convolutions read an unblockable input as it is (no conversion).
            if (!region.nchwc || (c && *c % block == 0) || !onlyConvs)
                region.conversionBytes += bytes(graph, v);
        }
        for (ValueId v : region.outputs)
            region.conversionBytes += bytes(graph, v);
        // Blocked regions need a clear margin and at least three convolutions: the reorders inside
        // a convolution call are oneDNN's, fused with the call, while border conversions are passes
        // of their own, and a convolution already runs plain NCHW when oneDNN's plain kernel times
        // faster (conv.cpp), saving nothing. Measured with bench/datalayout_bench.py: two-conv
        // NCHWc regions did not pay; NHWC regions paid from a margin of 1.
        const bool worth =
            region.convs > 0 &&
            (region.nchwc ? region.convs >= 3 && region.savedBytes >= 2.0 * region.conversionBytes
                          : region.savedBytes > region.conversionBytes);
        // Why a region stays NCHW, in the rule's own terms (a saving above the conversions read
        // as a contradiction when the rule was a margin of two or a count of convolutions).
        const char *why = region.convs == 0                         ? " (no convolution)"
                          : region.nchwc && region.convs < 3        ? " (a blocked region needs 3 convolutions)"
                          : region.nchwc                            ? " (a blocked region needs a saving of 2x its conversions)"
                                                                    : " (the saving does not exceed the conversions)";
        char line[400];
        std::snprintf(line, sizeof line,
                      "region %d (%d conv, %d pool, %zu other; first '%s'): %s%s — reorders saved %s, "
                      "border conversions %s",
                      index, region.convs, region.pools,
                      region.nodes.size() - std::size_t(region.convs + region.pools),
                      graph.node(region.nodes.front()).name.c_str(),
                      !worth         ? "stays NCHW"
                      : region.nchwc ? (block == 16 ? "NCHWc16" : "NCHWc8")
                                     : "NHWC",
                      worth ? "" : why, bytesText(std::uint64_t(std::max(0.0, region.savedBytes))).c_str(),
                      bytesText(std::uint64_t(std::max(0.0, region.conversionBytes))).c_str());
        context.note(line);
        if (!worth)
            continue;

        // Rewrite: new nodes in the region's layout, conversions at its borders. The region is
        // recorded as one pattern instance so the pass stepper draws the new nodes in its place.
        PatternMatch record;
        record.rule = region.nchwc ? "nchwc-region" : "nhwc-region";
        record.matched = region.nodes;
        for (NodeId id : region.nodes)
            record.matchedNames.push_back(graph.node(id).name);
        const std::size_t slotsBefore = graph.nodeSlots();
        const std::string layoutName = region.nchwc ? "nchwc" : "nhwc";
        std::map<ValueId, ValueId> converted;
        auto convert = [&](ValueId v, bool convReads) -> ValueId {
            if (auto it = converted.find(v); it != converted.end())
                return it->second;
            const auto c = channels(graph, v);
            if (region.nchwc && convReads && (!c || *c % block != 0))
                return v; // the convolution reads plain NCHW
            std::vector<Attribute> attrs{Attribute::makeString("layout", layoutName)};
            if (region.nchwc)
                attrs.push_back(Attribute::makeInt("block", block));
            NodeChain chain(graph, graph.value(v).name);
            const ValueId r = chain.op("ReorderInput", {v}, std::move(attrs), kOpscopeDomain);
            if (!chain.ok())
                return {};
            graph.value(r).type = physicalType(graph, v, region.nchwc, block);
            return converted[v] = r;
        };
        for (NodeId id : region.nodes) {
            const Node n = graph.node(id);
            const Role r = role[id];
            std::vector<ValueId> inputs = n.inputs;
            for (std::size_t i : layoutInputs(graph, n, r)) {
                inputs[i] = convert(n.inputs[i], r == Role::Conv);
                if (!inputs[i].valid())
                    return Status::internal("layout-nhwc could not convert '" +
                                            graph.value(n.inputs[i]).name + "'");
            }
            std::string op = n.opType, domain = n.domain;
            std::vector<Attribute> attrs = n.attributes;
            const std::string prefix = region.nchwc ? "Nchwc" : "Nhwc";
            if (r == Role::Conv || r == Role::Pool || r == Role::Norm) {
                op = prefix + (r == Role::Conv ? "Conv" : n.opType);
                domain = kOpscopeDomain;
                if (region.nchwc)
                    attrs.push_back(Attribute::makeInt("block", block));
            } else if (r == Role::Concat) {
                std::erase_if(attrs, [](const Attribute &a) { return a.name == "axis"; });
                attrs.push_back(Attribute::makeInt("axis", region.nchwc ? 1 : 3));
            } else if (r == Role::Pad) {
                setPads(graph, n, inputs, attrs, physicalPads(*layoutPads(graph, n), region.nchwc));
            }
            NodeChain chain(graph, n.name);
            const ValueId out = chain.op(op, inputs, std::move(attrs), domain);
            if (!chain.ok())
                return chain.status();
            graph.value(out).type = physicalType(graph, n.outputs[0], region.nchwc, block);
            converted[n.outputs[0]] = out;
        }
        for (ValueId v : region.outputs) {
            std::vector<Attribute> attrs{Attribute::makeString("layout", layoutName)};
            NodeChain chain(graph, graph.value(v).name);
            const ValueId back =
                chain.op("ReorderOutput", {converted.at(v)}, std::move(attrs), kOpscopeDomain);
            OPSCOPE_TRY(chain.finish(v, back, {}));
        }
        eraseUnread(graph, region.nodes);
        for (std::size_t i = slotsBefore; i < graph.nodeSlots(); ++i)
            if (const NodeId id(static_cast<std::uint32_t>(i)); graph.node(id).alive) {
                record.replacement.push_back(id);
                record.replacementNames.push_back(graph.node(id).name);
            }
        context.recordMatch(std::move(record));
        changed = true;
    }
    // Conversions that meet their inverse cancel: ReorderInput(ReorderOutput(x)) is x.
    for (NodeId id : graph.nodeIds()) {
        const Node &in = graph.node(id);
        if (!isOpscopeOp(in, "ReorderInput"))
            continue;
        const NodeId p = graph.producer(in.inputs[0]);
        if (!p.valid() || !isOpscopeOp(graph.node(p), "ReorderOutput"))
            continue;
        const Node &out = graph.node(p);
        if (attrString(in, "layout") != attrString(out, "layout") ||
            graph.value(out.inputs[0]).type.shape != graph.value(in.outputs[0]).type.shape)
            continue;
        OPSCOPE_TRY(bypassNode(graph, id, out.inputs[0]));
        eraseUnread(graph, {p});
        changed = true;
    }
    if (changed)
        ensureOpset(model, kOpscopeDomain, 1);
    return changed;
}

namespace {

bool isLayoutOp(const Node &n)
{
    return n.domain == kOpscopeDomain && (n.opType == "ReorderInput" || n.opType == "ReorderOutput" ||
                                          n.opType.rfind("Nchwc", 0) == 0 || n.opType.rfind("Nhwc", 0) == 0);
}

// The NCHW type of a value held in a region's layout.
TypeInfo plainType(TypeInfo t, bool nchwc)
{
    if (!t.shape)
        return t;
    const std::vector<Dim> d = t.shape->dims;
    if (nchwc && d.size() == 5)
        t.shape->dims = {d[0], d[1].isKnown() && d[4].isKnown() ? Dim::known(d[1].value * d[4].value) : Dim{},
                         d[2], d[3]};
    else if (!nchwc && d.size() == 4)
        t.shape->dims = {d[0], d[3], d[1], d[2]};
    return t;
}

} // namespace

Expected<bool> stripLayouts(Graph &graph)
{
    Expected<std::vector<NodeId>> order = graph.topologicalOrder();
    if (!order)
        return order.status();
    std::map<ValueId, std::pair<ValueId, bool>> plain; // layout value → (NCHW value, was NCHWc)
    std::vector<NodeId> replaced;
    for (NodeId id : *order) {
        const Node n = graph.node(id);
        std::optional<bool> nchwc;
        for (ValueId v : n.inputs)
            if (v.valid() && plain.count(v))
                nchwc = plain[v].second;
        if (!isLayoutOp(n) && !nchwc)
            continue;
        replaced.push_back(id);
        if (n.opType == "ReorderInput") {
            plain[n.outputs[0]] = {n.inputs[0], attrString(n, "layout", "nchwc") == "nchwc"};
            continue;
        }
        if (n.opType == "ReorderOutput" && n.domain == kOpscopeDomain) {
            OPSCOPE_TRY(replaceValue(graph, n.outputs[0], plain.at(n.inputs[0]).first));
            continue;
        }
        if (!nchwc)
            nchwc = n.opType.rfind("Nchwc", 0) == 0; // a first convolution reading plain NCHW
        std::vector<ValueId> inputs = n.inputs;
        for (ValueId &v : inputs)
            if (v.valid() && plain.count(v))
                v = plain[v].first;
        std::string op = n.opType, domain = n.domain;
        std::vector<Attribute> attrs = n.attributes;
        if (isLayoutOp(n)) {
            op = op.substr(op.rfind("Nchwc", 0) == 0 ? 5
                                                     : 4); // Conv, MaxPool, AveragePool, BatchNormalization
            std::erase_if(attrs, [](const Attribute &a) { return a.name == "block"; });
            const bool fused = std::any_of(attrs.begin(), attrs.end(), [](const Attribute &a) {
                return a.name.rfind("activation", 0) == 0;
            });
            if (op == "Conv" && fused)
                op = "FusedConv";
            else
                domain.clear();
        }
        if (isOp(n, "Concat")) {
            std::erase_if(attrs, [](const Attribute &a) { return a.name == "axis"; });
            attrs.push_back(Attribute::makeInt("axis", 1));
        }
        if (isOp(n, "Pad")) {
            const auto pads = n.inputs.size() > 1 ? constantInts(graph, n.inputs[1])
                                                  : std::optional(attrInts(n, "pads"));
            if (!pads || pads->size() != (*nchwc ? 10u : 8u))
                return Status::internal("layout Pad '" + n.name + "' has pads that are not its layout's");
            setPads(graph, n, inputs, attrs, plainPads(*pads, *nchwc));
        }
        NodeChain chain(graph, n.name);
        const ValueId out = chain.op(op, inputs, std::move(attrs), domain);
        if (!chain.ok())
            return chain.status();
        graph.value(out).type = plainType(graph.value(n.outputs[0]).type, *nchwc);
        plain[n.outputs[0]] = {out, *nchwc};
    }
    eraseUnread(graph, replaced);
    return !replaced.empty();
}

} // namespace opscope::passes
