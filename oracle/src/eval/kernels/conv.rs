//! `nn.pad`, `nn.conv1d`, `nn.conv2d`, and the attribute reading the pooling kernels
//! share with them (layouts, window attributes).
//!
//! Tensors are read through a layout: the canonical axes (`N, C, H, W`; `O, I, KH, KW`)
//! are found at the positions the layout string gives, so any permutation of the
//! letters works the same way. A 1-D convolution is the 2-D one with `H = KH = 1`.

use super::elem::{convert_data, convert_scalar, map_data2, Elem};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use spec_model::grammar::{AttrValue, Attrs, NDArray, Scalar, TensorData};
use std::borrow::Cow;

const I32_MAX: i64 = i32::MAX as i64;

/// For each letter of `canonical`, its position in `layout` (a permutation of it).
pub(super) fn layout(cx: &Cx, name: &str, default: &str, canonical: &str) -> EvalResult<Vec<usize>> {
    let l = match cx.attr(name) {
        None => default.to_string(),
        Some(AttrValue::Str(s)) => s.clone(),
        Some(_) => return Err(cx.error(format!("attribute `{name}` must be a string"))),
    };
    let mut pos = Vec::new();
    for c in canonical.chars() {
        match l.find(c) {
            Some(p) if l.len() == canonical.len() && !pos.contains(&p) => pos.push(p),
            _ => {
                return Err(cx.error(format!(
                    "{name} \"{l}\" is not supported: it must be a permutation of the letters of \"{canonical}\""
                )))
            }
        }
    }
    Ok(pos)
}

/// The layout attribute's string (for an `out_layout` defaulting to it).
pub(super) fn layout_name(cx: &Cx, name: &str, default: &str) -> String {
    match cx.attr(name) {
        Some(AttrValue::Str(s)) => s.clone(),
        _ => default.to_string(),
    }
}

/// `n` values of an int-list attribute (one value repeated), each in `lo..=2^31-1`.
pub(super) fn window(cx: &Cx, name: &str, n: usize, default: i64, lo: i64) -> EvalResult<Vec<i64>> {
    let v = cx.attr_ints(name)?.unwrap_or_else(|| vec![default]);
    let v = match v.len() {
        1 => vec![v[0]; n],
        k if k == n => v,
        k => return Err(cx.error(format!("{name} must have 1 or {n} values, got {k}"))),
    };
    match v.iter().find(|&&x| x < lo || x > I32_MAX) {
        Some(bad) => Err(cx.error(format!("{name} value {bad} is out of range ({lo} to {I32_MAX})"))),
        None => Ok(v),
    }
}

/// `padding` as (before.., after..) for `spatial` axes (TVM's GetCompletePadding).
pub(super) fn padding(cx: &Cx, spatial: usize) -> EvalResult<Vec<i64>> {
    let p = cx.attr_ints("padding")?.unwrap_or_else(|| vec![0]);
    let full = match (spatial, p.len()) {
        (_, 1) => vec![p[0]; 2 * spatial],
        (1, 2) | (2, 4) => p,
        (2, 2) => vec![p[0], p[1], p[0], p[1]],
        (_, k) => return Err(cx.error(format!("padding must have 1, 2 or 4 values, got {k}"))),
    };
    match full.iter().find(|&&x| !(0..=I32_MAX).contains(&x)) {
        Some(bad) => Err(cx.error(format!("padding value {bad} is out of range (0 to {I32_MAX})"))),
        None => Ok(full),
    }
}

/// Row-major strides of `shape`.
pub(super) fn strides_of(shape: &[u64]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1] as usize;
    }
    s
}

