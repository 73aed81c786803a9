#!/usr/bin/env bash
# The device check, run ON the GPU machine in one call (≤ 8 minutes): that machine has CUDA,
# Python with numpy and onnx, but no Debian libraries, so the CLI comes built from here
# (scripts/gpu-bundle.sh → .gpu-bundle/opscope-gpu.tar.xz, carried). It checks, on cuda:0:
#   1. devices: what `opscope-cli devices` sees;
#   2. the ONNX backend node suite (from the machine's onnx package) on cuda:0 and on the CPU,
#      and every test that passes on the CPU but not on the GPU;
#   3. tests/kernel_parity.py on cuda:0 (large sizes, numpy references);
#   4. whole models (resources/models and bench/make_zoo.py's) on cuda:0 against the CPU
#      runtime: latency of each, largest output difference, host fallbacks;
#   5. CUPTI timelines (`run --trace`): every kernel and copy tied to a node, no dropped records,
#      each launch arrow pointing forward in time, the traced run's time against the untraced.
# Results go to $OUT (default ./gpu-check-out); report.txt is the summary.
#   scripts/gpu-check.sh
set -uo pipefail
py=${PYTHON:-python3}
dev=${DEVICE:-cuda:0} # DEVICE=cpu:0 tries the script itself on a machine without a GPU
cd "$(dirname "$0")/.."
out=${OUT:-gpu-check-out}
mkdir -p "$out"
report="$out/report.txt"
: > "$report"
say() { echo "$*" | tee -a "$report"; }
step() { say "== $1 ($(date -u +%T))"; }

step "environment"
say "date: $(date -u +%FT%TZ)  commit: $(cat .gpu-bundle/commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$report"
rm -rf /tmp/opscope && tar -xJf .gpu-bundle/opscope-gpu.tar.xz -C /tmp || { say "no bundle: run scripts/gpu-bundle.sh first"; exit 1; }
cli=/tmp/opscope/opscope-cli
# The machine's cuBLAS and cuDNN: the toolkit's folder, or the Python wheels'.
libdirs=$(find /usr/local/cuda/ /usr/local/cuda/lib64/ /usr/lib/x86_64-linux-gnu/ /opt /usr/local/lib \
  -maxdepth 8 \( -name 'libcublas.so.13' -o -name 'libcudnn.so.9' -o -name 'libcublasLt.so.13' -o -name 'libcupti.so.13' \) 2>/dev/null \
  | xargs -r -n1 dirname | sort -u | tr '\n' ':')
export OPSCOPE_CUDA_LIBS="${libdirs}/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
say "CUDA libraries from: $libdirs"
timeout 60 "$cli" devices 2>&1 | tee -a "$report"
"$cli" devices --json > "$out/devices.json" 2>&1

# Host-only work beside the GPU steps (the machine has 16 cores): the CPU baseline of the suite
# and the zoo models.
# The node suite: carried (the machine's onnx wheel ships no test data), else the local package's.
if [ -f .gpu-bundle/onnx-node-tests.tar.xz ]; then
  rm -rf /tmp/onnx-suite && mkdir -p /tmp/onnx-suite && tar -xJf .gpu-bundle/onnx-node-tests.tar.xz -C /tmp/onnx-suite
  suite=/tmp/onnx-suite/node
