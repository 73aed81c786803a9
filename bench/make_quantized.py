#!/usr/bin/python3
"""Generates bench/.cache/quantized_cnn.onnx: a QOperator-style uint8 CNN (QuantizeLinear →
QLinearConv ×2 → DequantizeLinear → GlobalAveragePool → QLinearMatMul classifier), the form
ONNX Runtime's static quantizer writes. Deterministic (fixed seed)."""
import os
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)


def c(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def main(out):
    inits = [c("x_scale", np.float32(0.02)), c("x_zp", np.uint8(128)),
             c("w1", rng.integers(0, 256, (32, 3, 3, 3), dtype=np.uint8)), c("w1_scale", np.float32(0.01)),
             c("w1_zp", np.uint8(128)), c("y1_scale", np.float32(0.05)), c("y1_zp", np.uint8(0)),
             c("b1", rng.integers(-1000, 1000, (32,), dtype=np.int32)),
             c("w2", rng.integers(0, 256, (64, 32, 3, 3), dtype=np.uint8)), c("w2_scale", np.float32(0.005)),
             c("w2_zp", np.uint8(128)), c("y2_scale", np.float32(0.1)), c("y2_zp", np.uint8(0)),
             c("fc_w", rng.integers(0, 256, (64, 10), dtype=np.uint8)), c("fc_scale", np.float32(0.01)),
             c("fc_zp", np.uint8(128)), c("g_scale", np.float32(0.05)), c("g_zp", np.uint8(0)),
             c("o_scale", np.float32(0.2)), c("o_zp", np.uint8(128))]
    n = [
        helper.make_node("QuantizeLinear", ["input", "x_scale", "x_zp"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "x_scale", "x_zp", "w1", "w1_scale", "w1_zp", "y1_scale", "y1_zp", "b1"],
                         ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("QLinearConv", ["c1", "y1_scale", "y1_zp", "w2", "w2_scale", "w2_zp", "y2_scale", "y2_zp"],
                         ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("DequantizeLinear", ["c2", "y2_scale", "y2_zp"], ["c2f"]),
        helper.make_node("GlobalAveragePool", ["c2f"], ["g"]),
        helper.make_node("Flatten", ["g"], ["gf"]),
        helper.make_node("QuantizeLinear", ["gf", "g_scale", "g_zp"], ["gq"]),
        helper.make_node("QLinearMatMul", ["gq", "g_scale", "g_zp", "fc_w", "fc_scale", "fc_zp", "o_scale", "o_zp"], ["oq"]),
        helper.make_node("DequantizeLinear", ["oq", "o_scale", "o_zp"], ["logits"]),
    ]
    g = helper.make_graph(n, "quantized_cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 128, 128])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="opscope-bench")
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, out)


if __name__ == "__main__":
    main(sys.argv[1])
