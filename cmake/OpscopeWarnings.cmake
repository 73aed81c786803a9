# Warnings for our own targets only (third-party headers come in as SYSTEM through imported targets).
function(opscope_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    # -Wshadow=local is GCC's spelling; clang (the fuzz build) has no such level.
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wshadow=local>
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wno-missing-field-initializers>
    # GCC 12 at -O3 reports "literal" + std::string&& as an overlapping memcpy (GCC bug 105651).
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>)
endfunction()

# x86-64-v2 (SSE4.2, every x86-64 CPU since 2009, RHEL 9's baseline) for our own kernels; hotter
# loops add AVX2/AVX-512 clones chosen at run time (target_clones), oneDNN dispatches itself.
include(CheckCXXCompilerFlag)
check_cxx_compiler_flag(-march=x86-64-v2 OPSCOPE_HAVE_X86_64_V2)
function(opscope_set_arch target)
  if(OPSCOPE_HAVE_X86_64_V2 AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=x86-64-v2>)
  endif()
endfunction()
