#!/usr/bin/python3
"""What running across MPI ranks costs, measured against the same plan in one process, in the same
run (`profile --ranks --in-process`: rank 0 also runs each broadcast plan with every device its
own, Recv a memcpy between arenas).

  1. Per transfer: a chain of 16 Relu over N floats, placed round-robin, so each of its 15 edges
     crosses from one rank to the other. (makespan across ranks - makespan in one process) / 15
     is what MPI adds to a transfer of 4N bytes; 4N / (makespan across ranks / 15) bounds the
     bandwidth a transfer reaches. N from 1 Ki to 4 Mi floats.
  2. Makespan of greedy and round-robin across 2 ranks (cpu:1 each) against the same plans in
     one process, on the samples and generated models.
  3. Pipelines: `pipeline` with M = 1, 2, 4, 8 micro-batches of a batch of 16 across the ranks:
     makespan, throughput against serial on the whole batch, the stages' bubble beside GPipe's
     (S-1)/(M+S-1).

  bench/mpi_bench.py [--cli build/bin/opscope-cli] [--ranks 2] [--iterations 20] [--markdown FILE]

Needs as many cores as ranks to mean anything (on 2 cores, 2 ranks × cpu:1).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def chain(path, n, length=16):
    nodes = []
    prev = "input"
    for i in range(length):
        out = "output" if i == length - 1 else f"r{i}"
        nodes.append(helper.make_node("Relu", [prev], [out], name=f"relu{i}"))
        prev = out
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [n])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [n])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="opscope-bench")
    model.ir_version = 8
    onnx.save(model, path)


def mlp(path, width=512, layers=8):
    """An MLP over a symbolic batch: layers of MatMul + Add + Relu, even stages for a pipeline."""
    import numpy as np
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "input"
    for i in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        inits += [onnx.numpy_helper.from_array(w, f"w{i}"),
                  onnx.numpy_helper.from_array(np.zeros(width, np.float32), f"b{i}")]
        out = "output" if i == layers - 1 else f"h{i}"
        nodes += [helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [out])]
        prev = out
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", width])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="opscope-bench")
    model.ir_version = 8
    onnx.save(model, path)


def profile(cli, model, ranks, iterations, schedules, extra=(), in_process=True):
    # --bind-to none: mpirun would bind each rank to one core, and --in-process runs every device
    # in rank 0 (its workers would share that core).
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", str(ranks), cli,
           "profile", model, "--ranks",
           "--schedule", "serial," + schedules, "--optimize", "none", "--iterations",
           str(iterations), "--json"] + (["--in-process"] if in_process else []) + list(extra)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    j = json.loads(out[out.index("{"):])
    return j, {s["name"]: s for s in j["schedules"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build/bin/opscope-cli"))
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--markdown")
    a = ap.parse_args()
    lines = []

    def say(s=""):
        print(s)
        lines.append(s)

    tmp = tempfile.mkdtemp()
    say(f"## Per transfer ({a.ranks} ranks, round-robin chain of 16 Relu, 15 cross-rank edges; median of {a.iterations})")
    say()
    say("| tensor | across ranks ms | one process ms | ratio | MPI adds per transfer µs | GB/s per transfer |")
    say("|---|---|---|---|---|---|")
    link = None
    for n in [1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22]:
        path = os.path.join(tmp, f"chain{n}.onnx")
        chain(path, n)
        j, s = profile(a.cli, path, a.ranks, a.iterations, "round-robin")
        link = j["link"]
        mpi, one = s["round-robin"], s["round-robin, one process"]
        edges = mpi["cross_rank_transfers"]
        added = (mpi["makespan_ms"] - one["makespan_ms"]) / max(1, edges) * 1e3
        bw = 4 * n / (mpi["makespan_ms"] * 1e-3 / max(1, edges)) * 1e-9
        size = f"{4 * n // 1024} KiB" if 4 * n < (1 << 20) else f"{4 * n >> 20} MiB"
        say(f"| {size} | {mpi['makespan_ms']:.3f} | {one['makespan_ms']:.3f} | "
            f"{mpi['makespan_ms'] / one['makespan_ms']:.2f} | {added:.1f} | {bw:.2f} |")
    say()
    say(f"MPI ping-pong between the ranks: {link['latency_us']:.2f} µs, {link['bandwidth_gbps']:.2f} GB/s")
    say()
    say(f"## Makespan across {a.ranks} ranks against the same plan in one process")
    say()
    say("| model | schedule | across ranks ms | one process ms | ratio | cross-rank transfers | serial ms |")
    say("|---|---|---|---|---|---|---|")
    models = [os.path.join(ROOT, "resources/models/inception_block.onnx"),
              os.path.join(ROOT, "resources/models/transformer_block.onnx")]
    gen = os.path.join(tmp, "gen")
    os.makedirs(gen, exist_ok=True)
    # Models nobody tuned the transport on: a wider Inception and the generated transformers.
    subprocess.run([sys.executable, os.path.join(HERE, "make_inception.py"), os.path.join(gen, "inception_3x64.onnx"),
                    "3", "64", "28"], check=True, capture_output=True)
    subprocess.run([sys.executable, os.path.join(HERE, "make_transformers.py"), gen], check=True, capture_output=True)
    models += sorted(os.path.join(gen, f) for f in os.listdir(gen) if f.endswith(".onnx"))[:4]
    for m in models:
        try:
            j, s = profile(a.cli, m, a.ranks, a.iterations, "greedy,round-robin")
        except subprocess.CalledProcessError as e:
            say(f"| {os.path.basename(m)} | failed: {e.stderr.strip().splitlines()[-1][:120]} | | | | | |")
            continue
        for sched in ["greedy", "round-robin"]:
            mpi, one = s[sched], s[sched + ", one process"]
            say(f"| {os.path.basename(m)} | {sched} | {mpi['makespan_ms']:.3f} | {one['makespan_ms']:.3f} | "
                f"{mpi['makespan_ms'] / one['makespan_ms']:.2f} | {mpi['cross_rank_transfers']} | "
                f"{s['serial']['makespan_ms']:.3f} |")
    say()
    say(f"## Pipeline across {a.ranks} ranks, batch of 16 (median of {a.iterations})")
    say()
    say("| model | micro-batches | makespan ms | serial ms | throughput vs serial | stages | bubble | ideal bubble |")
    say("|---|---|---|---|---|---|---|---|")
    mlp(os.path.join(gen, "mlp_8x512.onnx"))
    for m in [os.path.join(ROOT, "resources/models/transformer_block.onnx"), os.path.join(gen, "mlp_8x512.onnx")]:
        for micro in [1, 2, 4, 8]:
            try:
                j, s = profile(a.cli, m, a.ranks, a.iterations, "pipeline",
                               ["--microbatches", str(micro), "--dim", "batch=16"], in_process=False)
            except subprocess.CalledProcessError as e:
                say(f"| {os.path.basename(m)} | {micro} | failed: {e.stderr.strip().splitlines()[-1][:100]} | | | | | |")
                break
            p = [v for k, v in s.items() if k.startswith("pipeline")][0]
            serial = s["serial"]["makespan_ms"]
            say(f"| {os.path.basename(m)} | {micro} | {p['makespan_ms']:.3f} | {serial:.3f} | "
                f"{serial / p['makespan_ms']:.2f} | {p.get('stages', '-')} | "
                f"{p.get('bubble', 0) * 100:.0f}% | {p.get('ideal_bubble', 0) * 100:.0f}% |")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