/// OP-nn.pad: out `[i]` is `x[i - before]` inside, else by `pad_mode`: `"constant"`
/// `pad_value` (converted to the dtype as OP-astype converts); `"reflect"` mirrors
/// without repeating the edge (NumPy `reflect`; needs `before, after < d`);
/// `"replicate"` repeats the edge (needs `d >= 1`); `"circular"` wraps around (needs
/// `before, after <= d`), each only on axes padded. Errors: not one tensor; `pad_width`
/// missing, not two values per axis, negative or over 2^31-1; an unknown `pad_mode`; an
/// axis too short for its mode; `pad_value` not converting.
pub(crate) fn pad(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let x = cx.tensor(&args[0], "the data")?;
    let widths = cx.attr_ints("pad_width")?.ok_or_else(|| cx.error("needs the attribute `pad_width`"))?;
    let r = x.ndim();
    if widths.len() != 2 * r {
        return Err(cx.error(format!(
            "pad_width must have 2 values per axis ({} for rank {r}), got {}",
            2 * r,
            widths.len()
        )));
    }
    if let Some(bad) = widths.iter().find(|&&w| !(0..=I32_MAX).contains(&w)) {
        return Err(cx.error(format!("pad_width value {bad} is out of range (0 to {I32_MAX})")));
    }
    let mode = match cx.attr("pad_mode") {
        None => "constant".to_string(),
        Some(AttrValue::Str(s)) => s.clone(),
        Some(_) => return Err(cx.error("attribute `pad_mode` must be a string")),
    };
    let value = cx.attr_float("pad_value", 0.0)?;
    let fill = match mode.as_str() {
        "constant" => Some(convert_scalar(Scalar::Float(value), x.dtype).map_err(|m| cx.error(m))?),
        "reflect" | "replicate" | "circular" => None,
        _ => {
            return Err(cx.error(format!(
                "pad_mode \"{mode}\" is not one of \"constant\", \"reflect\", \"replicate\", \"circular\""
            )))
        }
    };
    let mut out_shape = Vec::with_capacity(r);
    for (i, &d) in x.shape.iter().enumerate() {
        let (b, a) = (widths[2 * i] as u64, widths[2 * i + 1] as u64);
        let ok = match mode.as_str() {
            _ if b == 0 && a == 0 => true,
            "reflect" => b < d && a < d,
            "replicate" => d >= 1,
            "circular" => b <= d && a <= d && d >= 1,
            _ => true,
        };
        if !ok {
            return Err(cx.error(format!("axis {i} of length {d} is too short for {mode} padding ({b}, {a})")));
        }
        out_shape.push(d.checked_add(b + a).ok_or_else(|| cx.error("the padded shape overflows"))?);
    }
    let n = cx.numel(&out_shape)?;
    let (ostr, istr) = (strides_of(&out_shape), strides_of(&x.shape));
    let mut data = cx.storage(x.dtype)?;
    data.reserve(n);
    'element: for flat in 0..n {
        let mut src = 0usize;
        for i in 0..r {
            let o = (flat / ostr[i]) as i64 % out_shape[i] as i64;
            let d = x.shape[i] as i64;
            let j = o - widths[2 * i];
            let j = if (0..d).contains(&j) {
                j
            } else {
                match mode.as_str() {
                    "reflect" if j < 0 => -j,
                    "reflect" => 2 * (d - 1) - j,
                    "replicate" => j.clamp(0, d - 1),
                    "circular" => j.rem_euclid(d),
                    _ => {
                        data.push(fill.unwrap_or(Scalar::Int(0))).map_err(|m| cx.error(m))?;
                        continue 'element;
                    }
                }
            };
            src += j as usize * istr[i];
        }
        data.push(x.data.get(src)).map_err(|m| cx.error(m))?;
    }
    Ok(tensor_value(x.dtype, out_shape, data))
}

/// One convolution's geometry, in canonical order (`N, C, H, W` and `O, I, KH, KW`).
pub(super) struct Geometry {
    pub n: usize,
    pub h: usize,
    pub w: usize,
    pub o: usize,
    pub i: usize,
    pub kh: usize,
    pub kw: usize,
    pub groups: usize,
    /// (stride, dilation, pad before) per spatial axis (H, W).
    pub axes: [(i64, i64, i64); 2],
    pub oh: usize,
    pub ow: usize,
}

/// `floordiv(x + pads - dilation * (k - 1) - 1, stride) + 1` in exact arithmetic;
/// `None` when negative.
pub(super) fn out_len(x: u64, pads: i64, dilation: i64, k: u64, stride: i64) -> Option<u64> {
    let num = x as i128 + pads as i128 - dilation as i128 * (k as i128 - 1) - 1;
    u64::try_from(num.div_euclid(stride as i128) + 1).ok()
}

/// The canonical shape of a tensor read through layout positions `pos`, padded to 4
/// axes for a 1-D convolution (`H = 1` inserted at index 2).
fn canonical(shape: &[u64], pos: &[usize]) -> [u64; 4] {
    let d: Vec<u64> = pos.iter().map(|&p| shape[p]).collect();
    if d.len() == 3 {
        [d[0], d[1], 1, d[2]]
    } else {
        [d[0], d[1], d[2], d[3]]
    }
}

