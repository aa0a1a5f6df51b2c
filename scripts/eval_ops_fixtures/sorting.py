"""Run-time fixtures of the sorting and element indexing operators (issue 19):
corpus/eval_ops/op_{sort,argsort,topk,gather_elements,scatter_elements}*.rx.

Expected values from NumPy: ascending order is `np.argsort(kind="stable")` (NaN last,
-0.0 equal to 0.0, ties in their order); descending order is the stable ascending order
of the reversed line, reversed back (so NaN first and ties still in their order); topk
is the first k of one of them; gather_elements is `np.take_along_axis` after wrapping
negative indices; scatter_elements applies the updates one by one in row-major order
of the indices (the last duplicate wins for "update")."""

import numpy as np


def fn(name, sig, body):
    return f"""
@R.function
def {name}({sig}):
    {body}
    return z
"""


def order(x, axis, descending):
    """Positions along `axis` in the operators' stable order."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    rev = np.flip(x, axis=axis)
    p = np.argsort(rev, axis=axis, kind="stable")
    return np.flip(n - 1 - p, axis=axis)


def topk(x, k, axis, largest):
    p = order(x, axis, largest)
    n = x.shape[axis]
    k = n if k < 1 else k
    p = np.take(p, np.arange(k), axis=axis)
    return np.take_along_axis(x, p, axis=axis), p


def wrapped(idx, d):
    return np.where(idx < 0, idx + d, idx)


def gather_elements(data, idx, axis):
    d = data.shape[axis]
    sl = tuple(slice(None) if j == axis else slice(0, idx.shape[j]) for j in range(data.ndim))
    return np.take_along_axis(data[sl], wrapped(idx, d).astype(np.int64), axis=axis)


def scatter_elements(data, idx, upd, axis, reduction):
    out = data.copy()
    d = data.shape[axis]
    for p in np.ndindex(*idx.shape):
        t = list(p)
        t[axis] = int(wrapped(idx[p], d))
        t = tuple(t)
        x, u = out[t], upd[p]
        if reduction == "update":
            out[t] = u
        elif reduction == "add":
            out[t] = x + u
        elif reduction == "mul":
            out[t] = x * u
        elif reduction == "mean":
            s = x + u
            # Integers truncate (C division), floats divide.
            out[t] = int(s / 2) if np.issubdtype(out.dtype, np.integer) else s / 2
        elif reduction == "max":
            out[t] = np.maximum(x, u)
        else:
            out[t] = np.minimum(x, u)
    return out


def gen(api):
    call, emit, f32, i32, i64, Arr = api.call, api.emit, api.f32, api.i32, api.i64, api.Arr
    np.seterr(all="ignore")
    nan = np.nan
    X2 = 'x: R.Tensor(("n", "m"), "float32")'
    x = f32([[3.0, nan, 1.0, -0.0, 1.0, 0.0], [2.0, 2.0, -np.inf, 7.5, nan, 2.0]])
    xi = i32([[5, -3, 5, 0], [1, 1, 1, -2], [9, -9, 0, 4]])
    x3 = f32(np.arange(24).reshape(2, 3, 4) % 5 - 2)
    xb = api.bools([[True, False, True, False]])

    emit(
        "op_sort",
        ["OP-sort"],
        "R.sort is stable along the last axis and along axis 0, descending too: NaN last ascending and first descending, -0.0 equal to 0.0 (kept in order), ties keep their order; int32, bool, a middle axis of rank 3; rank 0 has no axis (OpError)",
        [
            fn("main", X2, "z = R.sort(x)"),
            fn("desc", X2, "z = R.sort(x, axis=0, descending=True)"),
            fn("ints", 'x: R.Tensor(("n", "m"), "int32")', "z = R.sort(x, axis=-1, descending=True)"),
            fn("flags", 'x: R.Tensor(("n", "m"), "bool")', "z = R.sort(x)"),
            fn("middle", 'x: R.Tensor(("a", "b", "c"), "float32")', "z = R.sort(x, axis=1)"),
            fn("scalar", 'x: R.Tensor(dtype="float32")', "z = R.sort(x)"),
        ],
        [
            (call("main", x), np.take_along_axis(x, order(x, -1, False), axis=-1)),
            (call("desc", x), np.take_along_axis(x, order(x, 0, True), axis=0)),
            (call("ints", xi), np.take_along_axis(xi, order(xi, -1, True), axis=-1)),
            (call("flags", xb), Arr(np.sort(xb, axis=-1, kind="stable"), "bool")),
            (call("middle", x3), np.sort(x3, axis=1, kind="stable")),
            (call("scalar", f32(1.0)), "error OpError"),
        ],
    )
    emit(
        "op_argsort",
        ["OP-argsort"],
        "R.argsort gives the stable order's positions (int32 by default, int64 and uint8 on request); ties in their order ascending and descending, NaN last ascending and first descending; positions that do not fit int8 are an OpError",
        [
            fn("main", X2, "z = R.argsort(x)"),
            fn("desc", X2, 'z = R.argsort(x, axis=-1, descending=True, dtype="int64")'),
            fn("ints", 'x: R.Tensor(("n", "m"), "int32")', 'z = R.argsort(x, axis=0, dtype="uint8")'),
            fn("small", 'x: R.Tensor(("n",), "float32")', 'z = R.argsort(x, dtype="int8")'),
        ],
        [
            (call("main", x), order(x, -1, False).astype(np.int32)),
            (call("desc", x), order(x, -1, True).astype(np.int64)),
            (call("ints", xi), order(xi, 0, False).astype(np.uint8)),
            (call("small", f32(np.zeros(128))), np.arange(128, dtype=np.int8)),
            (call("small", f32(np.zeros(129))), "error OpError"),
        ],
    )
    v, p = topk(x, 3, -1, True)
    vs, ps = topk(xi, 2, 0, False)
    va, pa = topk(x3, 0, 1, True)
    emit(
        "op_topk",
        ["OP-topk"],
        "R.topk: the k largest (NaN counting as largest) or smallest in order, ties by first position, with int32 or int64 positions; ret_type values and indices; k < 1 takes the whole axis; k above the axis length is an OpError",
        [
            fn("main", X2, "z = R.topk(x, k=3)"),
            fn("small", 'x: R.Tensor(("n", "m"), "int32")', 'z = R.topk(x, k=2, axis=0, largest=False, dtype="int64")'),
            fn("values", 'x: R.Tensor(("a", "b", "c"), "float32")', 'z = R.topk(x, k=0, axis=1, ret_type="values")'),
            fn("indices", 'x: R.Tensor(("a", "b", "c"), "float32")', 'z = R.topk(x, k=-1, axis=1, ret_type="indices")'),
            fn("four", X2, "z = R.topk(x, k=4, axis=0)"),
        ],
        [
            (call("main", x), (v, p.astype(np.int32))),
            (call("small", xi), (vs, ps.astype(np.int64))),
            (call("values", x3), va),
            (call("indices", x3), pa.astype(np.int32)),
            (call("four", x), "error OpError"),
        ],
    )
    d = f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    gi = i64([[-1, 0], [1, -3]])
    gj = i32([[1, 0, 1]])
    emit(
        "op_gather_elements",
        ["OP-gather_elements"],
        "R.gather_elements along axis 1 and 0 (ONNX GatherElements): negative indices count from the end once, indices may be shorter than data along the other axes, the result has the indices' shape; an index outside [-d, d) is an OpError",
        [
            fn("main", f'{X2}, i: R.Tensor(("n", "k"), "int64")', "z = R.gather_elements(x, i, axis=1)"),
            fn("rows", f'{X2}, i: R.Tensor(("j", "k"), "int32")', "z = R.gather_elements(x, i)"),
        ],
        [
            (call("main", d, gi), gather_elements(d, gi, 1)),
            (call("rows", d, gj), gather_elements(d, gj, 0)),
            (call("main", d, i64([[3, 0], [0, 0]])), "error OpError"),
            (call("main", d, i64([[0, -4], [0, 0]])), "error OpError"),
        ],
    )
    data = i32([[10, 20, 30], [-5, -7, 9]])
    si = i64([[0, 0, -1], [2, 2, 2]])
    su = i32([[1, 2, 3], [4, 5, -6]])
    runs = []
    funcs = []
    for r in ("update", "add", "mul", "mean", "max", "min"):
        funcs.append(
            fn(
                r,
                'x: R.Tensor(("n", "m"), "int32"), i: R.Tensor(("n", "m"), "int64"), u: R.Tensor(("n", "m"), "int32")',
                f'z = R.scatter_elements(x, i, u, axis=1, reduction="{r}")',
            )
        )
        runs.append((call(r, data, si, su), scatter_elements(data, si, su, 1, r)))
    funcs.append(
        fn(
            "floats",
            'x: R.Tensor(("n", "m"), "float32"), i: R.Tensor(("k", "m"), "int32"), u: R.Tensor(("k", "m"), "float32")',
            'z = R.scatter_elements(x, i, u, reduction="mean")',
        )
    )
    fd, fi, fu = f32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), i32([[2, 0], [2, 0]]), f32([[0.5, nan], [-1.5, 8.0]])
    runs.append((call("floats", fd, fi, fu), scatter_elements(fd, fi, fu, 0, "mean")))
    runs.append((call("update", data, i64([[0, 3, 0], [0, 0, 0]]), su), "error OpError"))
    emit(
        "op_scatter_elements",
        ["OP-scatter_elements"],
        "R.scatter_elements applies the updates in row-major order of the indices (ONNX ScatterElements): for update the last duplicate wins; add, mul, the pairwise mean (x + u) / 2 (int32 truncating), max, min; negative indices count from the end once; indices shorter than data along axis 0; an index outside [-d, d) is an OpError",
        funcs,
        runs,
    )
