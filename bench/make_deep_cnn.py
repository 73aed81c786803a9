#!/usr/bin/python3
"""A generated ~1,000-node CNN for optimize-time measurements (bench/optimize_ort.py).

Blocks of Conv → BatchNormalization → Relu → Conv → BatchNormalization → Add(residual) → Relu,
with the Identity/Dropout/constant-shape noise exporters leave behind. Usage: make_deep_cnn.py OUT [BLOCKS]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rng = np.random.default_rng(7)
    c = 8
    nodes, inits = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(arr.astype(arr.dtype), name))
        return name

    def bn(x, name):
        const(name + "_g", rng.uniform(0.5, 1.5, c).astype(np.float32))
        const(name + "_b", rng.standard_normal(c).astype(np.float32) * 0.1)
        const(name + "_m", rng.standard_normal(c).astype(np.float32) * 0.1)
        const(name + "_v", rng.uniform(0.5, 1.5, c).astype(np.float32))
        nodes.append(helper.make_node("BatchNormalization", [x, name + "_g", name + "_b", name + "_m", name + "_v"],
                                      [name], name=name))
        return name

    def conv(x, name):
        const(name + "_w", (rng.standard_normal((c, c, 3, 3)) * 0.1).astype(np.float32))
        nodes.append(helper.make_node("Conv", [x, name + "_w"], [name], name=name, pads=[1, 1, 1, 1]))
        return name

    x = "input"
    const("shape_keep", np.array([0, c, 16, 16], np.int64))
    for i in range(blocks):
        p = f"b{i}_"
        nodes.append(helper.make_node("Identity", [x], [p + "in"], name=p + "in"))
        h = conv(p + "in", p + "conv1")
        h = bn(h, p + "bn1")
        nodes.append(helper.make_node("Relu", [h], [p + "relu1"], name=p + "relu1"))
        h = conv(p + "relu1", p + "conv2")
        h = bn(h, p + "bn2")
        nodes.append(helper.make_node("Add", [h, p + "in"], [p + "sum"], name=p + "sum"))
        nodes.append(helper.make_node("Relu", [p + "sum"], [p + "relu2"], name=p + "relu2"))
        nodes.append(helper.make_node("Reshape", [p + "relu2", "shape_keep"], [p + "out"], name=p + "reshape"))
        nodes.append(helper.make_node("Dropout", [p + "out"], [p + "drop"], name=p + "drop"))
        x = p + "drop"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["output"], name="flatten"))
    graph = helper.make_graph(nodes, "deep_cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, c, 16, 16])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, c])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="opscope-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print(f"{out}: {len(nodes)} nodes")


if __name__ == "__main__":
    main()