/// The element strides of the canonical axes of a tensor in layout `pos` (0 for the
/// inserted `H` of a 1-D convolution).
fn canonical_strides(shape: &[u64], pos: &[usize]) -> [usize; 4] {
    let st = strides_of(shape);
    let s: Vec<usize> = pos.iter().map(|&p| st[p]).collect();
    if s.len() == 3 {
        [s[0], s[1], 0, s[2]]
    } else {
        [s[0], s[1], s[2], s[3]]
    }
}

/// OP-nn.conv1d: OP-nn.conv2d with one spatial axis (layouts of `NCW` and `OIW`).
pub(crate) fn conv1d(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    conv(cx, args, 1)
}

/// OP-nn.conv2d: `out[n, o, y, x] = Σ_{ci < I} Σ_{ky < KH} Σ_{kx < KW}
/// in[n, g*I + ci, y*sh + ky*dh - pt, x*sw + kx*dw - pl] * w[o, ci, ky, kx]` with
/// `g = o / (O / groups)`, folded from 0 in that order (ci outermost, kx innermost),
/// every product and sum rounded to (or wrapping in) the dtype; a position outside the
/// input reads 0 (TVM pads with zeros, so `0 * inf` is NaN there too). With
/// `out_dtype` both operands are first converted to it (OP-astype). Errors: not two
/// tensors; a layout not a permutation of the canonical letters; ranks other than the
/// layouts'; attributes out of range; different dtypes without `out_dtype`;
/// `C != I * groups`; `O` not a multiple of `groups`; a negative output length; a
/// conversion error.
pub(crate) fn conv2d(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    conv(cx, args, 2)
}

fn conv(cx: &Cx, args: &[Value], spatial: usize) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let x = cx.tensor(&args[0], "the data")?;
    let wt = cx.tensor(&args[1], "the weight")?;
    let (dl, kl) = if spatial == 1 { ("NCW", "OIW") } else { ("NCHW", "OIHW") };
    let dpos = layout(cx, "data_layout", dl, dl)?;
    let kpos = layout(cx, "kernel_layout", kl, kl)?;
    let opos = layout(cx, "out_layout", &layout_name(cx, "data_layout", dl), dl)?;
    let strides = window(cx, "strides", spatial, 1, 1)?;
    let dilation = window(cx, "dilation", spatial, 1, 1)?;
    let pads = padding(cx, spatial)?;
    let groups = cx.attr_int("groups", 1)?;
    if !(1..=I32_MAX).contains(&groups) {
        return Err(cx.error(format!("groups must be at least 1 (and at most {I32_MAX}), got {groups}")));
    }
    let out_dtype = cx.attr_dtype("out_dtype")?.filter(|d| !d.is_void());
    let dtype = match out_dtype {
        Some(d) => {
            cx.storage(d)?;
            d
        }
        None if x.dtype == wt.dtype => x.dtype,
        None => return Err(cx.error(format!("operands have different dtypes {} and {}", x.dtype, wt.dtype))),
    };
    for (t, what) in [(&x, "the data"), (&wt, "the weight")] {
        if t.ndim() != spatial + 2 {
            return Err(cx.error(format!(
                "{what} must have rank {} (its layout's), got rank {}",
                spatial + 2,
                t.ndim()
            )));
        }
    }
    let [n, c, h, w] = canonical(&x.shape, &dpos);
    let [o, i, kh, kw] = canonical(&wt.shape, &kpos);
    let g = groups as u64;
    if i.checked_mul(g) != Some(c) {
        return Err(
            cx.error(format!("the data's channels {c} must equal the weight's input channels {i} times groups {g}"))
        );
    }
    if o % g != 0 {
        return Err(cx.error(format!("the output channels {o} are not a multiple of groups {g}")));
    }
    // Per spatial axis (H, W): stride, dilation, pad before, pad sum (H is trivial in 1-D).
    let ax = |k: usize| (strides[k], dilation[k], pads[k], pads[k] + pads[k + spatial]);
    let (hs, ws) = if spatial == 1 { ((1, 1, 0, 0), ax(0)) } else { (ax(0), ax(1)) };
    let neg = || cx.error("the window is longer than the padded input: the output length is negative");
    let oh = out_len(h, hs.3, hs.1, kh, hs.0).ok_or_else(neg)?;
    let ow = out_len(w, ws.3, ws.1, kw, ws.0).ok_or_else(neg)?;
    let canon_out = [n, o, oh, ow];
    let out_shape: Vec<u64> = if spatial == 1 {
        let c3 = [n, o, ow];
        let mut s = vec![0; 3];
        for (k, &p) in opos.iter().enumerate() {
            s[p] = c3[k];
        }
        s
    } else {
        let mut s = vec![0; 4];
        for (k, &p) in opos.iter().enumerate() {
            s[p] = canon_out[k];
        }
        s
    };
    let total = cx.numel(&out_shape)?;
    let xs = canonical_strides(&x.shape, &dpos);
    let wsr = canonical_strides(&wt.shape, &kpos);
    let os = canonical_strides(&out_shape, &opos);
    let geo = Geometry {
        n: n as usize,
        h: h as usize,
        w: w as usize,
        o: o as usize,
        i: i as usize,
        kh: kh as usize,
        kw: kw as usize,
        groups: g as usize,
        axes: [(hs.0, hs.1, hs.2), (ws.0, ws.1, ws.2)],
        oh: oh as usize,
        ow: ow as usize,
    };
    let (xd, wd) = (converted(cx, &x, dtype)?, converted(cx, &wt, dtype)?);
    let plan = Plan { geo: &geo, xs, ws: wsr, os, total };
    let data = map_data2!(wrap, xd.as_ref(), wd.as_ref(), a, b => conv_loop(&plan, a, b),
        return Err(cx.error("operands of different storage")));
    Ok(tensor_value(dtype, out_shape, data))
}

