#!/usr/bin/python3
"""A generated ~1,000-node CNN for optimize-time measurements (bench/optimize_ort.py).

Blocks of Conv → BatchNormalization → Relu → Conv → BatchNormalization → Add(residual) → Relu,
with the Identity/Dropout/constant-shape noise exporters leave behind. Usage: make_deep_cnn.py OUT [BLOCKS]
"""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnxgen  # noqa: E402


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
    onnxgen.save(nodes, inits, "deep_cnn", [1, c, 16, 16], [1, c], out)


if __name__ == "__main__":
    main()
