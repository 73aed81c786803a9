# Warnings for our own targets only (third-party headers come in as SYSTEM through imported targets).
function(opscope_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor -Wno-missing-field-initializers>)
endfunction()
