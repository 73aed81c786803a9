#!/usr/bin/python3
"""Models shaped like the third-party exports the app met in the wild, for layout and GUI checks
(tests/tst_layouthang.cpp, scripts/screenshots.sh). Only the structure matters; channels are small.

  paddle_det    PaddleOCR-style DB detector: MobileNetV3 backbone (hardswish written as
                x·Clip(x+3, 0, 6)/6, SE blocks), FPN neck, weights as Constant nodes, names without
                scopes (conv2d_12.w_0, batch_norm_3.tmp_2)  ~1,100 nodes
  unet_skips    U-Net with long skip Concats across the whole depth                  ~600 nodes
  tf2onnx_long  tf2onnx-style NHWC net: input Transpose, explicit Pads, constant names of
                hundreds of characters                                               ~300 nodes
  quant_unet    dynamically quantized U-Net (onnxruntime's quantize_dynamic): every conv is
                DynamicQuantizeLinear (three outputs) → ConvInteger → Cast → rescale  ~1,000 nodes
(The nested-If voice model is make_nested_control_flow.py's vad_like.)

Usage: make_realworld_shapes.py OUTDIR [NAME ...]   (deterministic: fixed seeds)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed, constants_as_nodes=False):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.constants_as_nodes = constants_as_nodes
        self.counter = {}

    def uid(self, kind):
        n = self.counter.get(kind, 0)
        self.counter[kind] = n + 1
        return f"{kind}_{n}"

    def const(self, name, arr):
        arr = np.asarray(arr)
        if self.constants_as_nodes:
            # Paddle2ONNX (older) and some tracers write every weight as a Constant node.
            self.nodes.append(helper.make_node("Constant", [], [name], name=name + "_const",
                                               value=numpy_helper.from_array(arr, name)))
        else:
            self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def node(self, op, inputs, name, outputs=None, **attrs):
        outs = outputs or [name + ".tmp_0"]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs[0]

    def conv(self, x, cin, cout, k=3, stride=1, group=1, bias=True, name=None):
        name = name or self.uid("conv2d")
        w = self.const(name + ".w_0", (self.rng.standard_normal((cout, cin // group, k, k)) * 0.1).astype(np.float32))
        ins = [x, w]
        if bias:
            ins.append(self.const(name + ".b_0", np.zeros(cout, np.float32)))
        return self.node("Conv", ins, name, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[k // 2] * 4, group=group)

    def bn(self, x, c):
        name = self.uid("batch_norm")
        ins = [x] + [self.const(f"{name}.{p}", v) for p, v in
                     (("w_0", np.ones(c, np.float32)), ("b_0", np.zeros(c, np.float32)),
                      ("w_1", np.zeros(c, np.float32)), ("w_2", np.ones(c, np.float32)))]
        return self.node("BatchNormalization", ins, name, outputs=[name + ".tmp_2"])

    def hardswish(self, x):
        name = self.uid("hard_swish")
        three = self.const(name + ".three", np.float32(3))
        zero = self.const(name + ".zero", np.float32(0))
        six = self.const(name + ".six", np.float32(6))
        a = self.node("Add", [x, three], name + "_add")
        c = self.node("Clip", [a, zero, six], name + "_clip")
        m = self.node("Mul", [x, c], name + "_mul")
        return self.node("Div", [m, six], name)

    def se(self, x, c):
        name = self.uid("se")
        p = self.node("GlobalAveragePool", [x], name + "_pool")
        r = self.node("Relu", [self.conv(p, c, max(c // 4, 4), k=1)], name + "_relu")
        h = self.node("HardSigmoid", [self.conv(r, max(c // 4, 4), c, k=1)], name + "_hsig", alpha=0.2, beta=0.5)
        return self.node("Mul", [x, h], name + "_mul")

    def save(self, name, inputs, outputs, out, opset=11):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="opscope-bench")
        model.ir_version = 7
        onnx.checker.check_model(model)
        onnx.save(model, out)
        print(f"{out}: {len(self.nodes)} nodes")


def paddle_det(out):
    b = Builder(11, constants_as_nodes=True)
    x = "x"
    x = b.hardswish(b.bn(b.conv(x, 3, 16, stride=2, bias=False), 16))
    # MobileNetV3-large-like: (expand, out, kernel, stride, se, hardswish)
    cfg = [(16, 16, 3, 1, False, False), (64, 24, 3, 2, False, False), (72, 24, 3, 1, False, False),
           (72, 40, 5, 2, True, False), (120, 40, 5, 1, True, False), (120, 40, 5, 1, True, False),
           (240, 80, 3, 2, False, True), (200, 80, 3, 1, False, True), (184, 80, 3, 1, False, True),
           (184, 80, 3, 1, False, True), (480, 112, 3, 1, True, True), (672, 112, 3, 1, True, True),
           (672, 160, 5, 2, True, True), (960, 160, 5, 1, True, True), (960, 160, 5, 1, True, True)]
    c = 16
    taps = []
    for i, (e, o, k, s, se, hs) in enumerate(cfg):
        act = b.hardswish if hs else (lambda t: b.node("Relu", [t], b.uid("relu")))
        y = act(b.bn(b.conv(x, c, e, k=1, bias=False), e))
        y = act(b.bn(b.conv(y, e, e, k=k, stride=s, group=e, bias=False), e))
        if se:
            y = b.se(y, e)
        y = b.bn(b.conv(y, e, o, k=1, bias=False), o)
        if s == 1 and c == o:
            y = b.node("Add", [x, y], b.uid("elementwise_add"))
        if i + 1 < len(cfg) and cfg[i + 1][3] == 2 or i + 1 == len(cfg):
            taps.append((y, o))
        x, c = y, o
    # DB-FPN neck: lateral 1×1 convs, top-down upsampling adds, each level upsampled and concatenated.
    lat = [b.conv(t, ch, 32, k=1, bias=False) for t, ch in taps[-4:]]
    top = lat[-1]
    merged = [top]
    for l in reversed(lat[:-1]):
        scales = b.const(b.uid("scales"), np.array([1, 1, 2, 2], np.float32))
        roi = b.const(b.uid("roi"), np.array([], np.float32))
        up = b.node("Resize", [top, roi, scales], b.uid("nearest_interp"), mode="nearest")
        top = b.node("Add", [l, up], b.uid("elementwise_add"))
        merged.insert(0, top)
    outs = []
    for i, m in enumerate(merged):
        y = b.conv(m, 32, 8, bias=False)
        if i:
            scales = b.const(b.uid("scales"), np.array([1, 1, 2 ** i, 2 ** i], np.float32))
            roi = b.const(b.uid("roi"), np.array([], np.float32))
            y = b.node("Resize", [y, roi, scales], b.uid("nearest_interp"), mode="nearest")
        outs.append(y)
    y = b.node("Concat", outs, b.uid("concat"), axis=1)
    # DB head: Conv-BN-Relu, two ConvTranspose upsamplings, Sigmoid.
    y = b.node("Relu", [b.bn(b.conv(y, 32, 8, bias=False), 8)], b.uid("relu"))
    for _ in range(2):
        w = b.const(b.uid("conv2d_transpose") + ".w_0", (b.rng.standard_normal((8, 8, 2, 2)) * 0.1).astype(np.float32))
        y = b.node("ConvTranspose", [y, w], b.uid("conv2d_transpose"), strides=[2, 2])
        y = b.node("Relu", [b.bn(y, 8)], b.uid("relu"))
    y = b.node("Sigmoid", [b.conv(y, 8, 1, bias=False)], b.uid("sigmoid"), outputs=["sigmoid_0.tmp_0"])
    b.save("paddle_det", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["n", "c", "h", "w"])], out)


def unet_skips(out, depth=5, blocks=6):
    b = Builder(12)
    x, c = "input", 3
    skips = []
    for d in range(depth):
        o = 8 * (d + 1)
        for _ in range(blocks):
            x = b.node("Relu", [b.bn(b.conv(x, c, o), o)], b.uid("relu"))
            c = o
        skips.append((x, c))
        x = b.node("MaxPool", [x], b.uid("pool"), kernel_shape=[2, 2], strides=[2, 2])
    for d in reversed(range(depth)):
        s, sc = skips[d]
        scales = b.const(b.uid("scales"), np.array([1, 1, 2, 2], np.float32))
        roi = b.const(b.uid("roi"), np.array([], np.float32))
        x = b.node("Resize", [x, roi, scales], b.uid("up"), mode="nearest")
        x = b.node("Concat", [x, s], b.uid("cat"), axis=1)
        c += sc
        for _ in range(blocks):
            x = b.node("Relu", [b.bn(b.conv(x, c, sc), sc)], b.uid("relu"))
            c = sc
    y = b.conv(x, c, 1, k=1)
    b.save("unet_skips", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 64, 64])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["n", "c", "h", "w"])], out)


def tf2onnx_long(out, blocks=24):
    b = Builder(13)
    scope = "StatefulPartitionedCall/model/" + "/".join(f"feature_extractor_block_{i}" for i in range(12))
    x = b.node("Transpose", ["input_1"], "StatefulPartitionedCall/model/tf_op_layer_transpose", perm=[0, 3, 1, 2])
    c = 3
    for i in range(blocks):
        o = 16 if i < blocks // 2 else 32
        p = f"{scope}/block_{i}_depthwise_conv2d_with_a_long_tensorflow_name/"
        pads = b.const(p + "Pad/paddings__" + "ReadVariableOp" * 12, np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))
        x = b.node("Pad", [x, pads], p + "Pad")
        w = b.const(p + "depthwise_weights/Read/ReadVariableOp:0__" + "x" * 200,
                    (b.rng.standard_normal((c, 1, 3, 3)) * 0.1).astype(np.float32))
        x = b.node("Conv", [x, w], p + "depthwise", group=c, kernel_shape=[3, 3], strides=[1 + (i % 6 == 5)] * 2)
        w2 = b.const(p + "pointwise_weights/Read/ReadVariableOp:0__" + "y" * 180,
                     (b.rng.standard_normal((o, c, 1, 1)) * 0.1).astype(np.float32))
        y = b.node("Conv", [x, w2], p + "pointwise", kernel_shape=[1, 1])
        y = b.node("Relu", [y], p + "Relu6")
        x, c = y, o
    y = b.node("Transpose", [x], "StatefulPartitionedCall/model/tf_op_layer_transpose_out", perm=[0, 2, 3, 1])
    b.save("tf2onnx_long", [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, [1, 96, 96, 3])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["n", "c", "h", "w"])], out, opset=13)


def quant_unet(out, depth=5, blocks=14):
    b = Builder(15)

    def qconv(x, cin, cout):
        name = b.uid("conv")
        xq, xs, xz = name + "_xq", name + "_xs", name + "_xz"
        b.node("DynamicQuantizeLinear", [x], name + "_quant", outputs=[xq, xs, xz])
        wq = b.const(name + "_wq", b.rng.integers(0, 255, (cout, cin, 3, 3)).astype(np.uint8))
        wz = b.const(name + "_wz", np.uint8(128))
        y = b.node("ConvInteger", [xq, wq, xz, wz], name, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        y = b.node("Cast", [y], name + "_cast", to=TensorProto.FLOAT)
        scale = b.node("Mul", [xs, b.const(name + "_ws", np.float32(0.003))], name + "_scale")
        y = b.node("Mul", [y, scale], name + "_rescale")
        y = b.node("Add", [y, b.const(name + "_b", np.zeros((cout, 1, 1), np.float32))], name + "_bias")
        return b.node("Relu", [y], name + "_relu")

    x, c = "input", 3
    skips = []
    for d in range(depth):
        o = 4 * (d + 1)
        for _ in range(blocks):
            x, c = qconv(x, c, o), o
        skips.append((x, c))
        x = b.node("MaxPool", [x], b.uid("pool"), kernel_shape=[2, 2], strides=[2, 2])
    for d in reversed(range(depth)):
        s, sc = skips[d]
        scales = b.const(b.uid("scales"), np.array([1, 1, 2, 2], np.float32))
        x = b.node("Resize", [x, "", scales], b.uid("up"), mode="nearest")
        x = b.node("Concat", [x, s], b.uid("cat"), axis=1)
        c += sc
        for _ in range(blocks):
            x, c = qconv(x, c, sc), sc
    b.save("quant_unet", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 64, 64])],
           [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["n", "c", "h", "w"])], out, opset=13)


MODELS = {"paddle_det": paddle_det, "unet_skips": unet_skips, "tf2onnx_long": tf2onnx_long,
          "quant_unet": quant_unet}

if __name__ == "__main__":
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name in sys.argv[2:] or MODELS:
        MODELS[name](os.path.join(outdir, name + ".onnx"))
