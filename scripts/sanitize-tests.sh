#!/usr/bin/env bash
# Builds the test suite with sanitizers and runs it. .ci/run calls `asan` after the README's test
# command; `tsan` is run by hand before resolving work on the executor or schedules.
#   asan   AddressSanitizer + UndefinedBehaviorSanitizer, the unit and conformance tests (build-asan/)
#   tsan   ThreadSanitizer, the executor / worker pool / schedule tests, where the shared queues
#          and worker threads live (build-tsan/)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-asan}
here=$(pwd)
case "$mode" in
  asan)
    dir=build-asan
    flags=(-DOPSCOPE_SANITIZE=address,undefined)
    tests=(tst_graph tst_onnxio tst_cli tst_cliprofile tst_clireports tst_robustness tst_kernelsweep tst_runtime tst_integerarithmetic tst_probe tst_passes tst_presentation tst_schedule
           tst_fusions tst_transformerfusions tst_extendedfusions tst_attention tst_layout tst_workerpool
           tst_roundtrip tst_conformance tst_pipeline tst_passfuzz tst_layered tst_quantized tst_memoryplan tst_mpi tst_pooling tst_permute tst_partsofplans)
    # Script tests (no target of their own): the kernels' fast paths, run by the ASan CLI.
    scripted=(kernel_parity)
    # Leaks are reported for opscope's code; libonnx's schema registry, Qt's and fontconfig's
    # process-lifetime caches are not leaks of ours.
    # allocator_may_return_null: an impossible allocation fails as it does without ASan (null or
    # bad_alloc, which opscope turns into an error), instead of aborting the test.
    export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:allocator_may_return_null=1"
    export LSAN_OPTIONS="suppressions=$here/scripts/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$here/scripts/ubsan.supp"
    ;;
  tsan)
    dir=build-tsan
    flags=(-DOPSCOPE_SANITIZE=thread)
    tests=(tst_workerpool tst_schedule tst_partsofplans tst_runtime tst_memoryplan)
    scripted=()
    # libgomp is not built with TSan: its barriers look like races. The tests use our worker pool.
    export OMP_NUM_THREADS=1
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/scripts/tsan.supp"
    ;;
  *) echo "usage: $0 asan|tsan" >&2; exit 1 ;;
esac
regex="^($(IFS='|'; echo "${tests[*]} ${scripted[*]}" | tr ' ' '|' | sed 's/|$//'))\$"
start=$(date +%s)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPSCOPE_WITH_CUDA=OFF "${flags[@]}" >/dev/null
cmake --build "$dir" --target opscope-cli "${tests[@]}"
built=$(date +%s)
ctest --test-dir "$dir" --output-on-failure -R "$regex"
echo "sanitize-tests $mode: build $((built - start)) s, tests $(( $(date +%s) - built )) s"
