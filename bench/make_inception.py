#!/usr/bin/python3
"""A generated Inception-style CNN for schedule benchmarks: blocks of four parallel branches
(1x1; 1x1→3x3; 1x1→5x5; pool→1x1) joined by Concat, at a size where each convolution takes about a
millisecond on one core — enough work for parallel and multi-device schedules to pay off.

  make_inception.py OUT [BLOCKS] [CHANNELS] [SIZE]
"""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnxgen  # noqa: E402


def main():
    out = sys.argv[1]
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    c = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 28
    rng = np.random.default_rng(3)
    nodes, inits = [], []

    def conv(x, cin, cout, k, name):
        w = (rng.standard_normal((cout, cin, k, k)) * (1.0 / np.sqrt(cin * k * k))).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.01).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, name + ".weight"), numpy_helper.from_array(b, name + ".bias")])
        nodes.append(helper.make_node("Conv", [x, name + ".weight", name + ".bias"], [name + "/conv"], name=name + "/Conv",
                                      pads=[k // 2] * 4))
        nodes.append(helper.make_node("Relu", [name + "/conv"], [name + "/out"], name=name + "/Relu"))
        return name + "/out"

    x = conv("input", 3, c, 3, "/stem")
    for i in range(blocks):
        p = f"/block{i}"
        b1 = conv(x, c, c // 4, 1, p + "/branch1x1")
        b3 = conv(conv(x, c, c // 4, 1, p + "/branch3x3_reduce"), c // 4, c // 4, 3, p + "/branch3x3")
        b5 = conv(conv(x, c, c // 8, 1, p + "/branch5x5_reduce"), c // 8, c // 4, 5, p + "/branch5x5")
        nodes.append(helper.make_node("MaxPool", [x], [p + "/pool"], name=p + "/MaxPool", kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1]))
        bp = conv(p + "/pool", c, c // 4, 1, p + "/branch_pool")
        nodes.append(helper.make_node("Concat", [b1, b3, b5, bp], [p + "/concat"], name=p + "/Concat", axis=1))
        x = p + "/concat"
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="/head/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["output"], name="/head/Flatten"))
    onnxgen.save(nodes, inits, "inception", [1, 3, size, size], [1, c], out)


if __name__ == "__main__":
    main()
