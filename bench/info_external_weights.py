#!/usr/bin/python3
"""Benchmark: `opscope-cli info` on a model with 1 GiB of external weights, against onnx.load.

Generates model.onnx + weights.bin (16 MatMul weights of 64 MiB, random float32), then runs,
interleaved, N times each, with the weights evicted from the page cache before every run
(posix_fadvise DONTNEED), so disk reads are real:

  opscope      opscope-cli info --json MODEL (maps external data; should read none of it)
  onnx-meta    python: onnx.load(MODEL, load_external_data=False)  (peer, metadata only)
  onnx-full    python: onnx.load(MODEL)                             (peer, loads the weights)

Prints median/min wall time, peak RSS and bytes read from disk per tool, and ratios.
Usage: bench/info_external_weights.py [--cli build/bin/opscope-cli] [--runs 5] [--dir DIR] [--gib 1]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def generate(folder, gib):
    model = os.path.join(folder, "model.onnx")
    data = os.path.join(folder, "weights.bin")
    import onnx
    from onnx import TensorProto, helper
    n = 4096
    count = int(16 * gib)
    per = n * n * 4
    nodes, inits = [], []
    rng = np.random.default_rng(1)
    with open(data, "wb") as f:
        for i in range(count):
            t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[n, n])
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", "weights.bin"), ("offset", str(i * per)), ("length", str(per))):
                e = t.external_data.add()
                e.key, e.value = k, v
            inits.append(t)
            f.write(rng.standard_normal(n * n, dtype=np.float32).tobytes())
            nodes.append(helper.make_node("MatMul", ["x" if i == 0 else f"h{i - 1}", f"w{i}"], [f"h{i}"], name=f"layer{i}"))
    graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                              [helper.make_tensor_value_info(f"h{count - 1}", TensorProto.FLOAT, [1, n])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="opscope-bench")
    with open(model, "wb") as f:
        f.write(m.SerializeToString())
    return model, data


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run(cmd):
    # GNU time reports the child's own peak RSS and file-system input; os.wait4 would include the
    # memory this (numpy-laden) parent had at fork time.
    start = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M %I"] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    err = p.stderr.decode().strip().splitlines()
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {err}")
    rss_kib, in_blocks = (int(v) for v in err[-1].split())
    return wall, rss_kib / 1024.0, in_blocks * 512 / 2**20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin", "opscope-cli"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir")
    ap.add_argument("--gib", type=float, default=1.0)
    args = ap.parse_args()
    folder = args.dir or tempfile.mkdtemp(prefix="opscope-bench-")
    os.makedirs(folder, exist_ok=True)
    model = os.path.join(folder, "model.onnx")
    data = os.path.join(folder, "weights.bin")
    if not (os.path.exists(model) and os.path.exists(data)):
        t0 = time.perf_counter()
        model, data = generate(folder, args.gib)
        print(f"generated {model} + {os.path.getsize(data) / 2**30:.2f} GiB weights in {time.perf_counter() - t0:.1f} s")

    py = "/usr/bin/python3"
    tools = {
        "opscope": [args.cli, "info", "--json", model],
        "onnx-meta": [py, "-c", f"import onnx; onnx.load({model!r}, load_external_data=False)"],
        "onnx-full": [py, "-c", f"import onnx; onnx.load({model!r})"],
    }
    results = {name: [] for name in tools}
    for _ in range(args.runs):
        for name, cmd in tools.items():  # interleaved, so machine noise hits all alike
            evict(data)
            evict(model)
            results[name].append(run(cmd))

    print(f"\n{'tool':<11} {'median ms':>10} {'min ms':>8} {'peak RSS MiB':>13} {'disk read MiB':>14}")
    med = {}
    for name, rows in results.items():
        walls = [r[0] * 1000 for r in rows]
        med[name] = statistics.median(walls)
        print(f"{name:<11} {med[name]:>10.1f} {min(walls):>8.1f} {max(r[1] for r in rows):>13.1f} "
              f"{statistics.median(r[2] for r in rows):>14.1f}")
    print(f"\nratio opscope / onnx-meta: {med['opscope'] / med['onnx-meta']:.2f}")
    print(f"ratio opscope / onnx-full: {med['opscope'] / med['onnx-full']:.3f}")
    print(f"opscope under one second: {'yes' if med['opscope'] < 1000 else 'NO'}")


if __name__ == "__main__":
    main()
