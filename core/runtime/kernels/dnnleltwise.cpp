#include "runtime/kernels/dnnleltwise.h"

#include "runtime/kernels/dnnlengine.h"

#include <limits>
#include <map>
#include <unordered_map>
#include <vector>
#include <tuple>

namespace opscope::kernels {

namespace {

// A primitive with its source and destination memory objects and argument map, made once: an
// LSTM step runs five 128-value activations, and creating memory objects and the argument map
// per call (malloc, memory descriptors) cost more than the activation itself.
struct CachedPrimitive
{
    dnnl::primitive primitive;
    dnnl::memory in, out;
    std::unordered_map<int, dnnl::memory> args;
};

// Runs the primitive cached under `key` (made by `make` on a miss, its memory laid out as
// `describe()`) from src to dst. Per thread: the executor runs queues on several threads, and
// primitives are cheap to keep; many shapes (dynamic sizes) start the cache over rather than
// grow it. false: oneDNN declined.
template<class Key, class Describe, class Make>
bool runCached(std::map<Key, CachedPrimitive> &cache, const Key &key, Describe describe, const float *src,
               float *dst, Make make)
{
    try {
        auto it = cache.find(key);
        if (it == cache.end()) {
            if (cache.size() > 256)
                cache.clear();
            const dnnl::memory::desc md = describe();
            CachedPrimitive c{make(md), dnnl::memory(md, dnnlEngine(), DNNL_MEMORY_NONE),
                              dnnl::memory(md, dnnlEngine(), DNNL_MEMORY_NONE), {}};
            c.args = {{DNNL_ARG_SRC, c.in}, {DNNL_ARG_DST, c.out}};
            it = cache.emplace(key, std::move(c)).first;
        }
        CachedPrimitive &c = it->second;
        c.in.set_data_handle(const_cast<float *>(src));
        c.out.set_data_handle(dst);
        dnnl::stream &s = dnnlStream();
        c.primitive.execute(s, c.args);
        s.wait();
    } catch (const dnnl::error &) {
        return false;
    }
    return true;
}

} // namespace

bool dnnlEltwise(FastEltwise op, const float *src, float *dst, std::int64_t n, float alpha)
{
    if (n <= 0)
        return true;
    using A = dnnl::algorithm;
    const A alg = op == FastEltwise::Sigmoid   ? A::eltwise_logistic
                  : op == FastEltwise::Tanh    ? A::eltwise_tanh
                  : op == FastEltwise::Swish   ? A::eltwise_swish
                  : op == FastEltwise::GeluErf ? A::eltwise_gelu_erf
                  : op == FastEltwise::Exp     ? A::eltwise_exp
                  : op == FastEltwise::Elu     ? A::eltwise_elu
                  : op == FastEltwise::SoftPlus ? A::eltwise_soft_relu
                                               : A::eltwise_gelu_tanh;
    thread_local std::map<std::tuple<int, std::int64_t, float>, CachedPrimitive> cache;
    const auto describe = [n] {
        return dnnl::memory::desc({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    };
    // oneDNN's exp (and what is built on it) turns NaN into inf; NaN must stay NaN. The inputs'
    // NaNs are found first (src may be dst) and restored after.
    bool anyNan = false;
    for (std::int64_t i = 0; i < n; ++i)
        anyNan |= src[i] != src[i];
    std::vector<std::int64_t> nanAt;
    if (anyNan)
        for (std::int64_t i = 0; i < n; ++i)
            if (src[i] != src[i])
                nanAt.push_back(i);
    const bool done =
        runCached(cache, std::make_tuple(int(op), n, alpha), describe, src, dst, [&](const dnnl::memory::desc &md) {
            const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, alg, md, alpha, 0.0f);
            return dnnl::primitive(
                dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(desc, dnnlEngine())));
        });
    for (std::int64_t i : nanAt)
        dst[i] = std::numeric_limits<float>::quiet_NaN();
    return done;
}

bool dnnlSoftmax(const float *src, float *dst, std::int64_t outer, std::int64_t len, std::int64_t inner,
                 bool log)
{
    if (outer <= 0 || len <= 0 || inner <= 0)
        return false;
    thread_local std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, bool>, CachedPrimitive> cache;
    const auto describe = [=] {
        return dnnl::memory::desc({outer, len, inner}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::abc);
    };
    return runCached(cache, std::make_tuple(outer, len, inner, log), describe, src, dst,
                     [&](const dnnl::memory::desc &md) {
        const auto prop = dnnl::prop_kind::forward_inference;
        if (log)
            return dnnl::primitive(dnnl::logsoftmax_forward(dnnl::logsoftmax_forward::primitive_desc(
                dnnl::logsoftmax_forward::desc(prop, md, 1), dnnlEngine())));
        return dnnl::primitive(dnnl::softmax_forward(
            dnnl::softmax_forward::primitive_desc(dnnl::softmax_forward::desc(prop, md, 1), dnnlEngine())));
    });
}

} // namespace opscope::kernels
