// Cast and CastLike between every numeric type, bool, float16/bfloat16 and strings.

#include "runtime/kernels/kernelutil.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <cstdlib>

namespace opscope {
namespace kernels {
namespace {

// A float truncated to an integer type as x86's conversion does, without C++'s undefined
// behaviour for NaN, ±inf and values outside the type (ONNX leaves Cast's result there undefined;
// this is what ONNX Runtime gives on x86, which a plain static_cast happened to give too): through
// int32 for the narrow types, int64 for uint32 and int64, out of range the wide type's minimum.
template<class D>
D truncatingCast(double f)
{
    const double t = std::trunc(f); // NaN stays NaN and fails every comparison below
    const auto viaInt32 = [](double x) {
        return x >= -2147483648.0 && x < 2147483648.0 ? std::int32_t(x) : std::numeric_limits<std::int32_t>::min();
    };
    const auto viaInt64 = [](double x) {
        return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? std::int64_t(x)
                                                                         : std::numeric_limits<std::int64_t>::min();
    };
    if constexpr (std::is_same_v<D, std::uint64_t>) {
        if (t >= 9223372036854775808.0 && t < 18446744073709551616.0)
            return std::uint64_t(t);
        return std::uint64_t(viaInt64(t));
    } else if constexpr (sizeof(D) == 8 || std::is_same_v<D, std::uint32_t>) {
        return D(viaInt64(t));
    } else {
        return D(viaInt32(t));
    }
}

template<class S, class D>
D convert(S v)
{
    if constexpr (std::is_same_v<D, bool>)
        return ComputeType<S>(v) != ComputeType<S>(0);
    else if constexpr (isFloatLike<S> && std::is_integral_v<D>)
        return truncatingCast<D>(double(ComputeType<S>(v)));
    else if constexpr (isFloatLike<D> || isFloatLike<S>)
        return static_cast<D>(static_cast<ComputeType<D>>(static_cast<ComputeType<S>>(v)));
    else
        return static_cast<D>(v);
}

Status castTo(KernelContext &ctx, const RuntimeTensor &x, DataType target)
{
    Expected<RuntimeTensor *> out = ctx.allocateOutput(0, target, x.shape());
    if (!out)
        return out.status();
    const std::int64_t n = x.elementCount();
    if (x.dtype() == DataType::String && target == DataType::String) {
        (*out)->mutableStrings() = x.strings();
        return Status::ok();
    }
    if (x.dtype() == DataType::String) {
        return dispatchNumeric(target, [&](auto tag) -> Status {
            using D = decltype(tag);
            D *dst = (*out)->template mutableData<D>();
            for (std::int64_t i = 0; i < n; ++i) {
                const std::string &s = x.strings()[std::size_t(i)];
                char *end = nullptr;
                const double v = std::strtod(s.c_str(), &end);
                if (end == s.c_str())
                    return ctx.fail("cannot convert string '" + s + "' to a number");
                dst[i] = convert<double, D>(v);
            }
            return Status::ok();
        });
    }
    if (target == DataType::String) {
        return dispatchNumeric(x.dtype(), [&](auto tag) -> Status {
            using S = decltype(tag);
            for (std::int64_t i = 0; i < n; ++i) {
                char buf[64];
                const auto v = ComputeType<S>(x.data<S>()[i]);
                std::to_chars_result r;
                if constexpr (std::is_same_v<S, bool>)
                    r = std::to_chars(buf, buf + sizeof buf, int(v));
                else
                    r = std::to_chars(buf, buf + sizeof buf, v); // shortest round-trip form
                std::string s(buf, r.ptr);
                if (s == "inf" || s == "-inf" || s == "nan" || s == "-nan")
                    s = s == "inf" ? "INF" : s == "-inf" ? "-INF" : "NaN";
                (*out)->mutableStrings()[std::size_t(i)] = s;
            }
            return Status::ok();
        });
    }
    return dispatchNumeric(x.dtype(), [&](auto stag) -> Status {
        using S = decltype(stag);
        return dispatchNumeric(target, [&](auto dtag) -> Status {
            using D = decltype(dtag);
            const S *src = x.data<S>();
            D *dst = (*out)->template mutableData<D>();
            // The casts look redundant: clang checks the call in a discarded branch once the outer
            // lambda's S is known (S = Half: no floatsToHalves(const Half *, …)), so every argument
            // is of the type the function takes whatever S and D are.
            if constexpr (std::is_same_v<S, float> && std::is_same_v<D, Half>)
                floatsToHalves(reinterpret_cast<const float *>(src), reinterpret_cast<std::uint16_t *>(dst), n);
            else if constexpr (std::is_same_v<S, Half> && std::is_same_v<D, float>)
                halvesToFloats(reinterpret_cast<const std::uint16_t *>(src), reinterpret_cast<float *>(dst), n);
            else
                parallelFor(n, [&](std::int64_t i) { dst[i] = convert<S, D>(src[i]); });
            return Status::ok();
        });
    });
}

Status castKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(1));
    const std::int64_t to = ctx.attrInt("to", 0);
    if (!isKnownDataType(static_cast<std::int32_t>(to)) || to == 0)
        return ctx.fail("'to' names no data type (" + std::to_string(to) + ")");
    return castTo(ctx, ctx.in(0), static_cast<DataType>(to));
}

Status castLikeKernel(KernelContext &ctx)
{
    OPSCOPE_TRY(ctx.requireInputs(2));
    return castTo(ctx, ctx.in(0), ctx.in(1).dtype());
}

} // namespace
} // namespace kernels

void registerCastKernels(KernelRegistry &r)
{
    using namespace kernels;
    r.add("Cast", castKernel);
    r.add("CastLike", castLikeKernel);
}

} // namespace opscope
