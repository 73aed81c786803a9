#!/usr/bin/env python3
"""Whole models on cuda:0 against the CPU runtime, for scripts/gpu-check.sh: same model, same
seeded inputs; prints per model the latency on each device, the largest output difference relative
to the output's range, and which ops ran on the host instead of the GPU.

  scripts/gpu_models.py OPSCOPE_CLI CPU_THREADS MODEL.onnx ...
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(cli, model, out, extra):
    cmd = [cli, "run", model, "--json", "--save-outputs", out, "--force"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if p.returncode != 0:
        return None, (p.stderr.strip() or p.stdout.strip())[-300:]
    return json.loads(p.stdout), None


def ort_ms(model, threads):
    """onnxruntime on the same model: its CUDA provider when this build has one, else its CPU."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None, "no onnxruntime"
    import time
    provider = "CUDAExecutionProvider" if "CUDAExecutionProvider" in ort.get_available_providers() else "CPUExecutionProvider"
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    try:
        s = ort.InferenceSession(model, so, providers=[provider])
    except Exception as e:  # noqa: BLE001 - a model ORT rejects is reported, not fatal
        return None, str(e)[:80]
    types = {"tensor(float)": np.float32, "tensor(int64)": np.int64, "tensor(float16)": np.float16,
             "tensor(int32)": np.int32, "tensor(bool)": np.bool_}
    rng = np.random.default_rng(0)
    feeds = {i.name: rng.random([d if isinstance(d, int) else 1 for d in i.shape]).astype(types.get(i.type, np.float32))
             for i in s.get_inputs()}
    for _ in range(3):
        s.run(None, feeds)
    times = []
    for _ in range(20):
        t = time.perf_counter()
        s.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times)), provider.replace("ExecutionProvider", "")


def main():
    cli, threads, models = sys.argv[1], sys.argv[2], sys.argv[3:]
    worst = 0.0
    failures = 0
    providers = set()
    print(f"{'model':24} {'cpu ms':>9} {'cuda ms':>9} {'speed-up':>8} {'ORT ms':>9} {'max |diff|/range':>17}  host fallbacks")
    for m in models:
        name = os.path.basename(m)[:-5]
        with tempfile.TemporaryDirectory() as tmp:
            cpu, err = run(cli, m, os.path.join(tmp, "cpu"), ["--threads", threads, "--iterations", "5"])
            if cpu is None:
                print(f"{name:24} cpu run failed: {err}")
                failures += 1
                continue
            gpu, err = run(cli, m, os.path.join(tmp, "gpu"), ["--device", os.environ.get("DEVICE", "cuda:0"), "--iterations", "20"])
            if gpu is None:
                print(f"{name:24} cuda run FAILED: {err}")
                failures += 1
                continue
            rel = 0.0
            for o in cpu["outputs"]:
                a = np.load(o["file"]).astype(np.float64)
                b = np.load(o["file"].replace(os.path.join(tmp, "cpu"), os.path.join(tmp, "gpu"))).astype(np.float64)
                if a.shape != b.shape:
                    rel = float("inf")
                    break
                if a.size:
                    span = float(np.nanmax(a) - np.nanmin(a)) or 1.0
                    rel = max(rel, float(np.nanmax(np.abs(a - b))) / span)
            worst = max(worst, rel)
            c, g = cpu["latency_ms"]["median"], gpu["latency_ms"]["median"]
            fb = ", ".join(f"{k}×{v['calls']}" for k, v in gpu.get("host_fallbacks", {}).items()) or "none"
            flag = "" if rel < 1e-3 else "  MISMATCH"
            failures += rel >= 1e-3
            o, provider = ort_ms(m, threads)
            ort = f"{o:9.3f}" if o is not None else f"{'-':>9}"
            providers.add(provider)
            print(f"{name:24} {c:9.3f} {g:9.3f} {c / g if g else 0:7.1f}x {ort} {rel:17.2e}  {fb}{flag}")
    print(f"models: {len(models)}, failures: {failures}, worst relative difference {worst:.2e}; "
          f"ORT ran on: {', '.join(sorted(p for p in providers if p))} ({threads} threads where CPU)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
