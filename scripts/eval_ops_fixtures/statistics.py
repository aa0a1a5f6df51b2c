"""Run-time fixtures of the statistics and normalization operators (issue 19):
corpus/eval_ops/op_<name>*.rx, expected values from NumPy (population variance,
ddof=0; batch_norm/layer_norm/group_norm/rms_norm written out with NumPy reductions)."""

import numpy as np


def fn(name, sig, body):
    return f"""
@R.function
def {name}({sig}):
    {body}
    return z
"""


def gen(api):
    f32, i32, call, emit, TS, Arr = api.f32, api.i32, api.call, api.emit, api.TS, api.Arr
    x = f32([[1.0, -2.0, 3.0], [4.0, 0.5, -1.5]])
    xi = i32([[2, -3, 4], [5, 1, -2]])

    emit(
        "op_prod",
        ["OP-prod"],
        "R.prod along axis 1, over every axis, and of int32 (wrapping); an empty product is 1",
        [
            fn("main", f"x: {TS(['n', 'm'], 'float32')}", "z = R.prod(x, axis=1)"),
            fn("all", f"x: {TS(['n', 'm'], 'float32')}", "z = R.prod(x, keepdims=True)"),
            fn("ints", f"x: {TS(['n'], 'int32')}", "z = R.prod(x)"),
            fn("empty", f"x: {TS(['n', 'm'], 'float32')}", "z = R.prod(x, axis=0)"),
        ],
        [
            (call("main", x), np.prod(x, axis=1)),
            (call("all", x), np.prod(x, keepdims=True)),
            (call("ints", i32([65536, 65536, 3])), np.array(0, dtype=np.int32)),
            (call("empty", Arr(np.zeros((0, 2), dtype=np.float32))), f32([1.0, 1.0])),
        ],
    )
    nanx = f32([[1.0, np.nan, 7.0], [3.0, 3.0, -1.0]])
    for op, npf in (("argmax", np.argmax), ("argmin", np.argmin)):
        emit(
            f"op_{op}",
            [f"OP-{op}"],
            f"R.{op} along axis 1, over the flattened tensor with keepdims, with ties (the first index) and NaN (the first NaN wins, as NumPy); zero elements are an OpError",
            [
                fn("main", f"x: {TS(['n', 'm'], 'float32')}", f"z = R.{op}(x, axis=1)"),
                fn("flat", f"x: {TS(['n', 'm'], 'float32')}", f"z = R.{op}(x, keepdims=True)"),
                fn("ints", f"x: {TS(['n', 'm'], 'int32')}", f"z = R.{op}(x, axis=0)"),
            ],
            [
                (call("main", x), npf(x, axis=1).astype(np.int64)),
                (call("main", nanx), npf(nanx, axis=1).astype(np.int64)),
                (call("flat", x), np.array(npf(x), dtype=np.int64).reshape(1, 1)),
                (call("ints", xi), npf(xi, axis=0).astype(np.int64)),
                (call("main", Arr(np.zeros((2, 0), dtype=np.float32))), "error OpError"),
            ],
        )
    emit(
        "op_variance",
        ["OP-variance"],
        "R.variance is the population variance (ddof=0) along axis 1 and over everything; int32 truncates its mean and quotient; an integer variance of zero elements is DivisionByZero",
        [
            fn("main", f"x: {TS(['n', 'm'], 'float32')}", "z = R.variance(x, axis=1)"),
            fn("all", f"x: {TS(['n', 'm'], 'float64')}", "z = R.variance(x)"),
            fn("ints", f"x: {TS(['n'], 'int32')}", "z = R.variance(x)"),
        ],
        [
            (call("main", x), np.var(x, axis=1).astype(np.float32)),
            (call("all", x.astype(np.float64)), np.var(x.astype(np.float64))),
            # mean(1, 2, 4) = 7 // 3 = 2; deviations -1, 0, 2; 5 // 3 = 1.
            (call("ints", i32([1, 2, 4])), np.array(1, dtype=np.int32)),
            (call("ints", Arr(np.zeros((0,), dtype=np.int32))), "error DivisionByZero"),
        ],
    )
    emit(
        "op_std",
        ["OP-std"],
        "R.std is sqrt of the population variance along axis 0 and over everything (float16 too)",
        [
            fn("main", f"x: {TS(['n', 'm'], 'float32')}", "z = R.std(x, axis=0)"),
            fn("half", f"x: {TS(['n'], 'float16')}", "z = R.std(x)"),
        ],
        [
            (call("main", x), np.std(x, axis=0).astype(np.float32)),
            (call("half", np.array([1.0, 2.0, 4.0, 8.0], dtype=np.float16)),
             np.std(np.array([1.0, 2.0, 4.0, 8.0])).astype(np.float16)),
        ],
    )
    emit(
        "op_cumsum",
        ["OP-cumsum"],
        "R.cumsum along axis 1, flattened (no axis), exclusive, and into dtype int64 / float32 (int8 would wrap)",
        [
            fn("main", f"x: {TS(['n', 'm'], 'float32')}", "z = R.cumsum(x, axis=1)"),
            fn("flat", f"x: {TS(['n', 'm'], 'int32')}", "z = R.cumsum(x)"),
            fn("excl", f"x: {TS(['n', 'm'], 'int32')}", "z = R.cumsum(x, axis=0, exclusive=True)"),
            fn("wide", f"x: {TS(['n'], 'int8')}", 'z = R.cumsum(x, dtype="int64")'),
            fn("bad", f"x: {TS(['n'], 'float32')}", 'z = R.cumsum(x, dtype="int32")'),
        ],
        [
            (call("main", x), np.cumsum(x, axis=1)),
            (call("flat", xi), np.cumsum(xi).astype(np.int32)),
            (call("excl", xi), np.concatenate([np.zeros((1, 3), np.int32), xi[:1]], axis=0)),
            (call("wide", np.array([100, 100, 100], dtype=np.int8)), np.array([100, 200, 300], dtype=np.int64)),
            (call("bad", f32([1.0, np.nan])), "error OpError"),
        ],
    )

    def log_softmax(a, axis):
        a = a.astype(np.float64)
        m = np.max(a, axis=axis, keepdims=True)
        return (a - m) - np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True))

    emit(
        "op_nn_log_softmax",
        ["OP-nn.log_softmax"],
        "R.nn.log_softmax along the last axis and axis 0; stable for large inputs (x - max - log(sum(exp(x - max))))",
        [
            fn("main", f"x: {TS(['n', 'm'], 'float32')}", "z = R.nn.log_softmax(x)"),
            fn("rows", f"x: {TS(['n', 'm'], 'float32')}", "z = R.nn.log_softmax(x, axis=0)"),
        ],
        [
            (call("main", x), log_softmax(x, -1).astype(np.float32)),
            (call("rows", x), log_softmax(x, 0).astype(np.float32)),
            (call("main", f32([[1000.0, 1000.0]])), f32([[-np.log(2.0), -np.log(2.0)]])),
        ],
    )

    def norm(a, axes, eps):
        a = a.astype(np.float64)
        m = a.mean(axis=axes, keepdims=True)
        v = ((a - m) ** 2).mean(axis=axes, keepdims=True)
        return (a - m) / np.sqrt(v + eps)

    g, b = f32([0.5, 1.0, 2.0]), f32([0.0, 1.0, -1.0])
    emit(
        "op_nn_layer_norm",
        ["OP-nn.layer_norm"],
        "R.nn.layer_norm over the last axis (gamma, beta applied), without beta (center=False), and over both axes; gamma of the wrong length at run time is an OpError",
        [
            fn("main", f"x: {TS(['n', 'm'], 'float32')}, g: {TS(['m'], 'float32')}, b: {TS(['m'], 'float32')}",
               "z = R.nn.layer_norm(x, g, b, axes=[-1])"),
            fn("nobeta", f"x: {TS(['n', 'm'], 'float32')}, g: {TS(['m'], 'float32')}, b: {TS(['m'], 'float32')}",
               "z = R.nn.layer_norm(x, g, b, axes=[1], epsilon=0.5, center=False)"),
            fn("both", f"x: {TS(['n', 'm'], 'float32')}, g: {TS(['n', 'm'], 'float32')}, b: {TS(['n', 'm'], 'float32')}",
               "z = R.nn.layer_norm(x, g, b, axes=[0, 1])"),
            fn("loose", f"x: {TS(['n', 'm'], 'float32')}, g: {TS(['k'], 'float32')}",
               "z = R.nn.layer_norm(x, g, g, axes=[-1])"),
        ],
        [
            (call("main", x, g, b), (norm(x, (1,), 1e-5) * g + b).astype(np.float32)),
            (call("nobeta", x, g, b), (norm(x, (1,), 0.5) * g).astype(np.float32)),
            (call("both", x, np.ones_like(x), np.zeros_like(x)), norm(x, (0, 1), 1e-5).astype(np.float32)),
            (call("loose", x, f32([1.0, 2.0])), "error OpError"),
        ],
    )
    w = f32([1.0, 0.5, 2.0])
    ms = (x.astype(np.float64) ** 2).mean(axis=1, keepdims=True)
    emit(
        "op_nn_rms_norm",
        ["OP-nn.rms_norm"],
        "R.nn.rms_norm over the default last axis: x / sqrt(mean(x^2) + eps) * weight; a float16 input computes in float32; weight of another dtype at run time is an OpError",
        [
            fn("main", f"x: {TS(['n', 'm'], 'float32')}, w: {TS(['m'], 'float32')}", "z = R.nn.rms_norm(x, w)"),
            fn("half", f"x: {TS(['n', 'm'], 'float16')}, w: {TS(['m'], 'float16')}", "z = R.nn.rms_norm(x, w, axes=[1], epsilon=0.001)"),
            fn("loose", "x: R.Tensor(ndim=2, dtype=\"float32\"), w: R.Tensor(ndim=1)", "z = R.nn.rms_norm(x, w)"),
        ],
        [
            (call("main", x, w), (x / np.sqrt(ms + 1e-5) * w).astype(np.float32)),
            (call("half", x.astype(np.float16), w.astype(np.float16)),
             (x.astype(np.float16).astype(np.float64) / np.sqrt(ms + 1e-3) * w).astype(np.float16)),
            (call("loose", x, np.array([1, 2, 3], dtype=np.int32)), "error OpError"),
        ],
    )
    gx = np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2) * f32(0.5) - 3.0
    gg, gb = f32([1.0, 2.0, 0.5, -1.0]), f32([0.0, 0.5, 1.0, 0.0])

    def group_norm(a, groups, eps):
        n, c, h, wd = a.shape
        r = a.astype(np.float64).reshape(n, groups, c // groups, h, wd)
        return norm(r, (2, 3, 4), eps).reshape(a.shape)

    emit(
        "op_nn_group_norm",
        ["OP-nn.group_norm"],
        "R.nn.group_norm: 4 channels (axis 1) in 2 groups with the spatial axes, per-channel gamma and beta; a channel count the groups do not divide at run time is an OpError",
        [
            fn("main", f"x: {TS(['n', 'c', 'h', 'w'], 'float32')}, g: {TS(['c'], 'float32')}, b: {TS(['c'], 'float32')}",
               "z = R.nn.group_norm(x, g, b, num_groups=2, channel_axis=1, axes=[2, 3])"),
        ],
        [
            (call("main", gx, gg, gb),
             (group_norm(gx, 2, 1e-5) * gg.reshape(1, 4, 1, 1) + gb.reshape(1, 4, 1, 1)).astype(np.float32)),
            (call("main", Arr(np.ones((1, 3, 1, 1), dtype=np.float32)), f32([1.0, 1.0, 1.0]), f32([0.0, 0.0, 0.0])),
             "error OpError"),
        ],
    )
    bx = f32([[1.0, 2.0], [3.0, 6.0], [5.0, -2.0]])
    bg, bb, mm, mv = f32([1.0, 2.0]), f32([0.0, 1.0]), f32([0.5, -1.0]), f32([4.0, 0.25])
    bmean, bvar = bx.astype(np.float64).mean(axis=0), bx.astype(np.float64).var(axis=0)
    inf_out = ((bx - mm) / np.sqrt(mv.astype(np.float64) + 1e-5) * bg + bb).astype(np.float32)
    tr_out = ((bx - bmean) / np.sqrt(bvar + 1e-5) * bg + bb).astype(np.float32)
    sig = (f"x: {TS(['n', 'c'], 'float32')}, g: {TS(['c'], 'float32')}, b: {TS(['c'], 'float32')}, "
           f"m: {TS(['c'], 'float32')}, v: {TS(['c'], 'float32')}")
    emit(
        "op_nn_batch_norm",
        ["OP-nn.batch_norm"],
        "R.nn.batch_norm along axis 1: inference (training=False) uses the moving statistics and returns them unchanged; training (TVM's default) uses the batch's and returns (1 - momentum) * moving + momentum * batch; a moving mean of the wrong length at run time is an OpError",
        [
            fn("main", sig, "z = R.nn.batch_norm(x, g, b, m, v, axis=1, training=False)"),
            fn("train", sig, "z = R.nn.batch_norm(x, g, b, m, v, axis=1, momentum=0.25)"),
            fn("loose", sig.replace(f"m: {TS(['c'], 'float32')}", 'm: R.Tensor(ndim=1, dtype="float32")'),
               "z = R.nn.batch_norm(x, g, b, m, v, axis=1, training=False)"),
        ],
        [
            (call("main", bx, bg, bb, mm, mv), (inf_out, mm, mv)),
            (call("train", bx, bg, bb, mm, mv),
             (tr_out, (0.75 * mm + 0.25 * bmean).astype(np.float32), (0.75 * mv + 0.25 * bvar).astype(np.float32))),
            (call("loose", bx, bg, bb, f32([0.5]), mv), "error OpError"),
        ],
    )
    emit(
        "op_nn_dropout",
        ["OP-nn.dropout"],
        "R.nn.dropout at inference: (data, ones) whatever the rate, as TVM legalizes it",
        [
            fn("main", f"x: {TS(['n', 'm'], 'float32')}", "z = R.nn.dropout(x, rate=0.5)"),
            fn("ints", f"x: {TS(['n'], 'int32')}", "z = R.nn.dropout(x)"),
        ],
        [
            (call("main", x), (x, np.ones_like(x))),
            (call("ints", i32([3, -4])), (i32([3, -4]), i32([1, 1]))),
        ],
    )
