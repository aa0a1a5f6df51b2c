"""Run-time fixtures of the dimension manipulation and creation-like operators
(`zeros_like`, `ones_like`, `full_like`, `squeeze`, `expand_dims`, `flatten`, `flip`,
`tril`, `triu`, `tile`, `repeat`, `collapse_sum_like`): expected values from NumPy.
Loaded by scripts/eval-ops-fixtures.py, which passes itself as `api`."""

import numpy as np


def fn(name, params, body, decls=()):
    d = "".join(f"\n    {v} = T.int64()" for v in decls)
    return f"""
@R.function
def {name}({params}):{d}
    z = {body}
    return z
"""


def collapse_sum(data, target_shape):
    """NumPy's sum of `data` down to `target_shape` (the reverse of broadcasting)."""
    lead = data.ndim - len(target_shape)
    out = data.sum(axis=tuple(range(lead))) if lead else data
    axes = tuple(i for i, t in enumerate(target_shape) if t == 1 and out.shape[i] != 1)
    out = out.sum(axis=axes, keepdims=True) if axes else out
    return out.astype(data.dtype)


def gen(api):
    call, emit, f32, i32, i64 = api.call, api.emit, api.f32, api.i32, api.i64
    X2 = 'x: R.Tensor(("n", "m"), "float32")'
    x = f32([[1.5, -2.0, 3.0], [4.0, 0.0, -6.25]])

    for op, np_fn in (("zeros_like", np.zeros_like), ("ones_like", np.ones_like)):
        emit(
            f"op_{op}",
            [f"OP-{op}"],
            f"R.{op} at run time: x's shape (n, m) and dtype; the dtype attribute int32 and bool; a rank-0 operand",
            [
                fn("main", X2, f"R.{op}(x)"),
                fn("ints", X2, f'R.{op}(x, dtype="int32")'),
                fn("flags", X2, f'R.{op}(x, "bool")'),
                fn("scalar", 'x: R.Tensor((), "int8")', f"R.{op}(x)"),
            ],
            [
                (call("main", x), np_fn(x)),
                (call("ints", x), np_fn(x, dtype=np.int32)),
                (call("flags", x), api.Arr(np_fn(x, dtype=np.bool_), "bool")),
                (call("scalar", np.array(-3, dtype=np.int8)), np_fn(np.array(-3, dtype=np.int8))),
            ],
        )

    v = f32(-2.75)
    emit(
        "op_full_like",
        ["OP-full_like"],
        "R.full_like at run time: x's shape filled with a float32 scalar; converted to x's dtype int32 (-2.75 truncates to -2); to the dtype attribute float64",
        [
            fn("main", X2 + ', v: R.Tensor((), "float32")', "R.full_like(x, v)"),
            fn("ints", 'x: R.Tensor(("n",), "int32"), v: R.Tensor((), "float32")', "R.full_like(x, v)"),
            fn("wide", X2 + ', v: R.Tensor((), "float32")', 'R.full_like(x, v, dtype="float64")'),
        ],
        [
            (call("main", x, v), np.full_like(x, -2.75)),
            (call("ints", i32([7, 8, 9]), v), np.full_like(i32([7, 8, 9]), -2)),
            (call("wide", x, v), np.full(x.shape, -2.75, dtype=np.float64)),
        ],
    )
    emit(
        "op_full_like_conversion_error",
        ["OP-full_like"],
        "R.full_like converting a NaN fill value to int32 (x's dtype) is an OpError, as OP-astype",
        [fn("main", 'x: R.Tensor(("n",), "int32"), v: R.Tensor((), "float32")', "R.full_like(x, v)")],
        [(call("main", i32([1, 2]), f32(np.nan)), "error OpError")],
    )

    y = f32(np.arange(6).reshape(1, 2, 1, 3))
    emit(
        "op_squeeze",
        ["OP-squeeze"],
        "R.squeeze at run time: listed axes of length 1 (negative from the end), all of them without axis, and an axis of symbolic length that is 1 here",
        [
            fn("main", 'x: R.Tensor((1, "n", 1, 3), "float32")', "R.squeeze(x, axis=[0, -2])"),
            fn("all", 'x: R.Tensor((1, 2, 1, 3), "float32")', "R.squeeze(x)"),
            fn("sym", 'x: R.Tensor(("k", 2, 1, 3), "float32")', "R.squeeze(x, axis=[0])"),
        ],
        [
            (call("main", y), np.squeeze(y, axis=(0, 2))),
            (call("all", y), np.squeeze(y)),
            (call("sym", y), np.squeeze(y, axis=0)),
        ],
    )
    emit(
        "op_squeeze_not_one",
        ["OP-squeeze"],
        "R.squeeze of an axis of symbolic length k (removed statically, with a warning) is an OpError when k is 2 at run time",
        [fn("main", 'x: R.Tensor(("k", 3), "float32")', "R.squeeze(x, axis=[0])")],
        [(call("main", f32(np.zeros((2, 3)))), "error OpError")],
    )

    emit(
        "op_expand_dims",
        ["OP-expand_dims"],
        "R.expand_dims at run time: one axis, two axes of the result (negative from its end), a rank-0 operand",
        [
            fn("main", X2, "R.expand_dims(x, axis=1)"),
            fn("two", X2, "R.expand_dims(x, axis=[0, -1])"),
            fn("scalar", 'x: R.Tensor((), "int64")', "R.expand_dims(x, axis=0)"),
        ],
        [
            (call("main", x), np.expand_dims(x, 1)),
            (call("two", x), np.expand_dims(x, (0, 3))),
            (call("scalar", i64(5)), np.expand_dims(i64(5), 0)),
        ],
    )

    z = i32(np.arange(24).reshape(2, 3, 4))
    emit(
        "op_flatten",
        ["OP-flatten"],
        "R.flatten at run time: (n, m, k) to (n * m * k,) in row-major order; rank 0 to (1,)",
        [
            fn("main", 'x: R.Tensor(("n", "m", "k"), "int32")', "R.flatten(x)"),
            fn("scalar", 'x: R.Tensor((), "float32")', "R.flatten(x)"),
        ],
        [(call("main", z), z.ravel()), (call("scalar", f32(2.5)), f32([2.5]))],
    )

    emit(
        "op_flip",
        ["OP-flip"],
        "R.flip at run time: along axis 0, the last axis (-1), and the middle axis of a rank-3 tensor",
        [
            fn("main", X2, "R.flip(x, axis=0)"),
            fn("last", X2, "R.flip(x, axis=-1)"),
            fn("mid", 'x: R.Tensor(("a", "b", "c"), "int32")', "R.flip(x, axis=1)"),
        ],
        [
            (call("main", x), np.flip(x, 0)),
            (call("last", x), np.flip(x, -1)),
            (call("mid", z), np.flip(z, 1)),
        ],
    )

    w = f32(np.arange(1, 25).reshape(2, 3, 4))
    for op, np_fn in (("tril", np.tril), ("triu", np.triu)):
        emit(
            f"op_{op}",
            [f"OP-{op}"],
            f"R.{op} at run time: each matrix of a batch with k = 0, 1, -1 (a PrimValue argument), and k beyond the matrix (all or nothing kept)",
            [
                fn("main", 'x: R.Tensor(("b", "n", "m"), "float32"), k: R.Prim("int64")', f"R.{op}(x, k)"),
                fn("far", 'x: R.Tensor(("b", "n", "m"), "float32")', f"R.{op}(x, 100)"),
                fn("ints", 'x: R.Tensor(("n", "m"), "int32")', f"R.{op}(x, k=-1)"),
            ],
            [
                (call("main", w, api.prim(0, "int64")), np_fn(w, 0)),
                (call("main", w, api.prim(1, "int64")), np_fn(w, 1)),
                (call("main", w, api.prim(-1, "int64")), np_fn(w, -1)),
                (call("far", w), np_fn(w, 100)),
                (call("ints", z[0]), np_fn(z[0], -1)),
            ],
        )

    emit(
        "op_tile",
        ["OP-tile"],
        "R.tile at run time: repeats of the operand's rank, shorter (padded with 1s) and longer (new leading dims)",
        [
            fn("main", X2, "R.tile(x, [2, 2])"),
            fn("short", X2, "R.tile(x, 3)"),
            fn("long", X2, "R.tile(x, [2, 1, 2])"),
        ],
        [
            (call("main", x), np.tile(x, (2, 2))),
            (call("short", x), np.tile(x, 3)),
            (call("long", x), np.tile(x, (2, 1, 2))),
        ],
    )

    emit(
        "op_repeat",
        ["OP-repeat"],
        "R.repeat at run time: along axis 0, axis -1, and without axis (the flattened operand)",
        [
            fn("main", X2, "R.repeat(x, 2, axis=0)"),
            fn("last", X2, "R.repeat(x, 3, axis=-1)"),
            fn("flat", X2, "R.repeat(x, 2)"),
        ],
        [
            (call("main", x), np.repeat(x, 2, axis=0)),
            (call("last", x), np.repeat(x, 3, axis=-1)),
            (call("flat", x), np.repeat(x, 2)),
        ],
    )

    d = f32(np.arange(24).reshape(2, 3, 4) * 0.5)
    emit(
        "op_collapse_sum_like",
        ["OP-collapse_sum_like"],
        "R.collapse_sum_like at run time: (b, n, m) summed to (n, 1), to (m,) and to (1, n, m); int32 data summed to a target of another dtype",
        [
            fn("main", 'x: R.Tensor(("b", "n", "m"), "float32"), t: R.Tensor(("n", 1), "float32")', "R.collapse_sum_like(x, t)"),
            fn("rows", 'x: R.Tensor(("b", "n", "m"), "float32"), t: R.Tensor(("m",), "float32")', "R.collapse_sum_like(x, t)"),
            fn("keep", 'x: R.Tensor(("b", "n", "m"), "float32"), t: R.Tensor((1, "n", "m"), "float32")', "R.collapse_sum_like(x, t)"),
            fn("ints", 'x: R.Tensor(("b", "n", "m"), "int32"), t: R.Tensor(("n", 1), "float16")', "R.collapse_sum_like(x, t)"),
        ],
        [
            (call("main", d, f32(np.zeros((3, 1)))), collapse_sum(d, (3, 1))),
            (call("rows", d, f32(np.zeros(4))), collapse_sum(d, (4,))),
            (call("keep", d, f32(np.zeros((1, 3, 4)))), collapse_sum(d, (1, 3, 4))),
            (call("ints", z, np.zeros((3, 1), dtype=np.float16)), collapse_sum(z, (3, 1))),
        ],
    )
    emit(
        "op_collapse_sum_like_mismatch",
        ["OP-collapse_sum_like"],
        "R.collapse_sum_like to a target whose shape is known only at run time: (2, 3) cannot be summed to (4,), an OpError",
        [fn("main", 'x: R.Tensor((2, 3), "float32"), t: R.Tensor("float32", ndim=1)', "R.collapse_sum_like(x, t)")],
        [(call("main", f32(np.zeros((2, 3))), f32(np.zeros(4))), "error OpError")],
    )
