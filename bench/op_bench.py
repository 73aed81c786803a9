#!/usr/bin/python3
"""Every operator on its own, against ONNX Runtime: the slow paths no whole-model profile shows.

One-node models at realistic sizes taken from CNNs, transformers and audio models (both NCHW and
NHWC where the op cares, the quantized ops with and without zero points, per-tensor and
per-channel), run by `opscope-cli run` and ONNX Runtime (bench/ort/run.js) interleaved, several
rounds, the same inputs, the same intra-op thread count. Reports per case: both medians, the ratio,
the largest output difference relative to the output's range; then the cases above the goal
(1.5× ORT) and the median ratio per thread count.

  bench/op_bench.py [--cli build/bin/opscope-cli] [--threads 1,2] [--rounds 3] [--only SUBSTR,...]
                    [--markdown FILE]
Needs: scripts/setup.sh and bench/ort (installed on first use, as bench/compare_ort.py does).
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_ort import HERE, compare, ensure_ort, timed, write_inputs  # noqa: E402

rng = np.random.default_rng(7)


def f32(*s, scale=1.0):
    return (rng.standard_normal(s) * scale).astype(np.float32)


def pos(*s):
    return rng.uniform(0.1, 2.0, s).astype(np.float32)


def u8(*s):
    return rng.integers(0, 256, s, dtype=np.uint8)


def i8(*s):
    return rng.integers(-128, 128, s, dtype=np.int8)


def ints(x):
    return np.array(x, dtype=np.int64)


class Case:
    """One node; `inputs` are fed at run time, `inits` are initializers (weights, shapes)."""

    def __init__(self, name, op, inputs, inits=None, attrs=None, order=None, outputs=1, domain="", opset=17):
        self.name, self.op, self.inputs, self.inits = name, op, inputs, inits or {}
        self.attrs, self.outputs, self.domain, self.opset = attrs or {}, outputs, domain, opset
        # Node input order: runtime inputs then initializers unless given ("" = omitted).
        self.order = order or list(self.inputs) + list(self.inits)

    def model(self):
        node = helper.make_node(self.op, self.order, [f"y{i}" for i in range(self.outputs)], domain=self.domain,
                                **self.attrs)
        ins = [helper.make_tensor_value_info(k, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape)
               for k, v in self.inputs.items()]
        outs = [helper.make_empty_tensor_value_info(f"y{i}") for i in range(self.outputs)]
        inits = [numpy_helper.from_array(v, k) for k, v in self.inits.items()]
        graph = helper.make_graph([node], self.name, ins, outs, inits)
        opsets = [helper.make_opsetid("", self.opset)]
        if self.domain:
            opsets.append(helper.make_opsetid(self.domain, 1))
        m = helper.make_model(graph, opset_imports=opsets, producer_name="opscope-op-bench")
        m.ir_version = 8
        # Outputs get their types from inference (ORT wants typed outputs; the checker too).
        inferred = onnx.shape_inference.infer_shapes(m)
        known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
        for out in m.graph.output:
            if out.name in known and known[out.name].type.HasField("tensor_type"):
                out.type.CopyFrom(known[out.name].type)
            elif out.name == "y0":
                # An op newer than this onnx (Gelu-20) or a contrib one: typed like its first input,
                # which the ops benched this way (elementwise, attention) all are.
                out.type.CopyFrom(ins[0].type)
        return m


def conv(name, n, c, h, w, k, kernel, stride=1, groups=1, bias=True, nhwc=False, **attrs):
    pad = kernel // 2
    inits = {"W": f32(k, c // groups, kernel, kernel, scale=0.1)}
    if bias:
        inits["B"] = f32(k, scale=0.1)
    return Case(name, "Conv", {"x": f32(n, c, h, w)}, inits,
                dict(kernel_shape=[kernel, kernel], strides=[stride, stride], pads=[pad] * 4, group=groups, **attrs))


def cases():
    x56 = f32(1, 64, 56, 56)
    seq = f32(1, 128, 768)
    c = []
    # ---- elementwise, CNN and transformer sizes; broadcast forms as exporters write them
    for op in ["Add", "Mul", "Sub", "Div"]:
        c.append(Case(f"{op} [1,64,56,56] + same", op, {"a": x56, "b": pos(1, 64, 56, 56)}))
    c.append(Case("Add [1,64,56,56] + [1,64,1,1]", "Add", {"a": x56}, {"b": f32(1, 64, 1, 1)}))
    c.append(Case("Mul [1,128,768] * [768]", "Mul", {"a": seq}, {"b": f32(768)}))
    c.append(Case("Add [1,12,128,128] + mask [1,1,1,128]", "Add", {"a": f32(1, 12, 128, 128)}, {"b": f32(1, 1, 1, 128)}))
    c.append(Case("Add int64 [65536]", "Add", {"a": ints(rng.integers(0, 1000, 65536)), "b": ints(rng.integers(0, 1000, 65536))}))
    c.append(Case("Pow [1,128,768] ^ 2", "Pow", {"a": seq}, {"b": np.array(2.0, np.float32)}))
    for op, extra in [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("Exp", {}), ("Erf", {}), ("Abs", {}),
                      ("Neg", {}), ("Softplus", {}), ("HardSigmoid", {}), ("HardSwish", {}),
                      ("LeakyRelu", {"alpha": 0.1}), ("Elu", {})]:
        c.append(Case(f"{op} [1,64,56,56]", op, {"x": x56}, attrs=extra))
    for approx in ["none", "tanh"]:  # opset 20's Gelu: ViT/BERT (erf) and GPT-2 (tanh) MLPs, [1,197,3072]
        c.append(Case(f"Gelu {approx} [1,197,3072]", "Gelu", {"x": f32(1, 197, 3072)}, attrs={"approximate": approx},
                      opset=20))
    c.append(Case("Sqrt [1,128,768]", "Sqrt", {"x": pos(1, 128, 768)}))
    c.append(Case("Log [1,128,768]", "Log", {"x": pos(1, 128, 768)}))
    c.append(Case("Reciprocal [1,128,768]", "Reciprocal", {"x": pos(1, 128, 768)}))
    c.append(Case("Clip [1,64,56,56] 0..6", "Clip", {"x": x56}, {"lo": np.array(0, np.float32), "hi": np.array(6, np.float32)}))
    c.append(Case("Where [1,12,128,128]", "Where", {"c": rng.random((1, 1, 128, 128)) > 0.5, "a": f32(1, 12, 128, 128)},
                  {"b": np.array(-1e9, np.float32)}))
    c.append(Case("Equal [1,128,768]", "Equal", {"a": np.round(seq), "b": np.round(f32(1, 128, 768))}))
    c.append(Case("Less [1,128,768]", "Less", {"a": seq, "b": f32(1, 128, 768)}))
    c.append(Case("Max [1,64,56,56] x2", "Max", {"a": x56, "b": f32(1, 64, 56, 56)}))
    c.append(Case("Cast float→float16 [1,64,56,56]", "Cast", {"x": x56}, attrs={"to": T.FLOAT16}))
    c.append(Case("Cast float→int64 [1,128,768]", "Cast", {"x": seq}, attrs={"to": T.INT64}))
    # ---- normalization and reductions
    c.append(Case("Softmax [1,12,128,128] axis -1", "Softmax", {"x": f32(1, 12, 128, 128)}, attrs={"axis": -1}))
    for seq_len, d, heads in [(197, 192, 3), (128, 768, 12)]:  # ViT-Ti/16, BERT-base
        qkv = {n: f32(1, seq_len, d) for n in "qkv"}
        c.append(Case(f"MultiHeadAttention [1,{seq_len},{d}] {heads} heads", "MultiHeadAttention", qkv,
                      attrs={"num_heads": heads}, domain="com.microsoft"))
    c.append(Case("LogSoftmax [1,16,30522]", "LogSoftmax", {"x": f32(1, 16, 30522)}, attrs={"axis": -1}))
    c.append(Case("LayerNormalization [1,128,768]", "LayerNormalization", {"x": seq},
                  {"g": pos(768), "b": f32(768)}, attrs={"axis": -1, "epsilon": 1e-5}))
    c.append(Case("ReduceMean [1,128,768] axis -1", "ReduceMean", {"x": seq}, attrs={"axes": [-1]}))
    c.append(Case("ReduceMean [1,256,56,56] axes 2,3", "ReduceMean", {"x": f32(1, 256, 56, 56)}, attrs={"axes": [2, 3]}))
    c.append(Case("ReduceSum [1,128,768] axis 1", "ReduceSum", {"x": seq}, {"axes": ints([1])}))
    c.append(Case("ReduceMax [1,12,128,128] axis -1", "ReduceMax", {"x": f32(1, 12, 128, 128)}, attrs={"axes": [-1]}))
    c.append(Case("ReduceL2 [1,512,28,28] axis 1", "ReduceL2", {"x": f32(1, 512, 28, 28)}, attrs={"axes": [1]}))
    c.append(Case("ArgMax [1,16,30522]", "ArgMax", {"x": f32(1, 16, 30522)}, attrs={"axis": -1}))
    c.append(Case("TopK [1,30522] k=50", "TopK", {"x": f32(1, 30522)}, {"k": ints([50])}, outputs=2))
    c.append(Case("BatchNormalization [1,64,112,112]", "BatchNormalization", {"x": f32(1, 64, 112, 112)},
                  {"s": pos(64), "b": f32(64), "m": f32(64), "v": pos(64)}))
    c.append(Case("InstanceNormalization [1,64,128,128]", "InstanceNormalization", {"x": f32(1, 64, 128, 128)},
                  {"s": pos(64), "b": f32(64)}))
    c.append(Case("LRN [1,96,55,55]", "LRN", {"x": f32(1, 96, 55, 55)}, attrs={"size": 5}))
    c.append(Case("CumSum [1,128,768] axis 1", "CumSum", {"x": seq}, {"axis": np.array(1, np.int64)}))
    # ---- linear algebra
    c.append(Case("MatMul [1,128,768]x[768,768]", "MatMul", {"a": seq}, {"b": f32(768, 768, scale=0.05)}))
    c.append(Case("MatMul [1,128,768]x[768,3072]", "MatMul", {"a": seq}, {"b": f32(768, 3072, scale=0.05)}))
    c.append(Case("MatMul batched [1,12,128,64]x[1,12,64,128]", "MatMul", {"a": f32(1, 12, 128, 64), "b": f32(1, 12, 64, 128)}))
    c.append(Case("MatMul decode [1,1,768]x[768,768]", "MatMul", {"a": f32(1, 1, 768)}, {"b": f32(768, 768, scale=0.05)}))
    c.append(Case("Gemm [1,2048]x[2048,1000]^T", "Gemm", {"a": f32(1, 2048)}, {"b": f32(1000, 2048, scale=0.05), "c": f32(1000)},
                  attrs={"transB": 1}))
    c.append(Case("Gemm [64,512]x[512,512]", "Gemm", {"a": f32(64, 512)}, {"b": f32(512, 512, scale=0.05), "c": f32(512)}))
    c.append(Case("Einsum bhqd,bhkd->bhqk", "Einsum", {"a": f32(1, 12, 128, 64), "b": f32(1, 12, 128, 64)},
                  attrs={"equation": "bhqd,bhkd->bhqk"}))
    # ---- convolution and pooling (NCHW, as ONNX is; tf2onnx's NHWC graphs transpose around them)
    c.append(conv("Conv 3x3 [1,64,56,56]→64", 1, 64, 56, 56, 64, 3))
    c.append(conv("Conv 1x1 [1,256,28,28]→64", 1, 256, 28, 28, 64, 1))
    c.append(conv("Conv 1x1 [1,64,56,56]→256 no bias", 1, 64, 56, 56, 256, 1, bias=False))
    c.append(conv("Conv 7x7 s2 stem [1,3,224,224]→64", 1, 3, 224, 224, 64, 7, stride=2))
    c.append(conv("Conv 3x3 s2 [1,128,56,56]→256", 1, 128, 56, 56, 256, 3, stride=2))
    c.append(conv("Conv depthwise 3x3 [1,96,112,112]", 1, 96, 112, 112, 96, 3, groups=96))
    c.append(conv("Conv depthwise 3x3 s2 [1,144,56,56]", 1, 144, 56, 56, 144, 3, stride=2, groups=144))
    c.append(conv("Conv depthwise 5x5 [1,240,28,28]", 1, 240, 28, 28, 240, 5, groups=240))
    c.append(conv("Conv grouped 3x3 g32 [1,256,28,28]", 1, 256, 28, 28, 256, 3, groups=32))
    c.append(conv("Conv dilated 3x3 d2 [1,256,32,32]", 1, 256, 32, 32, 256, 3, dilations=[2, 2]))
    c.append(Case("Conv1d k3 [1,80,3000]→384 (audio)", "Conv", {"x": f32(1, 80, 3000)},
                  {"W": f32(384, 80, 3, scale=0.1), "B": f32(384)}, dict(kernel_shape=[3], pads=[1, 1])))
    c.append(Case("Conv1d depthwise k31 [1,256,200] (conformer)", "Conv", {"x": f32(1, 256, 200)},
                  {"W": f32(256, 1, 31, scale=0.1)}, dict(kernel_shape=[31], pads=[15, 15], group=256)))
    c.append(Case("ConvTranspose 2x2 s2 [1,128,56,56]→64", "ConvTranspose", {"x": f32(1, 128, 56, 56)},
                  {"W": f32(128, 64, 2, 2, scale=0.1), "B": f32(64)}, dict(kernel_shape=[2, 2], strides=[2, 2])))
    c.append(Case("ConvTranspose 4x4 s2 p1 [1,64,64,64]→32", "ConvTranspose", {"x": f32(1, 64, 64, 64)},
                  {"W": f32(64, 32, 4, 4, scale=0.1)}, dict(kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1])))
    c.append(Case("MaxPool 3x3 s2 [1,64,112,112]", "MaxPool", {"x": f32(1, 64, 112, 112)},
                  attrs=dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])))
    c.append(Case("MaxPool 3x3 s1 [1,480,28,28]", "MaxPool", {"x": f32(1, 480, 28, 28)},
                  attrs=dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])))
    c.append(Case("MaxPool 2x2 s2 [1,64,224,224]", "MaxPool", {"x": f32(1, 64, 224, 224)},
                  attrs=dict(kernel_shape=[2, 2], strides=[2, 2])))
    c.append(Case("AveragePool 3x3 s1 [1,192,28,28]", "AveragePool", {"x": f32(1, 192, 28, 28)},
                  attrs=dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=0)))
    # Through the separable N-d kernel (poolseparable.h): Indices, 1-D, 3-D, large windows.
    c.append(Case("MaxPool 2x2 s2 +Indices [1,64,112,112] (SegNet)", "MaxPool", {"x": f32(1, 64, 112, 112)},
                  attrs=dict(kernel_shape=[2, 2], strides=[2, 2]), outputs=2))
    c.append(Case("MaxPool 3x3x3 s2 [1,64,16,56,56] (3-D CNN)", "MaxPool", {"x": f32(1, 64, 16, 56, 56)},
                  attrs=dict(kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1])))
    c.append(Case("AveragePool 2x2x2 s2 [1,64,16,28,28] (3-D CNN)", "AveragePool", {"x": f32(1, 64, 16, 28, 28)},
                  attrs=dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2])))
    c.append(Case("MaxPool1d k3 s2 [1,128,4000] (audio)", "MaxPool", {"x": f32(1, 128, 4000)},
                  attrs=dict(kernel_shape=[3], strides=[2], pads=[1, 1])))
    c.append(Case("MaxPool 13x13 s1 +Indices [1,128,40,40] (SPP)", "MaxPool", {"x": f32(1, 128, 40, 40)},
                  attrs=dict(kernel_shape=[13, 13], strides=[1, 1], pads=[6, 6, 6, 6]), outputs=2))
    c.append(Case("GlobalAveragePool [1,2048,7,7]", "GlobalAveragePool", {"x": f32(1, 2048, 7, 7)}))
    c.append(Case("GlobalAveragePool [1,96,56,56] (SE)", "GlobalAveragePool", {"x": f32(1, 96, 56, 56)}))
    c.append(Case("GlobalMaxPool [1,512,14,14]", "GlobalMaxPool", {"x": f32(1, 512, 14, 14)}))
    # ---- data movement
    c.append(Case("Transpose NCHW→NHWC [1,64,56,56]", "Transpose", {"x": x56}, attrs={"perm": [0, 2, 3, 1]}))
    c.append(Case("Transpose NHWC→NCHW [1,56,56,64]", "Transpose", {"x": f32(1, 56, 56, 64)}, attrs={"perm": [0, 3, 1, 2]}))
    c.append(Case("Transpose heads [1,128,12,64]→0213", "Transpose", {"x": f32(1, 128, 12, 64)}, attrs={"perm": [0, 2, 1, 3]}))
    c.append(Case("Transpose K [1,12,128,64]→0132", "Transpose", {"x": f32(1, 12, 128, 64)}, attrs={"perm": [0, 1, 3, 2]}))
    c.append(Case("Reshape [1,128,768]→[1,128,12,64]", "Reshape", {"x": seq}, {"s": ints([1, 128, 12, 64])}))
    c.append(Case("Concat 4x[1,64,28,28] axis 1", "Concat", {f"x{i}": f32(1, 64, 28, 28) for i in range(4)}, attrs={"axis": 1}))
    c.append(Case("Concat 2x[1,128,768] axis -1", "Concat", {"a": seq, "b": f32(1, 128, 768)}, attrs={"axis": -1}))
    c.append(Case("Split [1,128,2304] into 3", "Split", {"x": f32(1, 128, 2304)}, {"s": ints([768, 768, 768])},
                  attrs={"axis": -1}, outputs=3, opset=17))
    c.append(Case("Slice [1,64,56,56] every other row", "Slice", {"x": x56},
                  {"st": ints([0]), "en": ints([56]), "ax": ints([2]), "sp": ints([2])}))
    c.append(Case("Gather embedding [30522,768] by [1,128]", "Gather", {"i": ints(rng.integers(0, 30522, (1, 128)))},
                  {"w": f32(30522, 768)}, order=["w", "i"]))
    c.append(Case("Gather axis 1 [1,128,768] by [64]", "Gather", {"x": seq, "i": ints(rng.integers(0, 128, 64))},
                  attrs={"axis": 1}))
    c.append(Case("GatherElements [1,12,128,128]", "GatherElements",
                  {"x": f32(1, 12, 128, 128), "i": ints(rng.integers(0, 128, (1, 12, 128, 128)))}, attrs={"axis": 3}))
    c.append(Case("Pad constant [1,32,256,256] +1", "Pad", {"x": f32(1, 32, 256, 256)}, {"p": ints([0, 0, 1, 1, 0, 0, 1, 1])}))
    c.append(Case("Pad reflect [1,64,128,128] +3", "Pad", {"x": f32(1, 64, 128, 128)}, {"p": ints([0, 0, 3, 3, 0, 0, 3, 3])},
                  attrs={"mode": "reflect"}))
    c.append(Case("Resize nearest x2 [1,128,56,56]", "Resize", {"x": f32(1, 128, 56, 56)},
                  {"s": np.array([1, 1, 2, 2], np.float32)}, order=["x", "", "s"], attrs={"mode": "nearest"}))
    c.append(Case("Resize linear x2 [1,64,112,112]", "Resize", {"x": f32(1, 64, 112, 112)},
                  {"s": np.array([1, 1, 2, 2], np.float32)}, order=["x", "", "s"], attrs={"mode": "linear"}))
    c.append(Case("Resize linear align_corners [1,32,128,128]→256", "Resize", {"x": f32(1, 32, 128, 128)},
                  {"sz": ints([1, 32, 256, 256])}, order=["x", "", "", "sz"],
                  attrs={"mode": "linear", "coordinate_transformation_mode": "align_corners"}))
    c.append(Case("Expand [1,1,128,128]→[1,12,128,128]", "Expand", {"x": f32(1, 1, 128, 128)}, {"s": ints([1, 12, 128, 128])}))
    c.append(Case("Tile [1,64,28,28] x[1,1,2,2]", "Tile", {"x": f32(1, 64, 28, 28)}, {"r": ints([1, 1, 2, 2])}))
    c.append(Case("DepthToSpace b2 [1,256,56,56]", "DepthToSpace", {"x": f32(1, 256, 56, 56)}, attrs={"blocksize": 2}))
    c.append(Case("SpaceToDepth b2 [1,64,112,112]", "SpaceToDepth", {"x": f32(1, 64, 112, 112)}, attrs={"blocksize": 2}))
    rows = np.stack([np.zeros(32, np.int64), rng.permutation(128)[:32]], -1).reshape(1, 32, 2)
    c.append(Case("ScatterND [1,128,768] 32 rows", "ScatterND", {"x": seq, "u": f32(1, 32, 768)}, {"i": rows},
                  order=["x", "i", "u"]))
    c.append(Case("OneHot [1,128] depth 1000", "OneHot", {"i": ints(rng.integers(0, 1000, (1, 128)))},
                  {"d": ints([1000]), "v": np.array([0, 1], np.float32)}))
    c.append(Case("NonZero [1,64,56,56]", "NonZero", {"x": (rng.random((1, 64, 56, 56)) > 0.5).astype(np.float32)}))
    # ---- recurrent (audio, speech)
    c.append(Case("LSTM seq 100 in 64 hidden 128", "LSTM", {"x": f32(100, 1, 64)},
                  {"W": f32(1, 512, 64, scale=0.1), "R": f32(1, 512, 128, scale=0.1), "B": f32(1, 1024, scale=0.1)},
                  attrs={"hidden_size": 128}, outputs=1))
    c.append(Case("GRU seq 100 in 64 hidden 128", "GRU", {"x": f32(100, 1, 64)},
                  {"W": f32(1, 384, 64, scale=0.1), "R": f32(1, 384, 128, scale=0.1), "B": f32(1, 768, scale=0.1)},
                  attrs={"hidden_size": 128}, outputs=1))
    # ---- quantized: per-tensor and per-channel, with and without zero points
    xq, wq = u8(1, 64, 56, 56), u8(64, 64, 3, 3)
    c.append(Case("QuantizeLinear [1,64,56,56] u8", "QuantizeLinear", {"x": x56},
                  {"s": np.array(0.02, np.float32), "z": np.array(128, np.uint8)}))
    c.append(Case("DequantizeLinear [1,64,56,56] u8", "DequantizeLinear", {"x": xq},
                  {"s": np.array(0.02, np.float32), "z": np.array(128, np.uint8)}))
    c.append(Case("DynamicQuantizeLinear [1,64,56,56]", "DynamicQuantizeLinear", {"x": x56}, outputs=3))
    c.append(Case("ConvInteger 3x3 u8 zp [1,64,56,56]", "ConvInteger", {"x": xq},
                  {"w": wq, "xz": np.array(120, np.uint8), "wz": np.array(131, np.uint8)},
                  attrs=dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])))
    c.append(Case("ConvInteger 3x3 u8 no zp [1,64,56,56]", "ConvInteger", {"x": xq}, {"w": wq},
                  attrs=dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])))
    c.append(Case("MatMulInteger [128,768]x[768,768] u8 zp", "MatMulInteger", {"a": u8(128, 768)},
                  {"b": u8(768, 768), "az": np.array(128, np.uint8), "bz": np.array(120, np.uint8)}))
    c.append(Case("MatMulInteger [128,768]x[768,768] s8 per-column zp", "MatMulInteger", {"a": u8(128, 768)},
                  {"b": i8(768, 768), "az": np.array(128, np.uint8), "bz": i8(768)}))
    qc = {"xs": np.array(0.02, np.float32), "xz": np.array(128, np.uint8), "w": wq, "ws": np.array(0.01, np.float32),
          "wz": np.array(128, np.uint8), "ys": np.array(0.05, np.float32), "yz": np.array(128, np.uint8),
          "b": rng.integers(-1000, 1000, 64).astype(np.int32)}
    c.append(Case("QLinearConv 3x3 per-tensor [1,64,56,56]", "QLinearConv", {"x": xq}, qc,
                  order=["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], attrs=dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])))
    qcs = dict(qc, w=i8(64, 64, 3, 3), ws=pos(64) * 0.01, wz=np.zeros(64, np.int8))
    c.append(Case("QLinearConv 3x3 per-channel s8 [1,64,56,56]", "QLinearConv", {"x": xq}, qcs,
                  order=["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], attrs=dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])))
    c.append(Case("QLinearMatMul [128,768]x[768,768] u8", "QLinearMatMul", {"a": u8(128, 768)},
                  {"as": np.array(0.02, np.float32), "az": np.array(128, np.uint8), "b": u8(768, 768),
                   "bs": np.array(0.01, np.float32), "bz": np.array(128, np.uint8), "ys": np.array(0.5, np.float32),
                   "yz": np.array(128, np.uint8)}, order=["a", "as", "az", "b", "bs", "bz", "ys", "yz"]))
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(HERE, "..", "build", "bin", "opscope-cli"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", help="comma-separated substrings of case names")
    ap.add_argument("--markdown", help="also write the table here")
    ap.add_argument("--budget-ms", type=float, default=300.0, help="timed work per process and round")
    args = ap.parse_args()
    ensure_ort()
    node_run = os.path.join(HERE, "ort", "run.js")
    work = tempfile.mkdtemp(prefix="opscope-opbench-")
    rows = []
    for i, case in enumerate(cases()):
        if args.only and not any(s.lower() in case.name.lower() for s in args.only.split(",")):
            continue
        folder = os.path.join(work, f"case{i}")
        os.makedirs(folder)
        path = os.path.join(folder, "model.onnx")
        m = case.model()
        if case.opset <= onnx.defs.onnx_opset_version():  # Debian's onnx 1.12 stops at opset 17
            onnx.checker.check_model(m)
        onnx.save(m, path)
        flags = write_inputs(folder, case.inputs)
        for threads in [int(t) for t in args.threads.split(",")]:
            common = ["--threads", str(threads)]
            try:
                probe, _ = timed([args.cli, "run", path, "--json", "--iterations", "3", "--optimize", "none"] + common + flags)
                iters = max(5, min(500, int(args.budget_ms / max(probe, 0.005))))
                ours, ort = [], []
                for _ in range(args.rounds):
                    ours.append(timed([args.cli, "run", path, "--json", "--iterations", str(iters), "--optimize", "none",
                                       "--save-outputs", os.path.join(folder, "ours")] + common + flags)[0])
                    ort.append(timed(["node", node_run, path, "--iterations", str(iters), "--level", "disabled",
                                      "--save-outputs", os.path.join(folder, "ort")] + common + flags)[0])
                _, rel = compare(os.path.join(folder, "ours"), os.path.join(folder, "ort"))
                row = (case.name, threads, statistics.median(ours), statistics.median(ort), rel, "")
            except (RuntimeError, ValueError) as e:
                row = (case.name, threads, math.nan, math.nan, math.nan, str(e).splitlines()[0][:120])
            rows.append(row)
            ratio = row[2] / row[3] if row[3] else math.nan
            print(f"{row[0]:<52} {threads}t  opscope {row[2]:9.3f} ms  ORT {row[3]:9.3f} ms  ratio {ratio:5.2f}  "
                  f"diff/range {row[4]:.1e} {row[5]}", flush=True)

    lines = ["| op case | threads | opscope ms | ORT ms | ratio | max diff / scale |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = r[2] / r[3] if r[3] else math.nan
        mark = " **slow**" if ratio > 1.5 else ""
        note = f" ({r[5]})" if r[5] else ""
        lines.append(f"| {r[0]}{note} | {r[1]} | {r[2]:.3f} | {r[3]:.3f} | {ratio:.2f}{mark} | {r[4]:.1e} |")
    for threads in sorted({r[1] for r in rows}):
        ratios = [r[2] / r[3] for r in rows if r[1] == threads and r[3] and not math.isnan(r[2])]
        if ratios:
            slow = sum(1 for x in ratios if x > 1.5)
            lines.append(f"\n{threads} thread(s): median ratio {statistics.median(ratios):.2f}, "
                         f"geomean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}, "
                         f"{slow} of {len(ratios)} cases above 1.5×, worst {max(ratios):.2f}")
    text = "\n".join(lines)
    print("\n" + text)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(text + "\n")


if __name__ == "__main__":
    main()
