#include "modelmutator.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <onnx/onnx_pb.h>
#include <random>
#include <string>
#include <vector>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t *data, std::size_t size, std::size_t maxSize);

namespace opscope::fuzz {
namespace {

using Rng = std::mt19937_64;

constexpr std::int64_t interestingInts[] = {0,  1,  -1, 2,  3,  -2, 4,    7,    64,         1 << 16,
                                            (std::int64_t(1) << 31) - 1,  -(std::int64_t(1) << 31),
                                            std::int64_t(1) << 40,        std::numeric_limits<std::int64_t>::max(),
                                            std::numeric_limits<std::int64_t>::min()};
constexpr float interestingFloats[] = {0.f, -0.f, 1.f, -1.f, 0.5f, 1e-30f, 1e30f,
                                       std::numeric_limits<float>::infinity(),
                                       std::numeric_limits<float>::quiet_NaN()};
constexpr const char *attributeNames[] = {
    "strides", "pads",  "kernel_shape", "dilations", "group", "axis",    "axes",   "perm",
    "split",   "num_outputs", "equation", "to",       "blocksize", "mode", "keepdims", "transA",
    "transB",  "alpha", "beta",         "epsilon",   "value", "then_branch", "else_branch", "body",
    "direction", "hidden_size", "auto_pad", "ceil_mode", "noop_with_empty_axes", "k", "largest", "sorted"};
constexpr const char *opTypes[] = {
    "Conv",   "MaxPool",  "AveragePool", "Relu",    "Add",       "Mul",     "Div",     "Mod",     "MatMul",
    "Gemm",   "Reshape",  "Transpose",   "Concat",  "Split",     "Slice",   "Gather",  "Einsum",  "Resize",
    "If",     "Loop",     "Scan",        "Constant", "Identity", "Cast",    "Softmax", "ReduceMean",
    "BatchNormalization", "LayerNormalization", "SplitToSequence", "DepthToSpace", "Pad",  "Expand",
    "Tile",   "TopK",     "NonZero",     "Where",   "Range",     "ConstantOfShape", "Squeeze", "Unsqueeze",
    "Flatten", "ConvTranspose", "QLinearConv", "ConvInteger", "DequantizeLinear", "QuantizeLinear",
    "DynamicQuantizeLinear", "MatMulInteger", "GRU", "LSTM", "CumSum", "Trilu", "GatherElements",
    "ScatterND", "OneHot", "Shape", "Size", "ArgMax", "LRN", "InstanceNormalization"};
constexpr const char *equations[] = {"ij,jk->ik", "...ii->...i", "ij->ji", "i,i", "ij,jk->ik->", "->",
                                     "",          "..,..",       "bij,bjk->bik", "ii", "i(j)", "abc,cd->abd"};
constexpr const char *locations[] = {"w.bin", "missing.bin", "../w.bin", "/etc/hostname", "sub", "w.bin/x",
                                     "", ".", "sub/../w.bin"};

template<class T, std::size_t N>
const T &pick(Rng &rng, const T (&items)[N])
{
    return items[std::uniform_int_distribution<std::size_t>(0, N - 1)(rng)];
}

std::size_t below(Rng &rng, std::size_t n)
{
    return n ? std::uniform_int_distribution<std::size_t>(0, n - 1)(rng) : 0;
}

struct Places
{
    std::vector<onnx::GraphProto *> graphs;
    std::vector<onnx::NodeProto *> nodes;
    std::vector<onnx::ValueInfoProto *> values;
    std::vector<onnx::TensorProto *> tensors;
    std::vector<std::string> names;
};

void collect(onnx::GraphProto &g, Places &p)
{
    p.graphs.push_back(&g);
    for (auto &vi : *g.mutable_input())
        p.values.push_back(&vi), p.names.push_back(vi.name());
    for (auto &vi : *g.mutable_output())
        p.values.push_back(&vi);
    for (auto &vi : *g.mutable_value_info())
        p.values.push_back(&vi);
    for (auto &t : *g.mutable_initializer())
        p.tensors.push_back(&t), p.names.push_back(t.name());
    for (auto &n : *g.mutable_node()) {
        p.nodes.push_back(&n);
        for (const auto &o : n.output())
            p.names.push_back(o);
        for (auto &a : *n.mutable_attribute()) {
            if (a.has_t())
                p.tensors.push_back(a.mutable_t());
            if (a.has_g())
                collect(*a.mutable_g(), p);
            for (auto &sub : *a.mutable_graphs())
                collect(sub, p);
        }
    }
}

void randomAttributeValue(Rng &rng, onnx::AttributeProto &a)
{
    a.clear_ints();
    a.clear_floats();
    switch (below(rng, 6)) {
    case 0:
        a.set_type(onnx::AttributeProto::INTS);
        for (std::size_t k = 0, n = below(rng, 5); k < n; ++k)
            a.add_ints(pick(rng, interestingInts));
        break;
    case 1: a.set_type(onnx::AttributeProto::INT), a.set_i(pick(rng, interestingInts)); break;
    case 2: a.set_type(onnx::AttributeProto::FLOAT), a.set_f(pick(rng, interestingFloats)); break;
    case 3: a.set_type(onnx::AttributeProto::STRING), a.set_s(pick(rng, equations)); break;
    case 4:
        a.set_type(onnx::AttributeProto::FLOATS);
        for (std::size_t k = 0, n = below(rng, 4); k < n; ++k)
            a.add_floats(pick(rng, interestingFloats));
        break;
    default: a.set_type(static_cast<onnx::AttributeProto::AttributeType>(below(rng, 15))); break;
    }
}

void mutateNode(Rng &rng, onnx::NodeProto &n, const Places &p)
{
    switch (below(rng, 9)) {
    case 0: // an existing attribute gets other values (same name, possibly another type)
        if (n.attribute_size()) {
            auto &a = *n.mutable_attribute(int(below(rng, std::size_t(n.attribute_size()))));
            if (a.type() == onnx::AttributeProto::INTS && a.ints_size() && below(rng, 2))
                a.set_ints(int(below(rng, std::size_t(a.ints_size()))), pick(rng, interestingInts));
            else
                randomAttributeValue(rng, a);
            break;
        }
        [[fallthrough]];
    case 1: {
        auto *a = n.add_attribute();
        a->set_name(pick(rng, attributeNames));
        randomAttributeValue(rng, *a);
        break;
    }
    case 2:
        if (n.attribute_size())
            n.mutable_attribute()->DeleteSubrange(int(below(rng, std::size_t(n.attribute_size()))), 1);
        break;
    case 3: n.set_op_type(pick(rng, opTypes)); break;
    case 4: // rewire an input to another name, the empty name or nothing at all
        if (n.input_size()) {
            const int i = int(below(rng, std::size_t(n.input_size())));
            const std::size_t r = below(rng, 4);
            n.set_input(i, r == 0 ? std::string() : r == 1 ? "nowhere" : p.names.empty() ? "" : p.names[below(rng, p.names.size())]);
            break;
        }
        [[fallthrough]];
    case 5: n.add_input(p.names.empty() ? "" : p.names[below(rng, p.names.size())]); break;
    case 6:
        if (n.input_size())
            n.mutable_input()->RemoveLast();
        break;
    case 7: n.add_output(below(rng, 2) && n.output_size() ? n.output(0) : "extra" + std::to_string(below(rng, 100))); break;
    default: n.set_domain(below(rng, 2) ? "" : below(rng, 2) ? "com.microsoft" : "local"); break;
    }
}

void mutateValue(Rng &rng, onnx::ValueInfoProto &vi)
{
    auto *tt = vi.mutable_type()->mutable_tensor_type();
    switch (below(rng, 4)) {
    case 0: tt->set_elem_type(int(below(rng, 25))); break;
    case 1: tt->clear_shape(); break;
    case 2: tt->mutable_shape()->add_dim()->set_dim_value(pick(rng, interestingInts)); break;
    default:
        if (tt->shape().dim_size()) {
            auto *d = tt->mutable_shape()->mutable_dim(int(below(rng, std::size_t(tt->shape().dim_size()))));
            if (below(rng, 3) == 0)
                d->set_dim_param("n");
            else
                d->set_dim_value(pick(rng, interestingInts));
        }
        break;
    }
}

void mutateTensor(Rng &rng, onnx::TensorProto &t, MutationFocus focus)
{
    const std::size_t kinds = focus == MutationFocus::ExternalData ? 8 : 5;
    switch (below(rng, kinds)) {
    case 0:
        if (t.dims_size())
            t.set_dims(int(below(rng, std::size_t(t.dims_size()))), pick(rng, interestingInts));
        else
            t.add_dims(pick(rng, interestingInts));
        break;
    case 1: t.set_data_type(int(below(rng, 25))); break;
    case 2:
        if (t.has_raw_data())
            t.mutable_raw_data()->resize(below(rng, t.raw_data().size() + 9));
        break;
    case 3: t.clear_dims(); break;
    case 4: t.add_float_data(pick(rng, interestingFloats)); break;
    default: { // external data: where, from which offset, how long
        t.set_data_location(onnx::TensorProto::EXTERNAL);
        t.clear_raw_data();
        t.clear_external_data();
        auto add = [&](const char *key, const std::string &value) {
            auto *kv = t.add_external_data();
            kv->set_key(key);
            kv->set_value(value);
        };
        add("location", pick(rng, locations));
        if (below(rng, 2))
            add("offset", below(rng, 4) ? std::to_string(below(rng, 64)) : "12abc");
        if (below(rng, 2))
            add("length", std::to_string(below(rng, 3) ? below(rng, 64) : std::uint64_t(1) << 40));
        break;
    }
    }
}

// Wraps a copy of an existing graph as an If branch or Loop body, with or without declared inputs,
// so subgraph scoping, captures and nesting get exercised.
void addControlFlow(Rng &rng, onnx::GraphProto &into, const Places &p)
{
    const onnx::GraphProto &source = *p.graphs[below(rng, p.graphs.size())];
    if (source.ByteSizeLong() > 4096)
        return;
    auto *n = into.add_node();
    const bool loop = below(rng, 2);
    n->set_op_type(loop ? "Loop" : "If");
    n->add_input(p.names.empty() ? "c" : p.names[below(rng, p.names.size())]);
    if (loop)
        n->add_input("");
    n->add_output("cf" + std::to_string(below(rng, 1000)));
    auto add = [&](const char *name) {
        auto *a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::GRAPH);
        *a->mutable_g() = source;
        if (below(rng, 2))
            a->mutable_g()->clear_input();
    };
    if (loop) {
        add("body");
    } else {
        add("then_branch");
        if (below(rng, 4))
            add("else_branch");
    }
}

void addFunction(Rng &rng, onnx::ModelProto &m, const Places &p)
{
    auto *f = m.add_functions();
    f->set_domain("local");
    f->set_name(below(rng, 2) ? "F" : "G");
    f->add_input("a");
    f->add_output("b");
    auto *n = f->add_node();
    n->set_op_type(below(rng, 2) ? "F" : below(rng, 2) ? "G" : "Relu");
    n->set_domain(n->op_type() == "Relu" ? "" : "local");
    n->add_input("a");
    n->add_output("b");
    f->add_opset_import()->set_version(13);
    if (!p.nodes.empty()) {
        onnx::NodeProto *caller = p.nodes[below(rng, p.nodes.size())];
        caller->set_domain("local");
        caller->set_op_type(f->name());
    }
    auto *op = m.add_opset_import();
    op->set_domain("local");
    op->set_version(1);
}

} // namespace

