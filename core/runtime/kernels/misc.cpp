// Einsum and the loss ops (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss).

#include "onnx/schemacheck.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernelutil.h"

#include <map>
#include <optional>

namespace opscope {
namespace kernels {
namespace {

// Two float32 operands without repeated or broadcast labels (what attention and bilinear layers
// spell with Einsum: "bhqd,bhkd->bhqk", "bij,bjk->bik", "nc,kc->nk") as a batched GEMM: labels
// in both operands and the output are batch, in both operands only are summed (K), in one operand
// and the output are M or N. Operands are permuted to [batch, M, K] and [batch, K, N] only where
// their layout is not already a (transposed) GEMM operand. Direct summation, below, costs one
// multiply-add per point of the whole label space with index arithmetic: 670x ONNX Runtime on
// an attention score product. nullopt: the equation is not of this form.
std::optional<Status> einsumAsGemm(KernelContext &ctx, const std::vector<std::string> &terms, const std::string &out,
                                   const std::map<char, std::int64_t> &sizes, RuntimeTensor &result)
{
    if (terms.size() != 2 || ctx.in(0).dtype() != DataType::Float || ctx.in(1).dtype() != DataType::Float)
        return std::nullopt;
    const std::string &ta = terms[0], &tb = terms[1];
    const auto unique = [](const std::string &t) {
        return std::all_of(t.begin(), t.end(), [&](char c) { return std::count(t.begin(), t.end(), c) == 1; });
    };
    if (!unique(ta) || !unique(tb) || !unique(out))
        return std::nullopt;
    const auto has = [](const std::string &t, char c) { return t.find(c) != std::string::npos; };
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t d = 0; d < terms[i].size(); ++d)
            if (ctx.in(i).dim(d) != sizes.at(terms[i][d]))
                return std::nullopt; // a broadcast label (size 1 against n)
    std::string batch, m, n, k;
    for (char c : ta) {
        if (has(tb, c) && has(out, c))
            batch += c;
        else if (has(tb, c))
            k += c;
        else if (has(out, c))
            m += c;
        else
            return std::nullopt; // summed within A alone
    }
    for (char c : tb)
        if (!has(ta, c)) {
            if (!has(out, c))
                return std::nullopt;
            n += c;
        }
    const auto extent = [&](const std::string &labels) {
        std::int64_t e = 1;
        for (char c : labels)
            e *= sizes.at(c);
        return e;
    };
    const std::int64_t B = extent(batch), M = extent(m), N = extent(n), K = extent(k);
    // An operand as a GEMM operand: already laid out as `first` + `second` (plain) or `second` +
    // `first` (transposed) after the batch labels; otherwise a permuted copy in the plain order.
    struct Operand
    {
        const float *data = nullptr;
        bool transposed = false;
        std::optional<RuntimeTensor> copy;
    };
    const auto operand = [&](std::size_t i, const std::string &first, const std::string &second) -> Expected<Operand> {
        Operand o;
        const std::string &t = terms[i];
        if (t == batch + first + second || t == batch + second + first) {
            o.data = ctx.in(i).data<float>();
            o.transposed = t != batch + first + second;
            return o;
        }
        std::vector<std::int64_t> perm;
        for (char c : batch + first + second)
            perm.push_back(std::int64_t(t.find(c)));
        Expected<RuntimeTensor> p = permuted(ctx.in(i), perm);
        if (!p)
            return p.status();
        o.copy = std::move(*p);
        o.data = o.copy->data<float>();
        return o;
    };
    const Expected<Operand> a = operand(0, m, k), b = operand(1, k, n);
    if (!a)
        return a.status();
    if (!b)
        return b.status();
    // The product as [batch, M, N]: straight into the result when that is the output's order.
    const std::string natural = batch + m + n;
    std::optional<RuntimeTensor> temp;
    float *c = result.mutableData<float>();
    if (out != natural) {
        Shape64 shape;
        for (char ch : natural)
            shape.push_back(sizes.at(ch));
        Expected<RuntimeTensor> t = RuntimeTensor::allocate(DataType::Float, shape);
        if (!t)
            return t.status();
        temp = std::move(*t);
        c = temp->mutableData<float>();
    }
    for (std::int64_t bi = 0; bi < B; ++bi)
        OPSCOPE_TRY(gemmF32(a->transposed, b->transposed, M, N, K, 1.0f, a->data + bi * M * K,
                            a->transposed ? M : K, b->data + bi * K * N, b->transposed ? K : N, 0.0f,
                            c + bi * M * N, N));
    if (temp) {
        std::vector<std::int64_t> perm;
        for (char ch : out)
            perm.push_back(std::int64_t(natural.find(ch)));
        OPSCOPE_TRY(permuteCopy(*temp, perm, result));
    }
    return Status::ok();
}

// Einsum by direct summation over every label: general (any equation, ellipsis, repeated labels),
// meant for the small contractions models spell with it.
Status einsumKernel(KernelContext &ctx)
{
    std::string eq = ctx.attrString("equation");
    if (Status valid = checkEinsumEquation(eq, ctx.inputCount()); !valid)
        return ctx.fail(valid.message());
    OPSCOPE_TRY(ctx.requireInputs(ctx.inputCount())); // every operand, none omitted
    eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
    const auto arrow = eq.find("->");
    std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (std::size_t s = 0, e; s <= lhs.size(); s = e + 1) {
        e = lhs.find(',', s);
        if (e == std::string::npos)
            e = lhs.size();
        terms.push_back(lhs.substr(s, e - s));
    }
    if (terms.size() != ctx.inputCount())
        return ctx.fail("equation '" + eq + "' has " + std::to_string(terms.size()) + " operands for " +
                        std::to_string(ctx.inputCount()) + " inputs");
    // Replace "..." by upper-case placeholder labels, as many as the broadcast dims need.
    std::size_t ellipsisDims = 0;
    for (std::size_t i = 0; i < terms.size(); ++i)
        if (terms[i].find("...") != std::string::npos) {
            if (ctx.in(i).rank() < terms[i].size() - 3)
                return ctx.fail("operand " + std::to_string(i) + " '" + terms[i] + "' has more labels than its rank " +
                                std::to_string(ctx.in(i).rank()));
            ellipsisDims = std::max(ellipsisDims, ctx.in(i).rank() - (terms[i].size() - 3));
        }
    if (ellipsisDims > 0 && std::any_of(eq.begin(), eq.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
        return ctx.unsupported("Einsum with both '...' and upper-case labels");
    std::string ell;
    for (std::size_t k = 0; k < ellipsisDims; ++k)
        ell += char('A' + k);
    const auto expand = [&](std::string t, std::size_t rank) {
        const auto p = t.find("...");
        if (p != std::string::npos)
            t.replace(p, 3, ell.substr(ellipsisDims - (rank - (t.size() - 3))));
        return t;
    };
    std::map<char, std::int64_t> sizes;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        terms[i] = expand(terms[i], ctx.in(i).rank());
        if (terms[i].size() != ctx.in(i).rank())
            return ctx.fail("operand " + std::to_string(i) + " '" + terms[i] + "' does not match rank " +
                            std::to_string(ctx.in(i).rank()));
        for (std::size_t d = 0; d < terms[i].size(); ++d) {
            const std::int64_t n = ctx.in(i).dim(d);
            auto [it, added] = sizes.emplace(terms[i][d], n);
            if (!added && it->second != n) {
                if (it->second == 1)
                    it->second = n;
                else if (n != 1)
                    return ctx.fail("label '" + std::string(1, terms[i][d]) + "' has sizes " +
                                    std::to_string(it->second) + " and " + std::to_string(n));
            }
        }
    }
    std::string out;
    if (arrow != std::string::npos) {
        out = eq.substr(arrow + 2);
        const auto p = out.find("...");
        if (p != std::string::npos)
            out.replace(p, 3, ell);
    } else {
        out = ell;
        for (const auto &[c, n] : sizes)
            if (c >= 'a' && std::count(lhs.begin(), lhs.end(), c) == 1)
                out += c;
    }
    std::string labels;
    for (const auto &[c, n] : sizes)
        labels += c;
    Shape64 outShape;
    for (char c : out)
        outShape.push_back(sizes[c]);
    Expected<RuntimeTensor *> result = ctx.allocateOutput(0, ctx.in(0).dtype(), outShape);
    if (!result)
        return result.status();
    if (std::optional<Status> viaGemm = einsumAsGemm(ctx, terms, out, sizes, **result))
        return *viaGemm;
    return dispatchNumeric(ctx.in(0).dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, bool>) {
            return ctx.unsupported("Einsum on bool");
        } else {
            std::vector<std::int64_t> value(labels.size(), 0);
            const auto pos = [&](char c) { return labels.find(c); };
            std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> termStrides(terms.size());
            for (std::size_t i = 0; i < terms.size(); ++i) {
                const Shape64 st = stridesOf(ctx.in(i).shape());
                for (std::size_t d = 0; d < terms[i].size(); ++d)
                    termStrides[i].push_back({pos(terms[i][d]), ctx.in(i).dim(d) == 1 ? 0 : st[d]});
            }
            const Shape64 outStrides = stridesOf(outShape);
            T *dst = (*result)->template mutableData<T>();
            std::vector<double> acc(std::size_t((*result)->elementCount()), 0.0);
            std::int64_t total = 1;
            for (char c : labels)
                total *= sizes[c];
            for (std::int64_t flat = 0; flat < total; ++flat) {
                std::int64_t rem = flat;
                for (std::size_t l = labels.size(); l-- > 0;) {
                    value[l] = rem % sizes[labels[l]];
                    rem /= sizes[labels[l]];
                }
                double prod = 1;
                for (std::size_t i = 0; i < terms.size(); ++i) {
                    std::int64_t off = 0;
                    for (const auto &[l, s] : termStrides[i])
                        off += value[l] * s;
                    prod *= double(ComputeType<T>(ctx.in(i).data<T>()[off]));
                }
                std::int64_t o = 0;
                for (std::size_t d = 0; d < out.size(); ++d)
                    o += value[pos(out[d])] * outStrides[d];
                acc[std::size_t(o)] += prod;
            }
            for (std::size_t i = 0; i < acc.size(); ++i)
                dst[i] = static_cast<T>(static_cast<ComputeType<T>>(acc[i]));
            return Status::ok();
        }
    });
}

// loss[n, d...] = -weight[t] * input[n, t, d...] for t = target[n, d...] != ignore_index.
template<class T>
Status nllLoss(KernelContext &ctx, const RuntimeTensor &input, const RuntimeTensor &target,
               const RuntimeTensor *weight, std::size_t outIndex)
{
    OPSCOPE_TRY(requireBatchAndChannels(input, "input", ctx));
    const std::int64_t n = input.dim(0), c = input.dim(1), inner = product(input.shape(), 2);
    if (weight && weight->elementCount() != c)
        return ctx.fail("weight must have one element per class (" + std::to_string(c) + "), got " +
                        weight->shapeText());
    const bool hasIgnore = ctx.hasAttr("ignore_index");
    const std::int64_t ignore = ctx.attrInt("ignore_index", 0);
    const std::string reduction = ctx.attrString("reduction", "mean");
    if (target.elementCount() != n * inner)
        return ctx.fail("target " + target.shapeText() + " does not match input " + input.shapeText());
    std::vector<double> loss(std::size_t(n * inner)), weights(std::size_t(n * inner));
    for (std::int64_t b = 0; inner > 0 && b < n; ++b) // [2^40, C, 0]: no empty walk
        for (std::int64_t i = 0; i < inner; ++i) {
            const std::int64_t t = target.valueAsInt(b * inner + i);
            if (hasIgnore && t == ignore) {
                loss[std::size_t(b * inner + i)] = 0;
                weights[std::size_t(b * inner + i)] = 0;
                continue;
            }
            if (t < 0 || t >= c)
                return ctx.fail("target class " + std::to_string(t) + " is out of range [0, " +
                                std::to_string(c) + ")");
            const double w = weight ? double(ComputeType<T>(weight->data<T>()[t])) : 1.0;
            loss[std::size_t(b * inner + i)] =
                -w * double(ComputeType<T>(input.data<T>()[(b * c + t) * inner + i]));
            weights[std::size_t(b * inner + i)] = w;
        }
    if (reduction == "none") {
        Shape64 shape = target.shape();
        Expected<RuntimeTensor *> out = ctx.allocateOutput(outIndex, input.dtype(), shape);
        if (!out)
            return out.status();
        for (std::size_t i = 0; i < loss.size(); ++i)
            (*out)->template mutableData<T>()[i] = static_cast<T>(static_cast<ComputeType<T>>(loss[i]));
        return Status::ok();
    }
    double sum = 0, wsum = 0;
    for (std::size_t i = 0; i < loss.size(); ++i) {
        sum += loss[i];
        wsum += weights[i];
    }
    Expected<RuntimeTensor *> out = ctx.allocateOutput(outIndex, input.dtype(), {});
    if (!out)
        return out.status();
    const double v = reduction == "sum" ? sum : (wsum == 0 ? 0.0 : sum / wsum);
    (*out)->template mutableData<T>()[0] = static_cast<T>(static_cast<ComputeType<T>>(v));
    return Status::ok();
}

Status nllLossKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    return dispatchFloat(ctx.in(0).dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        return nllLoss<T>(ctx, ctx.in(0), ctx.in(1), ctx.input(2), 0);
    });
}

