"""Run-time fixtures of the unary math and activation operators (issue 19): `erf`,
`rsqrt`, `sin`, `cos`, `floor`, `ceil`, `round`, `sign`, `square`, `isnan`, `isinf`,
`nn.gelu`, `nn.gelu_tanh`, `nn.silu`, `nn.leakyrelu`, `clip`.

Expected values come from NumPy (`math.erf` elementwise, NumPy having no erf),
computed in float64 and rounded to the dtype, within the tolerance of
proofs-notes/operator-semantics.md. The departures from NumPy recorded there: `sign`
of NaN is NaN (as NumPy; TVM gives 0), `clip` with min > max gives min (TVM's order;
NumPy gives max), and a bound converts to the tensor's dtype as `astype` does.
"""

import math

import numpy as np


def gen(api):
    np.seterr(all="ignore")
    nan, inf = np.nan, np.inf
    f32, i32, call, emit, TS, unary_fn = api.f32, api.i32, api.call, api.emit, api.TS, api.unary_fn
    erf = np.vectorize(math.erf, otypes=[np.float64])

    def in_dtype(f, x):
        """`f` of `x` computed in float64, rounded once to `x`'s dtype."""
        return f(x.astype(np.float64)).astype(x.dtype)

    x = f32([[0.0, 0.5, -1.0], [2.0, -inf, inf], [nan, 3.0, -0.25]])
    h = np.array([0.0, 0.5, -1.0, 2.0, 4.0], dtype=np.float16)
    d = np.array([1e-3, -0.75, 6.0], dtype=np.float64)

    def not_float(op, name):
        """A tensor of unknown dtype that is int32 at run time: an OpError."""
        emit(
            f"op_{name}_not_float",
            [f"OP-{op}"],
            f"R.{op} of a tensor of unknown dtype that is int32 at run time: it needs a float tensor (OpError)",
            [unary_fn(op, 'R.Tensor(("n",))')],
            [(call("main", i32([1, 2])), "error OpError")],
        )

    floats = [
        ("erf", "erf", erf, "erf(±inf) = ±1, NaN stays NaN"),
        ("rsqrt", "rsqrt", lambda v: 1.0 / np.sqrt(v), "1 / sqrt(x): rsqrt(0) = inf, rsqrt(-1) = NaN, rsqrt(inf) = 0"),
        ("sin", "sin", np.sin, "sin(±inf) = NaN"),
        ("cos", "cos", np.cos, "cos(±inf) = NaN"),
        ("nn.gelu", "nn_gelu", lambda v: v * (0.5 + erf(v * math.sqrt(0.5)) * 0.5),
         "x * (0.5 + erf(x / sqrt(2)) * 0.5): gelu(-inf) = NaN (-inf * 0), gelu(inf) = inf"),
        ("nn.gelu_tanh", "nn_gelu_tanh",
         lambda v: 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * v * (1.0 + 0.044715 * v * v))),
         "0.5 * x * (1 + tanh(sqrt(2/pi) * x * (1 + 0.044715 * x * x))): -inf gives NaN (-inf * 0)"),
        ("nn.silu", "nn_silu", lambda v: v / (1.0 + np.exp(-v)), "x * sigmoid(x): silu(-inf) = NaN (-inf * 0), silu(inf) = inf"),
    ]
    for op, name, f, what in floats:
        emit(
            f"op_{name}",
            [f"OP-{op}"],
            f"R.{op} at run time on float32 (n, m), float16 (computed in float32, rounded once) and float64: {what}",
            [
                unary_fn(op, TS(["n", "m"], "float32")),
                unary_fn(op, TS(["n"], "float16"), name="half"),
                unary_fn(op, TS(["n"], "float64"), name="double"),
            ],
            [
                (call("main", x), in_dtype(f, x)),
                (call("half", h), in_dtype(f, h)),
                (call("double", d), in_dtype(f, d)),
            ],
        )
        not_float(op, name)

    # floor, ceil, round, sign, square: any dtype.
    r = f32([[0.5, 1.5, 2.5, -0.5], [-2.5, -1.7, nan, -inf], [1e7 + 0.5, -0.0, 3.0, 0.49999997]])
    ints = np.array([-128, -3, 0, 7, 127], dtype=np.int8)
    sign = lambda v: np.where(np.isnan(v), v, np.sign(v))  # noqa: E731
    for op, f, what in [
        ("floor", np.floor, "floor(-0.5) = -1, NaN and ±inf stay"),
        ("ceil", np.ceil, "ceil(-0.5) = -0"),
        ("round", np.round, "ties to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2"),
        ("sign", sign, "-1, 0 or 1; NaN stays NaN; -0 gives 0"),
        ("square", np.square, "x * x in the dtype"),
    ]:
        int_out = f(ints) if op in ("sign", "square") else ints
        emit(
            f"op_{op}",
            [f"OP-{op}"],
            f"R.{op} at run time on float32 ({what}) and on int8 (floor, ceil, round are the identity, sign is -1/0/1, square wraps)",
            [unary_fn(op, TS(["n", "m"], "float32")), unary_fn(op, TS(["n"], "int8"), name="ints")],
            [(call("main", r), f(r).astype(np.float32)), (call("ints", ints), np.asarray(int_out, dtype=np.int8))],
        )
    emit(
        "op_square_bool_and_float16",
        ["OP-square"],
        "R.square of bool (uint1: x * x is x) and of float16 (computed in float32, rounded once: 300^2 overflows to inf)",
        [unary_fn("square", TS(["n"], "bool")), unary_fn("square", TS(["n"], "float16"), name="half")],
        [
            (call("main", api.bools([True, False])), api.bools([True, False])),
            (call("half", np.array([1.5, -300.0, 0.1], dtype=np.float16)),
             np.square(np.array([1.5, -300.0, 0.1], dtype=np.float16).astype(np.float32)).astype(np.float16)),
        ],
    )

    # isnan, isinf: a bool tensor; integers are never NaN or infinite.
    v = f32([[nan, inf, -inf], [0.0, -0.0, 3.5e38]])
    for op, f in [("isnan", np.isnan), ("isinf", np.isinf)]:
        emit(
            f"op_{op}",
            [f"OP-{op}"],
            f"R.{op} at run time: a bool tensor of the operand's shape, on float32, float16 and int32 (all false)",
            [
                unary_fn(op, TS(["n", "m"], "float32")),
                unary_fn(op, TS(["n"], "float16"), name="half"),
                unary_fn(op, TS(["n"], "int32"), name="ints"),
            ],
            [
                (call("main", v), f(v)),
                (call("half", np.array([nan, 70000.0, 1.0], dtype=np.float16)),
                 f(np.array([nan, 70000.0, 1.0], dtype=np.float16))),
                (call("ints", i32([0, -1, 2147483647])), api.bools([False, False, False])),
            ],
        )

    # nn.leakyrelu
    lx = f32([[-2.0, -0.0, 3.0], [nan, -inf, inf]])

    def leaky(v, alpha):
        a = np.asarray(alpha, dtype=v.dtype)
        return np.where(v > 0, v, a * v).astype(v.dtype)

    emit(
        "op_nn_leakyrelu",
        ["OP-nn.leakyrelu"],
        "R.nn.leakyrelu at run time: x where x > 0, else alpha * x (alpha default 0.01, rounded to the dtype); NaN stays NaN",
        [
            unary_fn("nn.leakyrelu", TS(["n", "m"], "float32")),
            unary_fn("nn.leakyrelu", TS(["n", "m"], "float32"), name="steep", attrs=", alpha=0.5"),
            unary_fn("nn.leakyrelu", TS(["n"], "float16"), name="half", attrs=", alpha=-2"),
        ],
        [
            (call("main", lx), leaky(lx, 0.01)),
            (call("steep", lx), leaky(lx, 0.5)),
            (call("half", np.array([-3.0, 0.5, -0.001], dtype=np.float16)),
             leaky(np.array([-3.0, 0.5, -0.001], dtype=np.float16), -2.0)),
        ],
    )
    not_float("nn.leakyrelu", "nn_leakyrelu")

    # clip
    cx = f32([[-7.0, 0.3, 7.0], [nan, -inf, inf]])

    def clip_fn(name, sig, lo, hi):
        return f'''
@R.function
def {name}(x: {sig}):
    z = R.clip(x, {lo}, {hi})
    return z
'''

    def clip(v, lo, hi):
        """TVM's order, NaN-propagating: maximum(minimum(x, hi), lo)."""
        return np.maximum(np.minimum(v, hi), lo).astype(v.dtype)

    i8 = np.array([-128, -5, 0, 5, 127], dtype=np.int8)
    emit(
        "op_clip",
        ["OP-clip"],
        "R.clip at run time: maximum(minimum(x, max), min) with NaN propagating; integer and T.float64 bounds "
        "converted to the dtype (0.5 truncates to 0 for int8); min > max gives min everywhere (TVM's order)",
        [
            clip_fn("main", TS(["n", "m"], "float32"), "0", "6"),
            clip_fn("frac", TS(["n", "m"], "float32"), "T.float64(-0.5)", "T.float64(0.25)"),
            clip_fn("ints", TS(["n"], "int8"), "T.float64(-3.9)", "100"),
            clip_fn("crossed", TS(["n"], "int8"), "4", "1"),
        ],
        [
            (call("main", cx), clip(cx, 0.0, 6.0)),
            (call("frac", cx), clip(cx, np.float32(-0.5), np.float32(0.25))),
            (call("ints", i8), clip(i8, np.int8(-3), np.int8(100))),
            (call("crossed", i8), clip(i8, np.int8(4), np.int8(1))),
        ],
    )
    emit(
        "op_clip_bound_not_convertible",
        ["OP-clip"],
        "R.clip of an int32 tensor with the bound T.float64(1e30): out of int32's range, so it does not convert (OpError, as astype)",
        [clip_fn("main", TS(["n"], "int32"), "0", "T.float64(1e30)")],
        [(call("main", i32([1, 2])), "error OpError")],
    )
