#include "ir/summary.h"

#include <algorithm>
#include <set>

namespace opscope {

ValueSummary summarizeValue(const Value &value)
{
    ValueSummary s;
    s.name = value.name;
    const TypeInfo &t = value.type;
    if (t.kind != TypeInfo::Kind::Tensor) {
        s.dtype = t.toString();
        return s;
    }
    s.dtype = std::string(dataTypeName(t.elemType));
    s.rankKnown = t.shape.has_value();
    if (t.shape)
        for (const Dim &d : t.shape->dims) {
            // A name libonnx's inference made up ("unk__0") says "unknown", as Shape::toString prints it.
            s.dims.push_back(d.isKnown()                            ? std::to_string(d.value)
                             : d.isSymbolic() && !d.isInvented() ? d.symbol
                                                                    : std::string("?"));
            s.values.push_back(d.isKnown() ? d.value : -1);
        }
    return s;
}

namespace {

void addParameters(const Tensor &t, ModelSummary &s)
{
    s.parameterCount += static_cast<std::uint64_t>(t.elementCount());
    s.parameterBytes += t.byteSize();
    if (t.external)
        s.externalBytes += t.byteSize();
}

// `inputSymbols`: the dim names the main graph's inputs declare. An exporter's "unknown" name on an
// input ("unk__314", tf2onnx) is the model's own symbol, which inference then carries through the
// graph: such shapes are symbolic, as a named batch dim is — only names inference made up itself
// for what it could not compute are unknown (one unnamed batch dim counted all 65 values of a
// wake-word model as unknown).
void walk(const Graph &g, ModelSummary &s, std::vector<InitializerSummary> &inits,
          const std::set<std::string> &inputSymbols)
{
    const auto symbolic = [&](const Dim &d) {
        return d.isKnown() || (d.isSymbolic() && (!d.isInvented() || inputSymbols.count(d.symbol)));
    };
    for (ValueId v : g.initializers()) {
        const Value &value = g.value(v);
        const Tensor &t = *value.initializer;
        addParameters(t, s);
        inits.push_back(
            {value.name, std::string(dataTypeName(t.dtype)), t.dims, t.byteSize(), t.external.has_value()});
    }
    for (NodeId id : g.nodeIds()) {
        const Node &n = g.node(id);
        const bool onnxDomain = n.domain.empty() || n.domain == "ai.onnx";
        ++s.opHistogram[opKey(n)];
        for (ValueId out : n.outputs) {
            if (!out.valid())
                continue;
            const TypeInfo &t = g.value(out).type;
            if (t.kind == TypeInfo::Kind::Tensor && t.shape && t.shape->isStatic())
                ++s.valuesStatic;
            else if (t.kind == TypeInfo::Kind::Tensor && t.shape &&
                     std::all_of(t.shape->dims.begin(), t.shape->dims.end(), symbolic))
                ++s.valuesSymbolic;
            else if (t.kind == TypeInfo::Kind::Tensor || t.kind == TypeInfo::Kind::Unknown) {
                ++s.valuesUnknown;
                s.valuesUnknownRank += !t.shape;
                if (s.unknownExamples.size() < 5) // which ones: "1 unknown" alone is no lead
                    s.unknownExamples.push_back(g.value(out).name);
            }
            else
                ++s.valuesStatic; // sequences/maps/optionals: no shape to know
        }
        for (const Attribute &a : n.attributes) {
            if (n.opType == "Constant" && onnxDomain && a.type == AttributeType::Tensor) {
                addParameters(a.t, s);
                ++s.constantTensorCount;
                // Named by the value it defines, as a reader of it sees it.
                const ValueId out = n.outputs.empty() ? ValueId{} : n.outputs.front();
                inits.push_back({out.valid() ? g.value(out).name : n.name, std::string(dataTypeName(a.t.dtype)),
                                 a.t.dims, a.t.byteSize(), a.t.external.has_value(), true});
            }
            if (a.g)
                walk(*a.g, s, inits, inputSymbols);
            for (const ClonePtr<Graph> &sub : a.graphs)
                if (sub)
                    walk(*sub, s, inits, inputSymbols);
        }
    }
}

} // namespace

ModelSummary summarizeModel(const Model &model, std::size_t topN)
{
    ModelSummary s;
    s.producer = model.producerName + (model.producerVersion.empty() ? "" : " " + model.producerVersion);
    s.irVersion = model.irVersion;
    s.opsets = model.opsets;
    const Graph &g = model.graph;
    s.graphName = g.name();
    for (ValueId v : g.inputs())
        if (!g.value(v).initializer)
            s.inputs.push_back(summarizeValue(g.value(v)));
    for (ValueId v : g.outputs())
        s.outputs.push_back(summarizeValue(g.value(v)));
    s.nodeCount = g.nodeCount();
    s.nodeCountWithSubgraphs = g.nodeCountWithSubgraphs();
    s.functionCount = model.functions.size();

    std::vector<InitializerSummary> inits;
    std::set<std::string> inputSymbols;
    for (ValueId v : g.inputs())
        if (const auto &shape = g.value(v).type.shape)
            for (const Dim &d : shape->dims)
                if (d.isSymbolic())
                    inputSymbols.insert(d.symbol);
    walk(g, s, inits, inputSymbols);
    s.initializerCount = inits.size() - s.constantTensorCount;
    const std::size_t keep = std::min(topN, inits.size());
    std::partial_sort(inits.begin(), inits.begin() + static_cast<std::ptrdiff_t>(keep), inits.end(),
                      [](const InitializerSummary &a, const InitializerSummary &b) {
                          return a.bytes != b.bytes ? a.bytes > b.bytes : a.name < b.name;
                      });
    inits.resize(keep);
    s.largestInitializers = std::move(inits);
    return s;
}

std::string opKey(const Node &node)
{
    return node.domain.empty() || node.domain == "ai.onnx" ? node.opType : node.domain + "::" + node.opType;
}

std::map<std::string, std::size_t> opHistogram(const Graph &graph)
{
    std::map<std::string, std::size_t> counts;
    const auto add = [&counts](const Graph &g, const auto &self) -> void {
        for (NodeId id : g.nodeIds()) {
            const Node &n = g.node(id);
            ++counts[opKey(n)];
            for (const Attribute &a : n.attributes) {
                if (a.g)
                    self(*a.g, self);
                for (const ClonePtr<Graph> &sub : a.graphs)
                    if (sub)
                        self(*sub, self);
            }
        }
    };
    add(graph, add);
    return counts;
}

} // namespace opscope
