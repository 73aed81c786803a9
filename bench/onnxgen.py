"""Shared by the bench model generators: assemble, check and save a generated model."""
import onnx
from onnx import TensorProto, helper


def save(nodes, inits, name, input_shape, output_shape, out):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, input_shape)],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, output_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="opscope-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print(f"{out}: {len(nodes)} nodes")
