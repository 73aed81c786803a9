#!/usr/bin/python3
"""Memory planning on the benchmark models (compare_ort.py's table), against its lower bound and
against ONNX Runtime's peak RSS in the same run.

  1. `opscope-cli memory MODEL --json` per model and schedule (serial, parallel, greedy on cpu:2):
     naive / in-place / planned arena bytes, the lower bound (most bytes live at one step of the
     plan's order), planned/bound and the strategy that won. Goal: planned <= 1.05x the bound.
  2. Peak RSS (GNU time) of `opscope-cli run` with and without the memory plan and of
     onnxruntime-node on the same inputs, and of each runner on an empty model (what loading the
     libraries costs). Goal: opscope <= 0.6x ORT.
  3. Planning time of a generated 10,000-node model (a residual chain with long skips), serial and
     parallel. Goal: < 50 ms.

  bench/memory_bench.py [--cli build/bin/opscope-cli] [--only NAME,...] [--markdown FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_ort  # noqa: E402  (model table, inputs, ORT peer)


def mib(b):
    return b / (1 << 20)


def memory_json(cli, path, flags, schedule):
    p = subprocess.run([cli, "memory", path, "--json", "--schedule", schedule, "--devices", "cpu:2"] + flags,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"memory {schedule} failed: {p.stderr.strip()[-400:]}")
    return json.loads(p.stdout)


def peak_rss(cmd):
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} failed: {p.stderr.strip()[-400:]}")
    return int(p.stderr.strip().splitlines()[-1]) / 1024.0


def long_chain(path, nodes):
    """A residual chain of `nodes` elementwise ops on [1, 256] with a skip every 16 ops."""
    import onnx
    from onnx import TensorProto, helper
    inits = [helper.make_tensor("w", TensorProto.FLOAT, [256], [0.5] * 256)]
    made, prev, skip = [], "x", "x"
    for i in range(nodes):
        out = f"v{i}"
        if i % 16 == 15:
            made.append(helper.make_node("Add", [prev, skip], [out]))
            skip = out
        elif i % 3 == 0:
            made.append(helper.make_node("Mul", [prev, "w"], [out]))
        else:
            made.append(helper.make_node("Tanh" if i % 3 == 1 else "Relu", [prev], [out]))
        prev = out
    g = helper.make_graph(made, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 256])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "bin", "opscope-cli"))
    ap.add_argument("--only")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    compare_ort.ensure_ort()
    compare_ort.ensure_models()
    node_run = os.path.join(HERE, "ort", "run.js")
    work = tempfile.mkdtemp(prefix="opscope-memory-")
    plan_rows, rss_rows = [], []
    for name, kind, path, inputs in compare_ort.model_table():
        if args.only and name not in args.only.split(","):
            continue
        folder = os.path.join(work, name)
        os.makedirs(folder)
        flags = compare_ort.write_inputs(folder, inputs)
        for schedule in ("serial", "parallel", "greedy"):
            j = memory_json(args.cli, path, flags, schedule)
            naive = sum(d["naive_bytes"] for d in j["devices"])
            inplace = sum(d["inplace_bytes"] for d in j["devices"])
            planned = sum(d["planned_bytes"] for d in j["devices"])
            bound = sum(d["lower_bound_bytes"] for d in j["devices"])
            worst = max((d["planned_bytes"] / d["lower_bound_bytes"] if d["lower_bound_bytes"] else 1.0)
                        for d in j["devices"])
            strategies = ",".join(sorted({d["strategy"] for d in j["devices"]}))
            plan_rows.append((name, schedule, naive, inplace, planned, bound, worst, strategies, j["planning_ms"]))
            print(f"{name:<20} {schedule:<8} naive {mib(naive):8.2f}  in-place {mib(inplace):8.2f}  planned "
                  f"{mib(planned):8.2f}  bound {mib(bound):8.2f} MiB  worst device {worst:.2f}x  {strategies}",
                  flush=True)
        run = [args.cli, "run", path, "--iterations", "3", "--json"] + flags
        planned_rss = peak_rss(run)
        naive_rss = peak_rss(run + ["--no-memory-plan"])
        ort_rss = peak_rss(["node", node_run, path, "--iterations", "3"] + flags)
        rss_rows.append((name, planned_rss, naive_rss, ort_rss))
        print(f"{name:<20} peak RSS: opscope {planned_rss:.0f} MiB (without the plan {naive_rss:.0f})  ORT "
              f"{ort_rss:.0f} MiB  ratio {planned_rss / ort_rss:.2f}", flush=True)

    empty = os.path.join(work, "empty.onnx")
    long_chain(empty, 1)
    import numpy as np
    x = os.path.join(work, "x.npy")
    np.save(x, np.zeros((1, 256), np.float32))
    base_ours = peak_rss([args.cli, "run", empty, "--iterations", "1", "--json", "--input", f"x={x}"])
    base_ort = peak_rss(["node", node_run, empty, "--iterations", "1", "--input", f"x={x}"])
    chain = os.path.join(work, "chain10k.onnx")
    long_chain(chain, 10000)
    timing = {}
    for schedule in ("serial", "parallel"):
        j = memory_json(args.cli, chain, ["--optimize", "none"], schedule)
        timing[schedule] = (j["planning_ms"], j["devices"][0]["steps"])
        print(f"10,000-node chain, {schedule}: planned in {j['planning_ms']:.1f} ms ({j['devices'][0]['steps']} steps)")

    lines = ["| model | schedule | naive MiB | in-place MiB | planned MiB | lower bound MiB | planned / bound "
             "(worst device) | strategy | planning ms |", "|---|---|---:|---:|---:|---:|---:|---|---:|"]
    for r in plan_rows:
        lines.append(f"| {r[0]} | {r[1]} | {mib(r[2]):.2f} | {mib(r[3]):.2f} | {mib(r[4]):.2f} | {mib(r[5]):.2f} | "
                     f"{r[6]:.2f} | {r[7]} | {r[8]:.2f} |")
    lines += ["", f"Peak RSS (MiB); a 1-node model costs opscope {base_ours:.0f} and ORT (node) {base_ort:.0f}.", "",
              "| model | opscope | opscope without the plan | ORT | opscope / ORT | above the 1-node baseline, opscope / ORT |",
              "|---|---:|---:|---:|---:|---:|"]
    for r in rss_rows:
        above = (r[1] - base_ours) / max(r[3] - base_ort, 1.0)
        lines.append(f"| {r[0]} | {r[1]:.0f} | {r[2]:.0f} | {r[3]:.0f} | {r[1] / r[3]:.2f} | {above:.2f} |")
    lines += ["", "| 10,000-node model | planning ms | steps |", "|---|---:|---:|"]
    for schedule, (ms, steps) in timing.items():
        lines.append(f"| {schedule} | {ms:.1f} | {steps} |")
    text = "\n".join(lines)
    print("\n" + text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