pub(super) fn converted<'a>(
    cx: &Cx,
    x: &'a NDArray,
    dt: spec_model::grammar::DataType,
) -> EvalResult<Cow<'a, TensorData>> {
    if x.dtype == dt {
        Ok(Cow::Borrowed(&x.data))
    } else {
        convert_data(&x.data, dt).map(Cow::Owned).map_err(|m| cx.error(m))
    }
}

struct Plan<'a> {
    geo: &'a Geometry,
    xs: [usize; 4],
    ws: [usize; 4],
    os: [usize; 4],
    total: usize,
}

/// The input coordinate of output position `y`, kernel offset `k` along an axis
/// (stride, dilation, pad before), when inside `0..len`.
fn source(y: usize, k: usize, (s, d, p): (i64, i64, i64), len: usize) -> Option<usize> {
    let at = y as i64 * s + k as i64 * d - p;
    usize::try_from(at).ok().filter(|&a| a < len)
}

fn conv_loop<T: Elem>(p: &Plan, x: &[T], w: &[T]) -> Vec<T> {
    let g = p.geo;
    let mut out = vec![T::zero(); p.total];
    let per_group = g.o / g.groups.max(1);
    for n in 0..g.n {
        for o in 0..g.o {
            let grp = o / per_group.max(1);
            for y in 0..g.oh {
                for xx in 0..g.ow {
                    let mut acc = T::zero();
                    for ci in 0..g.i {
                        let c = grp * g.i + ci;
                        for ky in 0..g.kh {
                            for kx in 0..g.kw {
                                let wv = w[o * p.ws[0] + ci * p.ws[1] + ky * p.ws[2] + kx * p.ws[3]];
                                let xv = match (source(y, ky, g.axes[0], g.h), source(xx, kx, g.axes[1], g.w)) {
                                    (Some(iy), Some(ix)) => x[n * p.xs[0] + c * p.xs[1] + iy * p.xs[2] + ix * p.xs[3]],
                                    _ => T::zero(),
                                };
                                acc = acc.plus(xv.times(wv));
                            }
                        }
                    }
                    out[n * p.os[0] + o * p.os[1] + y * p.os[2] + xx * p.os[3]] = acc;
                }
            }
        }
    }
    out
}