Status softmaxCrossEntropyKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    const RuntimeTensor &scores = ctx.in(0);
    OPSCOPE_TRY(requireBatchAndChannels(scores, "scores", ctx));
    const std::int64_t n = scores.dim(0), c = scores.dim(1), inner = product(scores.shape(), 2);
    return dispatchFloat(scores.dtype(), [&](auto tag) -> Status {
        using T = decltype(tag);
        Expected<RuntimeTensor> logp = RuntimeTensor::allocate(scores.dtype(), scores.shape());
        if (!logp)
            return logp.status();
        const T *src = scores.data<T>();
        T *lp = logp->template mutableData<T>();
        for (std::int64_t b = 0; inner > 0 && b < n; ++b) // [2^40, C, 0]: no empty walk
            for (std::int64_t i = 0; i < inner; ++i) {
                double mx = -1e300, sum = 0;
                for (std::int64_t k = 0; k < c; ++k)
                    mx = std::max(mx, double(ComputeType<T>(src[(b * c + k) * inner + i])));
                for (std::int64_t k = 0; k < c; ++k)
                    sum += std::exp(double(ComputeType<T>(src[(b * c + k) * inner + i])) - mx);
                for (std::int64_t k = 0; k < c; ++k)
                    lp[(b * c + k) * inner + i] = static_cast<T>(static_cast<ComputeType<T>>(
                        double(ComputeType<T>(src[(b * c + k) * inner + i])) - mx - std::log(sum)));
            }
        OPSCOPE_TRY(nllLoss<T>(ctx, *logp, ctx.in(1), ctx.input(2), 0));
        if (ctx.wantsOutput(1))
            ctx.setOutput(1, std::move(*logp));
        return Status::ok();
    });
}

} // namespace
} // namespace kernels

void registerCastKernels(KernelRegistry &r);
void registerResizeKernels(KernelRegistry &r);
void registerQuantKernels(KernelRegistry &r);
void registerRecurrentKernels(KernelRegistry &r);

void registerMiscKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("Einsum", einsumKernel);
    r.add("NegativeLogLikelihoodLoss", nllLossKernel);
    r.add("SoftmaxCrossEntropyLoss", softmaxCrossEntropyKernel);
    registerCastKernels(r);
    registerResizeKernels(r);
    registerQuantKernels(r);
    registerRecurrentKernels(r);
}

} // namespace opscope
