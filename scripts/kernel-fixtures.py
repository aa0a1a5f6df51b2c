#!/usr/bin/env python3
"""Expected values of the tensor operators' reference semantics, computed with NumPy.

Prints Rust test functions (one per case) for `oracle/tests/kernels.rs`, between the
markers `// BEGIN GENERATED` and `// END GENERATED`:

    /tmp/tvmenv/bin/python scripts/kernel-fixtures.py > /tmp/generated.rs

Each case evaluates an operator with `eval_tensor_op` and compares with NumPy's result
(floats within the tolerance of proofs-notes/operator-semantics.md, integers and bools
exactly). Where the reference semantics is not NumPy's (integer `divide` truncates,
integer `mean` truncates, as TVM's generated code does), the expected value is written
with NumPy from its definition, and the case says so.
"""

import math

import numpy as np

nan = float("nan")
inf = float("inf")


def flt(x):
    x = float(x)
    if math.isnan(x):
        return "f64::NAN"
    if math.isinf(x):
        return "f64::INFINITY" if x > 0 else "f64::NEG_INFINITY"
    return repr(x)


def vals(a):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        return ", ".join("1.0" if v else "0.0" for v in a.reshape(-1))
    if a.dtype.kind in "iu":
        return ", ".join(f"{int(v)}.0" for v in a.reshape(-1))
    return ", ".join(flt(v) for v in a.reshape(-1))


def dtype_name(a):
    return "bool" if a.dtype == np.bool_ else str(a.dtype)


def shape_lit(s):
    return "&[" + ", ".join(str(d) for d in s) + "]"


def arg(x):
    if isinstance(x, tuple) and x[0] == "shape":
        return f"shape(&[{', '.join(str(d) for d in x[1])}])"
    if isinstance(x, tuple) and x[0] == "prim_i":
        return f"prim_i({x[1]})"
    if isinstance(x, tuple) and x[0] == "prim_f":
        return f"prim_f({flt(x[1])})"
    if isinstance(x, tuple) and x[0] == "tuple":
        return "tuple(vec![" + ", ".join(arg(y) for y in x[1]) + "])"
    a = np.asarray(x)
    return f't("{dtype_name(a)}", {shape_lit(a.shape)}, &[{vals(a)}])'


def attr(v):
    if v is None:
        return "none()"
    if isinstance(v, bool):
        return f"boolean({'true' if v else 'false'})"
    if isinstance(v, int):
        return f"int({v})"
    if isinstance(v, str):
        return f's("{v}")'
    return "ints(&[" + ", ".join(str(i) for i in v) + "])"


CASES = []


def case(name, op, args, expected, **attrs):
    CASES.append((name, op, args, expected, attrs))


def A(v, dt):
    return np.array(v, dtype=dt)


f32, f64, f16 = np.float32, np.float64, np.float16
i8, i16, i32, i64, u8 = np.int8, np.int16, np.int32, np.int64, np.uint8