/// LIMIT-fuel: the multiply-adds of a convolution call (`N·O·OH·OW·I·KH·KW`, saturating),
/// or `None` when the call is not a well-formed one (its kernel reports the error).
pub(crate) fn conv_work(args: &[Value], attrs: &Attrs, spatial: usize) -> Option<u64> {
    let [Value::Tensor(x), Value::Tensor(w)] = args else { return None };
    let (x, w) = (x.try_borrow().ok()?, w.try_borrow().ok()?);
    if x.shape.len() != spatial + 2 || w.shape.len() != spatial + 2 {
        return None;
    }
    let cx = Cx::new(
        if spatial == 1 { spec_model::ops::Op::Conv1d } else { spec_model::ops::Op::Conv2d },
        attrs,
        spec_model::Span::SYNTHETIC,
    );
    let (dl, kl) = if spatial == 1 { ("NCW", "OIW") } else { ("NCHW", "OIHW") };
    let dpos = layout(&cx, "data_layout", dl, dl).ok()?;
    let kpos = layout(&cx, "kernel_layout", kl, kl).ok()?;
    let strides = window(&cx, "strides", spatial, 1, 1).ok()?;
    let dilation = window(&cx, "dilation", spatial, 1, 1).ok()?;
    let pads = padding(&cx, spatial).ok()?;
    let [n, _, h, wd] = canonical(&x.shape, &dpos);
    let [o, i, kh, kw] = canonical(&w.shape, &kpos);
    let spatial_dims = if spatial == 1 { vec![(wd, kw, 0)] } else { vec![(h, kh, 0), (wd, kw, 1)] };
    let mut total = n.saturating_mul(o).saturating_mul(i);
    for (len, k, a) in spatial_dims {
        let out = out_len(len, pads[a] + pads[a + spatial], dilation[a], k, strides[a])?;
        total = total.saturating_mul(out).saturating_mul(k);
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use crate::eval::ops::eval_op_standalone;
    use crate::eval::value::{ErrorKind, Value};
    use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, Scalar};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn t(shape: &[u64], v: &[f64]) -> Value {
        let s: Vec<Scalar> = v.iter().map(|&x| Scalar::Float(x)).collect();
        Value::tensor(NDArray::from_scalars(DataType::FLOAT32, shape.to_vec(), &s).unwrap())
    }

    fn floats(v: &Value) -> Vec<f64> {
        let Value::Tensor(r) = v else { panic!("not a tensor") };
        let r = r.borrow();
        (0..r.data.len()).map(|i| if let Scalar::Float(f) = r.data.get(i) { f } else { f64::NAN }).collect()
    }

    fn attrs(list: &[(&str, AttrValue)]) -> Attrs {
        let mut a = Attrs::default();
        for (k, v) in list {
            a.insert(*k, v.clone());
        }
        a
    }

    fn ints(xs: &[i64]) -> AttrValue {
        AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
    }

    #[test]
    fn padding_reads_zero_times_the_weight() {
        // 0 * inf is NaN at a padded position, as in TOPI's zero-padded input.
        let x = t(&[1, 1, 1, 1], &[2.0]);
        let w = t(&[1, 1, 1, 2], &[3.0, f64::INFINITY]);
        let a = attrs(&[("padding", ints(&[0, 0, 0, 1]))]);
        let r = eval_op_standalone(Op::Conv2d, &[x.clone(), w], &a, Span::SYNTHETIC).unwrap();
        assert!(floats(&r)[0].is_nan());
        let w = t(&[1, 1, 1, 2], &[3.0, 4.0]);
        let r = eval_op_standalone(Op::Conv2d, &[x, w], &a, Span::SYNTHETIC).unwrap();
        assert_eq!(floats(&r), vec![6.0]);
    }

    #[test]
    fn layouts_and_errors() {
        // NWC data, WIO kernel: out[w] = x[w] + 10 * x[w + 1].
        let x = t(&[1, 3, 1], &[1.0, 2.0, 3.0]);
        let w = t(&[2, 1, 1], &[1.0, 10.0]);
        let a =
            attrs(&[("data_layout", AttrValue::Str("NWC".into())), ("kernel_layout", AttrValue::Str("WIO".into()))]);
        let r = eval_op_standalone(Op::Conv1d, &[x.clone(), w.clone()], &a, Span::SYNTHETIC).unwrap();
        assert_eq!(floats(&r), vec![21.0, 32.0]);
        for bad in [("strides", ints(&[0])), ("groups", AttrValue::Int(0)), ("padding", ints(&[1, 1, 1]))] {
            let e = eval_op_standalone(Op::Conv1d, &[x.clone(), w.clone()], &attrs(&[bad]), Span::SYNTHETIC);
            assert_eq!(e.err().expect("an error").kind, ErrorKind::OpError);
        }
        let pad = attrs(&[("pad_width", ints(&[0, 0, 4, 0, 0, 0])), ("pad_mode", AttrValue::Str("reflect".into()))]);
        let e = eval_op_standalone(Op::Pad, &[x], &pad, Span::SYNTHETIC).err().expect("an error");
        assert_eq!(e.kind, ErrorKind::OpError);
    }
}
