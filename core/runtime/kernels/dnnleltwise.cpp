#include "runtime/kernels/dnnleltwise.h"

#include "runtime/kernels/dnnlengine.h"

#include <map>
#include <tuple>

namespace opscope::kernels {

namespace {

// Runs the primitive cached under `key` (made by `make` on a miss) from src to dst, both laid out
// as `md`. Per thread: the executor runs queues on several threads, and primitives are cheap to
// keep; many shapes (dynamic sizes) start the cache over rather than grow it. false: oneDNN
// declined.
template<class Key, class Make>
bool runCached(std::map<Key, dnnl::primitive> &cache, const Key &key, const dnnl::memory::desc &md,
               const float *src, float *dst, Make make)
{
    try {
        auto it = cache.find(key);
        if (it == cache.end()) {
            if (cache.size() > 256)
                cache.clear();
            it = cache.emplace(key, make()).first;
        }
        dnnl::memory in(md, dnnlEngine(), const_cast<float *>(src)), out(md, dnnlEngine(), dst);
        dnnl::stream &s = dnnlStream();
        it->second.execute(s, {{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, out}});
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
                                               : A::eltwise_gelu_tanh;
    thread_local std::map<std::tuple<int, std::int64_t, float>, dnnl::primitive> cache;
    const dnnl::memory::desc md({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    return runCached(cache, std::make_tuple(int(op), n, alpha), md, src, dst, [&] {
        const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, alg, md, alpha, 0.0f);
        return dnnl::primitive(
            dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(desc, dnnlEngine())));
    });
}

bool dnnlSoftmax(const float *src, float *dst, std::int64_t outer, std::int64_t len, std::int64_t inner,
                 bool log)
{
    if (outer <= 0 || len <= 0 || inner <= 0)
        return false;
    thread_local std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, bool>, dnnl::primitive> cache;
    const dnnl::memory::desc md({outer, len, inner}, dnnl::memory::data_type::f32,
                                dnnl::memory::format_tag::abc);
    return runCached(cache, std::make_tuple(outer, len, inner, log), md, src, dst, [&] {
        const auto prop = dnnl::prop_kind::forward_inference;
        if (log)
            return dnnl::primitive(dnnl::logsoftmax_forward(dnnl::logsoftmax_forward::primitive_desc(
                dnnl::logsoftmax_forward::desc(prop, md, 1), dnnlEngine())));
        return dnnl::primitive(dnnl::softmax_forward(
            dnnl::softmax_forward::primitive_desc(dnnl::softmax_forward::desc(prop, md, 1), dnnlEngine())));
    });
}

} // namespace opscope::kernels
