#!/usr/bin/python3
"""The data layout pass (layout-nhwc) on CNN models: latency of opscope's CPU runtime with the `all`
pipeline against the same pipeline without layout conversion (level `extended`: `all` less the
layout passes), same inputs and thread count, runs interleaved over several rounds; plus the
regions the pass converted (from `optimize --report`) and the largest output difference.

  bench/datalayout_bench.py [--cli build/bin/opscope-cli] [--rounds 5] [--threads 1,2] [--only NAME,...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_ort  # noqa: E402  (model table, model download, inputs, timing, output comparison)
import optimize_ort  # noqa: E402  (the generated 1,002-node CNN)

CNNS = ["inception_block", "deep_cnn", "ppocr_cls", "ppocr_v4_det", "oww_embedding", "quantized_cnn"]


def regions(cli, path):
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "r.json")
        subprocess.run([cli, "optimize", path, "-o", os.path.join(d, "o.onnx"), "--level", "all", "--target", "none",
                        "--report", report], check=True, capture_output=True)
        with open(report) as f:
            data = json.load(f)
    notes = [n for p in data["passes"] if p["name"] == "layout-nhwc" for n in p.get("notes", [])]
    converted = [n for n in notes if "stays NCHW" not in n]
    kinds = sorted({k for n in converted for k in ("NCHWc16", "NCHWc8", "NHWC") if k in n})
    return len(converted), len(notes), "/".join(kinds) or "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "bin", "opscope-cli"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    compare_ort.ensure_models()
    table = [m for m in optimize_ort.models() if m[0] in CNNS]
    if args.only:
        table = [m for m in table if m[0] in args.only.split(",")]
    print("| model | threads | regions converted | layouts | without layout ms | with layout ms | ratio | max abs diff |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for name, _kind, path, inputs in table:
        conv, total, kinds = regions(args.cli, path)
        with tempfile.TemporaryDirectory() as d:
            flags = compare_ort.write_inputs(d, inputs)
            for threads in [int(t) for t in args.threads.split(",")]:
                times = {"extended": [], "all": []}
                for _ in range(args.rounds):
                    for level in times:
                        out = os.path.join(d, f"out_{level}")
                        t, _rss = compare_ort.timed([args.cli, "run", path, "--json", "--iterations", "20",
                                                     "--threads", str(threads), "--optimize", level,
                                                     "--save-outputs", out] + flags)
                        times[level].append(t)
                diff, _rel = compare_ort.compare(os.path.join(d, "out_all"), os.path.join(d, "out_extended"))
                a, b = statistics.median(times["extended"]), statistics.median(times["all"])
                print(f"| {name} | {threads} | {conv} of {total} | {kinds} | {a:.3f} | {b:.3f} | {b / a:.2f} | {diff:.1e} |",
                      flush=True)


if __name__ == "__main__":
    main()
