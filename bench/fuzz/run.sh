#!/usr/bin/env bash
# Runs one libFuzzer target for MINUTES with its seed corpus and dictionary, and prints the
# executions, coverage and findings. Usage: bench/fuzz/run.sh TARGET MINUTES [JOBS]
#   TARGET: loader externaldata pipeline run tensorfile trace
# Builds build-fuzz (clang-14, ASan + UBSan + coverage) when it is missing; needs
# ./scripts/setup.sh --fuzz. Corpora grow in bench/.cache/fuzz/TARGET (ignored); a finding is
# written there as crash-* / timeout-* / oom-*: add it to tests/fuzz-regressions/ with a test.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:?usage: run.sh TARGET MINUTES [JOBS]}
minutes=${2:?usage: run.sh TARGET MINUTES [JOBS]}
jobs=${3:-1}
build="$top/build-fuzz"
if [ ! -x "$build/bin/fuzz_$target" ]; then
  [ -f "$build/build.ninja" ] ||
    CC=clang-14 CXX=clang++-14 cmake -S "$top" -B "$build" -G Ninja -DOPSCOPE_FUZZ=ON -DOPSCOPE_BUILD_TESTS=OFF
  cmake --build "$build" --target "fuzz_$target"
fi
work="$top/bench/.cache/fuzz/$target"
corpus="$work/corpus"
mkdir -p "$corpus" "$work/findings"

# Seeds: the ONNX backend suite, the bundled samples, test fixtures; tensors from the suite's
# test data; traces written by `profile --trace`.
testdata=/usr/share/libonnx-testdata/data
seed() { local i=0; while read -r f; do cp -n "$f" "$corpus/seed-$(printf %05d $i)-$(basename "$f")"; i=$((i+1)); done; }
if [ -z "$(ls -A "$corpus")" ]; then
  case "$target" in
    loader|externaldata|pipeline|run)
      { find "$testdata" -name model.onnx -size -64k; ls "$top"/resources/models/*.onnx; } | seed ;;
    tensorfile)
      # First byte 0: TensorProto .pb, 1: .npy.
      i=0; find "$testdata/node" -name 'input_*.pb' -size -16k | sed -n '1,400p' | while read -r f; do
        { printf '\x00'; cat "$f"; } > "$corpus/pb-$i"; i=$((i+1)); done
      /usr/bin/python3 - "$corpus" <<'PY'
import sys, io, numpy as np
for i, a in enumerate([np.zeros((2, 3), np.float32), np.arange(5, dtype=np.int64), np.array(3.0), np.ones((1, 2, 2), np.uint8)]):
    b = io.BytesIO(); np.save(b, a); open(f"{sys.argv[1]}/npy-{i}", "wb").write(b'\x01' + b.getvalue())
PY
      ;;
    trace)
      "$top/build/bin/opscope-cli" profile "$top/resources/models/inception_block.onnx" --iterations 1 \
        --trace "$corpus/profile.json" >/dev/null 2>&1 || true
      printf '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":5}]}' > "$corpus/min.json" ;;
    *) echo "run.sh: unknown target '$target'" >&2; exit 1 ;;
  esac
fi

parallel=()
[ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
dict=()
case "$target" in
  trace) dict=(-dict="$top/bench/fuzz/trace.dict") ;;
  tensorfile) dict=(-dict="$top/bench/fuzz/npy.dict") ;;
  *) dict=(-dict="$top/bench/fuzz/onnx.dict") ;;
esac
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:handle_abort=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
log="$work/last-run.log"
: > "$log"
start=$(date +%s)
deadline=$((start + minutes * 60))
# A finding ends a libFuzzer run: it is kept in findings/ and the run starts again for the time
# left, so one budget finds every class it can reach rather than stopping at the first.
rc=0
# With -jobs libFuzzer writes fuzz-N.log into the working directory: keep them beside the corpus.
cd "$work"
set +e
while [ "$(date +%s)" -lt "$deadline" ]; do
  left=$((deadline - $(date +%s)))
  "$build/bin/fuzz_$target" "$corpus" "${dict[@]}" -max_total_time=$left -timeout=20 \
    -rss_limit_mb=4096 -malloc_limit_mb=4096 -max_len=262144 "${parallel[@]}" \
    -artifact_prefix="$work/findings/" -print_final_stats=1 >> "$log" 2>&1
  r=$?
  [ "$r" -ne 0 ] && rc=$r
  [ "$r" -eq 0 ] && break
done
set -e
if [ "$jobs" -gt 1 ]; then cat fuzz-*.log >> "$log" 2>/dev/null; rm -f fuzz-*.log; fi
execs=$(grep -h '^stat::number_of_executed_units' "$log" | awk '{s+=$2} END {print s+0}')
cov=$(grep -hoE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
ft=$(grep -hoE 'ft: [0-9]+' "$log" | tail -1 | awk '{print $2}')
echo "fuzz_$target: $execs executions in $(( $(date +%s) - start )) s, coverage $cov edges, $ft features," \
     "corpus $(ls "$corpus" | wc -l) inputs, exit $rc"
if ls "$work/findings"/* >/dev/null 2>&1; then
  echo "findings:"; ls -l "$work/findings"
  grep -hE 'ERROR: |SUMMARY: |runtime error' "$log" | sort | uniq -c | head -20
  exit 1
fi
