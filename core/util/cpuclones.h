#pragma once
// OPSCOPE_CPU_CLONES before a plain loop: the compiler emits it for the baseline ISA, AVX2 and
// AVX-512 and the loader picks one at run time (ifunc), so one binary vectorizes on every x86-64.
// GCC and clang both have target_clones, but clang (14) refuses it on function templates: put it
// on non-template functions only (a template body may be inlined into several cloned wrappers).
//
// Not under ThreadSanitizer: the clones' ifunc resolver runs while the dynamic loader relocates
// the program, before TSan's runtime is up, and TSan's instrumentation of it crashes the process
// at start (every test of a TSan build died with SIGSEGV in quantizeBlock's resolver).
#if defined(__SANITIZE_THREAD__)
#define OPSCOPE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OPSCOPE_TSAN 1
#endif
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(OPSCOPE_TSAN)
#define OPSCOPE_CPU_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define OPSCOPE_CPU_CLONES
#endif
