//! `nn.conv2d_transpose`, written as TOPI computes it (`group_conv2d_transpose_nchw`
//! after the legalizer's `dilate` of the kernel): the data spread out by the strides
//! (zeros between its elements) and padded by `K' - 1 - pad` zeros, convolved with the
//! kernel dilated (zeros between its taps) and rotated by 180 degrees. Every term of
//! that sum is visited, the inserted zeros included, so `0 * inf` is NaN where TVM's
//! code makes it so.

use super::conv::{converted, layout, layout_name, padding, strides_of, window};
use super::elem::{map_data2, Elem};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use spec_model::grammar::{Attrs, DataType};

const I32_MAX: i64 = i32::MAX as i64;

/// A call's attributes, normalized: per spatial axis (H, W) the stride, dilation,
/// output padding and the pads before and after.
pub(super) struct Attrs2d {
    pub data: Vec<usize>,
    pub kernel: Vec<usize>,
    pub out: Vec<usize>,
    pub strides: [i64; 2],
    pub dilation: [i64; 2],
    pub out_pad: [i64; 2],
    /// (top, left, bottom, right).
    pub pads: [i64; 4],
    pub groups: u64,
    pub out_dtype: Option<DataType>,
}

fn attrs_of(cx: &Cx) -> EvalResult<Attrs2d> {
    let data = layout(cx, "data_layout", "NCHW", "NCHW")?;
    let kernel = layout(cx, "kernel_layout", "IOHW", "IOHW")?;
    let out = layout(cx, "out_layout", &layout_name(cx, "data_layout", "NCHW"), "NCHW")?;
    let s = window(cx, "strides", 2, 1, 1)?;
    let d = window(cx, "dilation", 2, 1, 1)?;
    let op = window(cx, "output_padding", 2, 0, 0)?;
    let p = padding(cx, 2)?;
    let groups = cx.attr_int("groups", 1)?;
    if !(1..=I32_MAX).contains(&groups) {
        return Err(cx.error(format!("groups must be at least 1 (and at most {I32_MAX}), got {groups}")));
    }
    for i in 0..2 {
        if op[i] >= s[i] {
            return Err(cx.error(format!("output_padding {} must be less than the stride {} of its axis", op[i], s[i])));
        }
    }
    let out_dtype = cx.attr_dtype("out_dtype")?.filter(|d| !d.is_void());
    Ok(Attrs2d {
        data,
        kernel,
        out,
        strides: [s[0], s[1]],
        dilation: [d[0], d[1]],
        out_pad: [op[0], op[1]],
        pads: [p[0], p[1], p[2], p[3]],
        groups: groups as u64,
        out_dtype,
    })
}

/// The dilated kernel's length `(k - 1) * d + 1` (0 for an empty kernel).
fn dilated(k: u64, d: i64) -> i128 {
    if k == 0 {
        0
    } else {
        (k as i128 - 1) * d as i128 + 1
    }
}

/// `(x - 1) * s - (before + after) + dilated(k) + out_pad`, the output length, `None`
/// when negative or beyond u64.
pub(super) fn out_len(x: u64, k: u64, s: i64, d: i64, pads: i64, out_pad: i64) -> Option<u64> {
    let kd = if k == 0 { (1 - d) as i128 } else { dilated(k, d) };
    u64::try_from((x as i128 - 1) * s as i128 - pads as i128 + kd + out_pad as i128).ok()
}

/// The canonical dimensions of `shape` read through layout positions `pos`.
fn canon(shape: &[u64], pos: &[usize]) -> [u64; 4] {
    [shape[pos[0]], shape[pos[1]], shape[pos[2]], shape[pos[3]]]
}

fn canon_strides(shape: &[u64], pos: &[usize]) -> [usize; 4] {
    let st = strides_of(shape);
    [st[pos[0]], st[pos[1]], st[pos[2]], st[pos[3]]]
}

