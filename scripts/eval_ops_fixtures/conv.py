"""Fixtures of the convolution, pooling and padding operators (issue 19):
nn.pad, nn.conv2d, nn.conv1d, nn.max_pool2d, nn.avg_pool2d, nn.adaptive_avg_pool2d.

Expected values: np.pad for padding; the others by explicit loops over NumPy arrays in
float64 (rounded to the dtype once; the files' tolerance admits the oracle's in-dtype
sums), following TOPI's definitions as proofs-notes/operator-semantics.md records them.
"""

import math

import numpy as np


def fn(name, params, body):
    return f'''
@R.function
def {name}({params}):
    z = {body}
    return z
'''


def conv_ref(x, w, strides, pads, dilation, groups):
    """NCHW x OIHW -> NCHW; pads = (top, left, bottom, right); zeros outside."""
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    oh = (h + pads[0] + pads[2] - dilation[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - dilation[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow), dtype=np.float64)
    per = o // groups
    for b in range(n):
        for oc in range(o):
            g = oc // per
            for y in range(oh):
                for xx in range(ow):
                    acc = 0.0
                    for ci in range(i):
                        for ky in range(kh):
                            for kx in range(kw):
                                iy = y * strides[0] + ky * dilation[0] - pads[0]
                                ix = xx * strides[1] + kx * dilation[1] - pads[1]
                                if 0 <= iy < h and 0 <= ix < wd:
                                    acc += float(x[b, g * i + ci, iy, ix]) * float(w[oc, ci, ky, kx])
                    out[b, oc, y, xx] = acc
    return out


def pool_len(length, k, s, d, head, tail, ceil):
    num = length + head + tail - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    raw = num // s + 1
    if ceil and (raw - 1) * s >= length + head:
        raw -= 1
    return raw


def pool_ref(x, size, strides, pads, dilation, ceil, include_pad, kind):
    """NCHW pooling as TOPI's pool_impl_nd: max over inside taps (from -inf), or the
    sum of inside taps over the count (taps in the padded extent, or inside ones)."""
    n, c, h, w = x.shape
    oh = pool_len(h, size[0], strides[0], dilation[0], pads[0], pads[2], ceil)
    ow = pool_len(w, size[1], strides[1], dilation[1], pads[1], pads[3], ceil)
    out = np.zeros((n, c, oh, ow), dtype=np.float64)

    def taps(o, axis, length):
        start = o * strides[axis] - pads[axis]
        pos = [start + t * dilation[axis] for t in range(size[axis])]
        inside = [p for p in pos if 0 <= p < length]
        padded = [p for p in pos if -pads[axis] <= p < length + pads[axis + 2]]
        return inside, len(padded)

    for b in range(n):
        for ch in range(c):
            for y in range(oh):
                rows, prow = taps(y, 0, h)
                for xx in range(ow):
                    cols, pcol = taps(xx, 1, w)
                    vals = [float(x[b, ch, r, q]) for r in rows for q in cols]
                    if kind == "max":
                        out[b, ch, y, xx] = float(np.max(vals)) if vals else -math.inf  # NaN propagates
                    else:
                        count = prow * pcol if include_pad else max(len(vals), 1)
                        out[b, ch, y, xx] = sum(vals) / count
    return out


def adaptive_ref(x, oh, ow):
    n, c, h, w = x.shape
    out = np.zeros((n, c, oh, ow), dtype=np.float64)
    for y in range(oh):
        r0, r1 = (y * h) // oh, -((-(y + 1) * h) // oh)
        for xx in range(ow):
            c0, c1 = (xx * w) // ow, -((-(xx + 1) * w) // ow)
            out[:, :, y, xx] = x[:, :, r0:r1, c0:c1].astype(np.float64).mean(axis=(2, 3))
    return out


def gen(api):
    rng = np.random.default_rng(19)
    f32, i32, call = api.f32, api.i32, api.call

    # nn.pad
    x = f32(np.arange(6).reshape(2, 3) + 1)
    xi = i32([[1, -2, 3], [4, 5, -6]])
    api.emit(
        "op_nn_pad",
        ["OP-nn.pad"],
        "R.nn.pad at run time: constant (pad_value converted to the dtype, 0.75 truncates to 0 in int32), reflect (NumPy reflect), replicate (NumPy edge), circular (NumPy wrap)",
        [
            fn("main", 'x: R.Tensor(("n", "m"), "float32")', "R.nn.pad(x, pad_width=[1, 0, 2, 1], pad_value=-1.5)"),
            fn("ints", 'x: R.Tensor(("n", "m"), "int32")', "R.nn.pad(x, pad_width=[0, 1, 1, 1], pad_value=0.75)"),
            fn("reflect", 'x: R.Tensor(("n", "m"), "float32")', 'R.nn.pad(x, pad_width=[1, 1, 2, 2], pad_mode="reflect")'),
            fn("replicate", 'x: R.Tensor(("n", "m"), "float32")', 'R.nn.pad(x, pad_width=[2, 0, 0, 3], pad_mode="replicate")'),
            fn("circular", 'x: R.Tensor(("n", "m"), "float32")', 'R.nn.pad(x, pad_width=[1, 2, 3, 1], pad_mode="circular")'),
        ],
        [
            (call("main", x), np.pad(x, ((1, 0), (2, 1)), constant_values=-1.5)),
            (call("ints", xi), np.pad(xi, ((0, 1), (1, 1)), constant_values=0)),
            (call("reflect", x), np.pad(x, ((1, 1), (2, 2)), mode="reflect")),
            (call("replicate", x), np.pad(x, ((2, 0), (0, 3)), mode="edge")),
            (call("circular", x), np.pad(x, ((1, 2), (3, 1)), mode="wrap")),
        ],
    )
    api.emit(
        "op_nn_pad_reflect_too_wide",
        ["OP-nn.pad"],
        "R.nn.pad in reflect mode needs each width below the axis length (3 >= 3 is an OpError; NumPy would reflect again); circular needs at most the length",
        [
            fn("main", 'x: R.Tensor(("n", "m"), "float32")', 'R.nn.pad(x, pad_width=[0, 0, 3, 0], pad_mode="reflect")'),
            fn("circ", 'x: R.Tensor(("n", "m"), "float32")', 'R.nn.pad(x, pad_width=[0, 3, 0, 0], pad_mode="circular")'),
        ],
        [(call("main", x), "error OpError"), (call("circ", x), "error OpError")],
    )

    # nn.conv2d
    xc = f32(rng.integers(-4, 5, size=(2, 4, 5, 6)) / 2)
    wc = f32(rng.integers(-3, 4, size=(6, 4, 3, 2)) / 2)
    wg = f32(rng.integers(-3, 4, size=(6, 2, 2, 2)) / 2)
    nhwc = np.ascontiguousarray(xc.transpose(0, 2, 3, 1))
    hwio = np.ascontiguousarray(wc.transpose(2, 3, 1, 0))
    xs = 'x: R.Tensor(("n", "c", "h", "w"), "float32")'
    api.emit(
        "op_nn_conv2d",
        ["OP-nn.conv2d"],
        "R.nn.conv2d at run time: strides, asymmetric padding and dilation; groups=2; NHWC data with an HWIO kernel written out as NCHW; int32 with out_dtype int64",
        [
            fn("main", xs + ', k: R.Tensor((6, 4, 3, 2), "float32")', "R.nn.conv2d(x, k, strides=[2, 1], padding=[1, 0, 2, 1], dilation=[1, 2])"),
            fn("grouped", xs + ', k: R.Tensor((6, 2, 2, 2), "float32")', "R.nn.conv2d(x, k, padding=1, groups=2)"),
            fn(
                "nhwc",
                'x: R.Tensor(("n", "h", "w", "c"), "float32"), k: R.Tensor((3, 2, 4, 6), "float32")',
                'R.nn.conv2d(x, k, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO", out_layout="NCHW")',
            ),
            fn("ints", 'x: R.Tensor(("n", "c", "h", "w"), "int32"), k: R.Tensor((6, 4, 3, 2), "int32")', 'R.nn.conv2d(x, k, out_dtype="int64")'),
        ],
        [
            (call("main", xc, wc), f32(conv_ref(xc, wc, (2, 1), (1, 0, 2, 1), (1, 2), 1))),
            (call("grouped", xc, wg), f32(conv_ref(xc, wg, (1, 1), (1, 1, 1, 1), (1, 1), 2))),
            (call("nhwc", nhwc, hwio), f32(conv_ref(xc, wc, (1, 1), (1, 1, 1, 1), (1, 1), 1))),
            (
                call("ints", i32(xc * 2), i32(wc * 2)),
                np.array(conv_ref(i32(xc * 2), i32(wc * 2), (1, 1), (0, 0, 0, 0), (1, 1), 1), dtype=np.int64),
            ),
        ],
    )
    api.emit(
        "op_nn_conv2d_channel_mismatch",
        ["OP-nn.conv2d"],
        "R.nn.conv2d whose data channels (symbolic, 3 at run time) differ from the weight's 4 input channels: an OpError at run time (the checker only warns)",
        [fn("main", xs + ', k: R.Tensor((6, 4, 3, 2), "float32")', "R.nn.conv2d(x, k)")],
        [(call("main", f32(np.ones((1, 3, 4, 4))), wc), "error OpError")],
    )

    # nn.conv1d
    x1 = f32(rng.integers(-4, 5, size=(1, 4, 7)) / 2)
    w1 = f32(rng.integers(-3, 4, size=(4, 2, 3)) / 2)
    as2d = lambda a: a[:, :, None, :]
    api.emit(
        "op_nn_conv1d",
        ["OP-nn.conv1d"],
        "R.nn.conv1d at run time: stride 2, padding (1, 2), dilation 2, groups 2; NWC data with a WIO kernel",
        [
            fn("main", 'x: R.Tensor(("n", "c", "w"), "float32"), k: R.Tensor((4, 2, 3), "float32")', "R.nn.conv1d(x, k, strides=2, padding=[1, 2], dilation=2, groups=2)"),
            fn(
                "nwc",
                'x: R.Tensor(("n", "w", "c"), "float32"), k: R.Tensor((3, 4, 4), "float32")',
                'R.nn.conv1d(x, k, padding=1, data_layout="NWC", kernel_layout="WIO")',
            ),
        ],
        [
            (call("main", x1, w1), f32(conv_ref(as2d(x1), as2d(w1), (1, 2), (0, 1, 0, 2), (1, 2), 2)[:, :, 0, :])),
            (
                call("nwc", np.ascontiguousarray(x1.transpose(0, 2, 1)), f32(np.ones((3, 4, 4)))),
                np.ascontiguousarray(f32(conv_ref(as2d(x1), as2d(f32(np.ones((4, 4, 3)))), (1, 1), (0, 1, 0, 1), (1, 1), 1)[:, :, 0, :]).transpose(0, 2, 1)),
            ),
        ],
    )

    # Pooling
    xp = f32(rng.integers(-8, 9, size=(1, 2, 5, 6)) / 4)
    xp[0, 1, 2, 3] = np.nan
    xq = f32(rng.integers(-8, 9, size=(1, 2, 5, 6)) / 4)
    ps = 'x: R.Tensor(("n", "c", "h", "w"), "float32")'
    for kind in ("max", "avg"):
        op = f"R.nn.{kind}_pool2d"
        api.emit(
            f"op_nn_{kind}_pool2d",
            [f"OP-nn.{kind}_pool2d"],
            f"R.nn.{kind}_pool2d at run time: 3x2 windows with stride 2, padding and dilation; ceil_mode dropping a window that starts in the padding; count_include_pad; NHWC; a NaN in the second channel",
            [
                fn("main", ps, f"{op}(x, pool_size=[3, 2], strides=[2, 2], padding=[1, 1, 1, 0], dilation=[1, 2])"),
                fn("ceil", ps, f"{op}(x, pool_size=2, strides=3, padding=1, ceil_mode=True, count_include_pad=True)"),
                fn("floor_pad", ps, f"{op}(x, pool_size=[3, 3], strides=[1, 2], padding=[2, 1], count_include_pad=True)"),
                fn("nhwc", 'x: R.Tensor(("n", "h", "w", "c"), "float32")', f'{op}(x, pool_size=2, layout="NHWC")'),
            ],
            [
                (call("main", xp), f32(pool_ref(xp, (3, 2), (2, 2), (1, 1, 1, 0), (1, 2), False, False, kind))),
                (call("ceil", xq), f32(pool_ref(xq, (2, 2), (3, 3), (1, 1, 1, 1), (1, 1), True, True, kind))),
                (call("floor_pad", xq), f32(pool_ref(xq, (3, 3), (1, 2), (2, 1, 2, 1), (1, 1), False, True, kind))),
                (
                    call("nhwc", np.ascontiguousarray(xq.transpose(0, 2, 3, 1))),
                    np.ascontiguousarray(f32(pool_ref(xq, (2, 2), (1, 1), (0, 0, 0, 0), (1, 1), False, False, kind)).transpose(0, 2, 3, 1)),
                ),
            ],
        )
        api.emit(
            f"op_nn_{kind}_pool2d_window_too_long",
            [f"OP-nn.{kind}_pool2d"],
            f"R.nn.{kind}_pool2d with a 3-tap window over a symbolic length that is 1 at run time: the output length is negative, an OpError",
            [fn("main", ps, f"{op}(x, pool_size=[3, 1])")],
            [(call("main", f32(np.ones((1, 1, 1, 2)))), "error OpError")],
        )
    xi = i32(rng.integers(-9, 10, size=(1, 1, 4, 4)))
    api.emit(
        "op_nn_avg_pool2d_int",
        ["OP-nn.avg_pool2d"],
        "R.nn.avg_pool2d of int32: the window sum divided by its count truncating toward zero",
        [fn("main", 'x: R.Tensor(("n", "c", "h", "w"), "int32")', "R.nn.avg_pool2d(x, pool_size=3, padding=1)")],
        [(call("main", xi), np.trunc(pool_ref(xi, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False, False, "avg")).astype(np.int32))],
    )

    xa = f32(rng.integers(-8, 9, size=(1, 2, 5, 7)) / 4)
    api.emit(
        "op_nn_adaptive_avg_pool2d",
        ["OP-nn.adaptive_avg_pool2d"],
        "R.nn.adaptive_avg_pool2d at run time: windows [floor(o*H/OH), ceil((o+1)*H/OH)), overlapping when OH does not divide H; output_size None, one value, two values; NHWC",
        [
            fn("main", ps, "R.nn.adaptive_avg_pool2d(x, output_size=[2, 3])"),
            fn("same", ps, "R.nn.adaptive_avg_pool2d(x)"),
            fn("one", ps, "R.nn.adaptive_avg_pool2d(x, output_size=1)"),
            fn("nhwc", 'x: R.Tensor(("n", "h", "w", "c"), "float32")', 'R.nn.adaptive_avg_pool2d(x, output_size=[3, 4], layout="NHWC")'),
        ],
        [
            (call("main", xa), f32(adaptive_ref(xa, 2, 3))),
            (call("same", xa), xa),
            (call("one", xa), f32(adaptive_ref(xa, 1, 1))),
            (call("nhwc", np.ascontiguousarray(xa.transpose(0, 2, 3, 1))), np.ascontiguousarray(f32(adaptive_ref(xa, 3, 4)).transpose(0, 2, 3, 1))),
        ],
    )
    api.emit(
        "op_nn_adaptive_avg_pool2d_empty_int",
        ["OP-nn.adaptive_avg_pool2d"],
        "R.nn.adaptive_avg_pool2d of an int32 tensor with H = 0 to a 2x2 output: the mean of an empty window is an OpError for integers (NaN for floats)",
        [
            fn("main", 'x: R.Tensor(("n", "c", "h", "w"), "int32")', "R.nn.adaptive_avg_pool2d(x, output_size=2)"),
            fn("floats", ps, "R.nn.adaptive_avg_pool2d(x, output_size=[1, 1])"),
        ],
        [
            (call("main", i32(np.zeros((1, 1, 0, 3)))), "error OpError"),
            (call("floats", f32(np.zeros((1, 1, 0, 3)))), f32(np.full((1, 1, 1, 1), np.nan))),
        ],
    )
