#pragma once
// Integer arithmetic that wraps around as two's complement, as ONNX Runtime's does. Signed
// overflow is undefined in C++, and types narrower than int are promoted to signed int first,
// where even uint16 × uint16 overflows: the fuzzers' UBSan runs found ReduceSum of int32 maxima
// and an int32 Mul in constant folding. Everything else (floats) is plain arithmetic.

#include <cstdint>
#include <type_traits>

namespace opscope::kernels {

// The unsigned word integer T computes in: at least unsigned int, so that no promotion is signed.
template<class T>
using WrapWord = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template<class T>
constexpr bool kWraps = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template<class T>
T wrapAdd(T a, T b)
{
    if constexpr (kWraps<T>)
        return static_cast<T>(WrapWord<T>(a) + WrapWord<T>(b));
    else
        return a + b;
}

template<class T>
T wrapSub(T a, T b)
{
    if constexpr (kWraps<T>)
        return static_cast<T>(WrapWord<T>(a) - WrapWord<T>(b));
    else
        return a - b;
}

template<class T>
T wrapMul(T a, T b)
{
    if constexpr (kWraps<T>)
        return static_cast<T>(WrapWord<T>(a) * WrapWord<T>(b));
    else
        return a * b;
}

// −MIN is MIN, as in two's complement.
template<class T>
T wrapNeg(T a)
{
    if constexpr (kWraps<T>)
        return static_cast<T>(WrapWord<T>(0) - WrapWord<T>(a));
    else
        return -a;
}

} // namespace opscope::kernels
