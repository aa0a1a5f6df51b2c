"""Run-time fixtures of einsum, nn.attention and one_hot (issue 19):
corpus/eval_ops/op_einsum*.rx, op_nn_attention*.rx, op_one_hot*.rx. Expected values
from NumPy: np.einsum (and, where TVM differs from NumPy, the sum TVM computes), a
NumPy transcription of TVM 0.27's attention legalization (`_te_attention`: scores
scaled or divided by sqrt(h), bias added, TVM's masked softmax whose maximum counts
the masked zeros, BottomRight offset |s - t|, flash attention's window), and one_hot
as `indices[..., None] == arange(depth)` moved to `axis`."""

import numpy as np


def fn(name, sig, body):
    return f"""
@R.function
def {name}({sig}):
    {body}
    return z
"""


def attention_ref(q, k, v, bias=None, scale=None, causal=None, window=None):
    """TVM 0.27's legalization of R.nn.attention, in float64, cast to q's dtype."""
    dt = q.dtype
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    _, s, n, h = q.shape
    t, nk, nv = k.shape[1], k.shape[2], v.shape[2]
    # Grouped heads: query head i reads key head i // (n / nk) (repeat_interleave).
    kk, vv = np.repeat(k, n // nk, axis=2), np.repeat(v, n // nv, axis=2)
    p = np.einsum("bsnh,btnh->bnst", q, kk)
    p = p * scale if scale is not None else p / np.sqrt(h)
    if bias is not None:
        p = p + bias.astype(np.float64)
    if causal is None:
        e = np.exp(p - p.max(axis=-1, keepdims=True))
    else:
        off = 0 if causal == "TopLeft" else abs(s - t)
        i, j = np.arange(s)[:, None], np.arange(t)[None, :]
        kept = j <= i + off
        if window is not None:
            kept &= j > i + off - window
        pm = np.where(kept, p, 0.0)
        e = np.where(kept, np.exp(pm - pm.max(axis=-1, keepdims=True)), 0.0)
    w = e / e.sum(axis=-1, keepdims=True)
    return np.einsum("bnst,btnh->bsnh", w, vv).astype(dt)


def one_hot_ref(idx, on, off, depth, axis, dtype):
    hot = idx[..., None] == np.arange(depth)
    out = np.where(hot, np.array(on, dtype=dtype), np.array(off, dtype=dtype))
    r = idx.ndim
    a = axis + r + 1 if axis < 0 else axis
    return np.moveaxis(out, -1, a)


def gen(api):
    f32, i32, call, emit, TS, Arr, prim = api.f32, api.i32, api.call, api.emit, api.TS, api.Arr, api.prim
    rng = np.random.default_rng(19)

    def rand(*shape, dtype=np.float32):
        return (rng.integers(-8, 9, size=shape) / 4.0).astype(dtype)

    a, b = rand(2, 3), rand(3, 4)
    x3, y2 = rand(2, 2, 3), rand(3, 2)
    sq = rand(3, 3)
    v = rand(3)
    emit(
        "op_einsum",
        ["OP-einsum"],
        "R.einsum: a matrix product, a batched product with ellipses broadcasting, an implied transpose, a diagonal, "
        "a trace, an outer product, a label broadcast from 1, the ellipsis summed when the output leaves it out "
        "(TVM; NumPy refuses), int32 wrapping; label dimensions differing at run time are an OpError",
        [
            fn("main", f"x: {TS(['n', 'k'], 'float32')}, y: {TS(['j', 'm'], 'float32')}", 'z = R.einsum((x, y), subscripts="ij,jk->ik")'),
            fn("batched", f"x: {TS(['b', 'n', 'k'], 'float32')}, y: {TS(['k', 'm'], 'float32')}", 'z = R.einsum((x, y), subscripts="...ij,...jk")'),
            fn("transpose", f"x: {TS(['n', 'm'], 'float32')}", 'z = R.einsum((x,), subscripts="ji")'),
            fn("diagonal", f"x: {TS(['n', 'm'], 'float32')}", 'z = R.einsum((x,), subscripts="ii->i")'),
            fn("trace", f"x: {TS(['n', 'n'], 'float32')}", 'z = R.einsum((x,), subscripts="ii")'),
            fn("outer", f"x: {TS(['n'], 'float32')}, y: {TS(['m'], 'float32')}", 'z = R.einsum((x, y), subscripts="i,j")'),
            fn("bcast", f"x: {TS(['n'], 'float32')}, y: {TS([1], 'float32')}", 'z = R.einsum((x, y), subscripts="i,i->i")'),
            fn("ellsum", f"x: {TS(['b', 'n', 'k'], 'float32')}", 'z = R.einsum((x,), subscripts="...k->k")'),
            fn("ints", f"x: {TS(['n'], 'int32')}, y: {TS(['n'], 'int32')}", 'z = R.einsum((x, y), subscripts="i,i")'),
            fn("three", f"x: {TS(['n', 'k'], 'float32')}, y: {TS(['k', 'm'], 'float32')}, w: {TS(['m'], 'float32')}", 'z = R.einsum((x, y, w), subscripts="ij,jk,k->i")'),
        ],
        [
            (call("main", a, b), np.einsum("ij,jk->ik", a, b)),
            (call("batched", x3, y2), np.einsum("...ij,...jk", x3, y2)),
            (call("transpose", a), np.einsum("ji", a)),
            (call("diagonal", sq), np.einsum("ii->i", sq)),
            (call("trace", sq), np.einsum("ii", sq)),
            (call("outer", v, v[:2]), np.einsum("i,j", v, v[:2])),
            (call("bcast", v, f32([2.0])), v * np.float32(2.0)),
            (call("ellsum", x3), x3.sum(axis=(0, 1))),
            (call("ints", i32([65536, 3]), i32([65536, 4])), np.array(12, dtype=np.int32)),
            (call("three", a, b, v[:1].repeat(4)), np.einsum("ij,jk,k->i", a, b, v[:1].repeat(4))),
            (call("main", a, a), "error OpError"),
            (call("diagonal", a), "error OpError"),
        ],
    )

    q, k, vv = rand(1, 2, 2, 3), rand(1, 3, 2, 3), rand(1, 3, 2, 2)
    qg, kg, vg = rand(2, 3, 4, 2), rand(2, 2, 2, 2), rand(2, 2, 1, 3)
    bias = rand(1, 2, 1, 3)
    qs = rand(1, 4, 1, 2)
    ks, vs = rand(1, 2, 1, 2), rand(1, 2, 1, 2)
    sig = lambda hq, hk, hv: (  # noqa: E731
        f"q: {TS(['b', 's', hq, 'h'], 'float32')}, k: {TS(['b', 't', hk, 'h'], 'float32')}, "
        f"v: {TS(['b', 't', hv, 'e'], 'float32')}"
    )
    emit(
        "op_nn_attention",
        ["OP-nn.attention"],
        "R.nn.attention in BSNH: softmax(q k^T / sqrt(h)) v per head; grouped heads (4 query heads over 2 key and 1 value "
        "head); a bias broadcast over heads and queries with a scale; TopLeft and BottomRight masks (offset |s - t| as "
        "TVM, so 4 queries over 2 keys see both); a BottomRight window; heads not a multiple at run time are an OpError",
        [
            fn("main", sig("n", "n", "n"), "z = R.nn.attention(q, k, v)"),
            fn("grouped", sig(4, 2, 1), "z = R.nn.attention(q, k, v)"),
            fn("biased", sig(2, 2, 2) + f", bias: {TS([1, 2, 1, 't'], 'float32')}", "z = R.nn.attention(q, k, v, bias, scale=0.5)"),
            fn("topleft", sig(2, 2, 2), 'z = R.nn.attention(q, k, v, causal_mask="TopLeft")'),
            fn("bottomright", sig(1, 1, 1), 'z = R.nn.attention(q, k, v, causal_mask="BottomRight")'),
            fn("window", sig(2, 2, 2), 'z = R.nn.attention(q, k, v, causal_mask="BottomRight", window_size=1)'),
            fn("heads", sig("n", "m", "m"), "z = R.nn.attention(q, k, v)"),
        ],
        [
            (call("main", q, k, vv), attention_ref(q, k, vv)),
            (call("grouped", qg, kg, vg), attention_ref(qg, kg, vg)),
            (call("biased", q, k, vv, bias), attention_ref(q, k, vv, bias=bias, scale=0.5)),
            (call("topleft", q, k, vv), attention_ref(q, k, vv, causal="TopLeft")),
            (call("bottomright", qs, ks, vs), attention_ref(qs, ks, vs, causal="BottomRight")),
            (call("window", q, k, vv), attention_ref(q, k, vv, causal="BottomRight", window=1)),
            (call("heads", qg[:, :, :3], kg, kg), "error OpError"),
        ],
        tolerance="2e-3",
    )

    emit(
        "op_nn_attention_float16",
        ["OP-nn.attention"],
        "R.nn.attention of float16 tensors, computed in float16 (each step rounded, as TVM's legalization computes in "
        "the input dtype), against float64 NumPy: within float16's precision",
        [fn("main", sig("n", "n", "n").replace("float32", "float16"), 'z = R.nn.attention(q, k, v, causal_mask="TopLeft")')],
        [
            (
                call("main", *(x.astype(np.float16) for x in (q, k, vv))),
                attention_ref(*(x.astype(np.float16) for x in (q, k, vv)), causal="TopLeft"),
            )
        ],
        tolerance="2e-2",
    )

    idx = i32([[0, 2, -1], [3, 1, 1]])
    emit(
        "op_one_hot",
        ["OP-one_hot"],
        "R.one_hot: the new axis last (default), first, and in the middle (-2); negative and out-of-range indices give "
        "a line of off_value (TVM's topi.one_hot; ONNX would count -1 from the end); int64 and uint8 indices, int32 values",
        [
            fn("main", f"i: {TS(['n', 'm'], 'int32')}", "z = R.one_hot(i, R.prim_value(T.float32(1.5)), R.prim_value(T.float32(-1)), depth=3)"),
            fn("first", f"i: {TS(['n', 'm'], 'int32')}", "z = R.one_hot(i, R.prim_value(T.float32(1)), R.prim_value(T.float32(0)), depth=4, axis=0)"),
            fn("middle", f"i: {TS(['n', 'm'], 'int64')}", "z = R.one_hot(i, R.prim_value(T.int32(7)), R.prim_value(T.int32(0)), depth=2, axis=-2)"),
            fn("unsigned", f"i: {TS(['n'], 'uint8')}", "z = R.one_hot(i, R.prim_value(T.float64(1)), R.prim_value(T.float64(0)), depth=3)"),
        ],
        [
            (call("main", idx), one_hot_ref(idx, 1.5, -1.0, 3, -1, np.float32)),
            (call("first", idx), one_hot_ref(idx, 1.0, 0.0, 4, 0, np.float32)),
            (call("middle", idx.astype(np.int64)), one_hot_ref(idx, 7, 0, 2, -2, np.int32)),
            (call("unsigned", Arr(np.array([2, 255, 0], dtype=np.uint8))), one_hot_ref(np.array([2, 255, 0]), 1.0, 0.0, 3, -1, np.float64)),
            (call("main", Arr(np.zeros((0, 2), dtype=np.int32))), Arr(np.zeros((0, 2, 3), dtype=np.float32))),
        ],
    )