/// One call's geometry: canonical sizes (data `N, C, H, W`, weight `I, Og, KH, KW`,
/// output `OH, OW`) and the canonical element strides of the three tensors.
struct Geo<'a> {
    a: &'a Attrs2d,
    n: usize,
    h: usize,
    w: usize,
    ig: usize,
    og: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    xs: [usize; 4],
    ws: [usize; 4],
    os: [usize; 4],
    total: usize,
}

/// OP-nn.conv2d_transpose: data `(N, C, H, W)` in `data_layout`, weight `(I, Og, KH,
/// KW)` in `kernel_layout` (`IOHW` by default) with `C = I`, `I` a multiple of
/// `groups`; the result `(N, Og * groups, OH, OW)` in `out_layout`,
/// `OH = (H - 1)*sh - (pt + pb) + dh*(KH - 1) + oph + 1`. With `KH' = dh*(KH-1) + 1`,
/// `Ig = I / groups` and `g = o / Og`: `out[n, o, y, x] = Σ_{ci < Ig} Σ_{a = KH'-1..0}
/// Σ_{b = KW'-1..0} D[n, g*Ig + ci, y + pt - a, x + pl - b] * K[g*Ig + ci, o % Og, a, b]`
/// folded from 0 in that order (the kernel taps descending: the kernel is rotated),
/// every product and sum in the dtype, where `D[.., u, v]` is `data[.., u/sh, v/sw]`
/// when `sh` divides `u`, `sw` divides `v` and both quotients are inside the data, else
/// 0, and `K[.., a, b]` is `weight[.., a/dh, b/dw]` when `dh` divides `a` and `dw`
/// divides `b`, else 0. With `out_dtype` both operands are first converted to it
/// (OP-astype). Errors: not two tensors; layouts not permutations of `NCHW`/`IOHW`;
/// ranks other than 4; attributes out of range, an `output_padding` not below its
/// stride; different dtypes without `out_dtype`; `C != I`; `I` not a multiple of
/// `groups`; a negative output length; a conversion error.
pub(crate) fn conv2d_transpose(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let x = cx.tensor(&args[0], "the data")?;
    let wt = cx.tensor(&args[1], "the weight")?;
    let a = attrs_of(cx)?;
    let dtype = match a.out_dtype {
        Some(d) => {
            cx.storage(d)?;
            d
        }
        None if x.dtype == wt.dtype => x.dtype,
        None => return Err(cx.error(format!("operands have different dtypes {} and {}", x.dtype, wt.dtype))),
    };
    for (t, what) in [(&x, "the data"), (&wt, "the weight")] {
        if t.ndim() != 4 {
            return Err(cx.error(format!("{what} must have rank 4 (its layout's), got rank {}", t.ndim())));
        }
    }
    let [n, c, h, w] = canon(&x.shape, &a.data);
    let [i, og, kh, kw] = canon(&wt.shape, &a.kernel);
    if c != i {
        return Err(cx.error(format!("the data's channels {c} must equal the weight's input channels {i}")));
    }
    if i % a.groups != 0 {
        return Err(cx.error(format!("the input channels {i} are not a multiple of groups {}", a.groups)));
    }
    let neg = || cx.error("the padding is larger than the output: the output length is negative");
    let oh = out_len(h, kh, a.strides[0], a.dilation[0], a.pads[0] + a.pads[2], a.out_pad[0]).ok_or_else(neg)?;
    let ow = out_len(w, kw, a.strides[1], a.dilation[1], a.pads[1] + a.pads[3], a.out_pad[1]).ok_or_else(neg)?;
    let o = og.checked_mul(a.groups).ok_or_else(|| cx.error("the output channels overflow"))?;
    let canon_out = [n, o, oh, ow];
    let mut out_shape = vec![0; 4];
    for (k, &p) in a.out.iter().enumerate() {
        out_shape[p] = canon_out[k];
    }
    let total = cx.numel(&out_shape)?;
    let geo = Geo {
        a: &a,
        n: n as usize,
        h: h as usize,
        w: w as usize,
        ig: (i / a.groups) as usize,
        og: og as usize,
        kh: kh as usize,
        kw: kw as usize,
        oh: oh as usize,
        ow: ow as usize,
        xs: canon_strides(&x.shape, &a.data),
        ws: canon_strides(&wt.shape, &a.kernel),
        os: canon_strides(&out_shape, &a.out),
        total,
    };
    let (xd, wd) = (converted(cx, &x, dtype)?, converted(cx, &wt, dtype)?);
    let data = map_data2!(wrap, xd.as_ref(), wd.as_ref(), p, q => transpose_loop(&geo, p, q),
        return Err(cx.error("operands of different storage")));
    Ok(tensor_value(dtype, out_shape, data))
}

