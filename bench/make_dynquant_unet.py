#!/usr/bin/python3
"""Generates a dynamically quantized U-Net-style CNN in the form ONNX Runtime's dynamic quantizer
(quantize_dynamic, Conv → ConvInteger) writes: every convolution is

    x ─ DynamicQuantizeLinear ─┬─ x_q ──┐
                               ├─ x_zp ─┼─ ConvInteger(w_q uint8, w_zp) ─ Cast(float) ─ Mul ─ Add(bias) ─ Relu
                               └─ x_scale ─ Mul(w_scale) ──────────────────────────────┘

with uint8 activations and uint8 weights that carry a zero point. Encoder levels (two 3×3 convs, a
depthwise 3×3 and a stride-2 3×3 down-convolution), a bottleneck, decoder levels (nearest Resize ×2,
Concat with the skip, two 3×3 convs) and a 1×1 head. Deterministic (fixed seed).

  make_dynquant_unet.py OUT.onnx [--size 256] [--base 16] [--levels 4] [--convs 2] [--symmetric]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed, symmetric):
        self.symmetric = symmetric
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base, a):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def node(self, op, inputs, base, outputs=1, **attrs):
        outs = [self.name(base) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=outs[0] + "_node", **attrs))
        return outs if outputs > 1 else outs[0]

    def conv(self, x, cin, cout, k=3, stride=1, group=1, relu=True):
        """One dynamically quantized convolution; float in, float out."""
        fan_in = cin // group * k * k
        w = (self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        # The weight quantization quantize_dynamic does for uint8 weights: range including 0;
        # symmetric (WeightSymmetric) puts the zero point at 128.
        lo, hi = min(0.0, float(w.min())), max(0.0, float(w.max()))
        if self.symmetric:
            lo, hi = -max(-lo, hi), max(-lo, hi)
        scale = np.float32((hi - lo) / 255.0)
        zp = np.uint8(128 if self.symmetric else np.clip(np.rint(-lo / scale), 0, 255))
        wq = np.clip(np.rint(w / scale) + int(zp), 0, 255).astype(np.uint8)
        bias = (self.rng.standard_normal(cout) * 0.05).astype(np.float32).reshape(cout, 1, 1)
        xq, xs, xzp = self.node("DynamicQuantizeLinear", [x], "dql", outputs=3)
        pad = (k - 1) // 2
        acc = self.node("ConvInteger", [xq, self.const("w", wq), xzp, self.const("w_zp", zp)], "convint",
                        kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride], group=group)
        f = self.node("Cast", [acc], "cast", to=TensorProto.FLOAT)
        s = self.node("Mul", [xs, self.const("w_scale", scale)], "scales")
        y = self.node("Add", [self.node("Mul", [f, s], "rescaled"), self.const("b", bias)], "biased")
        return self.node("Relu", [y], "relu") if relu else y


def build(size, base, levels, convs, symmetric=False, opset=13):
    b = Builder(13, symmetric)
    x, c, skips = "input", 3, []
    for lvl in range(levels):
        cout = base << lvl
        for i in range(convs):
            x, c = b.conv(x, c, cout), cout
        x = b.conv(x, c, c, group=c)  # depthwise
        skips.append((x, c))
        x = b.conv(x, c, c, stride=2)  # down
    for i in range(convs):
        x, c = b.conv(x, c, base << levels), base << levels
    scales = b.const("up_scales", np.array([1, 1, 2, 2], np.float32))
    for skip, sc in reversed(skips):
        up = b.node("Resize", [x, "", scales], "up", mode="nearest")
        x = b.node("Concat", [up, skip], "cat", axis=1)
        c += sc
        for i in range(convs):
            x, c = b.conv(x, c, sc), sc
    out = b.conv(x, c, 2, k=1, relu=False)
    b.nodes.append(helper.make_node("Identity", [out], ["output"]))
    g = helper.make_graph(b.nodes, "dynquant_unet",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 2, size, size])], b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="opscope-bench")
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--base", type=int, default=16)
    ap.add_argument("--levels", type=int, default=4)
    ap.add_argument("--convs", type=int, default=2)
    ap.add_argument("--symmetric", action="store_true", help="weight zero point 128")
    a = ap.parse_args()
    m = build(a.size, a.base, a.levels, a.convs, a.symmetric)
    onnx.save(m, a.out)
    print(f"{a.out}: {sum(n.op_type == 'ConvInteger' for n in m.graph.node)} ConvInteger nodes")


if __name__ == "__main__":
    main()
