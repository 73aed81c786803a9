#!/usr/bin/python3
"""The CPU kernels' fast paths against numpy, at sizes above every threshold that picks them.

The ONNX backend suite's inputs are tiny, so the vectorized and specialized paths the per-op
benchmark (bench/op_bench.py) led to — TopK's heap selection, Einsum as batched GEMM, the
reduction engine's rows, columns and permuted axes, F16C casts, oneDNN activations, the
batch-1 recurrent product, CumSum by rows, row-wise Slice/Tile/Expand/GatherElements/DepthToSpace/ScatterND —
would run nowhere else. Each case is a one-node model run by `opscope-cli run --optimize none`
and compared with a numpy reference (exact where the op only moves or selects values).

  tests/kernel_parity.py OPSCOPE_CLI [--device cuda:0]   (CTest: kernel_parity; also run under ASan)

With --device the same cases run on that device (the GPU check runs them on cuda:0): ops the
device has no kernel for run on its host fallback and still must match.
"""
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

rng = np.random.default_rng(11)


def np_type(dtype):
    # onnx.mapping is gone from newer onnx releases (the GPU machine's); helper has it there.
    if hasattr(helper, "np_dtype_to_tensor_dtype"):
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def model(op, inputs, inits=None, attrs=None, outputs=1, order=None, opset=17, domain=""):
    inits = inits or {}
    names = order or list(inputs) + list(inits)
    node = helper.make_node(op, names, [f"y{i}" for i in range(outputs)], domain=domain, **(attrs or {}))
    ins = [helper.make_tensor_value_info(k, np_type(v.dtype), v.shape)
           for k, v in inputs.items()]
    outs = [helper.make_empty_tensor_value_info(f"y{i}") for i in range(outputs)]
    graph = helper.make_graph([node], op, ins, outs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    m = helper.make_model(graph, opset_imports=imports)
    m.ir_version = 8
    return m


def f32(*s):
    return rng.standard_normal(s).astype(np.float32)


def ints(x):
    return np.array(x, np.int64)


def topk_ref(x, k, axis, largest):
    x = np.moveaxis(x, axis, -1)
    vals, idxs = np.empty(x.shape[:-1] + (k,), x.dtype), np.empty(x.shape[:-1] + (k,), np.int64)
    for pos in np.ndindex(*x.shape[:-1]):
        row = x[pos]
        key = [((0 if np.isnan(v) else 1, -v if not np.isnan(v) else 0, j) if largest else
                (1 if np.isnan(v) else 0, v if not np.isnan(v) else 0, j)) for j, v in enumerate(row)]
        order = [j for _, _, j in sorted(key)][:k]
        vals[pos], idxs[pos] = row[order], order
    return [np.moveaxis(vals, -1, axis), np.moveaxis(idxs, -1, axis)]


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def lstm_ref(x, W, R, B):
    h = np.zeros((x.shape[1], R.shape[2]), np.float64)
    c = np.zeros_like(h)
    hidden = R.shape[2]
    ys = []
    for t in range(x.shape[0]):
        g = x[t] @ W[0].T + h @ R[0].T + B[0, :4 * hidden] + B[0, 4 * hidden:]
        i, o, f, cc = (g[:, k * hidden:(k + 1) * hidden] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(cc)
        h = sigmoid(o) * np.tanh(c)
        ys.append(h)
    return np.stack(ys)[:, None].astype(np.float32)


def gru_ref(x, W, R, B):
    hidden = R.shape[2]
    h = np.zeros((x.shape[1], hidden), np.float64)
    Wb, Rb = B[0, :3 * hidden], B[0, 3 * hidden:]
    ys = []
    for t in range(x.shape[0]):
        xw = x[t] @ W[0].T + Wb
        hr = h @ R[0].T + Rb
        z = sigmoid(xw[:, :hidden] + hr[:, :hidden])
        r = sigmoid(xw[:, hidden:2 * hidden] + hr[:, hidden:2 * hidden])
        hh = np.tanh(xw[:, 2 * hidden:] + (r * h) @ R[0][2 * hidden:].T + Rb[2 * hidden:])
        h = (1 - z) * hh + z * h
        ys.append(h)
    return np.stack(ys)[:, None].astype(np.float32)


def lstm_full_ref(x, W, R, B, P, clip, reverse=False):
    """One direction, peepholes and clip (applied to the gates' inputs, not to h(Ct)), float64."""
    hidden = R.shape[2]
    h = np.zeros((x.shape[1], hidden))
    c = np.zeros_like(h)
    ys = [None] * x.shape[0]
    cl = lambda v: np.clip(v, -clip, clip)
    for t in (reversed(range(x.shape[0])) if reverse else range(x.shape[0])):
        g = x[t] @ W[0].T + h @ R[0].T + B[0, :4 * hidden] + B[0, 4 * hidden:]
        i, o, f, cc = (g[:, k * hidden:(k + 1) * hidden] for k in range(4))
        i = sigmoid(cl(i + P[0, :hidden] * c))
        f = sigmoid(cl(f + P[0, 2 * hidden:] * c))
        c = f * c + i * np.tanh(cl(cc))
        h = sigmoid(cl(o + P[0, hidden:2 * hidden] * c)) * np.tanh(c)
        ys[t] = h
    return np.stack(ys)[:, None].astype(np.float32)


def gru_lbr_ref(x, W, R, B, clip):
    """linear_before_reset = 1 and clip, float64."""
    hidden = R.shape[2]
    h = np.zeros((x.shape[1], hidden))
    Wb, Rb = B[0, :3 * hidden], B[0, 3 * hidden:]
    cl = lambda v: np.clip(v, -clip, clip)
    ys = []
    for t in range(x.shape[0]):
        xw = x[t] @ W[0].T + Wb
        hr = h @ R[0].T + Rb
        z = sigmoid(cl(xw[:, :hidden] + hr[:, :hidden]))
        r = sigmoid(cl(xw[:, hidden:2 * hidden] + hr[:, hidden:2 * hidden]))
        hh = np.tanh(cl(xw[:, 2 * hidden:] + r * hr[:, 2 * hidden:]))
        h = (1 - z) * hh + z * h
        ys.append(h)
    return np.stack(ys)[:, None].astype(np.float32)


def linear_matrix(n_in, n_out, mode):
    """[n_out, n_in] weights of ONNX Resize's linear mode along one axis (sizes given)."""
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        if mode == "align_corners":
            x = 0.0 if n_out == 1 else o * (n_in - 1) / (n_out - 1)
        else:  # half_pixel
            x = (o + 0.5) * n_in / n_out - 0.5
        x = min(max(x, 0.0), n_in - 1)
        i0 = int(np.floor(x))
        i1 = min(i0 + 1, n_in - 1)
        m[o, i0] += 1 - (x - i0)
        m[o, i1] += x - i0
    return m


def depthwise_ref(x, w, pads, dil):
    """Depthwise 1-D or 2-D convolution at stride 1, float64: x [N,C,...], w [C,1,...]."""
    spatial = x.ndim - 2
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[d], pads[d + spatial]) for d in range(spatial)])
    k = w.shape[2:]
    out = [xp.shape[2 + d] - dil[d] * (k[d] - 1) for d in range(spatial)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for tap in np.ndindex(*k):
        sl = tuple(slice(tap[d] * dil[d], tap[d] * dil[d] + out[d]) for d in range(spatial))
        y += xp[(slice(None), slice(None)) + sl] * w[(slice(None), 0) + tap].reshape((1, -1) + (1,) * spatial)
    return y.astype(np.float32)


def conv_transpose_ref(x, w, strides, out_shape, auto_pad="NOTSET"):
    """2-D ConvTranspose (group 1, no dilation) to an explicit output_shape, float64: the full
    output cropped by ONNX's padding split (the odd unit at the start unless SAME_UPPER)."""
    n, c, ih, iw = x.shape
    m, kh, kw = w.shape[1], w.shape[2], w.shape[3]
    full = np.zeros((n, m, (ih - 1) * strides[0] + kh, (iw - 1) * strides[1] + kw))
    for i in range(ih):
        for j in range(iw):
            full[:, :, i * strides[0]:i * strides[0] + kh, j * strides[1]:j * strides[1] + kw] += np.einsum(
                "nc,cmhw->nmhw", x[:, :, i, j].astype(np.float64), w)
    begin = []
    for d in range(2):
        total = full.shape[2 + d] - out_shape[d]
        begin.append(total // 2 if auto_pad == "SAME_UPPER" else total - total // 2)
    return full[:, :, begin[0]:begin[0] + out_shape[0], begin[1]:begin[1] + out_shape[1]].astype(np.float32)


def depth_to_space_ref(x, b, crd):
    n, c, h, w = x.shape
    if crd:
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def pool_ref(x, k, st, pads, dil=(1, 1), ceil=False, mode="max", include_pad=False):
    """2-D pooling by definition: every window's taps gathered, padding left out (or, averaging
    with include_pad, counted); max lets NaN through as the ONNX reference does."""
    n, c, h, w = x.shape
    out = []
    for d, size in enumerate((h, w)):
        span = size + pads[d] + pads[d + 2] - ((k[d] - 1) * dil[d] + 1)
        out.append((math.ceil if ceil else math.floor)(span / st[d]) + 1)
    y = np.zeros((n, c, out[0], out[1]), np.float64)
    for oh in range(out[0]):
        for ow in range(out[1]):
            taps, padded = [], 0
            for i in range(k[0]):
                for j in range(k[1]):
                    r, q = oh * st[0] - pads[0] + i * dil[0], ow * st[1] - pads[1] + j * dil[1]
                    padded += r < h + pads[2] and q < w + pads[3]
                    if 0 <= r < h and 0 <= q < w:
                        taps.append(x[:, :, r, q].astype(np.float64))
            t = np.stack(taps)
            y[:, :, oh, ow] = t.max(0) if mode == "max" else t.sum(0) / (padded if include_pad else len(taps))
    return y.astype(np.float32)


def cases():
    c = []
    # TopK: heap selection (k·16 ≤ n) with ties and NaN, selection (nth_element), a non-last axis.
    t = np.round(f32(3, 1000) * 4) / 4
    t[1, 17] = np.nan
    t[2, 400] = np.inf
    for k, largest in [(10, 1), (10, 0), (600, 1)]:
        c.append((f"TopK k={k} largest={largest}", model("TopK", {"x": t}, {"k": ints([k])}, {"largest": largest},
                                                           outputs=2), {"x": t}, topk_ref(t, k, -1, largest), 0))
    t0 = np.round(f32(500, 3) * 4) / 4
    c.append(("TopK axis 0", model("TopK", {"x": t0}, {"k": ints([7])}, {"axis": 0}, outputs=2), {"x": t0},
              topk_ref(t0, 7, 0, 1), 0))
    # Einsum as batched GEMM: plain, transposed operands, permuted output, a dot product.
    for eq, sa, sb in [("bhqd,bhkd->bhqk", (2, 3, 17, 8), (2, 3, 19, 8)), ("bij,bjk->bik", (3, 5, 7), (3, 7, 4)),
                       ("ij,kj->ki", (6, 9), (5, 9)), ("ji,jk->ik", (7, 6), (7, 5)), ("i,i->", (33,), (33,)),
                       ("bqhd,bkhd->bhqk", (1, 9, 2, 4), (1, 11, 2, 4))]:
        a, b = f32(*sa), f32(*sb)
        c.append((f"Einsum {eq}", model("Einsum", {"a": a, "b": b}, attrs={"equation": eq}), {"a": a, "b": b},
                  [np.einsum(eq, a.astype(np.float64), b.astype(np.float64)).astype(np.float32)], 1e-5))
    # Reductions: rows (inner 1), columns (inner > 1024), permuted axes, NaN and inf, integers.
    r = f32(4, 1000)
    r[1, 333] = np.nan
    r[2, 5] = np.inf
    r[3, 999] = -np.inf
    for op, ref in [("ReduceMax", np.max), ("ReduceMin", np.min), ("ReduceSum", np.sum), ("ReduceMean", np.mean)]:
        ax = {"axes": [-1]} if op != "ReduceSum" else {}
        inits = {"axes": ints([-1])} if op == "ReduceSum" else {}
        c.append((f"{op} rows with NaN/inf", model(op, {"x": r}, inits, ax), {"x": r},
                  [ref(r.astype(np.float64), axis=-1, keepdims=True).astype(np.float32)], 1e-5))
    col = f32(2, 7, 1500)
    col[1, 3, 1400] = np.nan
    for op, ref in [("ReduceMax", np.max), ("ReduceMean", np.mean), ("ReduceL2", None), ("ReduceSumSquare", None)]:
        want = (np.sqrt((col.astype(np.float64) ** 2).sum(1, keepdims=True)) if op == "ReduceL2" else
                (col.astype(np.float64) ** 2).sum(1, keepdims=True) if op == "ReduceSumSquare" else
                ref(col.astype(np.float64), axis=1, keepdims=True))
        c.append((f"{op} columns", model(op, {"x": col}, attrs={"axes": [1]}), {"x": col}, [want.astype(np.float32)], 1e-5))
    p = f32(3, 5, 7)
    c.append(("ReduceSum axes 0,2 (permuted)", model("ReduceSum", {"x": p}, {"axes": ints([0, 2])}, {"keepdims": 0}),
              {"x": p}, [p.astype(np.float64).sum((0, 2)).astype(np.float32)], 1e-5))
    c.append(("ReduceLogSumExp axis 1", model("ReduceLogSumExp", {"x": p * 30}, attrs={"axes": [1]}), {"x": p * 30},
              [np.log(np.exp((p * 30).astype(np.float64)).sum(1, keepdims=True)).astype(np.float32)], 1e-5))
    q = rng.integers(-1000, 1000, (6, 300)).astype(np.int64)
    c.append(("ReduceSum int64", model("ReduceSum", {"x": q}, {"axes": ints([1])}), {"x": q}, [q.sum(1, keepdims=True)], 0))
    am = np.round(f32(16, 3000) * 2)
    for op, fn in [("ArgMax", np.argmax), ("ArgMin", np.argmin)]:
        c.append((f"{op} rows with ties", model(op, {"x": am}, attrs={"axis": 1}), {"x": am},
                  [fn(am, 1)[:, None].astype(np.int64)], 0))
    gm = np.round(f32(300, 40) * 2)
    c.append(("ArgMax axis 0", model("ArgMax", {"x": gm}, attrs={"axis": 0, "keepdims": 0}), {"x": gm},
              [np.argmax(gm, 0).astype(np.int64)], 0))
    inx, ing, inb = f32(2, 5, 30, 40) * 3 + 1, f32(5), f32(5)
    m64 = inx.astype(np.float64)
    norm = (m64 - m64.mean((2, 3), keepdims=True)) / np.sqrt(m64.var((2, 3), keepdims=True) + 1e-5)
    c.append(("InstanceNormalization", model("InstanceNormalization", {"x": inx}, {"s": ing, "b": inb}), {"x": inx},
              [(norm * ing[:, None, None] + inb[:, None, None]).astype(np.float32)], 1e-5))
    g = f32(2, 3, 20, 20)
    c.append(("GlobalMaxPool", model("GlobalMaxPool", {"x": g}), {"x": g}, [g.max((2, 3), keepdims=True)], 0))
    c.append(("GlobalAveragePool", model("GlobalAveragePool", {"x": g}), {"x": g},
              [g.astype(np.float64).mean((2, 3), keepdims=True).astype(np.float32)], 1e-5))
    # Plain-layout 2-D pooling (the separable rows kernel): strides, pads, dilation, ceil_mode,
    # NaN, both counts of the average.
    px = f32(2, 8, 33, 32)
    px[1, 3, 10, 7] = np.nan
    for name, attrs, ref in [
        ("MaxPool 3x3 s2 p1 ceil NaN", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
         pool_ref(px, (3, 3), (2, 2), (1, 1, 1, 1), ceil=True)),
        ("MaxPool 3x3 s1 d2 p2", {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]},
         pool_ref(px, (3, 3), (1, 1), (2, 2, 2, 2), dil=(2, 2))),
        ("MaxPool 2x3 s(1,3) p(1,0,0,2)", {"kernel_shape": [2, 3], "strides": [1, 3], "pads": [1, 0, 0, 2]},
         pool_ref(px, (2, 3), (1, 3), (1, 0, 0, 2))),
    ]:
        c.append((name, model("MaxPool", {"x": px}, attrs=attrs), {"x": px}, [ref], 0))
    ax = f32(2, 8, 33, 32)
    for name, attrs, ref in [
        ("AveragePool 3x3 s2 p1 ceil", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
         pool_ref(ax, (3, 3), (2, 2), (1, 1, 1, 1), ceil=True, mode="avg")),
        ("AveragePool 3x3 s1 p1 include pad", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
         pool_ref(ax, (3, 3), (1, 1), (1, 1, 1, 1), mode="avg", include_pad=True)),
        ("AveragePool 2x2 s2", {"kernel_shape": [2, 2], "strides": [2, 2]},
         pool_ref(ax, (2, 2), (2, 2), (0, 0, 0, 0), mode="avg")),
    ]:
        c.append((name, model("AveragePool", {"x": ax}, attrs=attrs), {"x": ax}, [ref], 1e-6))
    # Moving and selecting values: exact.
    cond, xa = rng.random((1, 1, 4, 300)) > 0.5, f32(1, 3, 4, 300)
    c.append(("Where broadcast mask", model("Where", {"c": cond, "a": xa}, {"b": np.array(-7, np.float32)}),
              {"c": cond, "a": xa}, [np.where(cond, xa, np.float32(-7))], 0))
    ge = f32(50, 70)
    for axis in [0, 1]:
        idx = rng.integers(0, ge.shape[axis], (40, 60)).astype(np.int64)
        if axis == 1:
            idx[3, 5] = -1  # negative: the copying path
        c.append((f"GatherElements axis {axis}", model("GatherElements", {"x": ge, "i": idx}, attrs={"axis": axis}),
                  {"x": ge, "i": idx}, [ge[idx, np.arange(60)[None, :]] if axis == 0 else ge[np.arange(40)[:, None], idx]], 0))
    s = f32(40, 50)
    c.append(("Slice steps 2,-3", model("Slice", {"x": s}, {"st": ints([1, 48]), "en": ints([39, 2]), "ax": ints([0, 1]),
                                                             "sp": ints([2, -3])}), {"x": s}, [s[1:39:2, 48:2:-3]], 0))
    ti = f32(3, 5, 7)
    c.append(("Tile", model("Tile", {"x": ti}, {"r": ints([2, 1, 3])}), {"x": ti}, [np.tile(ti, (2, 1, 3))], 0))
    ex = f32(3, 1, 5)
    c.append(("Expand", model("Expand", {"x": ex}, {"s": ints([2, 3, 4, 5])}), {"x": ex},
              [np.broadcast_to(ex, (2, 3, 4, 5))], 0))
    d = f32(2, 16, 9, 11)
    for mode in ["DCR", "CRD"]:
        c.append((f"DepthToSpace {mode}", model("DepthToSpace", {"x": d}, attrs={"blocksize": 2, "mode": mode}), {"x": d},
                  [depth_to_space_ref(d, 2, mode == "CRD")], 0))
    nz = (rng.random((3, 40, 50)) > 0.7).astype(np.float32) * f32(3, 40, 50)
    nz[1, 2, 3] = np.nan  # NaN is not zero
    c.append(("NonZero float", model("NonZero", {"x": nz}), {"x": nz}, [np.array(np.nonzero(nz), np.int64)], 0))
    nb = rng.random((7, 300)) > 0.5
    c.append(("NonZero bool", model("NonZero", {"x": nb}), {"x": nb}, [np.array(np.nonzero(nb), np.int64)], 0))
    sx, su = f32(6, 128), f32(4, 128)
    si = ints([[5], [0], [3], [1]])
    want = sx.copy()
    want[[5, 0, 3, 1]] = su
    c.append(("ScatterND rows", model("ScatterND", {"x": sx, "u": su}, {"i": si}, order=["x", "i", "u"]),
              {"x": sx, "u": su}, [want], 0))
    want_add = sx.copy()
    want_add[[5, 0, 3, 1]] += su
    c.append(("ScatterND add", model("ScatterND", {"x": sx, "u": su}, {"i": si}, {"reduction": "add"},
                                     order=["x", "i", "u"]), {"x": sx, "u": su}, [want_add], 1e-6))
    cs = f32(3, 50, 70)
    for excl, rev in [(0, 0), (1, 0), (0, 1), (1, 1)]:
        v = cs[:, ::-1] if rev else cs
        want = np.cumsum(v.astype(np.float64), 1)
        if excl:
            want = np.concatenate([np.zeros_like(want[:, :1]), want[:, :-1]], 1)
        if rev:
            want = want[:, ::-1]
        c.append((f"CumSum exclusive={excl} reverse={rev}", model("CumSum", {"x": cs}, {"a": np.array(1, np.int64)},
                                                                   {"exclusive": excl, "reverse": rev}), {"x": cs},
                  [want.astype(np.float32)], 1e-5))
    # float16 casts through F16C: ties, subnormals, overflow, inf (NaN compared as NaN).
    h = np.concatenate([f32(200) * 1000, np.array([65504, 65520, 1e-7, 6e-8, -2e-5, np.inf, -np.inf, 1 + 2 ** -11,
                                                    1 + 3 * 2 ** -11, np.nan], np.float32)])
    with np.errstate(over="ignore"):
        hh = h.astype(np.float16)
    c.append(("Cast float→float16", model("Cast", {"x": h}, attrs={"to": T.FLOAT16}), {"x": h}, [hh], 0))
    c.append(("Cast float16→float", model("Cast", {"x": hh}, attrs={"to": T.FLOAT}), {"x": hh}, [hh.astype(np.float32)], 0))
    # Activations through oneDNN above 64 values (its exp once made NaN inf), and Erf's own blocks.
    a = np.concatenate([f32(1000) * 3, np.array([0.4999, 0.5, 0.5001, -0.5, 1e-6, -1e-30, 5, -9, np.inf, -np.inf,
                                                  np.nan], np.float32)])
    for op, ref in [("Exp", np.exp), ("Elu", lambda v: np.where(v > 0, v, np.expm1(v))),
                    ("Softplus", lambda v: np.log1p(np.exp(v))),
                    ("Erf", np.vectorize(math.erf)), ("Sigmoid", sigmoid), ("Tanh", np.tanh)]:
        c.append((op, model(op, {"x": a}), {"x": a}, [ref(a.astype(np.float64)).astype(np.float32)], 1e-5))
    # Log through opscope's own blocks: around 1 (relative accuracy of small results), the
    # mantissa split at √½, subnormals, huge values and the special values.
    lg = np.concatenate([np.abs(f32(2000)) * 10, 1 + f32(500) * 1e-3, np.array(
        [1, 0.70710677, 0.70710683, 1.4142135, 2, 0.5, 1e-38, 1e-40, 1.4e-45, 3e38, 1 + 2 ** -23, 1 - 2 ** -24,
         0, -0.0, -1, np.inf, -np.inf, np.nan], np.float32)])
    with np.errstate(divide="ignore", invalid="ignore"):
        lg_ref = np.log(lg.astype(np.float64)).astype(np.float32)
    c.append(("Log", model("Log", {"x": lg}), {"x": lg}, [lg_ref], 1e-5))
    # GELU (opset 20): the tanh form through opscope's own blocks, the erf form; the special values
    # in a case of their own, so that 40 and ±∞ do not loosen the tolerance of the ordinary ones.
    def gelu_refs(g):
        gd = g.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):  # the formula's own values: −∞ gives NaN (−∞·0), as in ORT
            return (0.5 * gd * (1 + np.tanh(0.7978845608028654 * (gd + 0.044715 * gd ** 3))),
                    0.5 * gd * (1 + np.vectorize(math.erf)(gd / math.sqrt(2))))
    for name, g in [("", f32(5000) * 3),
                    (" special values", np.array([-12, -9, -4, 1e-6, 9, 40, np.inf, -np.inf, np.nan], np.float32))]:
        tanh_ref, erf_ref = gelu_refs(g)
        c.append(("Gelu tanh" + name, model("Gelu", {"x": g}, attrs={"approximate": "tanh"}, opset=20), {"x": g},
                  [tanh_ref.astype(np.float32)], 1e-5))
        c.append(("Gelu erf" + name, model("Gelu", {"x": g}, opset=20), {"x": g}, [erf_ref.astype(np.float32)], 1e-5))
    # FastGelu (com.microsoft) with a bias: x + b in the output, then the tanh blocks in place,
    # over 17.6 blocks of 4096 (threaded from 16 blocks on, a partial last block).
    fx, fb = f32(24, 3000) * 2, f32(3000)
    fast_ref, _ = gelu_refs(fx + fb)
    c.append(("FastGelu with bias", model("FastGelu", {"x": fx}, {"b": fb}, domain="com.microsoft"), {"x": fx},
              [fast_ref.astype(np.float32)], 1e-5))
    # Fused attention: 300 keys (two tiles, 8-lane tails), a mask with −∞ entries, one row fully
    # masked (NaN, as Softmax over −∞ everywhere), one whose first tile is, one score far below.
    q, k, v = f32(1, 2, 37, 16) * 3, f32(1, 2, 300, 16) * 3, f32(1, 2, 300, 16)
    mask = np.where(rng.uniform(size=(1, 1, 37, 300)) < 0.2, -np.inf, 0).astype(np.float32)
    mask[0, 0, 5, :] = -np.inf
    mask[0, 0, 7, :256] = -np.inf  # the first tile fully masked, the second not: its rescale is 0
    mask[0, 0, 9, 3] = -100.0  # one score ~100 below its row's maximum: exp underflows to 0
    sc = q.astype(np.float64) @ np.swapaxes(k, -1, -2) / 4.0 + mask
    with np.errstate(invalid="ignore"):
        e = np.exp(sc - sc.max(-1, keepdims=True))
        att = (e / e.sum(-1, keepdims=True)) @ v
    c.append(("Attention with −∞ mask", model("Attention", {"q": q, "k": k, "v": v, "mask": mask}, domain="ai.opscope"),
              {"q": q, "k": k, "v": v, "mask": mask}, [att.astype(np.float32)], 1e-5))
    # Recurrent cells at batch 1 (the transposed matrix-vector product) and batch 3 (sgemm).
    for batch in [1, 3]:
        x, W, R, B = f32(9, batch, 16), f32(1, 4 * 32, 16) * 0.3, f32(1, 4 * 32, 32) * 0.3, f32(1, 8 * 32) * 0.1
        c.append((f"LSTM batch {batch}", model("LSTM", {"x": x}, {"W": W, "R": R, "B": B}, {"hidden_size": 32}),
                  {"x": x}, [lstm_ref(x.astype(np.float64), W, R, B)], 1e-5))
        W3, R3, B3 = W[:, :96], R[:, :96], np.concatenate([B[:, :96], B[:, 128:224]], 1)
        c.append((f"GRU batch {batch}", model("GRU", {"x": x}, {"W": W3, "R": R3, "B": B3}, {"hidden_size": 32}),
                  {"x": x}, [gru_ref(x.astype(np.float64), W3, R3, B3)], 1e-5))
    # Recurrent cells with peepholes, clip and reverse (LSTM), linear_before_reset and clip (GRU):
    # the gate rows and their vectorized sigmoid/tanh, inputs large enough to saturate both.
    x, W, R = f32(7, 1, 12) * 2, f32(1, 4 * 40, 12) * 0.5, f32(1, 4 * 40, 40) * 0.5
    B, P = f32(1, 8 * 40) * 0.5, f32(1, 3 * 40) * 0.5
    c.append(("LSTM peepholes clip reverse",
              model("LSTM", {"x": x}, {"W": W, "R": R, "B": B, "P": P}, {"hidden_size": 40, "clip": 3.0, "direction": "reverse"},
                    order=["x", "W", "R", "B", "", "", "", "P"]),
              {"x": x}, [lstm_full_ref(x.astype(np.float64), W, R, B, P, 3.0, reverse=True)], 1e-5))
    W3, R3, B3 = W[:, :120], R[:, :120], np.concatenate([B[:, :120], B[:, 160:280]], 1)
    c.append(("GRU linear_before_reset clip",
              model("GRU", {"x": x}, {"W": W3, "R": R3, "B": B3}, {"hidden_size": 40, "clip": 2.5, "linear_before_reset": 1}),
              {"x": x}, [gru_lbr_ref(x.astype(np.float64), W3, R3, B3, 2.5)], 1e-5))
    # Resize linear, separable with a row cache: up (align_corners, half_pixel) and down by 3.3x
    # (rows skipped, slots reused), a plane count that is not a multiple of the row blocks.
    for (ih, iw, oh, ow), mode in [((37, 50, 74, 129), "align_corners"), ((64, 48, 19, 15), "half_pixel"),
                                   ((5, 200, 33, 7), "align_corners")]:
        xr = f32(2, 3, ih, iw)
        ref = np.einsum("oh,nchw,pw->ncop", linear_matrix(ih, oh, mode), xr.astype(np.float64), linear_matrix(iw, ow, mode))
        c.append((f"Resize linear {mode} {ih}x{iw}->{oh}x{ow}",
                  model("Resize", {"x": xr}, {"sz": ints([2, 3, oh, ow])}, {"mode": "linear",
                        "coordinate_transformation_mode": mode}, order=["x", "", "", "sz"]),
                  {"x": xr}, [ref.astype(np.float32)], 1e-5))
    # Depthwise convolutions with long kernels (the register-blocked interior and its edges):
    # conformer's k31 Conv1d, dilated and padded asymmetrically, and a 5x5 2-D one.
    for shape, k, pads, dil in [((1, 24, 200), (31,), [15, 15], (1,)), ((2, 8, 77), (9,), [3, 7], (2,)),
                                ((1, 16, 45, 38), (5, 5), [2, 1, 2, 3], (1, 1)), ((1, 4, 40), (7,), [0, 0], (1,))]:
        xd, wd = f32(*shape), f32(shape[1], 1, *k) * 0.2
        c.append((f"Conv depthwise k{k} pads {pads} dil {dil}",
                  model("Conv", {"x": xd}, {"w": wd}, {"group": shape[1], "kernel_shape": list(k), "pads": pads,
                                                        "dilations": list(dil)}),
                  {"x": xd}, [depthwise_ref(xd, wd, pads, dil)], 1e-5))
    # ConvTranspose to an explicit output_shape with odd total padding: ONNX puts the odd unit
    # at the start (NOTSET, SAME_LOWER) or the end (SAME_UPPER); opscope had NOTSET as SAME_UPPER.
    for xs, ws, st, osh, ap in [((1, 3, 5, 5), (3, 2, 3, 3), [2, 2], [10, 11], "NOTSET"),
                                ((2, 4, 4, 6), (4, 3, 4, 4), [3, 2], [10, 9], "NOTSET"),
                                ((1, 3, 5, 5), (3, 2, 3, 3), [2, 2], [10, 11], "SAME_UPPER")]:
        xt, wt = f32(*xs), f32(*ws) * 0.3
        attrs = {"strides": st, "output_shape": osh}
        if ap != "NOTSET":
            attrs["auto_pad"] = ap
        c.append((f"ConvTranspose output_shape {osh} {ap}", model("ConvTranspose", {"x": xt}, {"w": wt}, attrs),
                  {"x": xt}, [conv_transpose_ref(xt, wt, st, osh, ap)], 1e-5))
    # Resize's output size is floor(in × scale) in float, as ONNX's inference and ONNX Runtime
    # compute it: 10 × 2.3f is 23, not 22 (double); nearest keeps the values exact.
    xs = f32(1, 2, 10, 10)
    c.append(("Resize scale 2.3 output size", model("Resize", {"x": xs}, {"sc": np.array([1, 1, 2.3, 2.3], np.float32)},
                                                     {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                                                      "nearest_mode": "floor"}, order=["x", "", "sc"]),
              {"x": xs}, [xs[:, :, [int(np.floor(o / 2.3)) for o in range(23)]][:, :, :, [int(np.floor(o / 2.3)) for o in range(23)]]], 0))
    # An inf in one corner stays there: at the clamped edges a linear tap list has one entry, and
    # padding it with a weight-0 tap at index 0 read that corner (0·inf = NaN) into the far row
    # and column.
    xi = np.array([[[[np.inf, 1], [2, 3]]]], np.float32)
    third = 1 / 3
    want = np.array([[np.inf, np.inf, np.inf, 1], [np.inf, np.inf, np.inf, 2 * third + 1],
                     [np.inf, np.inf, np.inf, third + 2], [2, 2 + third, 2 + 2 * third, 3]])[None, None].astype(np.float32)
    c.append(("Resize linear keeps an inf in its corner",
              model("Resize", {"x": xi}, {"sz": ints([1, 1, 4, 4])}, {"mode": "linear",
                    "coordinate_transformation_mode": "align_corners"}, order=["x", "", "", "sz"]),
              {"x": xi}, [want], 1e-6))
    return c


