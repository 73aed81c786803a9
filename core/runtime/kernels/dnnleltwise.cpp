#include "runtime/kernels/dnnleltwise.h"

#include "runtime/kernels/dnnlengine.h"

#include <map>
#include <tuple>

namespace opscope::kernels {

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
    // Per thread: the executor runs queues on several threads, and primitives are cheap to keep.
    thread_local std::map<std::tuple<int, std::int64_t, float>, dnnl::eltwise_forward> cache;
    try {
        const auto key = std::make_tuple(int(op), n, alpha);
        auto it = cache.find(key);
        if (it == cache.end()) {
            if (cache.size() > 256)
                cache.clear(); // many shapes (dynamic sizes): start over rather than grow
            const dnnl::memory::desc md({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
            const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, alg, md, alpha, 0.0f);
            it =
                cache
                    .emplace(key,
                             dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(desc, dnnlEngine())))
                    .first;
        }
        const dnnl::memory::desc md({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
        dnnl::memory in(md, dnnlEngine(), const_cast<float *>(src)), out(md, dnnlEngine(), dst);
        dnnl::stream s(dnnlEngine());
        it->second.execute(s, {{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, out}});
        s.wait();
    } catch (const dnnl::error &) {
        return false;
    }
    return true;
}

bool dnnlSoftmax(const float *src, float *dst, std::int64_t outer, std::int64_t len, std::int64_t inner,
                 bool log)
{
    if (outer <= 0 || len <= 0 || inner <= 0)
        return false;
    thread_local std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, bool>, dnnl::primitive> cache;
    const dnnl::memory::desc md({outer, len, inner}, dnnl::memory::data_type::f32,
                                dnnl::memory::format_tag::abc);
    try {
        const auto key = std::make_tuple(outer, len, inner, log);
        auto it = cache.find(key);
        if (it == cache.end()) {
            if (cache.size() > 256)
                cache.clear();
            const auto prop = dnnl::prop_kind::forward_inference;
            dnnl::primitive p =
                log ? dnnl::primitive(dnnl::logsoftmax_forward(dnnl::logsoftmax_forward::primitive_desc(
                          dnnl::logsoftmax_forward::desc(prop, md, 1), dnnlEngine())))
                    : dnnl::primitive(dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
                          dnnl::softmax_forward::desc(prop, md, 1), dnnlEngine())));
            it = cache.emplace(key, std::move(p)).first;
        }
        dnnl::memory in(md, dnnlEngine(), const_cast<float *>(src)), out(md, dnnlEngine(), dst);
        dnnl::stream s(dnnlEngine());
        it->second.execute(s, {{DNNL_ARG_SRC, in}, {DNNL_ARG_DST, out}});
        s.wait();
    } catch (const dnnl::error &) {
        return false;
    }
    return true;
}

} // namespace opscope::kernels
