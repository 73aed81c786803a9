#!/usr/bin/python3
"""Generates models whose If/Loop/Scan bodies read tensors from one, two and three enclosing levels
up, the way spox and PyTorch export models with inlined functions (a voice-activity model had 25
nested If nodes of this kind). Every model reads, from deep inside its subgraphs:
  (a) top-level initializers, (b) outputs of top-level Constant nodes, (c) values computed in an
  intermediate branch, (d) graph inputs,
and has constants inside branches that fold, identical subexpressions in different scopes and
duplicate initializers (CSE), and top-level nodes whose outputs only a nested branch reads (DCE).

Usage: make_nested_control_flow.py [OUT_DIR]   (default bench/.cache/nested)
Writes nested_if.onnx, nested_loop.onnx, nested_scan.onnx, const_cond.onnx and vad_like.onnx.
Deterministic (fixed seeds). Check with:
  opscope-cli optimize --level basic M.onnx; opscope-cli optimize --level all M.onnx
  opscope-cli run --optimize none --save-outputs ref M.onnx; opscope-cli run --save-outputs opt M.onnx
"""
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
SHAPE = [2, 3]
rng = np.random.default_rng(11)


def arr(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def rand(name, shape=SHAPE):
    return arr(name, rng.uniform(-1, 1, shape).astype(np.float32))


def vi(name, elem=F, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def const(out, a):
    return helper.make_node("Constant", [], [out], value=arr(out, a))


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def positive(x, out, prefix):
    """out = ReduceSum(x) > 0 (a data-dependent If condition)."""
    return [node("ReduceSum", [x], [prefix + "_sum"], keepdims=0), const(prefix + "_zero", np.float32(0)),
            node("Greater", [prefix + "_sum", prefix + "_zero"], [out])]


def graph(nodes, name, inputs, outputs, inits=()):
    return helper.make_graph(nodes, name, inputs, outputs, list(inits))


def save(g, out):
    g.output.append(vi("top_extra", F, SHAPE))
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="opscope-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print(f"{out}: {len(g.node)} top-level nodes")


def top_common():
    """Top-level inputs, initializers and nodes every model reads from deep down."""
    w = rand("W")
    inits = [w, arr("Wdup", numpy_helper.to_array(w))]  # same content as W, another name
    inits.append(arr("shape23", np.array([3, 2], dtype=np.int64)))
    inits += [rand("W_nested_only"), rand("W33", [3, 3]), rand("bias", [3])]
    nodes = [const("/Constant_output_0", rng.uniform(-1, 1, SHAPE).astype(np.float32)),
             const("/only_nested/Constant_output_0", rng.uniform(-1, 1, SHAPE).astype(np.float32)),
             node("Relu", ["x"], ["t0"]),                  # computed at the top
             node("Mul", ["x", "W"], ["dead_at_top"]),     # read only by a nested branch
             node("Shape", ["x"], ["x_shape"]),            # int64, read by a nested Reshape
             node("Neg", ["W_nested_only"], ["unused"]),   # dead; its input is read only down there
             node("MatMul", ["x", "W33"], ["mm"]),         # read by a nested branch: no Gemm fusion
             node("Add", ["mm", "bias"], ["mmb"]),
             node("Tanh", ["mmb"], ["top_extra"])]         # a second graph output of every model
    inputs = [vi("x", F, SHAPE), vi("flag", B, [])]
    return inputs, inits, nodes


def deep_reads(prefix, mid, near, out):
    """A chain reading (a) W, Wdup, (b) Constant outputs, (c) `mid` (computed in an intermediate
    branch), (d) x, plus `near` (one level up), then a Reshape/Transpose with int64 shapes from the top."""
    p = prefix
    return [
        node("Add", ["W", "/Constant_output_0"], [p + "a"]),
        node("Add", [p + "a", mid], [p + "b"]),
        node("Add", [p + "b", "x"], [p + "c"]),
        node("Add", [p + "c", near], [p + "d"]),
        node("Add", [p + "d", "dead_at_top"], [p + "e"]),
        node("Add", [p + "e", "/only_nested/Constant_output_0"], [p + "f0"]),
        node("Add", [p + "f0", "mm"], [p + "f1"]),
        node("Add", [p + "f1", "W_nested_only"], [p + "f"]),
        node("Mul", [p + "f", "Wdup"], [p + "g"]),
        node("Reshape", [p + "g", "shape23"], [p + "h"]),
        node("Transpose", [p + "h"], [p + "i"], perm=[1, 0]),
        node("Reshape", [p + "i", "x_shape"], [out]),
    ]


def folded_constants(prefix, out, shape=SHAPE):
    """Constants inside a branch that fold: out = k + k."""
    return [const(prefix + "k", rng.uniform(-1, 1, shape).astype(np.float32)),
            node("Add", [prefix + "k", prefix + "k"], [out])]


def nested_if(out):
    inputs, inits, nodes = top_common()
    # Level 3 (three levels below the top).
    l3_then = graph(deep_reads("l3t_", "m1", "m2", "l3t_out"), "sub_graph3_then", [], [vi("l3t_out")])
    l3_else = graph([node("Add", ["t0", "W"], ["l3e_s"]), node("Relu", ["l3e_s"], ["l3e_out"])],
                    "sub_graph3_else", [], [vi("l3e_out")])
    # Level 2: computes m2, reads m1 (one up) and x (two up); folds constants; has an inner If.
    l2_then = graph([node("Mul", ["m1", "x"], ["m2"])] + positive("m2", "c2", "l2t") + folded_constants("l2t_", "kk") +
                    [node("If", ["c2"], ["r2"], then_branch=l3_then, else_branch=l3_else),
                     node("Add", ["r2", "kk"], ["l2t_out"])],
                    "sub_graph2", [], [vi("l2t_out")])
    l2_else = graph([node("Add", ["t0", "W"], ["l2e_s"]), node("Sub", ["l2e_s", "m1"], ["l2e_out"])],
                    "sub_graph2_else", [], [vi("l2e_out")])
    # Level 1: computes m1 = t0 + W (the same expression appears in other scopes).
    l1_then = graph([node("Add", ["t0", "W"], ["m1"]),
                     node("If", ["flag"], ["r1"], then_branch=l2_then, else_branch=l2_else),
                     node("Add", ["r1", "m1"], ["l1t_out"])],
                    "sub_graph1", [], [vi("l1t_out")])
    l1_else = graph([node("Sub", ["x", "/Constant_output_0"], ["l1e_out"])], "sub_graph1_else", [], [vi("l1e_out")])
    nodes += positive("x", "c0", "top") + [node("If", ["c0"], ["y"], then_branch=l1_then, else_branch=l1_else)]
    save(graph(nodes, "nested_if", inputs, [vi("y", F, SHAPE)], inits), out)


def nested_loop(out):
    inputs, inits, nodes = top_common()
    # Inner If inside the inner Loop body: reads values of the inner body (1 up), the outer body
    # (2 up) and the top (3 up).
    if_then = graph(deep_reads("ilt_", "ov", "iv2", "il_out"), "loop_if_then", [], [vi("il_out")])
    if_else = graph([node("Add", ["iv2", "W"], ["il_out2"])], "loop_if_else", [], [vi("il_out2")])
    inner_body = graph([node("Add", ["iv", "ov"], ["iv2"]),
                        node("If", ["flag"], ["iv3"], then_branch=if_then, else_branch=if_else),
                        node("Mul", ["iv3", "/Constant_output_0"], ["iv4"]),
                        node("Tanh", ["iv4"], ["iv_next"]),
                        node("Identity", ["icond"], ["icond_out"])],
                       "inner_loop_body", [vi("i_iter", I64, []), vi("icond", B, []), vi("iv", F, None)],
                       [vi("icond_out", B, []), vi("iv_next", F, None)])
    outer_body = graph([node("Add", ["v", "W"], ["ov"])] + folded_constants("ob_", "obk") +
                       [const("inner_trips", np.int64(2)),
                        node("Loop", ["inner_trips", "", "ov"], ["ov2"], body=inner_body),
                        node("Add", ["ov2", "obk"], ["ov3"]),
                        node("Add", ["t0", "W"], ["ob_same"]),  # same as a top-level expression
                        node("Add", ["ov3", "ob_same"], ["v_pre"]),
                        node("Tanh", ["v_pre"], ["v_next"]),
                        node("Identity", ["cond"], ["cond_out"]),
                        node("ReduceSum", ["v_next"], ["scan_piece"], keepdims=0)],
                       "outer_loop_body", [vi("iter", I64, []), vi("cond", B, []), vi("v", F, None)],
                       [vi("cond_out", B, []), vi("v_next", F, None), vi("scan_piece", F, None)])
    nodes += [const("trips", np.int64(3)), const("true", np.bool_(True)),
              node("Add", ["t0", "W"], ["top_same"]),
              node("Loop", ["trips", "true", "top_same"], ["y", "pieces"], body=outer_body)]
    save(graph(nodes, "nested_loop", inputs, [vi("y", F, SHAPE), vi("pieces", F, [3])], inits), out)


def nested_scan(out):
    inputs, inits, nodes = top_common()
    inits.append(rand("W3", [3]))
    # If inside the Scan body whose then-branch holds another If: reads 1, 2 and 3 levels up.
    deep_then = graph([node("Add", ["row", "W3"], ["d0"]), node("Add", ["d0", "srow"], ["d1"]),
                       node("ReduceSum", ["W"], ["d2"], keepdims=0), node("Add", ["d1", "d2"], ["d3"]),
                       node("ReduceSum", ["/only_nested/Constant_output_0"], ["d4"], keepdims=0),
                       node("Add", ["d3", "d4"], ["d5"]),
                       node("ReduceSum", ["dead_at_top"], ["d6"], keepdims=0),
                       node("Add", ["d5", "d6"], ["deep_out"])],
                      "scan_deep_then", [], [vi("deep_out")])
    deep_else = graph([node("Sub", ["srow", "W3"], ["deep_out2"])], "scan_deep_else", [], [vi("deep_out2")])
    mid_then = graph([node("Mul", ["row", "state"], ["srow"]),
                      node("If", ["flag"], ["mt"], then_branch=deep_then, else_branch=deep_else)],
                     "scan_mid_then", [], [vi("mt")])
    mid_else = graph([node("Add", ["row", "W3"], ["me"])], "scan_mid_else", [], [vi("me")])
    body = graph(positive("row", "rc", "sb") + folded_constants("sb_", "sbk3", [3]) +
                 [node("Slice", ["sbk3", "s0", "s3"], ["sbk"]),
                  node("If", ["rc"], ["b0"], then_branch=mid_then, else_branch=mid_else),
                  node("Add", ["b0", "sbk"], ["b1"]), node("Tanh", ["b1"], ["state_next"]),
                  node("Identity", ["state_next"], ["scan_out"])],
                 "scan_body", [vi("state", F, [3]), vi("row", F, [3])], [vi("state_next", F, [3]), vi("scan_out", F, [3])])
    inits += [arr("s0", np.array([0], dtype=np.int64)), arr("s3", np.array([3], dtype=np.int64))]
    inputs.append(vi("seq", F, [4, 3]))
    nodes += [const("axes0", np.array([0], dtype=np.int64)),
              node("ReduceSum", ["x", "axes0"], ["init_state"], keepdims=0),
              node("Scan", ["init_state", "seq"], ["final", "ys"], body=body, num_scan_inputs=1)]
    save(graph(nodes, "nested_scan", inputs, [vi("final", F, [3]), vi("ys", F, [4, 3])], inits), out)


def const_cond(out):
    """If nodes on constant conditions (constant-propagation inlines them) whose branches read values
    from several levels up, some of them holding subgraphs of their own."""
    inputs, inits, nodes = top_common()
    leaf = graph([node("Add", ["m1", "W"], ["lf0"]), node("Add", ["lf0", "x"], ["lf1"]),
                  node("Add", ["lf1", "/Constant_output_0"], ["lf_out"])], "cc_leaf", [], [vi("lf_out")])
    leaf_else = graph([node("Neg", ["m1"], ["lfe_out"])], "cc_leaf_else", [], [vi("lfe_out")])
    mid = graph([const("cc_true", np.bool_(True)),
                 node("If", ["cc_true"], ["mid0"], then_branch=leaf, else_branch=leaf_else),  # inlined here
                 node("Add", ["mid0", "dead_at_top"], ["mid_out"])], "cc_mid", [], [vi("mid_out")])
    mid_else = graph([node("Relu", ["m1"], ["mid_out2"])], "cc_mid_else", [], [vi("mid_out2")])
    outer = graph([node("Add", ["t0", "W"], ["m1"]),
                   node("If", ["flag"], ["o0"], then_branch=mid, else_branch=mid_else),
                   node("Mul", ["o0", "m1"], ["outer_out"])], "cc_outer", [], [vi("outer_out")])
    outer_else = graph([node("Neg", ["x"], ["outer_out2"])], "cc_outer_else", [], [vi("outer_out2")])
    nodes += [const("top_true", np.bool_(True)),
              node("If", ["top_true"], ["y"], then_branch=outer, else_branch=outer_else)]  # has subgraphs
    save(graph(nodes, "const_cond", inputs, [vi("y", F, SHAPE)], inits), out)


def vad_like(out, count=25, seed=3):
    """`count` If nodes nested up to five deep; every branch reads names chosen at random from all
    enclosing levels (top-level initializers, Constant outputs, inputs, values of any ancestor)."""
    r = random.Random(seed)
    inputs, inits, nodes = top_common()
    made = [0]
    top_visible = ["x", "W", "Wdup", "/Constant_output_0", "/only_nested/Constant_output_0", "t0", "dead_at_top",
                   "mm", "W_nested_only"]

    def branch(tag, visible, depth):
        """A branch graph; `visible` lists (name, level) pairs it may read."""
        name = f"sub_graph{made[0]}_{tag}"
        local = []
        ns = []
        prev = r.choice(visible)[0]
        for k in range(r.randint(1, 3)):
            other = r.choice(visible + local)[0]
            v = f"/{name}/Add_{k}_output_0"
            ns.append(node(r.choice(["Add", "Mul", "Sub"]), [prev, other], [v]))
            local.append((v, depth))
            prev = v
        if r.random() < 0.4:
            kname = f"/{name}/Constant_output_0"
            ns += [const(kname, rng.uniform(-1, 1, SHAPE).astype(np.float32)),
                   node("Mul", [kname, kname], [kname + "_sq"]), node("Add", [prev, kname + "_sq"], [kname + "_sum"])]
            prev = kname + "_sum"
        if depth < 5 and made[0] < count and r.random() < 0.8:
            sub_out = f"/{name}/If_output_0"
            ns += if_node(visible + local, depth + 1, sub_out, prev)
            ns.append(node("Add", [prev, sub_out], [f"/{name}/out"]))
            prev = f"/{name}/out"
        ns.append(node("Identity", [prev], [f"/{name}/result"]))
        return graph(ns, name, [], [vi(f"/{name}/result")])

    def if_node(visible, depth, out_name, cond_source):
        made[0] += 1
        idx = made[0]
        cond = f"/If_{idx}/cond"
        ns = positive(cond_source, cond, f"/If_{idx}/c") if r.random() < 0.7 else [node("Identity", ["flag"], [cond])]
        then_g = branch("then", visible, depth)
        else_g = branch("else", visible, depth)
        ns.append(node("If", [cond], [out_name], then_branch=then_g, else_branch=else_g, name=f"/If_{idx}"))
        return ns

    visible = [(n, 0) for n in top_visible]
    prev = "t0"
    k = 0
    while made[0] < count:
        out_name = f"/top/If_{k}_output_0"
        nodes += if_node(visible, 1, out_name, prev)
        nodes.append(node("Add", [prev, out_name], [f"/top/acc_{k}"]))
        prev = f"/top/acc_{k}"
        k += 1
    nodes.append(node("Identity", [prev], ["y"]))
    save(graph(nodes, "vad_like", inputs, [vi("y", F, SHAPE)], inits), out)
    print(f"  {made[0]} If nodes")


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    nested_if(os.path.join(out_dir, "nested_if.onnx"))
    nested_loop(os.path.join(out_dir, "nested_loop.onnx"))
    nested_scan(os.path.join(out_dir, "nested_scan.onnx"))
    const_cond(os.path.join(out_dir, "const_cond.onnx"))
    vad_like(os.path.join(out_dir, "vad_like.onnx"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), ".cache", "nested"))
