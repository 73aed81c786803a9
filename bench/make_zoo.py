#!/usr/bin/python3
"""A model zoo at realistic sizes, written the way real exporters write these architectures, for
bench/compare_ort.py (issue 13: the next unseen model must be fast and correct too). Weights are
random (He-initialised, so activations keep their scale through the depth); only structure, sizes
and export idioms matter.

  mobilenet_v2      torchvision, 224², BatchNorm folded into Conv (PyTorch eval export), ReLU6 as
                    Clip(0, 6) with constant inputs, inverted residuals, GlobalAveragePool → Flatten → Gemm
  mobilenet_v3      torchvision MobileNetV3-Large, 224², HardSwish op, SE with HardSigmoid
  resnet18          torchvision, 224², BatchNorm folded
  resnet50          224², bottlenecks, BatchNormalization nodes left in (inference-mode nodes, as
                    Keras/tf2onnx-style exports keep them): the optimizer must fuse them
  efficientnet_b0   224², SiLU written x·Sigmoid(x), SE from GlobalAveragePool, 5×5 depthwise
  unet              256², double 3×3 conv blocks, MaxPool down, ConvTranspose 2×2 up, skip Concats
  yolo_head         YOLOv5n-style at 320²: SiLU CSP backbone, SPPF (three chained 5×5 MaxPools),
                    PAN neck with nearest Resize + Concat, three Detect heads with Reshape/Transpose/
                    Sigmoid and grid arithmetic, Concat of all boxes
  tf2onnx_mobilenet tf2onnx MobileNetV1 at 224²: NHWC input and Transpose, explicit asymmetric Pad
                    before every stride-2 depthwise conv, Relu6 as Clip, channel padding by Concat with
                    ConstantOfShape, Resize sizes from a foldable Shape → Slice → Concat chain, Softmax
  conformer         4 conformer blocks, d=256, T=200 frames: half-step FFNs with Swish, MHSA (4 heads),
                    conv module (pointwise Conv1d, GLU, depthwise Conv1d k=31, BatchNorm, Swish)
  vit_tiny          ViT-Ti/16 at 224²: patch Conv, class token Concat, position embedding, 12 blocks
                    (LayerNormalization, 3 heads, erf GELU)
(The dynamically quantized U-Net is make_dynquant_unet.py.)

  bench/make_zoo.py OUT_DIR [NAME ...]      deterministic (fixed seeds); prints each model's input
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, value, name=None):
        self.n += 1
        name = name or f"const_{self.n}"
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def f32(self, v):
        return self.const(np.array(v, np.float32))

    def i64(self, v):
        return self.const(np.array(v, np.int64))

    def op(self, op, inputs, n_out=1, **attrs):
        self.n += 1
        outs = [f"{op.lower()}_{self.n}" + (f"_{i}" if n_out > 1 else "") for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=f"/{op}_{self.n}", **attrs))
        return outs if n_out > 1 else outs[0]

    def weight(self, shape, fan_in, gain=2.0):
        return self.const((self.rng.standard_normal(shape) * math.sqrt(gain / fan_in)).astype(np.float32))

    def conv(self, x, cin, cout, k=3, s=1, g=1, pad=None, bias=True, dims=2, dilation=1, gain=2.0):
        ks = [k] * dims
        w = self.weight([cout, cin // g] + ks, cin // g * k ** dims, gain)
        ins = [x, w] + ([self.const((self.rng.standard_normal(cout) * 0.05).astype(np.float32))] if bias else [])
        p = (k // 2) * dilation if pad is None else pad
        return self.op("Conv", ins, kernel_shape=ks, strides=[s] * dims, pads=[p] * (2 * dims), group=g,
                       dilations=[dilation] * dims)

    def bn(self, x, c):
        r = self.rng
        ins = [x] + [self.const(v.astype(np.float32)) for v in
                     (r.uniform(0.5, 1.5, c), r.standard_normal(c) * 0.1, r.standard_normal(c) * 0.1, r.uniform(0.5, 1.5, c))]
        return self.op("BatchNormalization", ins, epsilon=1e-5)

    def linear(self, x, cin, cout, gain=1.0, bias=True):
        y = self.op("MatMul", [x, self.weight([cin, cout], cin, gain)])
        return self.op("Add", [y, self.const((self.rng.standard_normal(cout) * 0.02).astype(np.float32))]) if bias else y

    def gemm(self, x, cin, cout):
        return self.op("Gemm", [x, self.weight([cout, cin], cin, 1.0), self.const(np.zeros(cout, np.float32))], transB=1)

    def relu6(self, x):
        return self.op("Clip", [x, self.f32(0.0), self.f32(6.0)])

    def silu(self, x):
        return self.op("Mul", [x, self.op("Sigmoid", [x])])

    def layernorm(self, x, d):
        return self.op("LayerNormalization", [x, self.const(np.ones(d, np.float32)), self.const(np.zeros(d, np.float32))],
                       axis=-1, epsilon=1e-5)

    def classifier(self, x, c, classes=1000):
        p = self.op("GlobalAveragePool", [x])
        return self.gemm(self.op("Flatten", [p], axis=1), c, classes)

    def save(self, out, name, inputs, outputs, opset=17):
        def make(outs):
            graph = helper.make_graph(self.nodes, name, inputs, outs, self.inits)
            m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="opscope-bench-zoo")
            m.ir_version = 8
            return m

        inferred = onnx.shape_inference.infer_shapes(make([helper.make_tensor_value_info(o, TensorProto.FLOAT, s)
                                                           for o, s in outputs]))
        model = make(list(inferred.graph.output))
        onnx.checker.check_model(model)
        onnx.save(model, out)
        dims = lambda v: [d.dim_value for d in v.type.tensor_type.shape.dim]
        print(f"{out}: {len(self.nodes)} nodes, {[(i.name, dims(i)) for i in inputs]} -> "
              f"{[dims(o) for o in model.graph.output]}")


def image_input(name="input", shape=(1, 3, 224, 224)):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def any_output(name, shape=None):
    # Typed in Builder.save from ONNX's shape inference, as exporters write them, where it gets there
    # (onnx 1.12 loses the shape at Split with a constant `split` input).
    return name, shape


def divisible(v, d=8):
    n = max(d, int(v + d / 2) // d * d)
    return n + d if n < 0.9 * v else n


def mobilenet_v2(out):
    b = Builder(1)
    x = b.relu6(b.conv("input", 3, 32, 3, 2))
    cin = 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            h = x
            hid = cin * t
            if t != 1:
                h = b.relu6(b.conv(h, cin, hid, 1))
            h = b.relu6(b.conv(h, hid, hid, 3, stride, g=hid))
            h = b.conv(h, hid, c, 1, gain=1.0)
            x = b.op("Add", [x, h]) if stride == 1 and cin == c else h
            cin = c
    x = b.relu6(b.conv(x, cin, 1280, 1))
    b.save(out, "mobilenet_v2", [image_input()], [any_output(b.classifier(x, 1280))], opset=13)


def mobilenet_v3(out):
    b = Builder(2)
    hs = lambda t: b.op("HardSwish", [t])
    x = hs(b.conv("input", 3, 16, 3, 2))
    cin = 16
    cfg = [(3, 16, 16, 0, "RE", 1), (3, 64, 24, 0, "RE", 2), (3, 72, 24, 0, "RE", 1), (5, 72, 40, 1, "RE", 2),
           (5, 120, 40, 1, "RE", 1), (5, 120, 40, 1, "RE", 1), (3, 240, 80, 0, "HS", 2), (3, 200, 80, 0, "HS", 1),
           (3, 184, 80, 0, "HS", 1), (3, 184, 80, 0, "HS", 1), (3, 480, 112, 1, "HS", 1), (3, 672, 112, 1, "HS", 1),
           (5, 672, 160, 1, "HS", 2), (5, 960, 160, 1, "HS", 1), (5, 960, 160, 1, "HS", 1)]
    for k, exp, c, se, nl, s in cfg:
        act = hs if nl == "HS" else (lambda t: b.op("Relu", [t]))
        h = x
        if exp != cin:
            h = act(b.conv(h, cin, exp, 1))
        h = act(b.conv(h, exp, exp, k, s, g=exp))
        if se:
            sq = divisible(exp // 4)
            p = b.op("GlobalAveragePool", [h])
            p = b.op("Relu", [b.conv(p, exp, sq, 1)])
            p = b.op("HardSigmoid", [b.conv(p, sq, exp, 1)], alpha=1.0 / 6, beta=0.5)
            h = b.op("Mul", [h, p])
        h = b.conv(h, exp, c, 1, gain=1.0)
        x = b.op("Add", [x, h]) if s == 1 and cin == c else h
        cin = c
    x = hs(b.conv(x, cin, 960, 1))
    p = b.op("Flatten", [b.op("GlobalAveragePool", [x])], axis=1)
    y = b.gemm(hs(b.gemm(p, 960, 1280)), 1280, 1000)
    b.save(out, "mobilenet_v3_large", [image_input()], [any_output(y)], opset=14)


def resnet(out, name, blocks, bottleneck, folded, seed):
    b = Builder(seed)
    relu = lambda t: b.op("Relu", [t])

    def cbn(x, cin, cout, k, s, gain=2.0):
        if folded:
            return b.conv(x, cin, cout, k, s, gain=gain)
        return b.bn(b.conv(x, cin, cout, k, s, bias=False, gain=gain), cout)

    x = relu(cbn("input", 3, 64, 7, 2))
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for stage, (n, width) in enumerate(zip(blocks, [64, 128, 256, 512])):
        for i in range(n):
            s = 2 if stage > 0 and i == 0 else 1
            cout = width * 4 if bottleneck else width
            if bottleneck:
                h = relu(cbn(x, cin, width, 1, 1))
                h = relu(cbn(h, width, width, 3, s))
                h = cbn(h, width, cout, 1, 1, gain=0.5)
            else:
                h = relu(cbn(x, cin, width, 3, s))
                h = cbn(h, width, width, 3, 1, gain=0.5)
            short = cbn(x, cin, cout, 1, s, gain=1.0) if s != 1 or cin != cout else x
            x = relu(b.op("Add", [h, short]))
            cin = cout
    b.save(out, name, [image_input()], [any_output(b.classifier(x, cin))], opset=13)


def efficientnet_b0(out):
    b = Builder(5)
    x = b.silu(b.conv("input", 3, 32, 3, 2))
    cin = 32
    for t, k, s, c, n in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
                          (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hid = cin * t
            h = b.silu(b.conv(x, cin, hid, 1)) if t != 1 else x
            h = b.silu(b.conv(h, hid, hid, k, stride, g=hid))
            sq = max(1, cin // 4)
            p = b.op("GlobalAveragePool", [h])
            p = b.silu(b.conv(p, hid, sq, 1))
            h = b.op("Mul", [h, b.op("Sigmoid", [b.conv(p, sq, hid, 1)])])
            h = b.conv(h, hid, c, 1, gain=1.0)
            x = b.op("Add", [h, x]) if stride == 1 and cin == c else h
            cin = c
    x = b.silu(b.conv(x, cin, 1280, 1))
    b.save(out, "efficientnet_b0", [image_input()], [any_output(b.classifier(x, 1280))], opset=13)


def unet(out, base=16, depth=4):
    b = Builder(6)

    def double(x, cin, cout):
        x = b.op("Relu", [b.conv(x, cin, cout, 3)])
        return b.op("Relu", [b.conv(x, cout, cout, 3)])

    skips, x, cin = [], "input", 3
    for d in range(depth):
        x = double(x, cin, base << d)
        skips.append((x, base << d))
        x = b.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
        cin = base << d
    x = double(x, cin, base << depth)
    cin = base << depth
    for d in reversed(range(depth)):
        c = base << d
        w = b.weight([cin, c, 2, 2], cin)
        x = b.op("ConvTranspose", [x, w, b.const(np.zeros(c, np.float32))], kernel_shape=[2, 2], strides=[2, 2])
        x = double(b.op("Concat", [skips[d][0], x], axis=1), 2 * c, c)
        cin = c
    y = b.op("Sigmoid", [b.conv(x, cin, 2, 1, gain=1.0)])
    b.save(out, "unet", [image_input(shape=(1, 3, 256, 256))], [any_output(y)], opset=13)


def yolo_head(out, size=320, classes=80):
    b = Builder(7)

    def cbs(x, cin, cout, k=1, s=1, pad=None):
        return b.silu(b.conv(x, cin, cout, k, s, pad=pad))

    def c3(x, cin, cout, n, shortcut=True):
        h = cout // 2
        a = cbs(x, cin, h)
        for _ in range(n):
            t = cbs(cbs(a, h, h), h, h, 3)
            a = b.op("Add", [a, t]) if shortcut else t
        return cbs(b.op("Concat", [a, cbs(x, cin, h)], axis=1), 2 * h, cout)

    x = cbs("input", 3, 16, 6, 2, pad=2)  # P1/2, YOLOv5's k6 s2 p2 stem
    x = cbs(x, 16, 32, 3, 2)
    x = c3(x, 32, 32, 1)
    x = cbs(x, 32, 64, 3, 2)
    p3 = c3(x, 64, 64, 2)
    x = cbs(p3, 64, 128, 3, 2)
    p4 = c3(x, 128, 128, 3)
    x = cbs(p4, 128, 256, 3, 2)
    x = c3(x, 256, 256, 1)
    # SPPF
    a = cbs(x, 256, 128)
    m1 = b.op("MaxPool", [a], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    m2 = b.op("MaxPool", [m1], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    m3 = b.op("MaxPool", [m2], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    p5 = cbs(b.op("Concat", [a, m1, m2, m3], axis=1), 512, 256)
    up = lambda t: b.op("Resize", [t, "", b.f32([1, 1, 2, 2])], mode="nearest")
    h5 = cbs(p5, 256, 128)
    n4 = c3(b.op("Concat", [up(h5), p4], axis=1), 256, 128, 1, False)
    h4 = cbs(n4, 128, 64)
    o3 = c3(b.op("Concat", [up(h4), p3], axis=1), 128, 64, 1, False)
    o4 = c3(b.op("Concat", [cbs(o3, 64, 64, 3, 2), h4], axis=1), 128, 128, 1, False)
    o5 = c3(b.op("Concat", [cbs(o4, 128, 128, 3, 2), h5], axis=1), 256, 256, 1, False)
    no = classes + 5
    boxes = []
    for feat, c, stride in [(o3, 64, 8), (o4, 128, 16), (o5, 256, 32)]:
        g = size // stride
        y = b.conv(feat, c, 3 * no, 1, gain=1.0)
        y = b.op("Reshape", [y, b.i64([1, 3, no, g, g])])
        y = b.op("Sigmoid", [b.op("Transpose", [y], perm=[0, 1, 3, 4, 2])])
        xy, wh, conf = b.op("Split", [y, b.i64([2, 2, no - 4])], n_out=3, axis=4)
        gy, gx = np.meshgrid(np.arange(g), np.arange(g), indexing="ij")
        grid = (np.stack([gx, gy], -1).reshape(1, 1, g, g, 2) - 0.5).astype(np.float32)
        anchor = (np.random.default_rng(stride).uniform(10, 100, (1, 3, 1, 1, 2))).astype(np.float32)
        xy = b.op("Mul", [b.op("Add", [b.op("Mul", [xy, b.f32(2.0)]), b.const(grid)]), b.f32(float(stride))])
        wh = b.op("Mul", [b.op("Pow", [b.op("Mul", [wh, b.f32(2.0)]), b.f32(2.0)]), b.const(anchor)])
        y = b.op("Concat", [xy, wh, conf], axis=4)
        boxes.append(b.op("Reshape", [y, b.i64([1, -1, no])]))
    y = b.op("Concat", boxes, axis=1)
    rows = 3 * sum((size // s) ** 2 for s in (8, 16, 32))
    b.save(out, "yolo_head", [image_input(shape=(1, 3, size, size))], [any_output(y, [1, rows, no])], opset=13)


def tf2onnx_mobilenet(out):
    b = Builder(8)
    x = b.op("Transpose", ["input"], perm=[0, 3, 1, 2])
    pad = lambda t: b.op("Pad", [t, b.i64([0, 0, 0, 0, 0, 0, 1, 1])])  # TF 'SAME' at stride 2: bottom/right only
    x = b.relu6(b.conv(pad(x), 3, 32, 3, 2, pad=0))
    cin = 32
    for c, s in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + [(1024, 2), (1024, 1)]:
        x = b.relu6(b.conv(pad(x), cin, cin, 3, 2, g=cin, pad=0) if s == 2 else b.conv(x, cin, cin, 3, 1, g=cin))
        x = b.relu6(b.conv(x, cin, c, 1))
        cin = c
        if c == 256 and s == 1:
            # A feature branch resized back up and merged, sizes from the tensor's own shape (as TF writes
            # tf.image.resize(t, tf.shape(other)[1:3])), with the channels zero-padded by a Concat.
            shape = b.op("Shape", [x])
            hw = b.op("Slice", [shape, b.i64([2]), b.i64([4]), b.i64([0])])
            sizes = b.op("Concat", [b.i64([1, 256]), hw], axis=0)
            small = b.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
            r = b.op("Resize", [small, "", "", sizes], mode="nearest", nearest_mode="floor",
                     coordinate_transformation_mode="asymmetric")
            x = b.op("Add", [x, r])
            padc = b.op("ConstantOfShape", [b.i64([1, 64, 28, 28])], value=numpy_helper.from_array(np.zeros(1, np.float32)))
            x = b.op("Concat", [x, padc], axis=1)
            cin = 320
    x = b.op("ReduceMean", [b.op("Transpose", [x], perm=[0, 2, 3, 1])], axes=[1, 2], keepdims=0)
    y = b.op("Softmax", [b.linear(x, 1024, 1001)], axis=-1)
    b.save(out, "tf2onnx_mobilenet", [image_input(shape=(1, 224, 224, 3))], [any_output(y)], opset=13)


def conformer(out, d=256, t=200, heads=4, blocks=4):
    b = Builder(9)
    hd = d // heads

    def ffn(x):
        h = b.silu(b.linear(b.layernorm(x, d), d, 4 * d, gain=2.0))
        return b.op("Add", [x, b.op("Mul", [b.linear(h, 4 * d, d), b.f32(0.5)])])

    def mhsa(x):
        h = b.layernorm(x, d)
        split = lambda z: b.op("Transpose", [b.op("Reshape", [z, b.i64([1, t, heads, hd])])], perm=[0, 2, 1, 3])
        q, k, v = (split(b.linear(h, d, d)) for _ in range(3))
        kt = b.op("Transpose", [k], perm=[0, 1, 3, 2])
        s = b.op("Div", [b.op("MatMul", [q, kt]), b.f32(math.sqrt(hd))])
        ctx = b.op("MatMul", [b.op("Softmax", [s], axis=-1), v])
        ctx = b.op("Reshape", [b.op("Transpose", [ctx], perm=[0, 2, 1, 3]), b.i64([1, t, d])])
        return b.op("Add", [x, b.linear(ctx, d, d)])

    def convmod(x):
        h = b.op("Transpose", [b.layernorm(x, d)], perm=[0, 2, 1])
        h = b.conv(h, d, 2 * d, 1, dims=1, gain=1.0)
        a, g = b.op("Split", [h, b.i64([d, d])], n_out=2, axis=1)
        h = b.op("Mul", [a, b.op("Sigmoid", [g])])
        h = b.silu(b.bn(b.conv(h, d, d, 31, g=d, dims=1), d))
        h = b.conv(h, d, d, 1, dims=1, gain=1.0)
        return b.op("Add", [x, b.op("Transpose", [h], perm=[0, 2, 1])])

    x = "input"
    for _ in range(blocks):
        x = b.layernorm(ffn(convmod(mhsa(ffn(x)))), d)
    b.save(out, "conformer", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, t, d])], [any_output(x)])


def vit_tiny(out, d=192, heads=3, layers=12, patch=16, size=224):
    b = Builder(10)
    n = (size // patch) ** 2
    hd = d // heads
    x = b.conv("input", 3, d, patch, patch, pad=0, gain=1.0)
    x = b.op("Transpose", [b.op("Reshape", [x, b.i64([1, d, n])])], perm=[0, 2, 1])
    cls = b.const((b.rng.standard_normal((1, 1, d)) * 0.02).astype(np.float32))
    x = b.op("Concat", [cls, x], axis=1)
    x = b.op("Add", [x, b.const((b.rng.standard_normal((1, n + 1, d)) * 0.02).astype(np.float32))])
    t = n + 1
    for _ in range(layers):
        h = b.layernorm(x, d)
        qkv = b.op("Reshape", [b.linear(h, d, 3 * d), b.i64([1, t, 3, heads, hd])])
        qkv = b.op("Transpose", [qkv], perm=[2, 0, 3, 1, 4])
        q, k, v = (b.op("Squeeze", [z, b.i64([0])]) for z in b.op("Split", [qkv, b.i64([1, 1, 1])], n_out=3, axis=0))
        s = b.op("Mul", [b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])]), b.f32(1 / math.sqrt(hd))])
        ctx = b.op("MatMul", [b.op("Softmax", [s], axis=-1), v])
        ctx = b.op("Reshape", [b.op("Transpose", [ctx], perm=[0, 2, 1, 3]), b.i64([1, t, d])])
        x = b.op("Add", [x, b.linear(ctx, d, d)])
        h = b.linear(b.layernorm(x, d), d, 4 * d, gain=2.0)
        h = b.op("Mul", [b.op("Mul", [h, b.op("Add", [b.op("Erf", [b.op("Div", [h, b.f32(math.sqrt(2))])]), b.f32(1.0)])]),
                         b.f32(0.5)])
        x = b.op("Add", [x, b.linear(h, 4 * d, d)])
    x = b.layernorm(x, d)
    c = b.op("Gather", [x, b.i64(0)], axis=1)
    b.save(out, "vit_tiny", [image_input()], [any_output(b.gemm(c, d, 1000))])


MODELS = {
    "mobilenet_v2": mobilenet_v2,
    "mobilenet_v3": mobilenet_v3,
    "resnet18": lambda o: resnet(o, "resnet18", [2, 2, 2, 2], False, True, 3),
    "resnet50": lambda o: resnet(o, "resnet50", [3, 4, 6, 3], True, False, 4),
    "efficientnet_b0": efficientnet_b0,
    "unet": unet,
    "yolo_head": yolo_head,
    "tf2onnx_mobilenet": tf2onnx_mobilenet,
    "conformer": conformer,
    "vit_tiny": vit_tiny,
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name in sys.argv[2:] or MODELS:
        if name not in MODELS:
            sys.exit(f"unknown model '{name}'; known: {', '.join(MODELS)}")
        MODELS[name](os.path.join(sys.argv[1], name + ".onnx"))


if __name__ == "__main__":
    main()
