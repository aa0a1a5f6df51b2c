#!/usr/bin/env python3
"""Generates corpus/eval_ops/*.rx: one or more run-time conformance files per
registered operator (OP-name), plus call_tir / call_dps_packed files.

Every expected value is computed here with NumPy, following the run-time choices
recorded in proofs-notes/operator-semantics.md (integer division truncates, integers
wrap, bool is uint1, float floor_divide is floor(x / y), NaN-propagating max/min,
float-to-int conversion of NaN/inf/out-of-range values is an error, ...).

Run with a Python that has NumPy:

    /tmp/tvmenv/bin/python scripts/eval-ops-fixtures.py

It rewrites the files in corpus/eval_ops/ (only those it generates).
"""

import math
import os
import textwrap

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "corpus", "eval_ops")

HEADER = (
    "from tvm.script import ir as I\n"
    "from tvm.script import relax as R\n"
    "from tvm.script import tir as T\n\n\n"
    "@I.ir_module\n"
    "class Module:\n"
)

INT_MIN32 = -(2**31)
INT_MAX32 = 2**31 - 1

# ---------------------------------------------------------------------------
# .rx literals
# ---------------------------------------------------------------------------

FLOAT_DTYPES = ("float16", "float32", "float64")
RTOL = {"float16": 1e-3, "float32": 1e-5, "float64": 1e-12}


def fmt_scalar(v, dtype):
    if dtype == "bool":
        return "True" if bool(v) else "False"
    if dtype.startswith("int") or dtype.startswith("uint"):
        return str(int(v))
    f = float(v)
    if math.isnan(f):
        return 'float("nan")'
    if math.isinf(f):
        return 'float("inf")' if f > 0 else '-float("inf")'
    return repr(f)


def nested(a, dtype):
    if a.ndim == 0:
        return fmt_scalar(a.item(), dtype)
    return "[" + ", ".join(nested(x, dtype) for x in a) + "]"


class Arr:
    """A tensor value: a NumPy array and its Relax dtype."""

    def __init__(self, a, dtype=None):
        a = np.asarray(a)
        self.dtype = dtype or str(a.dtype)
        if self.dtype == "bool":
            a = a.astype(np.bool_)
        self.a = a

    def rx(self):
        if self.a.size == 0 and self.a.ndim != 1:
            # Nested lists cannot show every empty shape: the printer's `shape=` form.
            dims = ", ".join(str(d) for d in self.a.shape) + ("," if self.a.ndim == 1 else "")
            return f'R.const([], "{self.dtype}", shape=({dims}))'
        return f'R.const({nested(self.a, self.dtype)}, "{self.dtype}")'


def T_(values, dtype):
    """A tensor literal of `dtype` from (nested) Python values."""
    np_dtype = {"bool": np.bool_}.get(dtype, dtype)
    return Arr(np.array(values, dtype=np_dtype), dtype)


class Raw:
    def __init__(self, text):
        self.text = text

    def rx(self):
        return self.text


def shape(*dims):
    return Raw("R.shape([" + ", ".join(str(int(d)) for d in dims) + "])")


def prim(v, dtype):
    if dtype.startswith("float"):
        return Raw(f"R.prim_value(T.{dtype}({fmt_scalar(v, dtype)}))")
    return Raw(f"R.prim_value(T.{dtype}({int(v)}))")


def rx(v):
    if isinstance(v, tuple):
        fields = [rx(x) for x in v]
        return "(" + fields[0] + ",)" if len(fields) == 1 else "(" + ", ".join(fields) + ")"
    if isinstance(v, (np.ndarray, np.generic)):
        return Arr(np.asarray(v)).rx()
    return v.rx()


def call(fn, *args):
    return f"{fn}(" + ", ".join(rx(a) for a in args) + ")"


def float_tolerance(v):
    """The absolute tolerance that the relative one of operator-semantics.md gives for
    the float results in `v` (0 when there are none)."""
    if isinstance(v, tuple):
        return max([float_tolerance(x) for x in v] + [0.0])
    if isinstance(v, (np.ndarray, np.generic)):
        v = Arr(np.asarray(v))
    if isinstance(v, Arr) and v.dtype in FLOAT_DTYPES:
        finite = v.a[np.isfinite(v.a)].astype(np.float64)
        big = float(np.max(np.abs(finite))) if finite.size else 0.0
        return RTOL[v.dtype] * max(1.0, big)
    return 0.0


def tol_text(t):
    # Round up to two significant digits.
    e = math.floor(math.log10(t))
    m = math.ceil(t / 10**e * 10) / 10
    return f"{m:g}e{e}"


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

FILES = {}


def module(*funcs):
    body = "\n\n".join(textwrap.indent(textwrap.dedent(f).strip("\n"), "    ") for f in funcs)
    return HEADER + body + "\n"


def emit(name, rules, description, funcs, runs, tolerance=None):
    """`runs`: (call text, expected value or `error KIND`)."""
    lines = ["# ---", f"# rules: [{', '.join(rules)}]", f"# description: {description}", "# expect: valid"]
    tol = 0.0
    for c, want in runs:
        lines.append(f"# run: {c}")
        if isinstance(want, str):
            assert want.startswith("error "), want
            lines.append(f"# expect: {want}")
        else:
            lines.append(f"# expect: {rx(want)}")
            tol = max(tol, float_tolerance(want))
    if tolerance is None and tol > 0:
        tolerance = tol_text(tol)
    if tolerance is not None:
        lines.append(f"# tolerance: {tolerance}")
    lines.append("# ---")
    assert name not in FILES, name
    FILES[name] = "\n".join(lines) + "\n" + module(*funcs)


def f32(x):
    return np.array(x, dtype=np.float32)


def i32(x):
    return np.array(x, dtype=np.int32)


def i64(x):
    return np.array(x, dtype=np.int64)


def bools(x):
    return np.array(x, dtype=np.bool_)


def wrap(values, dtype):
    """Python integers wrapped into an integer dtype (two's complement)."""
    return np.array([int(v) for v in np.ravel(values)], dtype=np.int64).astype(dtype).reshape(np.shape(values))


def binary_fn(op, x_sig, y_sig, name="main", out=None):
    decls = "".join(f"\n    {v} = T.int64()" for v in (out or []))
    return f'''
@R.function
def {name}(x: {x_sig}, y: {y_sig}):{decls}
    z = R.{op}(x, y)
    return z
'''


def unary_fn(op, sig, name="main", attrs=""):
    return f'''
@R.function
def {name}(x: {sig}):
    z = R.{op}(x{attrs})
    return z
'''


def TS(dims, dtype):
    """A tensor annotation: dims are ints or shape-variable names."""
    ds = ", ".join(f'"{d}"' if isinstance(d, str) else str(d) for d in dims)
    if len(dims) == 1:
        ds += ","
    return f'R.Tensor(({ds}), "{dtype}")'


