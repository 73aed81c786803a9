#pragma once
// OPSCOPE_CPU_CLONES before a plain loop: the compiler emits it for the baseline ISA, AVX2 and
// AVX-512 and the loader picks one at run time (ifunc), so one binary vectorizes on every x86-64.
// GCC and clang both have target_clones, but clang (14) refuses it on function templates: put it
// on non-template functions only (a template body may be inlined into several cloned wrappers).
#if defined(__x86_64__) && defined(__GNUC__)
#define OPSCOPE_CPU_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define OPSCOPE_CPU_CLONES
#endif
