#pragma once
// Activations whose scalar libm calls (exp, erf, tanh per element) dominate run through oneDNN's
// eltwise and softmax primitives instead, which vectorizes them with its own approximations (within a few
// ulp).

#include <cstdint>

namespace opscope {
class KernelContext;
class Status;
} // namespace opscope

namespace opscope::kernels {

enum class FastEltwise
{
    Sigmoid,
    Tanh,
    Swish,    // x·Sigmoid(alpha·x)
    GeluErf,  // 0.5·x·(1 + erf(x/√2))
    GeluTanh, // the tanh approximation
    Exp,
    Elu,      // alpha·(exp(x) − 1) below 0
    SoftPlus, // log(1 + exp(x))
};

// dst[i] = f(src[i]) for n float32 values (src may be dst). false: oneDNN could not do it (the
// caller computes it itself). Primitives are cached per thread by (op, n, alpha).
bool dnnlEltwise(FastEltwise op, const float *src, float *dst, std::int64_t n, float alpha = 0.0f);

// The kernel-level form: a float32 input 0 of 64 or more values into output 0 through oneDNN;
// true when done (or when allocating the output failed: then *status says so). false: the
// caller's own loop writes the output.
bool fastEltwise(KernelContext &ctx, FastEltwise op, float alpha = 0.0f, Status *status = nullptr);

// Softmax (or LogSoftmax) of float32 data viewed as [outer, len, inner] over the middle axis, through
// oneDNN's vectorized, threaded primitive (cached per thread). false: do it yourself.
bool dnnlSoftmax(const float *src, float *dst, std::int64_t outer, std::int64_t len, std::int64_t inner,
                 bool log);

} // namespace opscope::kernels