else
  suite=$("$py" -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend/test/data/node'))")
fi
(timeout 150 "$cli" conformance "$suite" --threads 4 > "$out/conformance-cpu.txt" 2>&1) &
cpuSuite=$!
mkdir -p /tmp/zoo
(timeout 90 "$py" bench/make_zoo.py /tmp/zoo resnet18 resnet50 mobilenet_v2 efficientnet_b0 unet yolo_head vit_tiny conformer > /tmp/zoo.log 2>&1) &
zoo=$!

step "tst_cudabackend (parity of single ops, memory errors, copies)"
timeout 60 /tmp/opscope/tst_cudabackend > "$out/tst_cudabackend.txt" 2>&1
say "tst_cudabackend rc=$?: $(grep '^Totals' "$out/tst_cudabackend.txt")"
grep -E '^FAIL' -A2 "$out/tst_cudabackend.txt" | head -40 | tee -a "$report"

step "ONNX backend node suite, cuda:0 and cpu"
say "suite: $suite ($(ls "$suite" | wc -l) tests)"
say "onnxruntime providers: $("$py" -c 'import onnxruntime as o; print(o.__version__, o.get_available_providers())' 2>&1 | tail -1)"
timeout 100 "$cli" conformance "$suite" --device "$dev" > "$out/conformance-cuda.txt" 2>&1
say "cuda:0: $(tail -1 "$out/conformance-cuda.txt")"
wait $cpuSuite
say "cpu:    $(tail -1 "$out/conformance-cpu.txt")"
"$py" - "$out/conformance-cpu.txt" "$out/conformance-cuda.txt" <<'PY' | tee -a "$report"
import sys
def parse(p):
    r = {}
    for line in open(p, errors="replace"):
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("pass", "FAIL", "unsupported", "invalid"):
            name = parts[2] if parts[1] == "(host)" else parts[1]
            r[name] = (parts[0], line.strip())
    return r
cpu, gpu = parse(sys.argv[1]), parse(sys.argv[2])
worse = [n for n, (o, _) in cpu.items() if o == "pass" and gpu.get(n, ("missing",))[0] != "pass"]
print(f"passing on the CPU but not on cuda:0: {len(worse)}")
for n in worse[:60]:
    print("  " + gpu.get(n, ("", n + " (not run: the cuda pass stopped early)"))[1][:300])
PY

step "kernel parity on cuda:0"
timeout 60 "$py" tests/kernel_parity.py "$cli" --device "$dev" > "$out/parity.txt" 2>&1
say "kernel_parity rc=$?: $(tail -1 "$out/parity.txt")"
grep FAIL "$out/parity.txt" | head -20 | tee -a "$report"

step "models on cuda:0 against the CPU"
wait $zoo
say "zoo: $(ls /tmp/zoo/*.onnx 2>/dev/null | wc -l) models ($(tail -1 /tmp/zoo.log))"
timeout 150 "$py" scripts/gpu_models.py "$cli" 16 resources/models/*.onnx /tmp/zoo/*.onnx 2>&1 | tee "$out/models.txt" | tee -a "$report"
step "CUPTI traces on cuda:0"
for m in resources/models/inception_block.onnx resources/models/transformer_block.onnx /tmp/zoo/resnet18.onnx; do
  [ -f "$m" ] || continue
  base=$(basename "$m" .onnx)
  timeout 60 "$cli" run "$m" --device "$dev" --iterations 5 --trace "$out/trace-$base.json" --json \
    > "$out/trace-$base.run.json" 2> "$out/trace-$base.err"
  say "$base rc=$?: $(tail -2 "$out/trace-$base.err" | tr '\n' ' ')"
  "$py" - "$out/trace-$base.run.json" "$out/trace-$base.json" <<'PY' 2>&1 | tee -a "$report"
import json, sys
run = json.load(open(sys.argv[1]))
t = run.get("trace", {})
events = json.load(open(sys.argv[2]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
gpu = [e for e in events if e.get("ph") == "X" and procs.get(e["pid"], "").startswith("cuda")
       and e.get("tid", 0) > 1000]
flows = {}
for e in events:
    if e.get("cat") == "launch":
        flows.setdefault(e["id"], {})[e["ph"]] = e["ts"]
backwards = [f for f in flows.values() if "s" in f and "f" in f and f["f"] < f["s"]]
lag = sorted(f["f"] - f["s"] for f in flows.values() if "s" in f and "f" in f)
print(f"  CUPTI {t.get('cupti_version')}: kernels {t.get('gpu_kernels')} copies {t.get('gpu_copies')} "
      f"unattributed {t.get('gpu_unattributed')} dropped {t.get('gpu_dropped')} untimed {t.get('gpu_untimed')} "
      f"note {t.get('gpu_note')!r}; GPU spans in file {len(gpu)}; overlap {t.get('overlap')} "
      f"busy {t.get('utilization')}; "
      f"launch arrows {len(flows)}, backwards {len(backwards)}, launch→start median "
      f"{lag[len(lag)//2] if lag else 'n/a'} us; traced run {t.get('run_ms')} ms vs median "
      f"{run['latency_ms']['median']:.3f} ms")
PY
done
step "done"
