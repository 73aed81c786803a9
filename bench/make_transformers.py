#!/usr/bin/python3
"""Transformer blocks the way three exporters write them, for the optimizer and runtime benches.

  gpt2_block   (PyTorch GPT-2, opset 14): LayerNorm spelled out, one QKV MatMul + Split, heads by
               Reshape/Transpose, Kᵀ by Transpose(-1,-2), ÷√d, causal Where(mask, s, finfo.min) then
               + padding mask, tanh GELU with Pow(x, 3).
  llama_block  (PyTorch LLaMA, opset 17): RMSNorm (Pow, ReduceMean, Add, Sqrt, Div(1, ·), Mul),
               separate Q/K/V MatMuls without bias, additive causal mask, SiLU-gated MLP.
  vit_block    (HF ViT with SDPA, opset 17): LayerNormalization, √scale applied to Q and to Kᵀ,
               Kᵀ by Transpose(0,2,3,1), erf GELU, no mask.
(No rotary embedding in llama_block: its Slice/Concat arithmetic is not an attention pattern.)

  bench/make_transformers.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, SEQ = 64, 4, 32
HEAD = HIDDEN // HEADS
rng = np.random.default_rng(7)


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, name, shape, scale=0.1):
        return self.const(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    def op(self, op, inputs, **attrs):
        self.n += 1
        out = f"{op.lower()}_{self.n}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"{op}_{self.n}", **attrs))
        return out

    def ops(self, op, inputs, count, **attrs):
        self.n += 1
        outs = [f"{op.lower()}_{self.n}_{i}" for i in range(count)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=f"{op}_{self.n}", **attrs))
        return outs


def f32(v):
    return np.array(v, np.float32)


def layernorm_decomposed(b, x, opset):
    mean = b.op("ReduceMean", [x], axes=[-1])
    d = b.op("Sub", [x, mean])
    var = b.op("ReduceMean", [b.op("Pow", [d, b.const(f"two_{b.n}", f32(2.0))])], axes=[-1])
    sd = b.op("Sqrt", [b.op("Add", [var, b.const(f"eps_{b.n}", f32(1e-5))])])
    n = b.op("Div", [d, sd])
    return b.op("Add", [b.op("Mul", [n, b.weight(f"ln_g_{b.n}", [HIDDEN], 0.1)]), b.weight(f"ln_b_{b.n}", [HIDDEN])])


def rmsnorm(b, x, opset):
    ms = b.op("ReduceMean", [b.op("Pow", [x, b.const(f"two_{b.n}", f32(2.0))])], axes=[-1])
    r = b.op("Div", [b.const(f"one_{b.n}", f32(1.0)), b.op("Sqrt", [b.op("Add", [ms, b.const(f"eps_{b.n}", f32(1e-6))])])])
    return b.op("Mul", [b.weight(f"rms_g_{b.n}", [HIDDEN], 0.1), b.op("Mul", [x, r])])


def heads(b, x, perm):
    shape = b.const(f"split_shape_{b.n}", np.array([0, 0, HEADS, HEAD], np.int64))
    return b.op("Transpose", [b.op("Reshape", [x, shape])], perm=perm)


def merge(b, ctx):
    shape = b.const(f"merge_shape_{b.n}", np.array([0, 0, HIDDEN], np.int64))
    return b.op("Reshape", [b.op("Transpose", [ctx], perm=[0, 2, 1, 3]), shape])


def linear(b, x, bias=True, out=HIDDEN):
    y = b.op("MatMul", [x, b.weight(f"w_{b.n}", [HIDDEN, out])])
    return b.op("Add", [y, b.weight(f"b_{b.n}", [out], 0.02)]) if bias else y


def gpt2():
    b = Builder()
    x = "hidden_states"
    h = layernorm_decomposed(b, x, 14)
    qkv = linear(b, h, out=3 * HIDDEN)
    q, k, v = b.ops("Split", [qkv, b.const("qkv_split", np.array([HIDDEN] * 3, np.int64))], 3, axis=2)
    q, k, v = heads(b, q, [0, 2, 1, 3]), heads(b, k, [0, 2, 1, 3]), heads(b, v, [0, 2, 1, 3])
    s = b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])])
    s = b.op("Div", [s, b.const("sqrt_d", f32(np.sqrt(HEAD)))])
    causal = np.tril(np.ones((SEQ, SEQ), bool)).reshape(1, 1, SEQ, SEQ)
    s = b.op("Where", [b.const("causal", causal), s, b.const("finfo_min", f32(np.finfo(np.float32).min))])
    s = b.op("Add", [s, "attention_mask"])
    ctx = b.op("MatMul", [b.op("Softmax", [s], axis=-1), v])
    x1 = b.op("Add", [x, linear(b, merge(b, ctx))])
    h = linear(b, layernorm_decomposed(b, x1, 14), out=4 * HIDDEN)
    cube = b.op("Pow", [h, b.const("three", f32(3.0))])
    inner = b.op("Add", [h, b.op("Mul", [cube, b.const("k_gelu", f32(0.044715))])])
    t = b.op("Tanh", [b.op("Mul", [inner, b.const("sqrt_2_pi", f32(np.sqrt(2 / np.pi)))])])
    g = b.op("Mul", [b.op("Mul", [h, b.const("half", f32(0.5))]), b.op("Add", [t, b.const("one", f32(1.0))])])
    down = b.op("Add", [b.op("MatMul", [g, b.weight("w_down", [4 * HIDDEN, HIDDEN])]), b.weight("b_down", [HIDDEN], 0.02)])
    b.nodes.append(helper.make_node("Add", [x1, down], ["output"], name="residual_out"))
    inputs = [("hidden_states", [1, SEQ, HIDDEN]), ("attention_mask", [1, 1, 1, SEQ])]
    return b, inputs, 14


def llama():
    b = Builder()
    x = "hidden_states"
    h = rmsnorm(b, x, 17)
    q, k, v = (heads(b, linear(b, h, bias=False), [0, 2, 1, 3]) for _ in range(3))
    s = b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])])
    s = b.op("Mul", [s, b.const("inv_sqrt_d", f32(1 / np.sqrt(HEAD)))])
    s = b.op("Add", [s, "causal_mask"])
    ctx = b.op("MatMul", [b.op("Softmax", [s], axis=-1), v])
    x1 = b.op("Add", [x, linear(b, merge(b, ctx), bias=False)])
    h = rmsnorm(b, x1, 17)
    gate = linear(b, h, bias=False, out=2 * HIDDEN)
    silu = b.op("Mul", [gate, b.op("Sigmoid", [gate])])
    up = linear(b, h, bias=False, out=2 * HIDDEN)
    down = b.op("MatMul", [b.op("Mul", [silu, up]), b.weight("w_down", [2 * HIDDEN, HIDDEN])])
    b.nodes.append(helper.make_node("Add", [x1, down], ["output"], name="residual_out"))
    inputs = [("hidden_states", [1, SEQ, HIDDEN]), ("causal_mask", [1, 1, SEQ, SEQ])]
    return b, inputs, 17


def vit():
    b = Builder()
    x = "pixel_embeddings"
    h = b.op("LayerNormalization", [x, b.weight("ln1_g", [HIDDEN]), b.weight("ln1_b", [HIDDEN])], axis=-1, epsilon=1e-6)
    q = heads(b, linear(b, h), [0, 2, 1, 3])
    kt = heads(b, linear(b, h), [0, 2, 3, 1])
    v = heads(b, linear(b, h), [0, 2, 1, 3])
    root = b.const("sqrt_scale", f32(1 / np.sqrt(np.sqrt(HEAD))))
    s = b.op("MatMul", [b.op("Mul", [q, root]), b.op("Mul", [kt, root])])
    ctx = b.op("MatMul", [b.op("Softmax", [s], axis=-1), v])
    x1 = b.op("Add", [x, linear(b, merge(b, ctx))])
    h = b.op("LayerNormalization", [x1, b.weight("ln2_g", [HIDDEN]), b.weight("ln2_b", [HIDDEN])], axis=-1, epsilon=1e-6)
    h = linear(b, h, out=4 * HIDDEN)
    e = b.op("Erf", [b.op("Div", [h, b.const("sqrt2", f32(np.sqrt(2.0)))])])
    g = b.op("Mul", [b.op("Mul", [h, b.op("Add", [e, b.const("one", f32(1.0))])]), b.const("half", f32(0.5))])
    down = b.op("Add", [b.op("MatMul", [g, b.weight("w_down", [4 * HIDDEN, HIDDEN])]), b.weight("b_down", [HIDDEN], 0.02)])
    b.nodes.append(helper.make_node("Add", [x1, down], ["output"], name="residual_out"))
    return b, [("pixel_embeddings", [1, SEQ + 1, HIDDEN])], 17


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    for name, make in (("gpt2_block", gpt2), ("llama_block", llama), ("vit_block", vit)):
        b, inputs, opset = make()
        graph = helper.make_graph(b.nodes, name,
                                  [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                                  [helper.make_tensor_value_info("output", TensorProto.FLOAT, inputs[0][1])], b.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="opscope-bench")
        model.ir_version = 8
        onnx.checker.check_model(model)
        path = os.path.join(out, name + ".onnx")
        onnx.save(model, path)
        print(f"{path}: {len(b.nodes)} nodes")


if __name__ == "__main__":
    main()