std::size_t mutateModel(std::uint8_t *data, std::size_t size, std::size_t maxSize, unsigned seed,
                        MutationFocus focus)
{
    Rng rng(seed);
    onnx::ModelProto m;
    if (below(rng, 8) == 0 || !m.ParseFromArray(data, int(size)))
        return LLVMFuzzerMutate(data, size, maxSize);
    for (std::size_t k = 0, edits = 1 + below(rng, 3); k < edits; ++k) {
        Places p;
        collect(*m.mutable_graph(), p);
        for (auto &f : *m.mutable_functions())
            for (auto &n : *f.mutable_node())
                p.nodes.push_back(&n);
        const std::size_t what = focus == MutationFocus::ExternalData ? 3 : below(rng, 12);
        if (what <= 3 && !p.nodes.empty() && what < 3)
            mutateNode(rng, *p.nodes[below(rng, p.nodes.size())], p);
        else if (what == 3 && !p.tensors.empty())
            mutateTensor(rng, *p.tensors[below(rng, p.tensors.size())], focus);
        else if (what <= 5 && !p.values.empty())
            mutateValue(rng, *p.values[below(rng, p.values.size())]);
        else if (what == 6 && m.opset_import_size())
            m.mutable_opset_import(0)->set_version(std::int64_t(below(rng, 26)));
        else if (what == 7)
            addControlFlow(rng, *p.graphs[below(rng, p.graphs.size())], p);
        else if (what == 8)
            addFunction(rng, m, p);
        else if (what == 9 && m.graph().node_size() > 1) // out of topological order
            m.mutable_graph()->mutable_node()->SwapElements(0, m.graph().node_size() - 1);
        else if (what == 10 && !p.nodes.empty())
            *p.graphs.front()->add_node() = *p.nodes[below(rng, p.nodes.size())];
        else if (!p.tensors.empty())
            mutateTensor(rng, *p.tensors[below(rng, p.tensors.size())], focus);
    }
    std::string out;
    if (!m.SerializeToString(&out) || out.size() > maxSize)
        return LLVMFuzzerMutate(data, size, maxSize);
    std::memcpy(data, out.data(), out.size());
    return out.size();
}

} // namespace opscope::fuzz