/// `q / s` when `s` divides `q` and the quotient is in `0..len`.
fn tap(q: i64, s: i64, len: usize) -> Option<usize> {
    if q < 0 || q % s != 0 {
        return None;
    }
    usize::try_from(q / s).ok().filter(|&v| v < len)
}

fn transpose_loop<T: Elem>(g: &Geo, x: &[T], w: &[T]) -> Vec<T> {
    let a = g.a;
    let mut out = vec![T::zero(); g.total];
    let (khd, kwd) = (dilated(g.kh as u64, a.dilation[0]) as i64, dilated(g.kw as u64, a.dilation[1]) as i64);
    for n in 0..g.n {
        for o in 0..g.og * a.groups as usize {
            let grp = o / g.og;
            for y in 0..g.oh {
                for xx in 0..g.ow {
                    let mut acc = T::zero();
                    for ci in 0..g.ig {
                        let c = grp * g.ig + ci;
                        for ka in (0..khd).rev() {
                            let iy = tap(y as i64 + a.pads[0] - ka, a.strides[0], g.h);
                            let ky = tap(ka, a.dilation[0], g.kh);
                            for kb in (0..kwd).rev() {
                                let ix = tap(xx as i64 + a.pads[1] - kb, a.strides[1], g.w);
                                let kx = tap(kb, a.dilation[1], g.kw);
                                let dv = match (iy, ix) {
                                    (Some(iy), Some(ix)) => x[n * g.xs[0] + c * g.xs[1] + iy * g.xs[2] + ix * g.xs[3]],
                                    _ => T::zero(),
                                };
                                let kv = match (ky, kx) {
                                    (Some(ky), Some(kx)) => {
                                        w[c * g.ws[0] + (o % g.og) * g.ws[1] + ky * g.ws[2] + kx * g.ws[3]]
                                    }
                                    _ => T::zero(),
                                };
                                acc = acc.plus(dv.times(kv));
                            }
                        }
                    }
                    out[n * g.os[0] + o * g.os[1] + y * g.os[2] + xx * g.os[3]] = acc;
                }
            }
        }
    }
    out
}

/// LIMIT-fuel: the terms of a `conv2d_transpose` call as TOPI sums them
/// (`N·O·OH·OW·Ig·KH'·KW'`, saturating), or `None` when the call is not a well-formed
/// one (its kernel reports the error).
pub(crate) fn conv2d_transpose_work(args: &[Value], attrs: &Attrs) -> Option<u64> {
    let [Value::Tensor(x), Value::Tensor(w)] = args else { return None };
    let (x, w) = (x.try_borrow().ok()?, w.try_borrow().ok()?);
    if x.shape.len() != 4 || w.shape.len() != 4 {
        return None;
    }
    let cx = Cx::new(spec_model::ops::Op::Conv2dTranspose, attrs, spec_model::Span::SYNTHETIC);
    let a = attrs_of(&cx).ok()?;
    let [n, _, h, wd] = canon(&x.shape, &a.data);
    let [i, og, kh, kw] = canon(&w.shape, &a.kernel);
    let oh = out_len(h, kh, a.strides[0], a.dilation[0], a.pads[0] + a.pads[2], a.out_pad[0])?;
    let ow = out_len(wd, kw, a.strides[1], a.dilation[1], a.pads[1] + a.pads[3], a.out_pad[1])?;
    let sat = |v: i128| u64::try_from(v).unwrap_or(u64::MAX);
    let taps = sat(dilated(kh, a.dilation[0])).saturating_mul(sat(dilated(kw, a.dilation[1])));
    // O·Ig = Og·groups·(I / groups) = Og·I.
    Some([n, og, i, oh, ow].iter().fold(taps, |acc, &v| acc.saturating_mul(v)))
}