def gen():
    np.seterr(all="ignore")
    nan, inf = np.nan, np.inf

    # ---------------- binary arithmetic ----------------
    x = f32([[1.5, -2.0, 3.25], [0.0, 4.0, -1.0]])
    y = f32([10.0, 0.5, -0.25])
    a = i32([INT_MAX32, INT_MIN32, 5, -7])
    b = i32([1])
    p, q = bools([True, True, False, False]), bools([True, False, True, False])
    u1 = np.array([2**64 - 1, 2**63, 5], dtype=np.uint64)
    u2 = np.array([1, 2**63, 3], dtype=np.uint64)
    emit(
        "op_add_broadcast",
        ["OP-add"],
        "R.add at run time: (n, m) + (m,) broadcasts; int32 wraps (MAX + 1 = MIN); uint64 wraps modulo 2^64; bool is uint1, so + is xor",
        [
            binary_fn("add", TS(["n", "m"], "float32"), TS(["m"], "float32")),
            binary_fn("add", TS(["n"], "int32"), TS([1], "int32"), name="ints"),
            binary_fn("add", TS(["n"], "bool"), TS(["n"], "bool"), name="bools"),
            binary_fn("add", TS(["n"], "uint64"), TS(["n"], "uint64"), name="unsigned"),
        ],
        [
            (call("main", x, y), x + y),
            (call("ints", a, b), a + b),
            (call("bools", p, q), Arr((p.astype(np.uint8) + q.astype(np.uint8)) % 2, "bool")),
            (call("unsigned", u1, u2), u1 + u2),
        ],
    )

    x = f32([[1.0], [-2.5], [0.0]])
    y = f32([[0.5, -1.0]])
    a = np.array([-128, 127, 0, 100], dtype=np.int8)
    b = np.array([1, -1, 0, -100], dtype=np.int8)
    emit(
        "op_subtract_broadcast",
        ["OP-subtract"],
        "R.subtract at run time: (n, 1) - (1, m) broadcasts to (n, m); int8 wraps (-128 - 1 = 127)",
        [
            binary_fn("subtract", TS(["n", 1], "float32"), TS([1, "m"], "float32")),
            binary_fn("subtract", TS(["n"], "int8"), TS(["n"], "int8"), name="ints"),
        ],
        [(call("main", x, y), x - y), (call("ints", a, b), a - b)],
    )

    x = f32([[1.5, -2.0], [3.0, 0.25], [-0.0, 8.0]])
    s = f32(-2.0)
    a = np.array([300, -300, 181], dtype=np.int16)
    b = np.array([300, 300, 181], dtype=np.int16)
    emit(
        "op_multiply_broadcast",
        ["OP-multiply"],
        "R.multiply at run time: (n, m) times a rank-0 tensor broadcasts; int16 wraps (300 * 300 = 24464)",
        [
            binary_fn("multiply", TS(["n", "m"], "float32"), 'R.Tensor((), "float32")'),
            binary_fn("multiply", TS(["n"], "int16"), TS(["n"], "int16"), name="ints"),
        ],
        [(call("main", x, s), x * s), (call("ints", a, b), a * b)],
    )

    a = i32([7, -7, 7, -7, INT_MIN32, 0])
    b = i32([2, 2, -2, -2, -1, 5])
    # Truncating division, exact on Python integers, then wrapped into int32.
    trunc = wrap([(abs(int(u)) // abs(int(v))) * (1 if (u < 0) == (v < 0) else -1) for u, v in zip(a, b)], np.int32)
    x = f32([[1.0, -1.0, 0.0, 0.1], [6.0, -6.0, 1.0, 3.0]])
    y = f32([0.0, 0.0, 0.0, 3.0])
    emit(
        "op_divide_truncates",
        ["OP-divide"],
        "R.divide at run time: integers truncate toward zero ([7,-7,7,-7] / [2,2,-2,-2] = [3,-3,-3,3], MIN / -1 wraps to MIN); floats are IEEE (x / 0 is +-inf, 0 / 0 NaN) with (n, m) / (m,) broadcasting",
        [
            binary_fn("divide", TS(["n"], "int32"), TS(["n"], "int32"), name="ints"),
            binary_fn("divide", TS(["n", "m"], "float32"), TS(["m"], "float32")),
        ],
        [(call("ints", a, b), trunc), (call("main", x, y), x / y)],
    )
    emit(
        "op_divide_by_zero",
        ["OP-divide"],
        "R.divide of integers by a zero element is a DivisionByZero error (NumPy warns and gives 0; TVM's code is undefined)",
        [binary_fn("divide", TS(["n"], "int32"), TS(["n"], "int32"))],
        [(call("main", i32([4, 2]), i32([2, 0])), "error DivisionByZero")],
    )

    a = i32([7, -7, 7, -7, 0, INT_MIN32])
    b = i32([2, 2, -2, -2, 3, -1])
    x = f32([7.5, -7.5, 1.0, -1.0, 5.0])
    y = f32([2.0, 2.0, 0.1, 0.0, -0.5])
    emit(
        "op_floor_divide_floors",
        ["OP-floor_divide"],
        "R.floor_divide at run time: integers floor ([7,-7,7,-7] // [2,2,-2,-2] = [3,-4,-4,3], MIN // -1 wraps); floats are floor(x / y) (TVM's definition: 1.0 // 0.1 is 10, where NumPy's // gives 9)",
        [
            binary_fn("floor_divide", TS(["n"], "int32"), TS(["n"], "int32"), name="ints"),
            binary_fn("floor_divide", TS(["n"], "float32"), TS(["n"], "float32")),
        ],
        [
            (call("ints", a, b), wrap([int(u) // int(v) for u, v in zip(a, b)], np.int32)),
            (call("main", x, y), np.floor(x / y)),
        ],
    )
    emit(
        "op_floor_divide_by_zero",
        ["OP-floor_divide"],
        "R.floor_divide of integers with a zero divisor (broadcast from a (1,) tensor) is a DivisionByZero error",
        [binary_fn("floor_divide", TS(["n"], "int64"), TS([1], "int64"))],
        [(call("main", i64([5, -5]), i64([0])), "error DivisionByZero")],
    )

    x = f32([2.0, 4.0, 9.0, -8.0, 0.0, -8.0])
    y = f32([0.5, -1.0, 2.0, 3.0, -1.0, 0.5])
    a = i32([3, 2, -2, 0, 5])
    b = i32([21, 31, 3, 0, 1])
    emit(
        "op_power",
        ["OP-power"],
        "R.power at run time: floats as IEEE pow (0 ** -1 is inf, (-8) ** 0.5 is NaN); integers by repeated multiplication, wrapping (3 ** 21 and 2 ** 31 wrap in int32; 0 ** 0 is 1)",
        [
            binary_fn("power", TS(["n"], "float32"), TS(["n"], "float32")),
            binary_fn("power", TS(["n"], "int32"), TS(["n"], "int32"), name="ints"),
        ],
        [
            (call("main", x, y), np.power(x, y)),
            (call("ints", a, b), wrap([int(u) ** int(v) for u, v in zip(a, b)], np.int32)),
        ],
    )
    emit(
        "op_power_negative_int_exponent",
        ["OP-power"],
        "R.power of integers with a negative exponent is an OpError (NumPy raises too)",
        [binary_fn("power", TS(["n"], "int32"), TS(["n"], "int32"))],
        [(call("main", i32([2, 2]), i32([3, -1])), "error OpError")],
    )

    x = f32([[1.0, nan, -3.0], [0.0, 2.0, -inf]])
    y = f32([[0.5], [inf]])
    a = i32([[1, -5], [INT_MIN32, 7]])
    b = i32([0, 3])
    p, q = bools([True, True, False, False]), bools([True, False, True, False])
    for op, fn in (("maximum", np.maximum), ("minimum", np.minimum)):
        emit(
            f"op_{op}_broadcast_nan",
            [f"OP-{op}"],
            f"R.{op} at run time: (n, m) against (n, 1) broadcasts; NaN propagates from either side (NumPy's {op}); integers exact; on bool it is {'or' if op == 'maximum' else 'and'} (false < true)",
            [
                binary_fn(op, TS(["n", "m"], "float32"), TS(["n", 1], "float32")),
                binary_fn(op, TS(["n", "m"], "int32"), TS(["m"], "int32"), name="ints"),
                binary_fn(op, TS(["n"], "bool"), TS(["n"], "bool"), name="bools"),
            ],
            [
                (call("main", x, y), fn(x, y)),
                (call("ints", a, b), fn(a, b)),
                (call("bools", p, q), Arr(fn(p, q), "bool")),
            ],
        )

    # ---------------- comparisons ----------------
    x = f32([[1.0, 2.0, nan, -0.0], [3.0, -inf, 5.0, 0.0]])
    y = f32([2.0, 2.0, nan, 0.0])
    a = i32([[1, 2, 3], [-4, 5, 6]])
    b = i32([[2], [5]])
    p, q = bools([False, False, True, True]), bools([False, True, False, True])
    for op, fn in (
        ("equal", np.equal),
        ("not_equal", np.not_equal),
        ("less", np.less),
        ("less_equal", np.less_equal),
        ("greater", np.greater),
        ("greater_equal", np.greater_equal),
    ):
        emit(
            f"op_{op}_broadcast",
            [f"OP-{op}"],
            f"R.{op} at run time: (n, m) against (m,) and (n, 1) broadcasts; the result is bool; NaN is unordered and unequal to itself, -0.0 equals 0.0; bools order false < true",
            [
                binary_fn(op, TS(["n", "m"], "float32"), TS(["m"], "float32")),
                binary_fn(op, TS(["n", "m"], "int32"), TS(["n", 1], "int32"), name="ints"),
                binary_fn(op, TS(["n"], "bool"), TS(["n"], "bool"), name="bools"),
            ],
            [
                (call("main", x, y), Arr(fn(x, y), "bool")),
                (call("ints", a, b), Arr(fn(a, b), "bool")),
                (call("bools", p, q), Arr(fn(p, q), "bool")),
            ],
        )

    # ---------------- logical ----------------
    p = bools([[True], [False]])
    q = bools([True, False, True])
    for op, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or)):
        emit(
            f"op_{op}_broadcast",
            [f"OP-{op}"],
            f"R.{op} at run time: bool (n, 1) against bool (m,) broadcasts to (n, m)",
            [binary_fn(op, TS(["n", 1], "bool"), TS(["m"], "bool"))],
            [(call("main", p, q), Arr(fn(p, q), "bool"))],
        )
    p = bools([[True, False, False], [False, True, True]])
    emit(
        "op_logical_not",
        ["OP-logical_not"],
        "R.logical_not at run time: elementwise not of a bool (n, m) tensor",
        [unary_fn("logical_not", TS(["n", "m"], "bool"))],
        [(call("main", p), Arr(np.logical_not(p), "bool"))],
    )

    # ---------------- unary ----------------
    a = np.array([-128, 127, 0, -5], dtype=np.int8)
    x = f32([[1.5, -0.0], [-inf, nan]])
    emit(
        "op_negative_wraps",
        ["OP-negative"],
        "R.negative at run time: int8 wraps (-(-128) = -128); floats flip the sign (0.0 and -0.0, inf, NaN)",
        [unary_fn("negative", TS(["n"], "int8"), name="ints"), unary_fn("negative", TS(["n", "m"], "float32"))],
        [(call("ints", a), np.negative(a)), (call("main", x), np.negative(x))],
    )
    a = i32([INT_MIN32, -7, 0, INT_MAX32])
    x = f32([-1.5, -0.0, -inf, nan, 2.0])
    emit(
        "op_abs_wraps",
        ["OP-abs"],
        "R.abs at run time: int32 wraps (abs(MIN) = MIN); floats: abs(-0.0) = 0.0, abs(-inf) = inf, NaN stays NaN",
        [unary_fn("abs", TS(["n"], "int32"), name="ints"), unary_fn("abs", TS(["n"], "float32"))],
        [(call("ints", a), np.abs(a)), (call("main", x), np.abs(x))],
    )

    x = f32([[0.0, 1.0, -1.0], [2.5, -inf, 100.0]])
    emit(
        "op_exp",
        ["OP-exp"],
        "R.exp at run time on a float32 (n, m) tensor: exp(-inf) = 0, exp(100) overflows to inf in float32",
        [unary_fn("exp", TS(["n", "m"], "float32"))],
        [(call("main", x), np.exp(x))],
    )
    h = np.array([0.0, 0.5, -1.0, 1.0, 12.0], dtype=np.float16)
    emit(
        "op_exp_float16",
        ["OP-exp"],
        "R.exp at run time on float16: computed in float32 and rounded to float16 once (as NumPy's float16 loop); exp(12) overflows float16 to inf",
        [unary_fn("exp", TS(["n"], "float16"))],
        [(call("main", h), np.exp(h))],
    )
    x = f32([1.0, math.e, 0.0, -1.0, inf, 0.5])
    emit(
        "op_log",
        ["OP-log"],
        "R.log at run time: log(1) = 0, log(0) = -inf, log(-1) = NaN, log(inf) = inf",
        [unary_fn("log", TS(["n"], "float32"))],
        [(call("main", x), np.log(x))],
    )
    x = np.array([[4.0, 2.0, 0.0], [-1.0, -0.0, inf]], dtype=np.float64)
    emit(
        "op_sqrt",
        ["OP-sqrt"],
        "R.sqrt at run time on float64: sqrt(2), sqrt(-1) = NaN, sqrt(-0.0) = -0.0, sqrt(inf) = inf",
        [unary_fn("sqrt", TS(["n", "m"], "float64"))],
        [(call("main", x), np.sqrt(x))],
    )
    x = f32([0.0, 1.0, -0.5, -20.0, inf, nan])
    emit(
        "op_tanh",
        ["OP-tanh"],
        "R.tanh at run time: tanh(-20) rounds to -1 in float32, tanh(inf) = 1, NaN stays NaN",
        [unary_fn("tanh", TS(["n"], "float32"))],
        [(call("main", x), np.tanh(x))],
    )
    x = f32([0.0, 1.0, -2.0, -100.0, 100.0, -inf])
    emit(
        "op_sigmoid",
        ["OP-sigmoid"],
        "R.sigmoid at run time: 1 / (1 + exp(-x)) in float32; sigmoid(-100) underflows to 0, sigmoid(-inf) = 0",
        [unary_fn("sigmoid", TS(["n"], "float32"))],
        [(call("main", x), (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32))],
    )
    x = f32([[-1.5, 0.0, 2.0], [nan, -inf, inf]])
    a = i32([-3, 0, 4, INT_MIN32])
    emit(
        "op_nn_relu",
        ["OP-nn.relu"],
        "R.nn.relu at run time: max(x, 0) elementwise on float32 (NaN propagates, as NumPy's maximum) and int32",
        [unary_fn("nn.relu", TS(["n", "m"], "float32")), unary_fn("nn.relu", TS(["n"], "int32"), name="ints")],
        [(call("main", x), np.maximum(x, np.float32(0))), (call("ints", a), np.maximum(a, np.int32(0)))],
    )

    def softmax(v, axis):
        m = np.max(v, axis=axis, keepdims=True)
        e = np.exp(v - m)
        return (e / np.sum(e, axis=axis, keepdims=True)).astype(v.dtype)

    x = f32([[1.0, 2.0, 3.0], [1000.0, 1000.0, 999.0]])
    xi = f32([[1.0, -inf, 3.0], [-inf, -inf, -inf]])
    emit(
        "op_nn_softmax",
        ["OP-nn.softmax"],
        "R.nn.softmax at run time on a (n, m) float32 tensor, along the default last axis and along axis 0; large inputs do not overflow (the line's max is subtracted); a -inf entry gets 0; a line of -inf is NaN (-inf - -inf)",
        [
            unary_fn("nn.softmax", TS(["n", "m"], "float32")),
            unary_fn("nn.softmax", TS(["n", "m"], "float32"), name="axis0", attrs=", axis=0"),
        ],
        [
            (call("main", x), softmax(x, -1)),
            (call("axis0", x), softmax(x, 0)),
            (call("main", xi), softmax(xi, -1)),
        ],
    )

    c = bools([[True], [False]])
    x = f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    s = f32(-1.0)
    emit(
        "op_where_broadcast",
        ["OP-where"],
        "R.where at run time: a bool (n, 1) condition, a (n, m) tensor and a rank-0 tensor broadcast together",
        [
            '''
@R.function
def main(c: R.Tensor(("n", 1), "bool"), x: R.Tensor(("n", "m"), "float32"), y: R.Tensor((), "float32")):
    z = R.where(c, x, y)
    return z
'''
        ],
        [(call("main", c, x, s), np.where(c, x, s).astype(np.float32))],
    )

    # ---------------- astype ----------------
    x = f32([1.7, -1.7, -0.5, 2.0e9, -0.0])
    a = i32([300, -129, 127, 256])
    z = f32([0.0, -0.0, nan, 0.5, -inf])
    # 2**60 + 2**36 + 1 rounds up to 2**60 + 2**37 when rounded once; through float64 it
    # would first become the tie 2**60 + 2**36 and then round to even, 2**60.
    big = np.array([2**60 + 2**36 + 1, -3, 2049, 2**24 + 1], dtype=np.int64)
    half = f32([70000.0, 1e-8, 0.1, -65504.0, 65520.0, nan])

    def astype_fn(name, src, dst):
        return f'''
@R.function
def {name}(x: R.Tensor(("n",), "{src}")):
    z = R.astype(x, "{dst}")
    return z
'''

    emit(
        "op_astype",
        ["OP-astype"],
        "R.astype at run time: float to int truncates toward zero (-0.5 to 0); int to int wraps (300 to int8 is 44); to bool is x != 0 (NaN is true); int64 to float32 rounds once to nearest even (2**60 + 2**36 + 1 up, 2**24 + 1 down); float32 to float16 rounds to nearest even, overflowing to inf (70000, 65520); compared exactly",
        [
            astype_fn("main", "float32", "int32"),
            astype_fn("narrow", "int32", "int8"),
            astype_fn("to_bool", "float32", "bool"),
            astype_fn("to_float", "int64", "float32"),
            astype_fn("to_half", "float32", "float16"),
        ],
        [
            (call("main", x), np.trunc(x).astype(np.int32)),
            (call("narrow", a), a.astype(np.int8)),
            (call("to_bool", z), Arr(z != 0, "bool")),
            (call("to_float", big), big.astype(np.float32)),
            (call("to_half", half), half.astype(np.float16)),
        ],
        tolerance="0",
    )
    emit(
        "op_astype_float_to_int_error",
        ["OP-astype"],
        "R.astype of a float that is NaN, infinite or out of the integer dtype's range after truncation is an OpError (NumPy gives a platform value, TVM's fptosi poison)",
        [astype_fn("main", "float32", "int32"), astype_fn("to_u8", "float32", "uint8")],
        [
            (call("main", f32([1.0, nan])), "error OpError"),
            (call("main", f32([-inf])), "error OpError"),
            (call("main", f32([3.0e9])), "error OpError"),
            (call("to_u8", f32([-1.0])), "error OpError"),
            (call("to_u8", f32([-0.5, 255.9])), Arr(np.array([0, 255], dtype=np.uint8), "uint8")),
        ],
    )

    # ---------------- matmul ----------------
    A = f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    B = f32([[1.0, 0.0, -1.0, 2.0], [0.5, 1.0, 0.0, -2.0], [2.0, -1.0, 1.0, 0.0]])
    v = f32([1.0, -1.0, 2.0])
    Bt = f32([[[1.0, 2.0], [3.0, 4.0]], [[-1.0, 0.0], [0.0, -1.0]]])
    At = f32([[1.0, 1.0], [0.0, 2.0], [3.0, -1.0]])
    i8a = np.array([[100, 100], [-128, 1]], dtype=np.int8)
    i8b = np.array([[100, 1], [100, -1]], dtype=np.int8)
    emit(
        "op_matmul_symbolic",
        ["OP-matmul"],
        "R.matmul at run time: (n, k) @ (k, m); a 1-D first operand (its added dimension dropped); batch broadcasting (n, k) @ (b, k, m); out_dtype int32 converts int8 operands first (no wrap); without it int8 products and sums wrap; 1-D @ 1-D is rank 0, (n, k) @ (k,) is (n,)",
        [
            '''
@R.function
def main(a: R.Tensor(("n", "k"), "float32"), b: R.Tensor(("k", "m"), "float32")):
    c = R.matmul(a, b)
    return c
''',
            '''
@R.function
def vec(v: R.Tensor(("k",), "float32"), b: R.Tensor(("k", "m"), "float32")):
    c = R.matmul(v, b)
    return c
''',
            '''
@R.function
def batched(a: R.Tensor(("n", "k"), "float32"), b: R.Tensor(("b", "k", "m"), "float32")):
    c = R.matmul(a, b)
    return c
''',
            '''
@R.function
def widen(a: R.Tensor(("n", "k"), "int8"), b: R.Tensor(("k", "m"), "int8")):
    c = R.matmul(a, b, out_dtype="int32")
    return c
''',
            '''
@R.function
def wraps(a: R.Tensor(("n", "k"), "int8"), b: R.Tensor(("k", "m"), "int8")):
    c = R.matmul(a, b)
    return c
''',
            '''
@R.function
def dot(a: R.Tensor(("k",), "float32"), b: R.Tensor(("k",), "float32")):
    c = R.matmul(a, b)
    return c
''',
            '''
@R.function
def matvec(a: R.Tensor(("n", "k"), "float32"), b: R.Tensor(("k",), "float32")):
    c = R.matmul(a, b)
    return c
''',
        ],
        [
            (call("main", A, B), A @ B),
            (call("vec", v, B), v @ B),
            (call("batched", At, Bt), At @ Bt),
            (call("widen", i8a, i8b), i8a.astype(np.int32) @ i8b.astype(np.int32)),
            (call("wraps", i8a, i8b), wrap(i8a.astype(np.int64) @ i8b.astype(np.int64), np.int8)),
            (call("dot", v, v), np.asarray(v @ v)),
            (call("matvec", A, v), A @ v),
        ],
    )
    emit(
        "op_matmul_reduction_mismatch",
        ["OP-matmul"],
        "R.matmul of (n, k) and (j, m) is undecided statically (a warning); at run time k = 3 and j = 2 differ: an OpError",
        [
            '''
@R.function
def main(a: R.Tensor(("n", "k"), "float32"), b: R.Tensor(("j", "m"), "float32")):
    c = R.matmul(a, b)
    return c
'''
        ],
        [(call("main", A, f32([[1.0], [2.0]])), "error OpError")],
    )

    # ---------------- reductions ----------------
    x = f32([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.5]], [[-1.0, -2.0], [0.5, 0.25], [8.0, 0.0]]])

    def reduce_fn(op, name, sig, attrs=""):
        return f'''
@R.function
def {name}(x: {sig}):
    z = R.{op}(x{attrs})
    return z
'''

    s3 = TS(["a", "b", "c"], "float32")
    a = i32([[INT_MAX32, 1], [3, 4]])
    pb = bools([[True, True, False], [True, False, False], [True, False, True]])
    # float16 accumulates in float16: 2048 + 1 rounds back to 2048 at every step.
    h16 = np.array([2048.0, 1.0, 1.0, 1.0, 1.0], dtype=np.float16)

    def fold16(v):
        acc = np.float16(0)
        for e in v:
            acc = np.float16(acc + e)
        assert acc == np.cumsum(v)[-1]  # NumPy's float16 cumsum rounds every step too
        return np.asarray(acc)

    emit(
        "op_sum_axes",
        ["OP-sum"],
        "R.sum at run time over a (a, b, c) tensor: every axis, axis=1, axes [0, 2] with keepdims, a negative axis; int32 sums wrap; the empty sum is 0; a bool sum is the parity (bool is uint1); axis=[] reduces nothing",
        [
            reduce_fn("sum", "main", s3),
            reduce_fn("sum", "axis1", s3, ", axis=1"),
            reduce_fn("sum", "keep", s3, ", axis=[0, 2], keepdims=True"),
            reduce_fn("sum", "last", s3, ", axis=-1"),
            reduce_fn("sum", "ints", TS(["n", "m"], "int32"), ", axis=1"),
            reduce_fn("sum", "empty", TS(["n"], "float32")),
            reduce_fn("sum", "bools", TS(["n", "m"], "bool"), ", axis=0"),
            reduce_fn("sum", "nothing", s3, ", axis=[]"),
        ],
        [
            (call("main", x), np.sum(x)),
            (call("axis1", x), np.sum(x, axis=1)),
            (call("keep", x), np.sum(x, axis=(0, 2), keepdims=True)),
            (call("last", x), np.sum(x, axis=-1)),
            (call("ints", a), wrap(np.sum(a.astype(np.int64), axis=1), np.int32)),
            (call("empty", f32([])), np.sum(f32([]))),
            (call("bools", pb), Arr(np.sum(pb.astype(np.int64), axis=0) % 2, "bool")),
            (call("nothing", x), np.sum(x, axis=())),
        ],
    )
    emit(
        "op_sum_float16",
        ["OP-sum"],
        "R.sum of float16 accumulates in float16, each addition rounded (as TVM's generated code): 2048 + 1 rounds back to 2048 at every step, so the sum of [2048, 1, 1, 1, 1] is 2048 (NumPy's np.sum accumulates in float32 and gives 2052; its float16 cumsum gives 2048); compared exactly",
        [reduce_fn("sum", "main", TS(["n"], "float16")), reduce_fn("sum", "rows", TS(["n", "m"], "float16"), ", axis=1")],
        [
            (call("main", h16), fold16(h16)),
            (call("rows", h16.reshape(1, 5)), fold16(h16).reshape(1)),
        ],
        tolerance="0",
    )
    emit(
        "op_mean_float16",
        ["OP-mean"],
        "R.mean of float16: the float16-accumulated sum (2048, each addition rounded) divided by the count in float16, 409.6 rounding to 409.5 (NumPy's np.mean accumulates in float32: 2052 / 5 gives 410.5); compared exactly",
        [reduce_fn("mean", "main", TS(["n"], "float16"))],
        [(call("main", h16), np.asarray(np.float16(fold16(h16) / np.float16(5))))],
        tolerance="0",
    )
    a = i32([[-3, -4], [7, 2], [5, 5]])
    emit(
        "op_mean",
        ["OP-mean"],
        "R.mean at run time: float32 over an axis and over all; int32 is the truncating quotient of the sum (mean([-3, -4]) = -3, NumPy's float mean would be -3.5); a float mean of zero elements is NaN",
        [
            reduce_fn("mean", "main", s3, ", axis=2"),
            reduce_fn("mean", "all", s3),
            reduce_fn("mean", "ints", TS(["n", "m"], "int32"), ", axis=1, keepdims=True"),
            reduce_fn("mean", "empty", TS(["n"], "float32")),
        ],
        [
            (call("main", x), np.mean(x, axis=2)),
            (call("all", x), np.mean(x)),
            (call("ints", a), np.trunc(np.sum(a, axis=1, keepdims=True) / a.shape[1]).astype(np.int32)),
            (call("empty", f32([])), f32(nan)),
        ],
    )
    emit(
        "op_mean_empty_int",
        ["OP-mean"],
        "R.mean of zero int32 elements divides by a zero count: a DivisionByZero error",
        [reduce_fn("mean", "main", TS(["n"], "int32"))],
        [(call("main", i32([])), "error DivisionByZero")],
    )
    xn = f32([[1.0, nan, 3.0], [-inf, 2.0, 0.5]])
    for op, fn in (("max", np.max), ("min", np.min)):
        emit(
            f"op_{op}_reduce",
            [f"OP-{op}"],
            f"R.{op} at run time: over every axis, over axis 0, and axis 1 with keepdims; NaN propagates (as NumPy); int32 exact",
            [
                reduce_fn(op, "main", s3),
                reduce_fn(op, "axis0", s3, ", axis=0"),
                reduce_fn(op, "keep", TS(["n", "m"], "float32"), ", axis=1, keepdims=True"),
                reduce_fn(op, "ints", TS(["n", "m"], "int32"), ", axis=0"),
            ],
            [
                (call("main", x), fn(x)),
                (call("axis0", x), fn(x, axis=0)),
                (call("keep", xn), fn(xn, axis=1, keepdims=True)),
                (call("ints", a), fn(a, axis=0)),
            ],
        )
        emit(
            f"op_{op}_empty",
            [f"OP-{op}"],
            f"R.{op} of zero elements has no identity: an OpError (NumPy raises; TVM returns -inf/+inf)",
            [reduce_fn(op, "main", TS(["n", "m"], "float32"), ", axis=1")],
            [(call("main", Arr(np.zeros((2, 0), dtype=np.float32))), "error OpError")],
        )

    # ---------------- manipulation ----------------
    x = f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    emit(
        "op_reshape",
        ["OP-reshape"],
        "R.reshape at run time: a (n, m) tensor to (m, n), to (n * m,) and to (1, n, m); row-major order kept",
        [
            '''
@R.function
def main(x: R.Tensor(("n", "m"), "float32")):
    n = T.int64()
    m = T.int64()
    z = R.reshape(x, R.shape([m, n]))
    return z
''',
            '''
@R.function
def flat(x: R.Tensor(("n", "m"), "float32")):
    n = T.int64()
    m = T.int64()
    z = R.reshape(x, R.shape([n * m]))
    return z
''',
            '''
@R.function
def lift(x: R.Tensor(("n", "m"), "float32")):
    n = T.int64()
    m = T.int64()
    z = R.reshape(x, R.shape([1, n, m]))
    return z
''',
        ],
        [
            (call("main", x), x.reshape(3, 2)),
            (call("flat", x), x.reshape(-1)),
            (call("lift", x), x.reshape(1, 2, 3)),
        ],
    )
    emit(
        "op_reshape_minus_one",
        ["OP-reshape"],
        "R.reshape with a -1 dimension (accepted by the static rule, which infers it): (n, m) to (-1,) and to (-1, 2) at run time; a -1 whose other dimensions do not divide the count is an OpError",
        [
            '''
@R.function
def main(x: R.Tensor(("n", "m"), "float32")):
    z = R.reshape(x, R.shape([-1]))
    return z
''',
            '''
@R.function
def pairs(x: R.Tensor(("n", "m"), "float32")):
    z = R.reshape(x, R.shape([-1, 2]))
    return z
''',
        ],
        [
            (call("main", x), x.reshape(-1)),
            (call("pairs", x), x.reshape(-1, 2)),
            (call("pairs", f32([[1.0, 2.0, 3.0]])), "error OpError"),
        ],
    )
    emit(
        "op_reshape_count_mismatch",
        ["OP-reshape"],
        "R.reshape of n elements to (2, 3) is undecided statically (a warning); with n = 5 the counts differ at run time: an OpError; with n = 6 it reshapes",
        [
            '''
@R.function
def main(x: R.Tensor(("n",), "float32")):
    z = R.reshape(x, R.shape([2, 3]))
    return z
''',
        ],
        [
            (call("main", f32([1, 2, 3, 4, 5])), "error OpError"),
            (call("main", f32([1, 2, 3, 4, 5, 6])), f32([1, 2, 3, 4, 5, 6]).reshape(2, 3)),
        ],
    )

    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    emit(
        "op_permute_dims",
        ["OP-permute_dims"],
        "R.permute_dims at run time: the default reverses the axes; axes=[1, 0, 2] and axes=[-1, 0, 1] reorder (a, b, c)",
        [
            unary_fn("permute_dims", TS(["a", "b", "c"], "int32")),
            unary_fn("permute_dims", TS(["a", "b", "c"], "int32"), name="swap", attrs=", axes=[1, 0, 2]"),
            unary_fn("permute_dims", TS(["a", "b", "c"], "int32"), name="rot", attrs=", axes=[-1, 0, 1]"),
        ],
        [
            (call("main", x), np.transpose(x)),
            (call("swap", x), np.transpose(x, (1, 0, 2))),
            (call("rot", x), np.transpose(x, (2, 0, 1))),
        ],
    )

    x = f32([[1.0, 2.0, 3.0]])
    y = f32(np.zeros((2, 3)))
    emit(
        "op_broadcast_to",
        ["OP-broadcast_to"],
        "R.broadcast_to at run time: a (1, m) tensor to (n, m) (n from another argument) and to (2, n, m) with an added leading dimension",
        [
            '''
@R.function
def main(x: R.Tensor((1, "m"), "float32"), y: R.Tensor(("n", "m"), "float32")):
    n = T.int64()
    m = T.int64()
    z = R.broadcast_to(x, R.shape([n, m]))
    return z
''',
            '''
@R.function
def lead(x: R.Tensor((1, "m"), "float32"), y: R.Tensor(("n", "m"), "float32")):
    n = T.int64()
    m = T.int64()
    z = R.broadcast_to(x, R.shape([2, n, m]))
    return z
''',
        ],
        [(call("main", x, y), np.broadcast_to(x, (2, 3)).copy()), (call("lead", x, y), np.broadcast_to(x, (2, 2, 3)).copy())],
    )
    emit(
        "op_broadcast_to_incompatible",
        ["OP-broadcast_to"],
        "R.broadcast_to of a (k,) tensor to (2, 3) is undecided statically (a warning); with k = 2 it does not broadcast at run time: an OpError",
        [
            '''
@R.function
def main(x: R.Tensor(("k",), "float32")):
    z = R.broadcast_to(x, R.shape([2, 3]))
    return z
'''
        ],
        [(call("main", f32([1.0, 2.0])), "error OpError"), (call("main", f32([7.0])), f32([[7.0] * 3] * 2))],
    )

    x = f32([[1.0, 2.0], [3.0, 4.0]])
    y = f32([[5.0, 6.0]])
    u = f32([[7.0], [8.0]])
    emit(
        "op_concat",
        ["OP-concat"],
        "R.concat at run time: (n, 2) and (m, 2) along axis 0; (n, 2) and (n, j) along axis 1; a single tensor",
        [
            '''
@R.function
def main(x: R.Tensor(("n", 2), "float32"), y: R.Tensor(("m", 2), "float32")):
    z = R.concat((x, y), axis=0)
    return z
''',
            '''
@R.function
def cols(x: R.Tensor(("n", 2), "float32"), u: R.Tensor(("n", "j"), "float32")):
    z = R.concat((x, u, x), axis=1)
    return z
''',
            '''
@R.function
def one(x: R.Tensor(("n", 2), "float32")):
    z = R.concat((x,))
    return z
''',
        ],
        [
            (call("main", x, y), np.concatenate([x, y], axis=0)),
            (call("cols", x, u), np.concatenate([x, u, x], axis=1)),
            (call("one", x), x),
        ],
    )

    x = np.arange(12, dtype=np.int32).reshape(2, 6)
    emit(
        "op_split",
        ["OP-split"],
        "R.split at run time: into 3 sections along axis 1; at indices [1, 4] along axis 1; at [-2, 10] (negative from the end, clamped); at a decreasing pair [4, 2] (an empty part)",
        [
            unary_fn("split", TS(["n", "m"], "int32"), attrs=", indices_or_sections=3, axis=1"),
            unary_fn("split", TS(["n", "m"], "int32"), name="at", attrs=", indices_or_sections=[1, 4], axis=1"),
            unary_fn("split", TS(["n", "m"], "int32"), name="clamp", attrs=", indices_or_sections=[-2, 10], axis=-1"),
            unary_fn("split", TS(["n", "m"], "int32"), name="dec", attrs=", indices_or_sections=[4, 2], axis=1"),
        ],
        [
            (call("main", x), tuple(np.split(x, 3, axis=1))),
            (call("at", x), tuple(np.split(x, [1, 4], axis=1))),
            (call("clamp", x), tuple(np.split(x, [-2, 10], axis=1))),
            (call("dec", x), tuple(np.split(x, [4, 2], axis=1))),
        ],
    )
    def tvm_sections(a, n):
        """TVM 0.27's (TOPI's, ONNX's) split into n sections: ceil(d / n) each, the rest last."""
        d = a.shape[0]
        seg = -(-d // n)
        if seg * (n - 1) > d:
            return "error OpError"
        return tuple(a[i * seg : min((i + 1) * seg, d)] if i + 1 < n else a[i * seg :] for i in range(n))

    v5, v6, v7 = (np.arange(1, k + 1, dtype=np.float32) for k in (5, 6, 7))
    emit(
        "op_split_sections_uneven",
        ["OP-split"],
        "R.split of a symbolic dimension n into 4 sections, as TVM 0.27 (TOPI split_n_sections, ONNX Split) does: parts of ceil(n / 4), the last one the rest - n = 7 gives 2, 2, 2, 1 and n = 6 gives 2, 2, 2, 0; n = 5 would need a last part of -1, an OpError; and a split into 1 section is a tensor equal to the operand, not a 1-tuple",
        [
            unary_fn("split", TS(["n"], "float32"), attrs=", indices_or_sections=4"),
            unary_fn("split", TS(["n"], "float32"), name="one", attrs=", indices_or_sections=1"),
        ],
        [
            (call("main", f32(v7)), tvm_sections(v7, 4)),
            (call("main", f32(v6)), tvm_sections(v6, 4)),
            (call("main", f32(v5)), tvm_sections(v5, 4)),
            (call("one", f32(v5)), v5),
        ],
    )

    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    emit(
        "op_strided_slice",
        ["OP-strided_slice"],
        "R.strided_slice at run time on (n, m): strides, negative bounds, clamping, a negative stride, an empty result, two axes at once",
        [
            unary_fn("strided_slice", TS(["n", "m"], "float32"), attrs=", axes=[1], begin=[1], end=[5], strides=[2]"),
            unary_fn("strided_slice", TS(["n", "m"], "float32"), name="neg", attrs=", axes=[0], begin=[-3], end=[-1]"),
            unary_fn("strided_slice", TS(["n", "m"], "float32"), name="clamp", attrs=", axes=[1], begin=[-100], end=[100]"),
            unary_fn("strided_slice", TS(["n", "m"], "float32"), name="rev", attrs=", axes=[1], begin=[4], end=[0], strides=[-2]"),
            unary_fn("strided_slice", TS(["n", "m"], "float32"), name="empty", attrs=", axes=[0], begin=[3], end=[1]"),
            unary_fn("strided_slice", TS(["n", "m"], "float32"), name="both", attrs=", axes=[1, 0], begin=[100, 0], end=[-100, 4], strides=[-1, 3]"),
        ],
        [
            (call("main", x), x[:, 1:5:2]),
            (call("neg", x), x[-3:-1, :]),
            (call("clamp", x), x[:, -100:100]),
            (call("rev", x), x[:, 4:0:-2]),
            (call("empty", x), x[3:1, :]),
            (call("both", x), x[0:4:3, 100:-100:-1]),
        ],
    )

    x = f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    idx = i64([[2, 0], [1, 1]])
    emit(
        "op_take",
        ["OP-take"],
        "R.take at run time: along axis 1 with (j, l) indices gives (n, j, l); along axis 0; without axis from the flattened tensor; int32 indices, a rank-0 index, uint8 indices along axis -1",
        [
            '''
@R.function
def main(x: R.Tensor(("n", "m"), "float32"), i: R.Tensor(("j", "l"), "int64")):
    z = R.take(x, i, axis=1)
    return z
''',
            '''
@R.function
def rows(x: R.Tensor(("n", "m"), "float32"), i: R.Tensor(("k",), "int32")):
    z = R.take(x, i, axis=0)
    return z
''',
            '''
@R.function
def flat(x: R.Tensor(("n", "m"), "float32"), i: R.Tensor(("k",), "int32")):
    z = R.take(x, i)
    return z
''',
            '''
@R.function
def scalar(x: R.Tensor(("n", "m"), "float32"), i: R.Tensor((), "int64")):
    z = R.take(x, i, axis=1)
    return z
''',
            '''
@R.function
def unsigned(x: R.Tensor(("n", "m"), "float32"), i: R.Tensor(("k",), "uint8")):
    z = R.take(x, i, axis=-1)
    return z
''',
        ],
        [
            (call("main", x, idx), np.take(x, idx, axis=1)),
            (call("rows", x, i32([1, 0, 1])), np.take(x, i32([1, 0, 1]), axis=0)),
            (call("flat", x, i32([5, 0, 3])), np.take(x, i32([5, 0, 3]))),
            (call("scalar", x, i64(2)), np.take(x, i64(2), axis=1)),
            (call("unsigned", x, np.array([2, 0], dtype=np.uint8)), np.take(x, [2, 0], axis=-1)),
        ],
    )
    emit(
        "op_take_index_out_of_range",
        ["OP-take"],
        "R.take with an index outside [0, n) is an OpError: 3 for a dimension of 3, and -1 (NumPy would wrap -1; TVM's default mode reads out of bounds)",
        [
            '''
@R.function
def main(x: R.Tensor(("n",), "float32"), i: R.Tensor(("k",), "int64")):
    z = R.take(x, i, axis=0)
    return z
'''
        ],
        [
            (call("main", f32([1.0, 2.0, 3.0]), i64([0, 3])), "error OpError"),
            (call("main", f32([1.0, 2.0, 3.0]), i64([-1])), "error OpError"),
        ],
    )

    # ---------------- creation ----------------
    x = f32([1.0, 2.0, 3.0])
    for op, fn in (("zeros", np.zeros), ("ones", np.ones)):
        emit(
            f"op_{op}",
            [f"OP-{op}"],
            f"R.{op} at run time: shape (n, 2) with n from an argument in float32; shape (2, n) in int8; bool; a 0 dimension",
            [
                f'''
@R.function
def main(x: R.Tensor(("n",), "float32")):
    n = T.int64()
    z = R.{op}(R.shape([n, 2]), "float32")
    return z
''',
                f'''
@R.function
def ints(x: R.Tensor(("n",), "float32")):
    n = T.int64()
    z = R.{op}(R.shape([2, n]), "int8")
    return z
''',
                f'''
@R.function
def flags(x: R.Tensor(("n",), "float32")):
    n = T.int64()
    z = R.{op}(R.shape([n]), "bool")
    return z
''',
            ],
            [
                (call("main", x), fn((3, 2), dtype=np.float32)),
                (call("ints", x), fn((2, 3), dtype=np.int8)),
                (call("flags", x), Arr(fn((3,), dtype=np.bool_), "bool")),
                (call("main", f32([])), fn((0, 2), dtype=np.float32)),
            ],
        )
    emit(
        "op_full",
        ["OP-full"],
        "R.full at run time: a float32 scalar filling (n, 2); converted to int32 by the dtype attribute (1.75 truncates to 1); an int32 scalar argument to (2, n)",
        [
            '''
@R.function
def main(x: R.Tensor(("n",), "float32"), v: R.Tensor((), "float32")):
    n = T.int64()
    z = R.full(R.shape([n, 2]), v)
    return z
''',
            '''
@R.function
def conv(x: R.Tensor(("n",), "float32"), v: R.Tensor((), "float32")):
    n = T.int64()
    z = R.full(R.shape([n]), v, "int32")
    return z
''',
            '''
@R.function
def ints(x: R.Tensor(("n",), "float32"), v: R.Tensor((), "int32")):
    n = T.int64()
    z = R.full(R.shape([2, n]), v)
    return z
''',
        ],
        [
            (call("main", x, f32(-2.5)), np.full((3, 2), -2.5, dtype=np.float32)),
            (call("conv", x, f32(1.75)), np.full((3,), np.trunc(1.75), dtype=np.int32)),
            (call("ints", x, i32(-7)), np.full((2, 3), -7, dtype=np.int32)),
        ],
    )
    emit(
        "op_full_conversion_error",
        ["OP-full"],
        "R.full converting a NaN fill value to int32 is an OpError (as R.astype)",
        [
            '''
@R.function
def main(x: R.Tensor(("n",), "float32"), v: R.Tensor((), "float32")):
    n = T.int64()
    z = R.full(R.shape([n]), v, "int32")
    return z
'''
        ],
        [(call("main", x, f32(nan)), "error OpError")],
    )
    emit(
        "op_arange",
        ["OP-arange"],
        "R.arange at run time: integer literals (int64), a negative step, float steps (float32, computed in float64 then converted), PrimValue arguments, an empty range, and int8 wrapping",
        [
            '''
@R.function
def main(x: R.Tensor(("n",), "float32")):
    z = R.arange(0, 7, 2)
    return z
''',
            '''
@R.function
def down(x: R.Tensor(("n",), "float32")):
    z = R.arange(10, 0, -3)
    return z
''',
            '''
@R.function
def floats(x: R.Tensor(("n",), "float32")):
    z = R.arange(0.0, 1.0, 0.25)
    return z
''',
            '''
@R.function
def down_floats(x: R.Tensor(("n",), "float32")):
    z = R.arange(1.0, 0.0, -0.3)
    return z
''',
            '''
@R.function
def prims(start: R.Prim("int64"), end: R.Prim("int64"), step: R.Prim("int64")):
    z = R.arange(start, end, step, dtype="int32")
    return z
''',
            '''
@R.function
def wraps(x: R.Tensor(("n",), "float32")):
    z = R.arange(0, 300, 100, dtype="int8")
    return z
''',
        ],
        [
            (call("main", x), np.arange(0, 7, 2, dtype=np.int64)),
            (call("down", x), np.arange(10, 0, -3, dtype=np.int64)),
            (call("floats", x), np.arange(0.0, 1.0, 0.25).astype(np.float32)),
            (call("down_floats", x), np.arange(1.0, 0.0, -0.3).astype(np.float32)),
            (call("prims", prim(-3, "int64"), prim(4, "int64"), prim(2, "int64")), np.arange(-3, 4, 2, dtype=np.int32)),
            (call("prims", prim(5, "int64"), prim(0, "int64"), prim(1, "int64")), np.arange(5, 0, 1, dtype=np.int32)),
            (call("wraps", x), wrap(np.arange(0, 300, 100), np.int8)),
        ],
    )
    emit(
        "op_arange_zero_step",
        ["OP-arange"],
        "R.arange with a PrimValue step that is 0 at run time is an OpError (statically the step is unknown)",
        [
            '''
@R.function
def main(step: R.Prim("int64")):
    z = R.arange(0, 5, step)
    return z
'''
        ],
        [(call("main", prim(0, "int64")), "error OpError")],
    )

    # ---------------- the Notable Operators ----------------
    x = f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    emit(
        "op_shape_of",
        ["OP-shape_of"],
        "R.shape_of at run time: the shape value of a (n, m) tensor, of a rank-0 tensor, and of a tensor with a 0 dimension",
        [
            unary_fn("shape_of", TS(["n", "m"], "float32")),
            unary_fn("shape_of", 'R.Tensor((), "int32")', name="scalar"),
        ],
        [
            (call("main", x), shape(2, 3)),
            (call("scalar", i32(5)), shape()),
            (call("main", Arr(np.zeros((0, 4), dtype=np.float32))), shape(0, 4)),
        ],
    )
    emit(
        "op_null_value",
        ["OP-null_value"],
        "R.null_value() evaluates to the null object (compared with the null object the expectation's R.null_value() gives); matching it against a tensor fails",
        [
            '''
@R.function
def main(x: R.Tensor(("n",), "float32")):
    a = R.null_value()
    return (a, x)
''',
            '''
@R.function
def as_tensor(x: R.Tensor(("n",), "float32")):
    a = R.null_value()
    b = R.match_cast(a, R.Tensor(ndim=1, dtype="float32"))
    return b
''',
        ],
        [
            (call("main", f32([1.0])), Raw('(R.null_value(), R.const([1.0], "float32"))')),
            (call("as_tensor", f32([1.0])), "error MatchCastMismatch"),
        ],
    )
    emit(
        "op_print",
        ["OP-print"],
        "R.print at run time returns the empty tuple (with a format string, several values, no values) and the function goes on",
        [
            '''
@R.function(pure=False)
def main(x: R.Tensor(("n",), "float32")):
    a = R.print(x, format="x = {}")
    b = R.print(x, R.shape_of(x))
    c = R.print()
    y = R.add(x, x)
    return (a, b, c, y)
'''
        ],
        [(call("main", f32([1.0, 2.5])), Raw(f"((), (), (), {Arr(f32([2.0, 5.0])).rx()})"))],
    )
    emit(
        "op_assert_op",
        ["OP-assert_op"],
        "R.assert_op with a true condition (a rank-0 bool tensor computed from the data, or a bool PrimValue) returns the empty tuple",
        [
            '''
@R.function(pure=False)
def main(x: R.Tensor(("n",), "int32"), p: R.Prim("bool")):
    c = R.greater(R.min(x), R.const(0, "int32"))
    a = R.assert_op(c, x, format="x must be positive: {}")
    b = R.assert_op(p)
    return (a, b, x)
'''
        ],
        [(call("main", i32([1, 2, 3]), Raw("R.prim_value(T.bool(True))")), Raw(f"((), (), {Arr(i32([1, 2, 3])).rx()})"))],
    )
    emit(
        "op_assert_op_false",
        ["OP-assert_op"],
        "R.assert_op with a false condition (a rank-0 bool tensor, or a bool PrimValue) stops the program with an OpError",
        [
            '''
@R.function(pure=False)
def main(x: R.Tensor(("n",), "int32"), p: R.Prim("bool")):
    c = R.greater(R.min(x), R.const(0, "int32"))
    a = R.assert_op(c, x, format="x must be positive: {}")
    b = R.assert_op(p)
    return (a, b, x)
'''
        ],
        [
            (call("main", i32([1, 0, 3]), Raw("R.prim_value(T.bool(True))")), "error OpError"),
            (call("main", i32([1, 2, 3]), Raw("R.prim_value(T.bool(False))")), "error OpError"),
        ],
    )
    emit(
        "op_cast",
        ["OP-cast"],
        "R.cast at run time: an Object that is a (n, 2) tensor (n bound by another argument) is returned unchanged; a dimension other than n is a ShapeVarMismatch; a wrong rank a MatchCastMismatch",
        [
            '''
@R.function
def main(o: R.Object, x: R.Tensor(("n",), "float32")):
    n = T.int64()
    a = R.cast(o, sinfo_args=R.Tensor((n, 2), "float32"))
    return a
'''
        ],
        [
            (call("main", f32([[1.0, 2.0], [3.0, 4.0]]), f32([0.0, 0.0])), f32([[1.0, 2.0], [3.0, 4.0]])),
            (call("main", f32([[1.0, 2.0]]), f32([0.0, 0.0])), "error ShapeVarMismatch"),
            (call("main", f32([1.0, 2.0]), f32([0.0, 0.0])), "error MatchCastMismatch"),
        ],
    )
    a = i32([1, INT_MAX32, -5])
    emit(
        "op_call_packed",
        ["OP-call_packed"],
        "R.call_packed of the built-in packed functions: oracle.copy gives a fresh tensor, oracle.add_one_inplace mutates it (wrapping MAX to MIN) and leaves the argument unchanged",
        [
            '''
@R.function(pure=False)
def main(x: R.Tensor(("n",), "int32")):
    n = T.int64()
    c = R.call_packed("oracle.copy", x, sinfo_args=R.Tensor((n,), "int32"))
    d = R.call_packed("oracle.add_one_inplace", c, sinfo_args=R.Tensor((n,), "int32"))
    return (x, c, d)
'''
        ],
        [(call("main", a), (a, a + np.int32(1), a + np.int32(1)))],
    )
    emit(
        "op_call_pure_packed",
        ["OP-call_pure_packed"],
        "R.call_pure_packed of oracle.copy in a DataflowBlock: the copy has the argument's contents",
        [
            '''
@R.function
def main(x: R.Tensor(("n", 2), "float32")):
    n = T.int64()
    with R.dataflow():
        y = R.call_pure_packed("oracle.copy", x, sinfo_args=R.Tensor((n, 2), "float32"))
        z = R.add(y, x)
        R.output(z)
    return z
'''
        ],
        [(call("main", f32([[1.0, -2.0], [0.5, 3.0]])), f32([[1.0, -2.0], [0.5, 3.0]]) * 2)],
    )

    # ---------------- call_tir / call_dps_packed ----------------
    x = f32([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]])
    y = f32([[0.5, 0.5, 0.5], [2.0, -2.0, 1.0]])
    emit(
        "op_call_tir_elementwise",
        ["OP-call_tir"],
        "R.call_tir of an elementwise PrimFunc over symbolic (n, m) buffers (C = A * 2 + B) in a DataflowBlock",
        [
            '''
@T.prim_func
def scale_add(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    m = T.int64()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (n, m), "float32")
    C = T.match_buffer(c, (n, m), "float32")
    for i, j in T.grid(n, m):
        with T.block("scale_add"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] * T.float32(2) + B[vi, vj]
''',
            '''
@R.function
def main(x: R.Tensor(("n", "m"), "float32"), y: R.Tensor(("n", "m"), "float32")):
    n = T.int64()
    m = T.int64()
    with R.dataflow():
        z = R.call_tir(cls.scale_add, (x, y), out_sinfo=R.Tensor((n, m), "float32"))
        R.output(z)
    return z
''',
        ],
        [(call("main", x, y), x * np.float32(2) + y)],
    )
    x = f32([[1.0, 2.0, 3.5], [-1.0, 0.25, 4.0], [0.0, 0.0, 0.0], [10.0, -10.0, 1.0]])
    emit(
        "op_call_tir_reduction_init",
        ["OP-call_tir"],
        "R.call_tir of a row-sum PrimFunc whose reduction block has T.init() (runs at the first reduce index); the output starts zero-filled and init resets it",
        [
            '''
@T.prim_func
def row_sum(a: T.handle, b: T.handle):
    n = T.int64()
    m = T.int64()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i, k in T.grid(n, m):
        with T.block("row_sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(100)
            B[vi] = B[vi] + A[vi, vk]
''',
            '''
@R.function
def main(x: R.Tensor(("n", "m"), "float32")):
    n = T.int64()
    z = R.call_tir(cls.row_sum, (x,), out_sinfo=R.Tensor((n,), "float32"))
    return z
''',
        ],
        [(call("main", x), np.float32(100) + np.sum(x, axis=1))],
    )
    A = f32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    B = f32([[1.0, 0.0, -1.0, 2.0], [0.5, 1.0, 0.0, -2.0], [2.0, -1.0, 1.0, 0.0]])
    emit(
        "op_call_tir_matmul_symbolic",
        ["OP-call_tir"],
        "R.call_tir of a matmul PrimFunc with symbolic n, m, k bound from the argument tensors (2 x 3 @ 3 x 4), T.init zeroing the accumulator",
        [
            '''
@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    m = T.int64()
    k = T.int64()
    A = T.match_buffer(a, (n, k), "float32")
    B = T.match_buffer(b, (k, m), "float32")
    C = T.match_buffer(c, (n, m), "float32")
    for i, j, r in T.grid(n, m, k):
        with T.block("matmul"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            T.reads(A[vi, vr], B[vr, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
''',
            '''
@R.function
def main(x: R.Tensor(("n", "k"), "float32"), w: R.Tensor(("k", "m"), "float32")):
    n = T.int64()
    m = T.int64()
    with R.dataflow():
        z = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((n, m), "float32"))
        R.output(z)
    return z
''',
        ],
        [(call("main", A, B), A @ B), (call("main", A[:1], B[:, :1]), A[:1] @ B[:, :1])],
    )
    x = f32([1.0, -2.0, 0.5, 3.0])
    emit(
        "op_call_tir_alloc_buffer",
        ["OP-call_tir"],
        "R.call_tir of a two-stage PrimFunc with local buffers (T.alloc_buffer of symbolic shape (n,) and a (1,) local accumulator): the running sum of squares",
        [
            '''
@T.prim_func
def cumsum_sq(a: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    with T.block("root"):
        B = T.alloc_buffer((n,), "float32")
        L = T.alloc_buffer((1,), "float32", scope="local")
        for i in range(n):
            with T.block("square"):
                vi = T.axis.spatial(n, i)
                B[vi] = A[vi] * A[vi]
        for i in range(n):
            with T.block("scan"):
                vi = T.axis.spatial(n, i)
                L[0] = L[0] + B[vi]
                C[vi] = L[0]
''',
            '''
@R.function
def main(x: R.Tensor(("n",), "float32")):
    n = T.int64()
    z = R.call_tir(cls.cumsum_sq, (x,), out_sinfo=R.Tensor((n,), "float32"))
    return z
''',
        ],
        [(call("main", x), np.cumsum(x * x).astype(np.float32))],
    )
    x = i64([1, 2, 3, -4])
    w = f32([0.0, 0.0])
    emit(
        "op_call_tir_tir_vars",
        ["OP-call_tir"],
        "R.call_tir passing shape values as the PrimFunc's scalar parameters with tir_vars: n and s = k + 1 (k a dimension of another argument); B[i] = A[i] * s + i",
        [
            '''
@T.prim_func
def scale_shift(a: T.handle, b: T.handle, n: T.int64, s: T.int64):
    A = T.match_buffer(a, (n,), "int64")
    B = T.match_buffer(b, (n,), "int64")
    for i in range(n):
        with T.block("scale_shift"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * s + vi
''',
            '''
@R.function
def main(x: R.Tensor(("n",), "int64"), w: R.Tensor(("k",), "float32")):
    n = T.int64()
    k = T.int64()
    z = R.call_tir(cls.scale_shift, (x,), out_sinfo=R.Tensor((n,), "int64"), tir_vars=R.shape([n, k + 1]))
    return z
''',
        ],
        [(call("main", x, w), x * 3 + np.arange(4)), (call("main", x, f32([])), x * 1 + np.arange(4))],
    )
    x = i32([[3, -1, 7], [0, 5, 5]])
    emit(
        "op_call_tir_tuple_output",
        ["OP-call_tir"],
        "R.call_tir with two outputs (out_sinfo a list): a PrimFunc writing the row minimum and row maximum; the result is a tuple",
        [
            '''
@T.prim_func
def min_max(a: T.handle, lo: T.handle, hi: T.handle):
    n = T.int64()
    m = T.int64()
    A = T.match_buffer(a, (n, m), "int32")
    Lo = T.match_buffer(lo, (n,), "int32")
    Hi = T.match_buffer(hi, (n,), "int32")
    for i, k in T.grid(n, m):
        with T.block("min_max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                Lo[vi] = A[vi, 0]
                Hi[vi] = A[vi, 0]
            Lo[vi] = T.min(Lo[vi], A[vi, vk])
            Hi[vi] = T.max(Hi[vi], A[vi, vk])
''',
            '''
@R.function
def main(x: R.Tensor(("n", "m"), "int32")):
    n = T.int64()
    z = R.call_tir(cls.min_max, (x,), out_sinfo=[R.Tensor((n,), "int32"), R.Tensor((n,), "int32")])
    return z
''',
        ],
        [(call("main", x), (np.min(x, axis=1), np.max(x, axis=1)))],
    )
    emit(
        "op_call_tir_division_by_zero",
        ["OP-call_tir"],
        "R.call_tir of a PrimFunc dividing by an element that is 0: TIR integer division by zero is a DivisionByZero error",
        [
            '''
@T.prim_func
def div(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "int32")
    B = T.match_buffer(b, (n,), "int32")
    C = T.match_buffer(c, (n,), "int32")
    for i in range(n):
        with T.block("div"):
            vi = T.axis.spatial(n, i)
            C[vi] = T.floordiv(A[vi], B[vi])
''',
            '''
@R.function
def main(x: R.Tensor(("n",), "int32"), y: R.Tensor(("n",), "int32")):
    n = T.int64()
    z = R.call_tir(cls.div, (x, y), out_sinfo=R.Tensor((n,), "int32"))
    return z
''',
        ],
        [
            (call("main", i32([7, -7]), i32([2, 0])), "error DivisionByZero"),
            (call("main", i32([7, -7]), i32([2, 2])), np.floor_divide(i32([7, -7]), i32([2, 2]))),
        ],
    )
    emit(
        "op_call_tir_integer_overflow",
        ["OP-call_tir"],
        "R.call_tir of a PrimFunc whose int32 addition leaves the dtype: TIR integer arithmetic does not wrap (unlike R.add), it is an IntegerOverflow error",
        [
            '''
@T.prim_func
def add(a: T.handle, b: T.handle, c: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "int32")
    B = T.match_buffer(b, (n,), "int32")
    C = T.match_buffer(c, (n,), "int32")
    for i in range(n):
        with T.block("add"):
            vi = T.axis.spatial(n, i)
            C[vi] = A[vi] + B[vi]
''',
            '''
@R.function
def main(x: R.Tensor(("n",), "int32"), y: R.Tensor(("n",), "int32")):
    n = T.int64()
    z = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((n,), "int32"))
    return z
''',
        ],
        [
            (call("main", i32([INT_MAX32, 1]), i32([1, 1])), "error IntegerOverflow"),
            (call("main", i32([INT_MAX32 - 1, 1]), i32([1, 1])), i32([INT_MAX32, 2])),
        ],
    )
    emit(
        "op_call_tir_shape_mismatch",
        ["OP-call_tir"],
        "R.call_tir whose out_sinfo (n + 1,) disagrees at run time with the PrimFunc's output buffer (n,), bound from the input: an OpError",
        [
            '''
@T.prim_func
def copy(a: T.handle, b: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("copy"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi]
''',
            '''
@R.function
def main(x: R.Tensor(("n",), "float32")):
    n = T.int64()
    z = R.call_tir(cls.copy, (x,), out_sinfo=R.Tensor((n + 1,), "float32"))
    return z
''',
        ],
        [(call("main", f32([1.0, 2.0])), "error OpError")],
    )
    x = f32([1.0, -2.5, 4.0])
    emit(
        "op_call_dps_packed",
        ["OP-call_dps_packed"],
        "R.call_dps_packed of the built-in oracle.copy_into (destination-passing copy) and of a PrimFunc exported by its global_symbol; the outputs are allocated from out_sinfo",
        [
            '''
@T.prim_func
def double(a: T.handle, b: T.handle):
    T.func_attr({"global_symbol": "double"})
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("double"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)
''',
            '''
@R.function(pure=False)
def main(x: R.Tensor(("n",), "float32")):
    n = T.int64()
    y = R.call_dps_packed("oracle.copy_into", (x,), out_sinfo=R.Tensor((n,), "float32"))
    z = R.call_dps_packed("double", (y,), out_sinfo=R.Tensor((n,), "float32"))
    return (y, z)
''',
        ],
        [(call("main", x), (x, x * np.float32(2)))],
    )
    emit(
        "op_call_dps_packed_unknown_function",
        ["OP-call_dps_packed"],
        "R.call_dps_packed of a packed function no one provides: an UnknownExternFunc error at run time",
        [
            '''
@R.function(pure=False)
def main(x: R.Tensor(("n",), "float32")):
    n = T.int64()
    y = R.call_dps_packed("no_such_kernel", (x,), out_sinfo=R.Tensor((n,), "float32"))
    return y
'''
        ],
        [(call("main", f32([1.0])), "error UnknownExternFunc")],
    )


def plugins():
    """The operator families' fixture generators: each `scripts/eval_ops_fixtures/*.py`
    defines `gen(api)`, where `api` is this module (its `emit`, `call`, `f32`, ...)."""
    import importlib.util
    import sys

    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eval_ops_fixtures")
    if not os.path.isdir(here):
        return
    api = sys.modules[__name__]
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(here, name))
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            module.gen(api)


def main():
    gen()
    plugins()
    os.makedirs(OUT, exist_ok=True)
    for name, text in sorted(FILES.items()):
        with open(os.path.join(OUT, name + ".rx"), "w") as f:
            f.write(text)
    print(f"wrote {len(FILES)} files to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