with np.errstate(all="ignore"):
    # Binary arithmetic, with broadcasting.
    x = A([[1.5, -2.0, 3.25], [0.0, 4.0, -1.0]], f32)
    y = A([0.5, 2.0, -4.0], f32)
    case("add_f32_broadcast", "add", [x, y], x + y)
    case("add_i8_wraps", "add", [A([100, -100, 127], i8), A([100, -100, 1], i8)],
         A([100, -100, 127], i8) + A([100, -100, 1], i8))
    case("subtract_u8_wraps", "subtract", [A([0, 5], u8), A([1, 10], u8)], A([0, 5], u8) - A([1, 10], u8))
    a = A([[1], [-2]], i32)
    b = A([[3, 4, 5]], i32)
    case("multiply_i32_broadcast", "multiply", [a, b], a * b)
    case("multiply_f64_scalar", "multiply", [A(2.5, f64), A([1.0, -3.0], f64)], A(2.5, f64) * A([1.0, -3.0], f64))
    a = A([1.0, -1.0, 0.0, 7.0], f32)
    b = A([0.0, 0.0, 0.0, 2.0], f32)
    case("divide_f32_ieee", "divide", [a, b], a / b)
    a = A([7, -7, 7, -7, 0], i32)
    b = A([2, 2, -2, -2, 5], i32)
    # Integer `divide` truncates (TVM's `/` on integers), written from its definition.
    trunc = (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(i32)
    case("divide_i32_truncates", "divide", [a, b], trunc)
    case("floor_divide_i32", "floor_divide", [a, b], a // b)
    a = A([7.5, -7.5, 1.0, -3.0], f32)
    b = A([2.0, 2.0, 0.5, 0.0], f32)
    case("floor_divide_f32", "floor_divide", [a, b], np.floor(a / b))
    a = A([2.0, 9.0, 0.5, -8.0], f32)
    b = A([3.0, 0.5, 2.0, 0.5], f32)
    case("power_f32", "power", [a, b], a ** b)
    a = A([2, 3, -2, 7], i64)
    b = A([10, 3, 3, 0], i64)
    case("power_i64", "power", [a, b], a ** b)
    case("power_i8_wraps", "power", [A([3, 2], i8), A([5, 7], i8)], A([3, 2], i8) ** A([5, 7], i8))
    a = A([[nan, 1.0, -2.0], [3.0, -0.5, 2.0]], f32)
    b = A([1.0, nan, 0.0], f32)
    case("maximum_f32_nan", "maximum", [a, b], np.maximum(a, b))
    case("minimum_f32_nan", "minimum", [a, b], np.minimum(a, b))
    a = A([-5, 300, 7], i16)
    b = A([[1], [400]], i16)
    case("maximum_i16_broadcast", "maximum", [a, b], np.maximum(a, b))
    case("minimum_i16_broadcast", "minimum", [a, b], np.minimum(a, b))

    # Comparisons.
    a = A([[1.0, nan, -0.0], [2.0, 3.0, inf]], f32)
    b = A([1.0, nan, 0.0], f32)
    for op, fn in [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal)]:
        case(f"{op}_f32", op, [a, b], fn(a, b))
    a = A([[1], [5]], i32)
    b = A([0, 1, 5, 9], i32)
    case("less_i32_broadcast", "less", [a, b], a < b)
    case("greater_equal_u8", "greater_equal", [A([0, 255], u8), A([255, 255], u8)],
         A([0, 255], u8) >= A([255, 255], u8))

    # Logical.
    p = A([[True], [False]], bool)
    q = A([True, False, True], bool)
    case("logical_and_broadcast", "logical_and", [p, q], np.logical_and(p, q))
    case("logical_or_broadcast", "logical_or", [p, q], np.logical_or(p, q))
    case("logical_not", "logical_not", [q], np.logical_not(q))

    # Unary.
    case("negative_i8", "negative", [A([-128, 5, 0], i8)], -A([-128, 5, 0], i8))
    case("negative_f32", "negative", [A([1.5, -0.0, inf], f32)], -A([1.5, -0.0, inf], f32))
    case("abs_i8", "abs", [A([-128, -5, 7], i8)], np.abs(A([-128, -5, 7], i8)))
    case("abs_f64", "abs", [A([-2.5, 0.0, -inf], f64)], np.abs(A([-2.5, 0.0, -inf], f64)))
    x = A([-3.0, -0.5, 0.0, 0.7, 2.0, 10.0], f32)
    case("exp_f32", "exp", [x], np.exp(x))
    case("exp_f64", "exp", [x.astype(f64)], np.exp(x.astype(f64)))
    case("exp_f16", "exp", [x.astype(f16)], np.exp(x.astype(f16)))
    xl = A([0.0, 0.5, 1.0, 10.0, -1.0], f32)
    case("log_f32", "log", [xl], np.log(xl))
    case("sqrt_f32", "sqrt", [xl], np.sqrt(xl))
    case("sqrt_f64", "sqrt", [xl.astype(f64)], np.sqrt(xl.astype(f64)))
    case("tanh_f32", "tanh", [x], np.tanh(x))
    case("sigmoid_f32", "sigmoid", [x], (1 / (1 + np.exp(-x))).astype(f32))
    case("sigmoid_f64", "sigmoid", [x.astype(f64)], 1 / (1 + np.exp(-x.astype(f64))))
    xr = A([[-1.0, 0.0, 2.5], [nan, -0.0, 3.0]], f32)
    case("relu_f32", "nn.relu", [xr], np.maximum(xr, f32(0)))
    case("relu_i32", "nn.relu", [A([-3, 0, 4], i32)], np.maximum(A([-3, 0, 4], i32), 0))

    # Softmax (numerically stable, as scipy.special.softmax).
    def softmax(v, axis):
        e = np.exp(v - np.max(v, axis=axis, keepdims=True))
        return (e / np.sum(e, axis=axis, keepdims=True)).astype(v.dtype)

    s = A([[1.0, 2.0, 3.0], [-1.0, 0.0, 1000.0]], f32)
    case("softmax_f32_last_axis", "nn.softmax", [s], softmax(s, -1))
    case("softmax_f32_axis0", "nn.softmax", [s], softmax(s, 0), axis=0)
    case("softmax_f64", "nn.softmax", [s.astype(f64)], softmax(s.astype(f64), 1), axis=1)

    # where, astype.
    c = A([[True], [False]], bool)
    a = A([1.0, 2.0, 3.0], f32)
    b = A([[10.0], [20.0]], f32)
    case("where_broadcast", "where", [c, a, b], np.where(c, a, b))
    x = A([1.9, -1.9, 0.0, -0.0, 100.5], f32)
    case("astype_f32_i32", "astype", [x], x.astype(i32), dtype="int32")
    case("astype_i32_i8_wraps", "astype", [A([300, -129, 127], i32)], A([300, -129, 127], i32).astype(i8), dtype="int8")
    case("astype_f32_bool", "astype", [A([0.0, -0.0, 2.0, nan], f32)], A([0.0, -0.0, 2.0, nan], f32).astype(bool),
         dtype="bool")
    case("astype_i64_f16", "astype", [A([1, 2049, 70000], i64)], A([1, 2049, 70000], i64).astype(f16), dtype="float16")
    case("astype_bool_f32", "astype", [A([True, False], bool)], A([True, False], bool).astype(f32), dtype="float32")

    # matmul.
    rng = np.random.default_rng(7)
    m23 = rng.standard_normal((2, 3)).astype(f32)
    m34 = rng.standard_normal((3, 4)).astype(f32)
    v3 = rng.standard_normal(3).astype(f32)
    case("matmul_2d", "matmul", [m23, m34], m23 @ m34)
    case("matmul_1d_2d", "matmul", [v3, m34], v3 @ m34)
    case("matmul_2d_1d", "matmul", [m23, v3], m23 @ v3)
    case("matmul_1d_1d", "matmul", [v3, v3], v3 @ v3)
    ba = rng.standard_normal((2, 1, 2, 3)).astype(f32)
    bb = rng.standard_normal((3, 3, 2)).astype(f32)
    case("matmul_batch_broadcast", "matmul", [ba, bb], ba @ bb)
    ia = A([[1, 2], [3, 4]], i32)
    ib = A([[5, 6], [7, 8]], i32)
    case("matmul_i32", "matmul", [ia, ib], ia @ ib)
    ia8 = A([[100, 100]], i8)
    ib8 = A([[100], [100]], i8)
    case("matmul_out_dtype", "matmul", [ia8, ib8], ia8.astype(i32) @ ib8.astype(i32), out_dtype="int32")
    case("matmul_f64", "matmul", [m23.astype(f64), m34.astype(f64)], m23.astype(f64) @ m34.astype(f64))

    # Reductions.
    r = rng.standard_normal((2, 3, 4)).astype(f32)
    case("sum_all", "sum", [r], np.sum(r))
    case("sum_axis1_keepdims", "sum", [r], np.sum(r, axis=1, keepdims=True), axis=1, keepdims=True)
    case("sum_axes_0_2", "sum", [r], np.sum(r, axis=(0, 2)), axis=[0, -1])
    case("sum_empty_axes", "sum", [r], r, axis=[])
    ri = A([[1, 2, 3], [4, 5, 2147483647]], i32)
    case("sum_i32_wraps", "sum", [ri], np.sum(ri, axis=1, dtype=i32), axis=1)
    case("mean_f32_axis0", "mean", [r], np.mean(r, axis=0), axis=0)
    case("mean_f64_all", "mean", [r.astype(f64)], np.mean(r.astype(f64)))
    mi = A([[-3, -4], [5, 8]], i32)
    # Integer `mean` truncates the sum divided by the count (TVM's integer division).
    case("mean_i32_truncates", "mean", [mi], np.trunc(np.sum(mi, axis=1) / 2).astype(i32), axis=1)
    case("max_axis2", "max", [r], np.max(r, axis=2), axis=2)
    case("min_keepdims", "min", [r], np.min(r, axis=(0, 1), keepdims=True), axis=[0, 1], keepdims=True)
    mx = A([[1.0, nan], [2.0, -1.0]], f32)
    case("max_nan_propagates", "max", [mx], np.max(mx, axis=1), axis=1)
    case("min_i8", "min", [A([[3, -128], [0, 7]], i8)], np.min(A([[3, -128], [0, 7]], i8), axis=0), axis=0)

    # Manipulation.
    x = np.arange(24, dtype=i32).reshape(2, 3, 4)
    case("reshape_infer", "reshape", [x, ("shape", [4, -1])], x.reshape(4, -1))
    case("reshape_to_scalar", "reshape", [A([5.0], f32), ("shape", [])], A([5.0], f32).reshape(()))
    case("permute_dims_default", "permute_dims", [x], np.transpose(x))
    case("permute_dims_axes", "permute_dims", [x], np.transpose(x, (1, -1, 0)), axes=[1, -1, 0])
    case("broadcast_to", "broadcast_to", [A([[1.0], [2.0]], f32), ("shape", [3, 2, 2])],
         np.broadcast_to(A([[1.0], [2.0]], f32), (3, 2, 2)))
    p1 = np.arange(6, dtype=f32).reshape(2, 3)
    p2 = np.arange(4, dtype=f32).reshape(2, 2) + 100
    case("concat_axis1", "concat", [("tuple", [p1, p2])], np.concatenate([p1, p2], axis=1), axis=1)
    case("concat_axis0_default", "concat", [("tuple", [p1, p1 * 2])], np.concatenate([p1, p1 * 2], axis=0))
    case("split_sections", "split", [x], np.split(x, 2, axis=2), indices_or_sections=2, axis=-1)
    case("split_indices", "split", [x], np.array_split(x, [1, -1, 10], axis=1), indices_or_sections=[1, -1, 10],
         axis=1)
    case("split_decreasing", "split", [x], np.array_split(x, [3, 1], axis=2), indices_or_sections=[3, 1], axis=2)
    case("strided_slice", "strided_slice", [x], x[:, ::-2, 1:100:2], axes=[1, 2], begin=[-1, 1], end=[-100, 100],
         strides=[-2, 2])
    case("strided_slice_default_strides", "strided_slice", [x], x[1:2, :, -3:-1], axes=[0, 2], begin=[1, -3],
         end=[2, -1])
    idx = A([[2, 0], [1, 1]], i64)
    case("take_axis1", "take", [x, idx], np.take(x, idx, axis=1), axis=1)
    case("take_axis0", "take", [p1, A([1, 0, 1], i32)], np.take(p1, A([1, 0, 1], i32), axis=0), axis=0)
    case("take_flat", "take", [x, A([23, 0, 5], i64)], np.take(x, A([23, 0, 5], i64)))

    # Creation.
    case("zeros_f32", "zeros", [("shape", [2, 3])], np.zeros((2, 3), f32), dtype="float32")
    case("ones_i64", "ones", [("shape", [3])], np.ones(3, i64), dtype="int64")
    case("ones_bool", "ones", [("shape", [2])], np.ones(2, bool), dtype="bool")
    case("zeros_scalar", "zeros", [("shape", [])], np.zeros((), f16), dtype="float16")
    case("full_tensor_fill", "full", [("shape", [2, 2]), A(3.5, f32)], np.full((2, 2), 3.5, f32))
    case("full_converts", "full", [("shape", [3]), A(-2.7, f32)], np.full(3, A(-2.7, f32).astype(i32), i32),
         dtype="int32")
    case("full_prim_value", "full", [("shape", [2]), ("prim_i", 7)], np.full(2, 7, i64))
    case("arange_int", "arange", [("prim_i", 1), ("prim_i", 10), ("prim_i", 3)], np.arange(1, 10, 3, dtype=i64))
    case("arange_negative_step", "arange", [("prim_i", 5), ("prim_i", -1), ("prim_i", -2)],
         np.arange(5, -1, -2, dtype=i64))
    case("arange_float", "arange", [("prim_f", 0.0), ("prim_f", 1.0), ("prim_f", 0.25)],
         np.arange(0.0, 1.0, 0.25, dtype=f32))
    case("arange_float_f64", "arange", [("prim_f", 0.5), ("prim_f", 2.0), ("prim_f", 0.3)],
         np.arange(0.5, 2.0, 0.3, dtype=f64), dtype="float64")
    case("arange_int_dtype_f32", "arange", [("prim_i", 0), ("prim_i", 3), ("prim_i", 1)],
         np.arange(0, 3, 1, dtype=f32), dtype="float32")


def expect_call(e):
    a = np.asarray(e)
    return f'"{dtype_name(a)}", {shape_lit(a.shape)}, &[{vals(a)}]'


print("// BEGIN GENERATED (scripts/kernel-fixtures.py, NumPy " + np.__version__ + ")")
for name, op, args, expected, attrs in CASES:
    print()
    print("#[test]")
    print(f"fn np_{name}() {{")
    a = ", ".join(attr_pair for attr_pair in (f'("{k}", {attr(v)})' for k, v in attrs.items()))
    print(f'    let r = call("relax.{op}", vec![{", ".join(arg(x) for x in args)}], &[{a}]);')
    if isinstance(expected, list):
        print(f"    let fields = fields(&r, {len(expected)});")
        for i, e in enumerate(expected):
            print(f"    expect(&fields[{i}], {expect_call(e)});")
    else:
        print(f"    expect(&r, {expect_call(expected)});")
    print("}")
print()
print("// END GENERATED")
