#!/usr/bin/python3
"""Generates the bundled sample models in resources/models/ with Debian's onnx module.

Run with /usr/bin/python3 (the python3 on PATH may lack onnx). Deterministic: a fixed seed, so the
committed files only change when this script does.

- inception_block.onnx: a small Inception-style CNN (stem, one 4-branch inception block, BN,
  global pooling, classifier): the course's example graph, with parallel branches to schedule.
- transformer_block.onnx: one pre-LN transformer encoder block written the way PyTorch exports it
  (LayerNorm spelled out, attention as MatMul/Softmax with head split Reshape/Transpose, GELU as
  Erf), a symbolic batch dimension, and name scopes like /encoder/layer.0/attention/...
"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "models")
rng = np.random.default_rng(20261129)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def weights(name, shape, scale=0.1):
    return const(name, (rng.standard_normal(shape) * scale).astype(np.float32))


def inception():
    nodes, inits = [], []

    def conv(name, x, cin, cout, k, stride=1, relu=True):
        w = weights(f"{name}.weight", (cout, cin, k, k), scale=(2.0 / (cin * k * k)) ** 0.5)
        b = weights(f"{name}.bias", (cout,), scale=0.01)
        inits.extend([w, b])
        pad = k // 2
        y = f"{name}/conv_out"
        nodes.append(helper.make_node("Conv", [x, w.name, b.name], [y], name=f"{name}/Conv",
                                      kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4))
        if relu:
            nodes.append(helper.make_node("Relu", [y], [f"{name}/relu_out"], name=f"{name}/Relu"))
            return f"{name}/relu_out"
        return y

    x = conv("/stem/conv1", "input", 3, 16, 3, stride=2)
    nodes.append(helper.make_node("MaxPool", [x], ["/stem/pool_out"], name="/stem/MaxPool",
                                  kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x = conv("/stem/conv2", "/stem/pool_out", 16, 32, 1)

    b1 = conv("/inception/branch1x1", x, 32, 16, 1)
    b2 = conv("/inception/branch3x3_reduce", x, 32, 16, 1)
    b2 = conv("/inception/branch3x3", b2, 16, 24, 3)
    b3 = conv("/inception/branch5x5_reduce", x, 32, 8, 1)
    b3 = conv("/inception/branch5x5", b3, 8, 8, 5)
    nodes.append(helper.make_node("MaxPool", [x], ["/inception/pool_out"], name="/inception/branch_pool/MaxPool",
                                  kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]))
    b4 = conv("/inception/branch_pool", "/inception/pool_out", 32, 16, 1)
    nodes.append(helper.make_node("Concat", [b1, b2, b3, b4], ["/inception/concat_out"], name="/inception/Concat", axis=1))

    c = 16 + 24 + 8 + 16
    inits += [const("/head/bn.scale", (1.0 + rng.standard_normal(c) * 0.1).astype(np.float32)),
              weights("/head/bn.bias", (c,), 0.1),
              weights("/head/bn.mean", (c,), 0.1),
              const("/head/bn.var", (1.0 + np.abs(rng.standard_normal(c)) * 0.1).astype(np.float32))]
    nodes.append(helper.make_node("BatchNormalization", ["/inception/concat_out", "/head/bn.scale", "/head/bn.bias",
                                                         "/head/bn.mean", "/head/bn.var"], ["/head/bn_out"],
                                  name="/head/BatchNormalization", epsilon=1e-5))
    nodes.append(helper.make_node("Relu", ["/head/bn_out"], ["/head/relu_out"], name="/head/Relu"))
    nodes.append(helper.make_node("GlobalAveragePool", ["/head/relu_out"], ["/head/gap_out"], name="/head/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["/head/gap_out"], ["/head/flat_out"], name="/head/Flatten", axis=1))
    inits += [weights("/head/fc.weight", (10, c), (1.0 / c) ** 0.5), weights("/head/fc.bias", (10,), 0.01)]
    nodes.append(helper.make_node("Gemm", ["/head/flat_out", "/head/fc.weight", "/head/fc.bias"], ["logits"],
                                  name="/head/fc/Gemm", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="/head/Softmax", axis=1))

    graph = helper.make_graph(nodes, "inception_block",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 64, 64])],
                              [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
                              inits)
    return graph


def transformer(d=64, heads=4, seq=16, ff=256):
    nodes, inits = [], []
    hd = d // heads
    p = "/encoder/layer.0"

    def add(op, inputs, outputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=name, **attrs))
        return outputs[0]

    def layernorm(scope, x):
        inits.extend([const(f"{scope}.weight", (1.0 + rng.standard_normal(d) * 0.05).astype(np.float32)),
                      weights(f"{scope}.bias", (d,), 0.05)])
        mean = add("ReduceMean", [x], [f"{scope}/mean"], f"{scope}/ReduceMean", axes=[-1])
        cen = add("Sub", [x, mean], [f"{scope}/centered"], f"{scope}/Sub")
        sq = add("Pow", [cen, "/const/two"], [f"{scope}/squared"], f"{scope}/Pow")
        var = add("ReduceMean", [sq], [f"{scope}/var"], f"{scope}/ReduceMean_1", axes=[-1])
        ve = add("Add", [var, "/const/eps"], [f"{scope}/var_eps"], f"{scope}/Add")
        sd = add("Sqrt", [ve], [f"{scope}/std"], f"{scope}/Sqrt")
        nrm = add("Div", [cen, sd], [f"{scope}/normed"], f"{scope}/Div")
        sc = add("Mul", [nrm, f"{scope}.weight"], [f"{scope}/scaled"], f"{scope}/Mul")
        return add("Add", [sc, f"{scope}.bias"], [f"{scope}/out"], f"{scope}/Add_1")

    def linear(scope, x, cin, cout):
        inits.extend([weights(f"{scope}.weight", (cin, cout), (1.0 / cin) ** 0.5), weights(f"{scope}.bias", (cout,), 0.01)])
        mm = add("MatMul", [x, f"{scope}.weight"], [f"{scope}/matmul_out"], f"{scope}/MatMul")
        return add("Add", [mm, f"{scope}.bias"], [f"{scope}/out"], f"{scope}/Add")

    inits += [const("/const/two", np.array(2.0, np.float32)), const("/const/eps", np.array(1e-5, np.float32)),
              const("/const/split_shape", np.array([0, 0, heads, hd], np.int64)),
              const("/const/merge_shape", np.array([0, 0, d], np.int64)),
              const("/const/scale", np.array(hd ** -0.5, np.float32)),
              const("/const/sqrt2", np.array(2 ** 0.5, np.float32)),
              const("/const/one", np.array(1.0, np.float32)), const("/const/half", np.array(0.5, np.float32))]

    x = "hidden_states"
    h = layernorm(f"{p}/attention/layer_norm", x)
    heads_out = {}
    for which in ("query", "key", "value"):
        y = linear(f"{p}/attention/{which}", h, d, d)
        y = add("Reshape", [y, "/const/split_shape"], [f"{p}/attention/{which}/split"], f"{p}/attention/{which}/Reshape")
        perm = [0, 2, 3, 1] if which == "key" else [0, 2, 1, 3]
        heads_out[which] = add("Transpose", [y], [f"{p}/attention/{which}/heads"], f"{p}/attention/{which}/Transpose", perm=perm)
    s = add("MatMul", [heads_out["query"], heads_out["key"]], [f"{p}/attention/scores"], f"{p}/attention/MatMul")
    s = add("Mul", [s, "/const/scale"], [f"{p}/attention/scaled"], f"{p}/attention/Mul")
    s = add("Add", [s, "attention_mask"], [f"{p}/attention/masked"], f"{p}/attention/Add")
    s = add("Softmax", [s], [f"{p}/attention/probs"], f"{p}/attention/Softmax", axis=-1)
    c = add("MatMul", [s, heads_out["value"]], [f"{p}/attention/context"], f"{p}/attention/MatMul_1")
    c = add("Transpose", [c], [f"{p}/attention/context_t"], f"{p}/attention/Transpose", perm=[0, 2, 1, 3])
    c = add("Reshape", [c, "/const/merge_shape"], [f"{p}/attention/merged"], f"{p}/attention/Reshape")
    o = linear(f"{p}/attention/output", c, d, d)
    r1 = add("Add", [x, o], [f"{p}/attention/residual"], f"{p}/attention/residual/Add")

    h2 = layernorm(f"{p}/mlp/layer_norm", r1)
    u = linear(f"{p}/mlp/fc1", h2, d, ff)
    g = add("Div", [u, "/const/sqrt2"], [f"{p}/mlp/gelu/div"], f"{p}/mlp/gelu/Div")
    g = add("Erf", [g], [f"{p}/mlp/gelu/erf"], f"{p}/mlp/gelu/Erf")
    g = add("Add", [g, "/const/one"], [f"{p}/mlp/gelu/add"], f"{p}/mlp/gelu/Add")
    g = add("Mul", [u, g], [f"{p}/mlp/gelu/mul"], f"{p}/mlp/gelu/Mul")
    g = add("Mul", [g, "/const/half"], [f"{p}/mlp/gelu/out"], f"{p}/mlp/gelu/Mul_1")
    dn = linear(f"{p}/mlp/fc2", g, ff, d)
    add("Add", [r1, dn], ["output"], f"{p}/mlp/residual/Add")

    graph = helper.make_graph(nodes, "transformer_block",
                              [helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT, ["batch", seq, d]),
                               helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["batch", 1, 1, seq])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", seq, d])],
                              inits)
    return graph


def save(graph, name):
    model = helper.make_model(graph, producer_name="opscope-samples", producer_version="1.0",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    path = os.path.join(OUT, name)
    onnx.save(model, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes, {len(graph.node)} nodes)")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    save(inception(), "inception_block.onnx")
    save(transformer(), "transformer_block.onnx")
