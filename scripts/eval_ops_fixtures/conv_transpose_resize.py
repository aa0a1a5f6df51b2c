"""Run-time fixtures of nn.conv2d_transpose and image.resize2d (issue 19):
corpus/eval_ops/op_nn_conv2d_transpose*.rx and op_image_resize2d*.rx.

Expected values, written from ONNX's and TOPI's definitions (not from our kernels):

- conv2d_transpose: ONNX ConvTranspose's definition, each input pixel stamping its
  kernel scaled by its value at `(iy*s - pad_top + ky*d, ...)`, summed in float64 (the
  operands are small multiples of 1/2, so every sum is exact in the dtype and rounds
  once). The non-finite case follows TOPI's `group_conv2d_transpose_nchw` literally
  (data spread out with zeros and padded with zeros, kernel dilated with zeros and
  rotated, every product summed, so a zero meeting an infinity gives NaN), as
  proofs-notes/operator-semantics.md records; for finite operands both definitions are
  asserted equal here.
- resize2d: TOPI's `_resize_2d` (python/tvm/topi/image/resize.py) in float32, one
  NumPy float32 operation per TOPI operation (coordinate transform, rounding, clamped
  pixel reads, lerp / cubic spline weights), then the conversion to the output dtype
  (integers truncate toward zero, float16 rounds to nearest even).

Running this file directly cross-checks every case against onnxruntime (ConvTranspose,
Resize) and TVM 0.27 (LegalizeOps, relax.build, the VM) and prints where they differ:

    /work/main/.venv-tvm/bin/python scripts/eval_ops_fixtures/conv_transpose_resize.py
"""

import numpy as np

F = np.float32

# ---------------------------------------------------------------------------
# nn.conv2d_transpose references (NCHW data, IOHW weight)
# ---------------------------------------------------------------------------


def out_len(length, k, s, d, pads, opad):
    return (length - 1) * s - pads + d * (k - 1) + opad + 1


def conv_t_onnx(x, w, strides=(1, 1), pads=(0, 0, 0, 0), opad=(0, 0), dil=(1, 1), groups=1):
    """ONNX ConvTranspose: out[n, g*Og + o, iy*s - pt + ky*d, ix*s - pl + kx*d] +=
    x[n, c, iy, ix] * w[c, o, ky, kx] for c in group g; positions outside the output
    are dropped (the padding crops). float64."""
    n, c, h, wd = x.shape
    i, og, kh, kw = w.shape
    oh = out_len(h, kh, strides[0], dil[0], pads[0] + pads[2], opad[0])
    ow = out_len(wd, kw, strides[1], dil[1], pads[1] + pads[3], opad[1])
    out = np.zeros((n, og * groups, oh, ow), dtype=np.float64)
    ig = i // groups
    xf, wf = x.astype(np.float64), w.astype(np.float64)
    for ch in range(c):
        g = ch // ig
        for ky in range(kh):
            for kx in range(kw):
                for iy in range(h):
                    y = iy * strides[0] - pads[0] + ky * dil[0]
                    if not 0 <= y < oh:
                        continue
                    for ix in range(wd):
                        xx = ix * strides[1] - pads[1] + kx * dil[1]
                        if 0 <= xx < ow:
                            out[:, g * og : (g + 1) * og, y, xx] += xf[:, ch, iy, ix][:, None] * wf[ch, :, ky, kx][None, :]
    return out


def pad_or_crop(a, axis, before, after):
    """Zero padding of `a` along `axis`; a negative amount crops (TOPI's `pad`)."""
    if before < 0:
        a = np.take(a, np.arange(-before, a.shape[axis]), axis=axis)
        before = 0
    if after < 0:
        a = np.take(a, np.arange(0, a.shape[axis] + after), axis=axis)
        after = 0
    widths = [(0, 0)] * a.ndim
    widths[axis] = (before, after)
    return np.pad(a, widths)


