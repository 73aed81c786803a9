#!/bin/sh
# The pass fuzzer's long run: tst_passfuzz (tests/tst_passfuzz.cpp) over GRAPHS random models from
# SEED (default: 20,000 from seed 1; the unit test runs 300). Each model goes through every pass
# of the registry alone and the levels basic, extended and all; the verifier runs after each and
# the outputs on random inputs are compared with the unoptimized model's. A crash names the model
# and pass it happened in (VERBOSE=1); DUMP=DIR writes every model as DIR/seed_N.onnx.
#   bench/passfuzz.sh [GRAPHS [SEED]]        e.g.  bench/passfuzz.sh 100000 5000
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${OPSCOPE_BUILD:-$here/build}/bin/tst_passfuzz
[ -x "$bin" ] || { echo "build tst_passfuzz first: cmake --build build --target tst_passfuzz" >&2; exit 1; }
export QTEST_FUNCTION_TIMEOUT=${QTEST_FUNCTION_TIMEOUT:-86400000} # ms: QtTest would stop it after 5 min
export OPSCOPE_PASSFUZZ_GRAPHS=${1:-20000} OPSCOPE_PASSFUZZ_SEED=${2:-1}
[ -n "${DUMP:-}" ] && export OPSCOPE_PASSFUZZ_DUMP=$DUMP
[ -n "${VERBOSE:-}" ] && export OPSCOPE_PASSFUZZ_VERBOSE=1
exec "$bin" everyPassKeepsRandomModelsValidAndEqual