#[cfg(test)]
mod tests {
    use crate::eval::ops::eval_op_standalone;
    use crate::eval::value::{ErrorKind, Value};
    use spec_model::grammar::{AttrValue, Attrs, DataType, NDArray, Scalar};
    use spec_model::ops::Op;
    use spec_model::Span;

    fn t(dtype: DataType, shape: &[u64], v: &[f64]) -> Value {
        let s: Vec<Scalar> =
            v.iter().map(|&x| if dtype.is_float() { Scalar::Float(x) } else { Scalar::Int(x as i128) }).collect();
        Value::tensor(NDArray::from_scalars(dtype, shape.to_vec(), &s).unwrap())
    }

    fn values(v: &Value) -> Vec<f64> {
        let Value::Tensor(r) = v else { panic!("not a tensor") };
        let r = r.borrow();
        (0..r.data.len())
            .map(|i| match r.data.get(i) {
                Scalar::Float(f) => f,
                Scalar::Int(i) => i as f64,
                Scalar::Bool(b) => b as u8 as f64,
            })
            .collect()
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

    fn run(x: Value, w: Value, a: &Attrs) -> Result<Vec<f64>, ErrorKind> {
        eval_op_standalone(Op::Conv2dTranspose, &[x, w], a, Span::SYNTHETIC).map(|v| values(&v)).map_err(|e| e.kind)
    }

    const F32: DataType = DataType::FLOAT32;

    #[test]
    fn strides_spread_the_kernel_and_padding_crops() {
        // 1-D along W: each input element stamps the kernel [1, 10] at 2 * ix.
        let x = t(F32, &[1, 1, 1, 3], &[1.0, 2.0, 3.0]);
        let w = t(F32, &[1, 1, 1, 2], &[1.0, 10.0]);
        let a = attrs(&[("strides", ints(&[1, 2]))]);
        assert_eq!(run(x.clone(), w.clone(), &a), Ok(vec![1.0, 10.0, 2.0, 20.0, 3.0, 30.0]));
        // output_padding adds a column at the end; padding [0, 1, 0, 0] drops the first.
        let a =
            attrs(&[("strides", ints(&[1, 2])), ("output_padding", ints(&[0, 1])), ("padding", ints(&[0, 1, 0, 0]))]);
        assert_eq!(run(x.clone(), w.clone(), &a), Ok(vec![10.0, 2.0, 20.0, 3.0, 30.0, 0.0]));
        // Dilation 3 puts the taps 3 apart, overlapping the next input's stamp.
        let a = attrs(&[("dilation", ints(&[1, 3]))]);
        assert_eq!(run(x, w, &a), Ok(vec![1.0, 2.0, 3.0, 10.0, 20.0, 30.0]));
    }

    #[test]
    fn inserted_zeros_meet_infinities() {
        // A stride hole (data 0) against an infinite weight, and a dilation hole
        // (kernel 0) against an infinite input: NaN, as in TOPI's zero-filled tensors.
        let x = t(F32, &[1, 1, 1, 2], &[1.0, 2.0]);
        let w = t(F32, &[1, 1, 1, 2], &[1.0, f64::INFINITY]);
        let r = run(x, w, &attrs(&[("strides", ints(&[1, 3]))])).unwrap();
        // out[0] = D[-1] * inf + D[0] * 1 = 0 * inf + 1: NaN; out[1] = 1 * inf + 0 * 1.
        assert!(r[0].is_nan() && r[1] == f64::INFINITY && r[2].is_nan(), "{r:?}");
        let x = t(F32, &[1, 1, 1, 2], &[f64::INFINITY, 2.0]);
        let w = t(F32, &[1, 1, 1, 2], &[1.0, 1.0]);
        let r = run(x, w, &attrs(&[("dilation", ints(&[1, 2]))])).unwrap();
        // out[1] sums x[1] * w[0] with the hole between the taps times x[0] = inf.
        assert!(r[0].is_infinite() && r[1].is_nan(), "{r:?}");
    }

    #[test]
    fn groups_integers_and_errors() {
        // Two groups of one channel each, two outputs per group; int32 wraps.
        let i32t = DataType::int(32);
        let x = t(i32t, &[1, 2, 1, 1], &[3.0, 5.0]);
        let w = t(i32t, &[2, 2, 1, 1], &[1.0, 2.0, 3.0, i32::MAX as f64]);
        let r = run(x.clone(), w.clone(), &attrs(&[("groups", AttrValue::Int(2))])).unwrap();
        assert_eq!(r, vec![3.0, 6.0, 15.0, (5i32.wrapping_mul(i32::MAX)) as f64]);
        let bad = [
            ("output_padding", ints(&[1, 0])),
            ("groups", AttrValue::Int(3)),
            ("kernel_layout", AttrValue::Str("OIHW4o".into())),
            ("padding", ints(&[1, 1, 1])),
        ];
        for b in bad {
            assert_eq!(run(x.clone(), w.clone(), &attrs(&[b])), Err(ErrorKind::OpError));
        }
        // Padding beyond the output: a negative length.
        assert_eq!(run(x.clone(), w.clone(), &attrs(&[("padding", AttrValue::Int(1))])), Err(ErrorKind::OpError));
        // An empty batch and an empty kernel: empty, and all zeros.
        let e = t(F32, &[0, 1, 2, 2], &[]);
        assert_eq!(run(e, t(F32, &[1, 1, 1, 1], &[2.0]), &Attrs::default()), Ok(vec![]));
        // OH = (2 - 1) + (0 - 1) + 1 = 1: one output, an empty sum.
        let r = run(t(F32, &[1, 1, 2, 2], &[1.0; 4]), t(F32, &[1, 1, 0, 0], &[]), &Attrs::default());
        assert_eq!(r, Ok(vec![0.0]));
    }

    #[test]
    fn one_pixel_and_nan_data() {
        // A 1x1 image times a 1x1 kernel with stride 3 and output_padding 2: the product,
        // then zeros.
        let x = t(F32, &[1, 1, 1, 1], &[1.5]);
        let w = t(F32, &[1, 1, 1, 1], &[-2.0]);
        let a = attrs(&[("strides", AttrValue::Int(3)), ("output_padding", ints(&[0, 2]))]);
        assert_eq!(run(x, w.clone(), &a), Ok(vec![-3.0, 0.0, 0.0]));
        // A NaN pixel reaches only the outputs its stamp covers (no zero meets an infinity).
        let x = t(F32, &[1, 1, 1, 3], &[1.0, f64::NAN, 2.0]);
        let w = t(F32, &[1, 1, 1, 2], &[1.0, 1.0]);
        let r = run(x, w, &attrs(&[("strides", ints(&[1, 2]))])).unwrap();
        assert_eq!(r.len(), 6);
        assert!(r[0] == 1.0 && r[1] == 1.0 && r[2].is_nan() && r[3].is_nan() && r[4] == 2.0 && r[5] == 2.0, "{r:?}");
    }

    #[test]
    fn huge_shapes_meet_the_budget() {
        // Stride 2^31 - 1 spreads two columns over an output row of 2^31 elements (no
        // input channels, so no work is charged: the memory budget stops it).
        let x = t(F32, &[1, 0, 1, 2], &[]);
        let w = t(F32, &[0, 1, 1, 1], &[]);
        let e = run(x, w, &attrs(&[("strides", ints(&[1, i32::MAX as i64]))]));
        assert_eq!(e, Err(ErrorKind::MemoryExhausted));
        // No input channels and a 2^32-tap kernel (no elements), the padding cropping
        // the output to 2 rows: an empty sum per element, quickly.
        let x = t(F32, &[1, 0, 1, 1], &[]);
        let w = t(F32, &[0, 1, 1 << 32, 1], &[]);
        let a = attrs(&[("padding", ints(&[i32::MAX as i64, 0, i32::MAX as i64, 0]))]);
        assert_eq!(run(x, w, &a), Ok(vec![0.0, 0.0]));
    }
}
