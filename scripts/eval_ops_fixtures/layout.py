"""Run-time fixtures of `layout_transform`: expected values from a plain-Python
scatter of NumPy arrays (element at index i moved to index_map(i), the rest
pad_value). Loaded by scripts/eval-ops-fixtures.py, which passes itself as `api`."""

import numpy as np


def fn(name, params, body):
    return f"""
@R.function
def {name}({params}):
    z = {body}
    return z
"""


def transform(x, index_map, out_shape, pad=0):
    out = np.full(out_shape, pad, dtype=x.dtype)
    seen = set()
    for idx in np.ndindex(x.shape):
        to = tuple(index_map(*idx))
        assert to not in seen, "not injective"
        seen.add(to)
        out[to] = x[idx]
    return out


def gen(api):
    call, emit, f32, i32 = api.call, api.emit, api.f32, api.i32
    x = f32(np.arange(30).reshape(10, 3) * 0.5 - 4)
    y = i32(np.arange(24).reshape(2, 3, 4) - 7)
    emit(
        "op_layout_transform",
        ["OP-layout_transform"],
        "R.layout_transform at run time: a transpose; splitting an axis of 10 by 4 (12 places: the last two hold "
        "pad_value 1.5, or 0 when it is None); fusing two axes; a rank-3 permutation of int32 with a split",
        [
            fn("transpose", 'x: R.Tensor(("n", "m"), "float32")', "R.layout_transform(x, index_map=lambda i, j: (j, i))"),
            fn(
                "split",
                'x: R.Tensor((10, 3), "float32")',
                "R.layout_transform(x, index_map=lambda i, j: (i // 4, j, i % 4), pad_value=1.5)",
            ),
            fn(
                "split_zero",
                'x: R.Tensor((10, 3), "float32")',
                "R.layout_transform(x, index_map=T.index_map(lambda i, j: (i // 4, j, i % 4)), pad_value=None)",
            ),
            fn("fuse", 'x: R.Tensor((10, 3), "float32")', "R.layout_transform(x, index_map=lambda i, j: (i * 3 + j,))"),
            fn(
                "ints",
                'x: R.Tensor((2, 3, 4), "int32")',
                "R.layout_transform(x, index_map=lambda a, b, c: (c // 2, a, b, c % 2), pad_value=-1)",
            ),
        ],
        [
            (call("transpose", x), transform(x, lambda i, j: (j, i), (3, 10))),
            (call("split", x), transform(x, lambda i, j: (i // 4, j, i % 4), (3, 3, 4), 1.5)),
            (call("split_zero", x), transform(x, lambda i, j: (i // 4, j, i % 4), (3, 3, 4))),
            (call("fuse", x), transform(x, lambda i, j: (i * 3 + j,), (30,))),
            (call("ints", y), transform(y, lambda a, b, c: (c // 2, a, b, c % 2), (2, 2, 3, 2), -1)),
        ],
    )
    emit(
        "op_layout_transform_not_injective",
        ["OP-layout_transform"],
        "R.layout_transform with a map sending two elements to one place (i % 2 of an axis of 4) is an OpError",
        [fn("main", 'x: R.Tensor(("n",), "float32")', "R.layout_transform(x, index_map=lambda i: (i % 2,))")],
        [(call("main", f32([1, 2, 3, 4])), "error OpError"), (call("main", f32([1, 2])), transform(f32([1, 2]), lambda i: (i % 2,), (2,)))],
    )
    emit(
        "op_layout_transform_pad_out_of_range",
        ["OP-layout_transform"],
        "R.layout_transform with pad_value 300 for an int8 tensor is an OpError (the pad value converts as OP-astype converts a float), even with nothing to pad",
        [fn("main", 'x: R.Tensor(("n",), "int8")', "R.layout_transform(x, index_map=lambda i: (i,), pad_value=300)")],
        [(call("main", np.array([1, 2], dtype=np.int8)), "error OpError")],
    )
