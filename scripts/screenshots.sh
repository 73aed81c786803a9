#!/bin/sh
# Regenerates the screenshots in docs/screenshots from the bundled samples and a generated
# 10,000-node model. Uses Xvfb when available (the real X11 platform), else Qt's offscreen one.
set -eu
cd "$(dirname "$0")/.."
bin=build/bin/opscope
out=docs/screenshots
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 bench/make_deep_cnn.py "$tmp/deep10k.onnx" 1000 >/dev/null
run() {
  if command -v xvfb-run >/dev/null 2>&1; then
    xvfb-run -a -s "-screen 0 1700x1100x24" "$bin" "$@"
  else
    QT_QPA_PLATFORM=offscreen "$bin" "$@"
  fi
}
run resources/models/inception_block.onnx --select /stem/conv1/Conv --screenshot "$out/model-and-inspector.png"
run resources/models/transformer_block.onnx --run --step layernorm-fusion --screenshot "$out/pass-step.png"
run resources/models/inception_block.onnx --run --step conv-activation-fusion --screenshot "$out/pass-step-cnn.png"
run resources/models/transformer_block.onnx --run --step attention-fusion --screenshot "$out/attention-step.png"
run resources/models/inception_block.onnx --level all --run --step layout-nhwc --screenshot "$out/layout-step.png"
run "$tmp/deep10k.onnx" --screenshot "$out/large-model.png"
/usr/bin/python3 bench/make_inception.py "$tmp/inception.onnx" 3 64 28 >/dev/null
run "$tmp/inception.onnx" --profile 2 --size 1600x1100 --screenshot "$out/timeline.png"
# Three runs beside the timeline in a small window: the per-op table keeps every run's numbers.
run "$tmp/inception.onnx" --profile 3 --size 1100x800 --screenshot "$out/timeline-narrow.png"
run resources/models/inception_block.onnx --partition 2 --screenshot "$out/partition.png"
# Third-party-shaped exports (bench/make_realworld_shapes.py): Paddle's Constant weights inside
# their readers and the first view on the input, a step whose dot layout ran out of its budget
# (the quick layered layout), tf2onnx's long names elided, a nested If body with its breadcrumb
# trail, and the Values tab.
/usr/bin/python3 bench/make_realworld_shapes.py "$tmp" >/dev/null
/usr/bin/python3 bench/make_nested_control_flow.py "$tmp/nested" >/dev/null
run "$tmp/paddle_det.onnx" --screenshot "$out/paddle-first-view.png"
OPSCOPE_LAYOUT_BUDGET_MS=1000 run "$tmp/paddle_det.onnx" --run --step hardswish-fusion --screenshot "$out/paddle-hardswish-step.png"
run "$tmp/tf2onnx_long.onnx" --screenshot "$out/tf2onnx-long-names.png"
run "$tmp/nested/vad_like.onnx" --enter /If_1 --screenshot "$out/if-body-breadcrumbs.png"
# What the Ifs' bodies capture drawn as edges into the Ifs (captured Constants inside them); a
# quantized U-Net's three-output DynamicQuantizeLinear with its edge labels apart.
run "$tmp/nested/vad_like.onnx" --screenshot "$out/vad-captures.png"
run "$tmp/quant_unet.onnx" --screenshot "$out/quant-unet-labels.png"
run resources/models/inception_block.onnx --select /stem/conv1/Conv --values --screenshot "$out/values-tab.png"
run --dark "$tmp/paddle_det.onnx" --run --step hardswish-fusion --screenshot "$out/dark-paddle-step.png"
run "$tmp/paddle_det.onnx" --select hard_swish_0_clip --activations --screenshot "$out/activations.png"
# The Memory dock: the arena map of the sample, and of a pass step (compared with the step before).
run resources/models/inception_block.onnx --memory --size 1400x900 --screenshot "$out/memory-plan.png"
run resources/models/transformer_block.onnx --run --step layernorm-fusion --memory --size 1400x900 --screenshot "$out/memory-pass-step.png"
QT_SCALE_FACTOR=2 run resources/models/inception_block.onnx --size 1024x640 --screenshot "$out/hidpi-2x-small-screen.png"
echo "wrote $out/*.png"
