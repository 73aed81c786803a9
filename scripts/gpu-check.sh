#!/usr/bin/env bash
# The device check: build with CUDA for the GPU at hand, run the gpu-labelled tests (and the unit
# tests, as a sanity check of that machine), record `opscope-cli devices`. Results go to $OUT
# (default ./gpu-check-out). Run on the machine with the GPU; it skips nothing silently: a test
# that QSKIPs there is a failure of this check.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check-out}
mkdir -p "$out"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
} > "$out/env.txt"

./scripts/setup.sh > "$out/setup.log" 2>&1 || { echo "setup failed"; tail "$out/setup.log"; exit 1; }
cmake -S . -B build-gpu -G Ninja -DOPSCOPE_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/configure.log" 2>&1 \
  && cmake --build build-gpu > "$out/build.log" 2>&1 || { echo "build failed"; tail -30 "$out/build.log"; exit 1; }

./build-gpu/bin/opscope-cli devices --json > "$out/devices.json" 2>&1
ctest --test-dir build-gpu -L gpu --output-on-failure > "$out/ctest-gpu.log" 2>&1
gpu_rc=$?
# A skipped GPU test on a GPU machine means the device was not usable: fail loudly.
if grep -q "Skipped\|SKIP" "$out/ctest-gpu.log"; then
  echo "GPU tests skipped on the GPU machine"; gpu_rc=1
fi
ctest --test-dir build-gpu -L unit > "$out/ctest-unit.log" 2>&1
unit_rc=$?
cat "$out/env.txt" "$out/devices.json"
tail -5 "$out/ctest-gpu.log"
tail -3 "$out/ctest-unit.log"
exit $(( gpu_rc != 0 || unit_rc != 0 ))
