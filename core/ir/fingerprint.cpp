#include "ir/fingerprint.h"

#include <bit>
#include <cstring>

namespace opscope {
namespace {

class Hasher
{
public:
    void bytes(const void *data, std::size_t n)
    {
        const auto *p = static_cast<const unsigned char *>(data);
        for (std::size_t i = 0; i < n; ++i) {
            m_h ^= p[i];
            m_h *= 0x100000001b3ULL; // FNV-1a 64
        }
    }
    void u64(std::uint64_t v) { bytes(&v, sizeof v); }
    void str(const std::string &s)
    {
        u64(s.size());
        bytes(s.data(), s.size());
    }
    std::uint64_t value() const { return m_h; }

    void type(const TypeInfo &t)
    {
        u64(static_cast<std::uint64_t>(t.kind));
        u64(static_cast<std::uint64_t>(t.elemType));
        u64(static_cast<std::uint64_t>(t.keyType));
        u64(t.shape ? t.shape->rank() + 1 : 0);
        if (t.shape)
            for (const Dim &d : t.shape->dims) {
                u64(static_cast<std::uint64_t>(d.value));
                str(d.symbol);
            }
        if (t.inner)
            type(*t.inner);
    }

    void tensor(const Tensor &t)
    {
        u64(static_cast<std::uint64_t>(t.dtype));
        u64(t.dims.size());
        for (std::int64_t d : t.dims)
            u64(static_cast<std::uint64_t>(d));
        u64(t.data ? t.data->id() : 0);
        u64(reinterpret_cast<std::uintptr_t>(t.strings.get()));
    }

    void attribute(const Attribute &a)
    {
        str(a.name);
        u64(static_cast<std::uint64_t>(a.type));
        str(a.refAttrName);
        std::uint32_t fbits = std::bit_cast<std::uint32_t>(a.f);
        u64(fbits);
        u64(static_cast<std::uint64_t>(a.i));
        str(a.s);
        tensor(a.t);
        if (a.g)
            graph(*a.g);
        tensor(a.sparse.values);
        tensor(a.sparse.indices);
        type(a.tp);
        for (float f : a.floats)
            u64(std::bit_cast<std::uint32_t>(f));
        for (std::int64_t v : a.ints)
            u64(static_cast<std::uint64_t>(v));
        for (const std::string &s : a.strings)
            str(s);
        for (const Tensor &t : a.tensors)
            tensor(t);
        for (const ClonePtr<Graph> &g : a.graphs)
            if (g)
                graph(*g);
        for (const TypeInfo &t : a.typeProtos)
            type(t);
    }

    void graph(const Graph &g)
    {
        str(g.name());
        const auto name = [&g](ValueId v) { return v.valid() ? g.value(v).name : std::string(); };
        for (ValueId v : g.inputs()) {
            str(name(v));
            type(g.value(v).type);
        }
        for (ValueId v : g.outputs())
            str(name(v));
        for (ValueId v : g.initializers()) {
            str(name(v));
            tensor(*g.value(v).initializer);
        }
        for (NodeId id : g.nodeIds()) {
            const Node &n = g.node(id);
            str(n.opType);
            str(n.domain);
            str(n.name);
            u64(n.inputs.size());
            for (ValueId v : n.inputs)
                str(name(v));
            u64(n.outputs.size());
            for (ValueId v : n.outputs) {
                str(name(v));
                if (v.valid())
                    type(g.value(v).type);
            }
            for (const Attribute &a : n.attributes)
                attribute(a);
        }
    }

private:
    std::uint64_t m_h = 0xcbf29ce484222325ULL;
};

} // namespace

std::uint64_t fingerprint(const Graph &graph)
{
    Hasher h;
    h.graph(graph);
    return h.value();
}

std::uint64_t fingerprint(const Model &model)
{
    Hasher h;
    for (const OpsetImport &o : model.opsets) {
        h.str(o.domain);
        h.u64(static_cast<std::uint64_t>(o.version));
    }
    h.graph(model.graph);
    for (const Function &f : model.functions) {
        h.str(f.domain);
        h.str(f.name);
        h.graph(f.body);
    }
    return h.value();
}

} // namespace opscope