def conv_t_topi(x, w, strides=(1, 1), pads=(0, 0, 0, 0), opad=(0, 0), dil=(1, 1), groups=1):
    """TOPI's group_conv2d_transpose_nchw after the legalizer's kernel `dilate`, term
    by term: zeros inserted into the data (stride) and the kernel (dilation), the data
    padded by K' - 1 - pad (+ output_padding after), the kernel rotated by 180 degrees,
    then a plain correlation summing every product (0 * inf is NaN). float64."""
    n, c, h, wd = x.shape
    i, og, kh, kw = w.shape
    xf, wf = x.astype(np.float64), w.astype(np.float64)
    khd, kwd = (kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1
    wk = np.zeros((i, og, khd, kwd))
    wk[:, :, :: dil[0], :: dil[1]] = wf
    xd = np.zeros((n, c, (h - 1) * strides[0] + 1, (wd - 1) * strides[1] + 1))
    xd[:, :, :: strides[0], :: strides[1]] = xf
    xp = pad_or_crop(xd, 2, khd - 1 - pads[0], khd - 1 - pads[2] + opad[0])
    xp = pad_or_crop(xp, 3, kwd - 1 - pads[1], kwd - 1 - pads[3] + opad[1])
    kt = wk[:, :, ::-1, ::-1]
    oh, ow = xp.shape[2] - khd + 1, xp.shape[3] - kwd + 1
    ig = i // groups
    out = np.zeros((n, og * groups, oh, ow))
    with np.errstate(all="ignore"):
        for o in range(og * groups):
            g = o // og
            for y in range(oh):
                for xx in range(ow):
                    win = xp[:, g * ig : (g + 1) * ig, y : y + khd, xx : xx + kwd]
                    out[:, o, y, xx] = (win * kt[g * ig : (g + 1) * ig, o % og][None]).sum(axis=(1, 2, 3))
    return out


# ---------------------------------------------------------------------------
# image.resize2d reference (NCHW), TOPI's _resize_2d in float32
# ---------------------------------------------------------------------------


def can_int_div(length, target):
    """TOPI's can_convert_multiply_to_intdiv, its constants folded in float32."""
    with np.errstate(all="ignore"):
        div = F(target) / F(length)
        check = F(1) / (F(1e-5) * F(length) + F(1e-5))
    return bool(np.isfinite(div) and div % 1 == 0 and not div > check)


def source_coords(mode, length, target, start, end):
    """TOPI's get_inx for every output index, float32 step by step."""
    o = np.arange(target).astype(F)
    L, T = F(length), F(target)
    with np.errstate(all="ignore"):
        scale = L / T
        lm1, tm1 = F(length - 1), F(target - 1)
        if mode == "half_pixel":
            return (o + F(0.5)) * scale - F(0.5)
        if mode == "align_corners":
            return (lm1 / tm1) * o
        if mode == "asymmetric":
            return scale * o
        if mode == "pytorch_half_pixel":
            return (o + F(0.5)) * scale - F(0.5) if target > 1 else np.zeros(target, F)
        if mode == "tf_half_pixel_for_nn":
            return (o + F(0.5)) * scale
        if mode == "tf_crop_and_resize":
            s, e = F(start), F(end)
            if target > 1:
                return s * lm1 + o * (e - s) * lm1 / tm1
            return F(0.5) * (s + e) * lm1 * np.ones(target, F)
    raise ValueError(mode)


def to_i32(v):
    """float32 -> int32 as a saturating cast (NaN -> 0); only the NaN edge reaches it."""
    v = np.where(np.isnan(v), 0, v)
    return np.clip(np.trunc(v), -(2**31), 2**31 - 1).astype(np.int64)


def round_index(v, rounding):
    with np.errstate(all="ignore"):
        r = {
            "round": np.rint,  # half to even, TVM's `round`
            "round_prefer_floor": lambda v: np.ceil(v - F(0.5)),
            "round_prefer_ceil": lambda v: np.floor(v + F(0.5)),
            "floor": lambda v: np.floor(v + F(1e-5)),
            "ceil": lambda v: np.ceil(v - F(1e-5)),
        }[rounding](v)
    return to_i32(r)


def cubic_weights(t, alpha):
    """_cubic_spline_weights: Python folds alpha + 2 etc. in float64; float32 after."""
    a, b, c = F(alpha), F(alpha + 2), F(3 + alpha)
    d, e, f = F(-(alpha + 2)), F(3 + 2 * alpha), F(-alpha)
    t2 = t * t
    t3 = t * t * t
    return [a * (t3 - F(2) * t2 + t), b * t3 - c * t2 + F(1), d * t3 + e * t2 - a * t, f * t3 + a * t2]


def resize_ref(
    x,
    size,
    method="linear",
    mode="half_pixel",
    rounding="round",
    roi=(0.0, 0.0, 0.0, 0.0),
    alpha=-0.75,
    exclude=0,
    extrapolation=0.0,
):
    """NCHW `x` resized to `size` = (OH, OW): the float32 values before the cast."""
    n, c, h, w = x.shape
    oh, ow = size
    xf = x.astype(F)
    if method == "nearest_neighbor" and rounding == "":
        rounding = "round" if mode == "align_corners" else "floor"
    int_div = method == "nearest_neighbor" and mode == "asymmetric" and rounding == "floor"
    iy = source_coords(mode, h, oh, roi[0], roi[2])
    ix = source_coords(mode, w, ow, roi[1], roi[3])

    def px(r, q):
        r = np.maximum(np.minimum(r, h - 1), 0)
        q = np.maximum(np.minimum(q, w - 1), 0)
        return xf[:, :, r[:, None], q[None, :]]

    with np.errstate(all="ignore"):
        if method == "nearest_neighbor":
            ry = np.arange(oh) // (oh // h) if int_div and can_int_div(h, oh) else round_index(iy, rounding)
            rx = np.arange(ow) // (ow // w) if int_div and can_int_div(w, ow) else round_index(ix, rounding)
            v = px(ry, rx)
        elif method == "linear":
            y0, x0 = to_i32(np.floor(iy)), to_i32(np.floor(ix))
            ty, tx = (iy - y0.astype(F))[:, None], (ix - x0.astype(F))[None, :]
            lerp = lambda a, b, t: a * (F(1) - t) + b * t
            top = lerp(px(y0, x0), px(y0, x0 + 1), tx)
            bottom = lerp(px(y0 + 1, x0), px(y0 + 1, x0 + 1), tx)
            v = lerp(top, bottom, ty)
        else:
            y0, x0 = to_i32(np.floor(iy)), to_i32(np.floor(ix))
            wy = cubic_weights(iy - np.floor(iy), alpha)
            wx = cubic_weights(ix - np.floor(ix), alpha)
            if exclude:
                for ws, i0, length in ((wy, y0, h), (wx, x0, w)):
                    for k in range(4):
                        ws[k] = np.where((i0 - 1 + k < 0) | (i0 + k > length), F(0), ws[k])
                    total = ws[0] + ws[1] + ws[2] + ws[3]
                    for k in range(4):
                        ws[k] = ws[k] / total
            rows = []
            for j in range(4):
                acc = px(y0 - 1 + j, x0 - 1) * wx[0][None, :]
                for i in range(1, 4):
                    acc = acc + px(y0 - 1 + j, x0 - 1 + i) * wx[i][None, :]
                rows.append(acc)
            v = rows[0] * wy[0][:, None]
            for j in range(1, 4):
                v = v + rows[j] * wy[j][:, None]
        if mode == "tf_crop_and_resize":
            outside = ((iy < 0) | (iy > F(h - 1)))[:, None] | ((ix < 0) | (ix > F(w - 1)))[None, :]
            v = np.where(outside[None, None], F(extrapolation), v)
    return v.astype(F)


def cast_out(v, dtype):
    """The float32 result converted to `dtype` (OP-astype: integers truncate)."""
    if dtype.startswith("int") or dtype.startswith("uint"):
        assert np.all(np.isfinite(v)), v
        t = np.trunc(v.astype(np.float64))
        info = np.iinfo(dtype)
        assert np.all((t >= info.min) & (t <= info.max)), v
        return t.astype(dtype)
    return v.astype(dtype)


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


def halves(rng, shape, lo=-4, hi=4):
    return (rng.integers(lo, hi + 1, size=shape) / 2).astype(F)


def attr_text(attrs):
    def val(v):
        if isinstance(v, str):
            return f'"{v}"'
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return repr(v)

    return "".join(f", {k}={val(v)}" for k, v in attrs.items())


class ConvT:
    """A conv2d_transpose run: canonical NCHW data and IOHW weight, the call's
    attributes (layouts included), and how the fixture passes them."""

    def __init__(self, name, x, w, attrs, ref=conv_t_onnx, note=""):
        self.name, self.x, self.w, self.attrs, self.ref, self.note = name, x, w, attrs, ref, note

    def geometry(self):
        a = self.attrs
        two = lambda v, d: [v, v] if isinstance(v, int) else list(v) if v is not None else [d, d]
        p = a.get("padding", 0)
        p = [p] * 4 if isinstance(p, int) else list(p) * 2 if len(p) == 2 else list(p)
        return dict(
            strides=two(a.get("strides"), 1),
            pads=p,
            opad=two(a.get("output_padding"), 0),
            dil=two(a.get("dilation"), 1),
            groups=a.get("groups", 1),
        )

    def canonical_expect(self, ref=None):
        return (ref or self.ref)(self.x, self.w, **self.geometry())

    def layouts(self):
        d = self.attrs.get("data_layout", "NCHW")
        return d, self.attrs.get("kernel_layout", "IOHW"), self.attrs.get("out_layout", d)

    def dtype(self):
        return self.attrs.get("out_dtype", str(self.x.dtype))

    def args(self):
        d, k, _ = self.layouts()
        return (
            np.ascontiguousarray(self.x.transpose(["NCHW".index(ch) for ch in d])),
            np.ascontiguousarray(self.w.transpose(["IOHW".index(ch) for ch in k])),
        )

    def expect(self):
        _, _, o = self.layouts()
        v = self.canonical_expect().transpose(["NCHW".index(ch) for ch in o])
        return np.ascontiguousarray(v).astype(self.dtype())

    def fn(self):
        xa, wa = self.args()
        dt, wt = str(xa.dtype), str(wa.dtype)
        sig = f'x: R.Tensor(("n", "c", "h", "w"), "{dt}"), k: R.Tensor({tuple(wa.shape)}, "{wt}")'
        return f"""
@R.function
def {self.name}({sig}):
    z = R.nn.conv2d_transpose(x, k{attr_text(self.attrs)})
    return z
"""


def conv_t_cases():
    rng = np.random.default_rng(1919)
    x = halves(rng, (2, 4, 3, 4))
    w = halves(rng, (4, 3, 3, 2), -3, 3)
    xg = halves(rng, (1, 4, 3, 3))
    wg = halves(rng, (4, 2, 2, 3), -3, 3)
    xd = halves(rng, (1, 3, 4, 3))
    wd = halves(rng, (3, 1, 2, 2), -3, 3)
    xs = halves(rng, (1, 2, 3, 4))
    ws = halves(rng, (2, 3, 3, 2), -3, 3)
    inf, nan = np.inf, np.nan
    return [
        ConvT("main", x, w, dict(strides=[2, 3], padding=[1, 0, 2, 1], output_padding=[1, 2])),
        ConvT("defaults", x, w, {}),
        ConvT("dilated", x, w, dict(strides=[2, 1], padding=[0, 1], dilation=[2, 3], output_padding=[1, 0])),
        ConvT("grouped", xg, wg, dict(strides=2, padding=1, output_padding=1, groups=2)),
        ConvT("depthwise", xd, wd, dict(padding=[1, 0], dilation=2, groups=3)),
        ConvT("crop", xs, ws, dict(strides=2, padding=[3, 2, 2, 3])),
        ConvT("nhwc", xs, ws, dict(strides=[1, 2], padding=1, data_layout="NHWC", kernel_layout="HWOI")),
        ConvT("mixed", xs, ws, dict(strides=2, output_padding=[1, 0], kernel_layout="OIHW", out_layout="NHWC")),
        ConvT("ints", (xg * 2).astype(np.int32), (wg * 2).astype(np.int32), dict(strides=[1, 2], padding=[0, 1], groups=2)),
        ConvT("widen", (xs * 2).astype(np.int32), (ws * 2).astype(np.int32), dict(strides=2, out_dtype="int64")),
        ConvT("half", xg.astype(np.float16), wg.astype(np.float16), dict(strides=2, padding=[0, 1], groups=2)),
        ConvT("one_pixel", F([[[[1.5]], [[-2.0]]]]), ws, dict(strides=3, padding=[0, 1, 1, 0])),
        ConvT("empty_batch", np.zeros((0, 2, 3, 4), F), ws, dict(strides=2)),
        ConvT("empty_image", np.zeros((1, 2, 0, 0), F), ws, {}, note="no input pixels: zeros"),
        ConvT(
            "nonfinite",
            F([[[[1.0, 2.0], [-1.0, 0.5]], [[nan, 1.0], [2.0, -2.0]]]]),
            F([[[[1.0, inf], [2.0, 1.0]]], [[[0.5, 1.0], [1.0, -1.0]]]]),
            dict(strides=2, padding=[0, 0, 1, 0]),
            ref=conv_t_topi,
            note="TOPI's zeros: stride holes times the infinite weight are NaN",
        ),
        ConvT(
            "dilation_hole",
            F([[[[inf, 1.0, -2.0]]]]),
            F([[[[1.0, 2.0]]]]),
            dict(dilation=[1, 2]),
            ref=conv_t_topi,
            note="TOPI's zeros: the kernel's dilation hole over the infinite pixel is NaN",
        ),
    ]


def conv_t_error_fixture(api):
    f32, call = api.f32, api.call
    fn = lambda name, sig, body: f"\n@R.function\ndef {name}({sig}):\n    z = {body}\n    return z\n"
    xs = 'x: R.Tensor(("n", "c", "h", "w"), "float32")'
    api.emit(
        "op_nn_conv2d_transpose_errors",
        ["OP-nn.conv2d_transpose"],
        "R.nn.conv2d_transpose errors only known at run time: data channels (symbolic, 3) other than the weight's 4 input channels; padding 3 on each side of a symbolic height that is 1 (output length (1 - 1)*1 - 6 + 3 = -3); input channels (symbolic, 3) not a multiple of groups 2",
        [
            fn("channels", xs + ', k: R.Tensor((4, 2, 3, 3), "float32")', "R.nn.conv2d_transpose(x, k)"),
            fn("negative", xs + ', k: R.Tensor((4, 2, 3, 3), "float32")', "R.nn.conv2d_transpose(x, k, padding=3)"),
            fn("groups", xs + ', k: R.Tensor(("i", "o", 2, 2), "float32")', "R.nn.conv2d_transpose(x, k, groups=2)"),
        ],
        [
            (call("channels", f32(np.ones((1, 3, 2, 2))), f32(np.ones((4, 2, 3, 3)))), "error OpError"),
            (call("negative", f32(np.ones((1, 4, 1, 5))), f32(np.ones((4, 2, 3, 3)))), "error OpError"),
            (call("groups", f32(np.ones((1, 3, 2, 2))), f32(np.ones((3, 1, 2, 2)))), "error OpError"),
        ],
    )


# ---------------------------------------------------------------------------
# resize2d cases
# ---------------------------------------------------------------------------


class Resize:
    """A resize2d run: canonical NCHW data, the size and the call's attributes."""

    def __init__(self, name, x, size, attrs, note=""):
        self.name, self.x, self.size, self.attrs, self.note = name, x, size, attrs, note

    def params(self):
        a = self.attrs
        roi = a.get("roi", 0.0)
        return dict(
            method=a.get("method", "linear"),
            mode=a.get("coordinate_transformation_mode", "half_pixel"),
            rounding=a.get("rounding_method", "round"),
            roi=tuple(roi) if isinstance(roi, (list, tuple)) else (roi,) * 4,
            alpha=a.get("cubic_alpha", -0.75),
            exclude=a.get("cubic_exclude", 0),
            extrapolation=a.get("extrapolation_value", 0.0),
        )

    def dtype(self):
        return self.attrs.get("out_dtype", str(self.x.dtype))

    def layout(self):
        return self.attrs.get("layout", "NCHW")

    def canonical_float(self):
        return resize_ref(self.x, self.size, **self.params())

    def args(self):
        return np.ascontiguousarray(self.x.transpose(["NCHW".index(ch) for ch in self.layout()]))

    def expect(self):
        v = cast_out(self.canonical_float(), self.dtype())
        return np.ascontiguousarray(v.transpose(["NCHW".index(ch) for ch in self.layout()]))

    def fn(self):
        dims = '("n", "h", "w", "c")' if self.layout() == "NHWC" else '("n", "c", "h", "w")'
        return f"""
@R.function
def {self.name}(x: R.Tensor({dims}, "{self.x.dtype}")):
    z = R.image.resize2d(x, R.shape([{self.size[0]}, {self.size[1]}]){attr_text(self.attrs)})
    return z
"""


def resize_cases():
    rng = np.random.default_rng(2019)
    x = (rng.integers(-16, 17, size=(1, 2, 3, 4)) / 4).astype(F)
    xd = (rng.integers(-16, 17, size=(2, 1, 4, 6)) / 4).astype(F)
    nn = dict(method="nearest_neighbor")
    asym, hp, ac = "asymmetric", "half_pixel", "align_corners"
    mode = lambda m, **kw: dict(coordinate_transformation_mode=m, **kw)
    inf, nan = np.inf, np.nan
    return [
        # nearest_neighbor and its rounding methods
        Resize("nn_round", x, (6, 8), dict(**nn, **mode(asym)), "ties 0.5, 1.5, 2.5 to even"),
        Resize("nn_floor_intdiv", x, (6, 12), dict(**nn, **mode(asym, rounding_method="floor")), "TOPI's integer division"),
        Resize("nn_floor_up", x, (5, 7), dict(**nn, **mode(asym, rounding_method="floor"))),
        Resize("nn_prefer_floor", xd, (2, 3), dict(**nn, **mode(hp, rounding_method="round_prefer_floor")), "ties 0.5, 2.5, 4.5"),
        Resize("nn_prefer_ceil", xd, (2, 3), dict(**nn, **mode(hp, rounding_method="round_prefer_ceil"))),
        Resize("nn_round_down", xd, (2, 3), dict(**nn, **mode(hp))),
        Resize("nn_ceil", x, (5, 7), dict(**nn, **mode(ac, rounding_method="ceil"))),
        Resize("nn_default_tf", x, (5, 6), dict(**nn, **mode("tf_half_pixel_for_nn", rounding_method=""))),
        Resize("nn_default_ac", x, (5, 6), dict(**nn, **mode(ac, rounding_method=""))),
        Resize("nn_pytorch", x, (1, 5), dict(**nn, **mode("pytorch_half_pixel"))),
        Resize("nn_down_floor", xd, (3, 4), dict(**nn, **mode(hp, rounding_method="floor"))),
        Resize("nn_floor_epsilon", x[:, :1], (5, 7), dict(**nn, **mode("tf_crop_and_resize", rounding_method="floor", roi=[0.0, 0.0, 0.999995, 0.999995])),
               "floor(v + 1e-5): 0.999995 reads index 1 (ONNX's floor: 0)"),
        # linear
        Resize("linear", x, (5, 7), {}),
        Resize("linear_ac_down", xd, (3, 4), mode(ac)),
        Resize("linear_asym", x, (4, 6), mode(asym)),
        Resize("linear_pytorch", x, (1, 6), mode("pytorch_half_pixel")),
        Resize("linear_tf_nn", x, (5, 5), mode("tf_half_pixel_for_nn")),
        Resize("linear_crop", x, (4, 5), mode("tf_crop_and_resize", roi=[0.25, -0.5, 1.0, 1.25], extrapolation_value=-1.5)),
        Resize("linear_crop_one", x, (1, 3), mode("tf_crop_and_resize", roi=[0.5, 0.0, 1.0, 0.5])),
        # cubic
        Resize("cubic", x, (5, 7), dict(method="cubic")),
        Resize("cubic_exclude", x, (5, 6), dict(method="cubic", cubic_alpha=-0.5, cubic_exclude=1, **mode(ac))),
        Resize("cubic_down", xd, (3, 4), dict(method="cubic", **mode(asym))),
        Resize("cubic_exclude_down", xd, (3, 5), dict(method="cubic", cubic_exclude=1)),
        # layouts, dtypes, shapes, values
        Resize("nhwc", x, (5, 7), dict(layout="NHWC")),
        Resize("nhwc_nn", x, (6, 3), dict(layout="NHWC", **nn, **mode(hp, rounding_method="round_prefer_ceil"))),
        Resize("half", x.astype(np.float16), (5, 7), {}),
        Resize("ints", (x * 4).astype(np.int32), (5, 7), {}, "truncated toward zero"),
        Resize("bytes", (x * 4 + 64).astype(np.uint8), (5, 6), dict(method="cubic", cubic_exclude=1)),
        Resize("out_half", x, (5, 7), dict(out_dtype="float16")),
        Resize("one_pixel", F([[[[2.5]], [[-1.0]]]]), (3, 2), {}),
        Resize("one_pixel_cubic", F([[[[2.5]], [[-1.0]]]]), (2, 3), dict(method="cubic")),
        Resize("to_empty", x, (0, 5), {}),
        Resize("nonfinite", F([[[[1.0, inf, 2.0, 3.0], [nan, 4.0, 5.0, 6.0]]]]), (4, 8), mode(asym),
               "0 * inf and NaN: a neighbour of weight 0 still takes part"),
        Resize("ac_to_one", x, (1, 3), mode(ac), "align_corners to one row: (H - 1) / 0 * 0 is NaN"),
    ]


def resize_error_fixture(api):
    call = api.call
    bytes_in = np.array([[[[0, 255, 255, 0]]]], np.uint8)
    low = float(resize_ref(bytes_in, (1, 9), method="cubic").min())
    assert low < 0, low
    fn = lambda name, dt, body: f'\n@R.function\ndef {name}(x: R.Tensor(("n", "c", "h", "w"), "{dt}")):\n    z = {body}\n    return z\n'
    api.emit(
        "op_image_resize2d_errors",
        ["OP-image.resize2d"],
        f"R.image.resize2d errors only known at run time: an image with no rows read by interpolation; a uint8 cubic overshoot below 0 ({low:.4g} does not convert, OP-astype); a NaN converted to int32 by out_dtype",
        [
            fn("empty", "float32", "R.image.resize2d(x, R.shape([2, 2]))"),
            fn("overshoot", "uint8", 'R.image.resize2d(x, R.shape([1, 9]), method="cubic")'),
            fn("nan_int", "float32", 'R.image.resize2d(x, R.shape([2, 2]), method="nearest_neighbor", out_dtype="int32")'),
        ],
        [
            (call("empty", api.Arr(np.zeros((1, 1, 0, 3), F))), "error OpError"),
            (call("overshoot", bytes_in), "error OpError"),
            (call("nan_int", F([[[[np.nan, 1.0]]]])), "error OpError"),
        ],
    )


# ---------------------------------------------------------------------------
# Emission
# ---------------------------------------------------------------------------


def float32_tolerance(api, values):
    """The file's tolerance from its float32 results alone: the float16 ones are exact
    here (dyadic operands; resize rounds the same float32 value once)."""
    return api.tol_text(max([api.float_tolerance(api.Arr(v)) for v in values if v.dtype == np.float32] + [1e-5]))


def gen(api):
    np.seterr(all="ignore")
    cases = conv_t_cases()
    for c in cases:
        if c.ref is conv_t_onnx:
            # The two definitions agree on finite operands.
            a, b = c.canonical_expect(), c.canonical_expect(conv_t_topi)
            assert a.shape == b.shape and np.array_equal(a, b), c.name
    api.emit(
        "op_nn_conv2d_transpose",
        ["OP-nn.conv2d_transpose"],
        "R.nn.conv2d_transpose at run time, ONNX ConvTranspose's values: strides, asymmetric padding and "
        "output_padding (main); defaults; dilation with stride; groups; depthwise; padding beyond the kernel "
        "(crop: TOPI's negative pad); NHWC data with an HWOI kernel; an OIHW kernel written out as NHWC; "
        "int32; int32 widened by out_dtype int64; float16; a 1x1 image; an empty batch; an empty image (zeros); "
        "NaN and infinities as TOPI computes them (nonfinite, dilation_hole: an inserted zero times an "
        "infinity is NaN, where ONNX Runtime gives a number)",
        [c.fn() for c in cases],
        [(api.call(c.name, *[api.Arr(a) for a in c.args()]), api.Arr(c.expect())) for c in cases],
        tolerance=float32_tolerance(api, [c.expect() for c in cases]),
    )
    conv_t_error_fixture(api)

    cases = resize_cases()
    api.emit(
        "op_image_resize2d",
        ["OP-image.resize2d"],
        "R.image.resize2d at run time, TOPI's formula in float32 then the output dtype: nearest_neighbor with "
        "round (ties to even), floor (TOPI's integer division when the scale is an integer), round_prefer_floor, "
        "round_prefer_ceil, ceil and the default \"\" (floor, or round under align_corners), floor's "
        "1e-5 (0.999995 reads index 1, ONNX's floor 0); linear and cubic "
        "(alpha, cubic_exclude) under half_pixel, align_corners, asymmetric, pytorch_half_pixel (a target of 1), "
        "tf_half_pixel_for_nn, tf_crop_and_resize (roi, extrapolation_value, a target of 1); up- and "
        "down-scaling; NHWC; float16, int32 (truncated), uint8, out_dtype float16; 1x1 images; an empty target; "
        "NaN and inf (a neighbour of weight 0 still counts: 0 * inf is NaN); align_corners to one row "
        "((H - 1) / 0 * 0 is NaN)",
        [c.fn() for c in cases],
        [(api.call(c.name, api.Arr(c.args())), api.Arr(c.expect())) for c in cases],
        tolerance=float32_tolerance(api, [c.expect() for c in cases]),
    )
    resize_error_fixture(api)


# ---------------------------------------------------------------------------
# Cross-check against onnxruntime and TVM 0.27 (run this file directly)
# ---------------------------------------------------------------------------


def _ort_run(node, inputs, opset, out_shape):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    ins, inits = [], []
    for name, a in inputs:
        if name in node.input[1:] and a.dtype != np.float32:
            inits.append(numpy_helper.from_array(a, name))
        else:
            ins.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, a.shape))
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)
    graph = helper.make_graph([node], "g", ins, [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {name: a for name, a in inputs if a.dtype == np.float32}
    return sess.run(None, feed)[0]


def ort_conv_t(c):
    from onnx import helper

    g = c.geometry()
    kh, kw = c.w.shape[2:]
    node = helper.make_node(
        "ConvTranspose",
        ["x", "w"],
        ["y"],
        strides=g["strides"],
        pads=g["pads"],
        output_padding=g["opad"],
        dilations=g["dil"],
        group=g["groups"],
        kernel_shape=[kh, kw],
    )
    return _ort_run(node, [("x", c.x.astype(F)), ("w", c.w.astype(F))], 17, c.canonical_expect().shape)


ORT_NEAREST = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}


def ort_resize(c):
    """None when ONNX has no such resize (TOPI's half-to-even `round`)."""
    from onnx import helper

    p = c.params()
    rounding = p["rounding"]
    if p["method"] == "nearest_neighbor" and rounding == "":
        rounding = "round" if p["mode"] == "align_corners" else "floor"
    if p["method"] == "nearest_neighbor" and rounding not in ORT_NEAREST:
        return None
    n, ch = c.x.shape[:2]
    roi = np.array([0, 0, p["roi"][0], p["roi"][1], 1, 1, p["roi"][2], p["roi"][3]], F)
    node = helper.make_node(
        "Resize",
        ["x", "roi", "scales", "sizes"],
        ["y"],
        mode={"nearest_neighbor": "nearest", "linear": "linear", "cubic": "cubic"}[p["method"]],
        coordinate_transformation_mode=p["mode"],
        nearest_mode=rounding if p["method"] == "nearest_neighbor" else "round_prefer_floor",
        cubic_coeff_a=p["alpha"],
        exclude_outside=p["exclude"],
        extrapolation_value=p["extrapolation"],
    )
    sizes = np.array([n, ch, c.size[0], c.size[1]], np.int64)
    inputs = [("x", c.x.astype(F)), ("roi", roi), ("scales", np.zeros(0, F)), ("sizes", sizes)]
    return _ort_run(node, inputs, 11, [n, ch, c.size[0], c.size[1]])


def tvm_run(funcs, calls):
    """Builds a module of `funcs` (TVMScript text) with TVM 0.27 and runs `calls`
    (name, arrays); each result, or the exception's first line."""
    import tvm
    from tvm import relax
    from tvm.script import from_source
    from tvm.script import ir as I
    from tvm.script import relax as R
    from tvm.script import tirx as T
    import textwrap

    body = "\n".join(textwrap.indent(textwrap.dedent(f).strip("\n"), "    ") for f in funcs)
    src = "@I.ir_module\nclass Module:\n" + body + "\n"
    try:
        mod = from_source(src, extra_vars={"I": I, "R": R, "T": T})
        mod = relax.transform.LegalizeOps()(mod)
        vm = relax.VirtualMachine(relax.build(mod, target="llvm"), tvm.cpu())
    except Exception as e:  # noqa: BLE001
        return [f"build: {str(e).strip().splitlines()[-1]}" for _ in calls]
    out = []
    for name, arrays in calls:
        try:
            out.append(vm[name](*[tvm.runtime.tensor(a) for a in arrays]).numpy())
        except Exception as e:  # noqa: BLE001
            out.append(f"run: {str(e).strip().splitlines()[-1]}")
    return out


def compare(what, got, want, tol):
    if isinstance(got, str):
        return f"{what}: {got}"
    if got is None:
        return f"{what}: n/a"
    if got.shape != want.shape:
        return f"{what}: shape {got.shape} != {want.shape}"
    if got.dtype != want.dtype:
        what = f"{what} (dtype {got.dtype}, ours {want.dtype})"
    g, w = got.astype(np.float64), want.astype(np.float64)
    same_nan = np.isnan(g) == np.isnan(w)
    close = np.isclose(g, w, rtol=0, atol=tol, equal_nan=True) | (g == w)
    if same_nan.all() and close.all():
        exact = np.array_equal(g, w, equal_nan=True)
        return f"{what}: agrees" + ("" if exact else f" (max |diff| {np.nanmax(np.abs(g - w)):.2g})")
    bad = np.argwhere(~(close & same_nan))
    first = tuple(int(i) for i in bad[0])
    return f"{what}: DIFFERS at {len(bad)} of {w.size} elements, e.g. {first}: got {g[first]!r}, ours {w[first]!r}"


def cross_check():
    np.seterr(all="ignore")
    print("== nn.conv2d_transpose (canonical NCHW / IOHW; TVM only legalizes those)")
    cases = conv_t_cases()
    canon = []
    for c in cases:
        attrs = {k: v for k, v in c.attrs.items() if k not in ("data_layout", "kernel_layout", "out_layout")}
        k = ConvT(c.name, c.x, c.w, attrs).fn().replace('("n", "c", "h", "w")', str(tuple(c.x.shape)))
        canon.append(tvm_run([k], [(c.name, [c.x, c.w])])[0])
    results = canon
    for c, tv in zip(cases, results):
        want = c.canonical_expect().astype(c.dtype())
        tol = 1e-5 * max(1.0, float(np.nanmax(np.abs(np.where(np.isinf(want), 0, want)), initial=0.0)))
        try:
            o = ort_conv_t(c).astype(np.float64)
            o = o.astype(c.dtype()) if not np.isnan(o).any() else o
        except Exception as e:  # noqa: BLE001
            o = f"error: {str(e).strip().splitlines()[-1]}"
        print(f"  {c.name:14} {compare('TVM', tv, want, tol)}; {compare('ORT', o, want, tol)}")

    print("== image.resize2d (the fixture's own functions in TVM; ORT on NCHW float32)")
    cases = resize_cases()
    results = []
    for c in cases:
        r = tvm_run([c.fn()], [(c.name, [c.args()])])[0]
        if isinstance(r, str):
            # Again with the data's shape written out (TOPI needs constants in places).
            dims = '("n", "h", "w", "c")' if c.layout() == "NHWC" else '("n", "c", "h", "w")'
            static = tvm_run([c.fn().replace(dims, str(tuple(c.args().shape)))], [(c.name, [c.args()])])[0]
            r = static if not isinstance(static, str) else f"{r}; static shapes: {static}"
            if not isinstance(static, str):
                print(f"  ({c.name}: symbolic shapes fail in TVM: {tvm_run([c.fn()], [(c.name, [c.args()])])[0]})")
        results.append(r)
    for c, tv in zip(cases, results):
        want = c.expect()
        fin = want[np.isfinite(want.astype(np.float64))]
        tol = 1e-5 * max(1.0, float(np.max(np.abs(fin.astype(np.float64)), initial=0.0)))
        if c.dtype() == "float16":
            tol = 1e-3 * max(1.0, float(np.max(np.abs(fin.astype(np.float64)), initial=0.0)))
        try:
            o = ort_resize(c)
            if o is not None:
                o = o.transpose(["NCHW".index(ch) for ch in c.layout()])
                o = cast_out(o, c.dtype()) if np.isfinite(o).all() else o
        except Exception as e:  # noqa: BLE001
            o = f"error: {str(e).strip().splitlines()[-1]}"
        print(f"  {c.name:18} {compare('TVM', tv, want, tol)}; {compare('ORT', o, want, tol)}")


if __name__ == "__main__":
    cross_check()