def main():
    cli = sys.argv[1]
    device = []
    if "--device" in sys.argv:
        device = ["--device", sys.argv[sys.argv.index("--device") + 1]]
    failures = 0
    for name, m, feeds, expected, tol in cases():
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.onnx")
            onnx.save(m, path)
            flags = []
            for k, v in feeds.items():
                np.save(os.path.join(tmp, k + ".npy"), v)
                flags += ["--input", f"{k}={os.path.join(tmp, k + '.npy')}"]
            out = os.path.join(tmp, "out")
            p = subprocess.run([cli, "run", path, "--optimize", "none", "--iterations", "1", "--save-outputs", out] + device + flags,
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"FAIL {name}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
                failures += 1
                continue
            bad = 0
            for i, want in enumerate(expected):
                got = np.load(os.path.join(out, f"y{i}.npy"))
                ok = got.shape == want.shape and got.dtype == want.dtype
                if ok and tol == 0:
                    ok = np.array_equal(got, want, equal_nan=got.dtype.kind == "f")
                elif ok:
                    ok = np.allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(want[np.isfinite(want)]),
                                                                                     initial=0))), equal_nan=True)
                if not ok:
                    diff = "" if got.shape != want.shape else f", max diff {np.nanmax(np.abs(got.astype(np.float64) - want)):.3g}"
                    print(f"FAIL {name}: output {i} {got.dtype}{list(got.shape)} vs {want.dtype}{list(want.shape)}{diff}")
                    bad += 1
            failures += bad
            if not bad:
                print(f"ok   {name}")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
