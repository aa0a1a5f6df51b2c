//! `nn.conv2d_transpose`: each input pixel stamps the kernel, scaled by its value,
//! onto the output at `(iy·sh − pt + ky·dh, ix·sw − pl + kx·dw)`.
//!
//! Two paths. Float32/float64 operands that are all finite and tame (G-11's condition)
//! go through a matrix product per (batch, group): `Wᵀ (Og·KH·KW × Ig) @ X (Ig × H·W)`
//! by `matrixmultiply`, whose columns are then added onto the output (col2im); this
//! reassociates the sums (F-8's tolerance). Everything else is computed per output
//! element in the spec's order — input channel ascending, kernel taps descending (the
//! kernel is rotated) — visiting only the real taps: a term whose data or weight is one
//! of TOPI's inserted zeros adds `±0`, which changes nothing, unless the other factor
//! is infinite or NaN; those terms are found separately (weights at holes of the
//! spread-out data, data under holes of the dilated kernel) and make the element NaN.
//! Planes (batch, output channel) run on the rayon pool when the output is large.

use super::common::{created, operand, read, write};
use super::conv::{dgemm, max_abs, per_axis, positions, row_major, sgemm, string_or, Gemm, BLOCK_ELEMENTS};
use super::convert::convert;
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::{to_f64, Num};
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use spec_model::grammar::Attrs;

const I32_MAX: i64 = i32::MAX as i64;

/// A call's attributes, read at lowering.
struct TAttrs {
    data: Vec<usize>,
    kernel: Vec<usize>,
    out: Vec<usize>,
    stride: [i64; 2],
    dil: [i64; 2],
    opad: [i64; 2],
    /// Pads before (top, left) and their sums with the pads after.
    before: [i64; 2],
    total_pad: [i64; 2],
    groups: u64,
    out_dtype: Option<DType>,
}

fn read_attrs(a: &Attrs) -> std::result::Result<TAttrs, String> {
    let data = positions(a, "data_layout", "NCHW", "NCHW")?;
    let kernel = positions(a, "kernel_layout", "IOHW", "IOHW")?;
    let out = positions(a, "out_layout", &string_or(a, "data_layout", "NCHW"), "NCHW")?;
    let s = per_axis(a, "strides", 2, 1, 1)?;
    let d = per_axis(a, "dilation", 2, 1, 1)?;
    let op = per_axis(a, "output_padding", 2, 0, 0)?;
    let p = super::conv::pads(a, 2)?;
    let groups = attrs::opt_int(a, "groups")?.unwrap_or(1);
    if !(1..=I32_MAX).contains(&groups) {
        return Err(format!("groups must be at least 1 (and at most {I32_MAX}), got {groups}"));
    }
    if op[0] >= s[0] || op[1] >= s[1] {
        return Err(format!("output_padding {op:?} must be less than the strides {s:?}, axis by axis"));
    }
    let out_dtype = match attrs::dtype(a, "out_dtype")?.filter(|d| !d.is_void()) {
        None => None,
        Some(d) => Some(DType::of(d).ok_or_else(|| format!("dtype {d} has no tensor storage"))?),
    };
    Ok(TAttrs {
        data,
        kernel,
        out,
        stride: [s[0], s[1]],
        dil: [d[0], d[1]],
        opad: [op[0], op[1]],
        before: [p[0], p[1]],
        total_pad: [p[0] + p[2], p[1] + p[3]],
        groups: groups as u64,
        out_dtype,
    })
}

/// OP-nn.conv2d_transpose (the oracle's semantics: TOPI's sum over the spread-out,
/// padded data and the dilated, rotated kernel, zeros included). Errors (`OpError`)
/// as the oracle's.
pub fn conv2d_transpose(l: &Lowering) -> Box<dyn Kernel> {
    match read_attrs(l.attrs) {
        Ok(a) => Box::new(ConvT(a)),
        Err(m) => Box::new(Failing(m)),
    }
}

struct ConvT(TAttrs);

/// One call's shapes in canonical order and each tensor's canonical strides.
#[derive(Clone, Copy)]
struct Geo {
    n: usize,
    h: usize,
    w: usize,
    ig: usize,
    og: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    groups: usize,
    xs: [usize; 4],
    ws: [usize; 4],
    os: [usize; 4],
}

fn canonical(shape: &[u64], pos: &[usize]) -> ([u64; 4], [usize; 4]) {
    let st = row_major(shape);
    ([shape[pos[0]], shape[pos[1]], shape[pos[2]], shape[pos[3]]], [st[pos[0]], st[pos[1]], st[pos[2]], st[pos[3]]])
}

/// `(len − 1)·s − pads + (k − 1)·d + 1 + opad`, or `None` when negative.
fn out_length(len: u64, k: u64, s: i64, d: i64, pads: i64, opad: i64) -> Option<u64> {
    let v = (len as i128 - 1) * s as i128 - pads as i128 + (k as i128 - 1) * d as i128 + 1 + opad as i128;
    u64::try_from(v).ok()
}

/// The extent of the dilated kernel, `(k − 1)·d + 1` (0 for no taps).
fn spread(k: u64, d: i64) -> u64 {
    if k == 0 {
        0
    } else {
        u64::try_from((k as i128 - 1) * d as i128 + 1).unwrap_or(u64::MAX)
    }
}

impl ConvT {
    fn plan(&self, cx: &KernelCx, xs: &[u64], wsh: &[u64]) -> Result<(Vec<u64>, Geo)> {
        let a = &self.0;
        if xs.len() != 4 || wsh.len() != 4 {
            return Err(cx.error(format!(
                "the data and the weight must have rank 4, got {} and {}",
                xs.len(),
                wsh.len()
            )));
        }
        let ([n, c, h, w], xst) = canonical(xs, &a.data);
        let ([i, og, kh, kw], wst) = canonical(wsh, &a.kernel);
        if c != i || i % a.groups != 0 {
            return Err(cx.error(format!("channels do not match: data {c}, weight in {i}, groups {}", a.groups)));
        }
        let bad = || cx.error("the padding is larger than the output: an output length is negative");
        let oh = out_length(h, kh, a.stride[0], a.dil[0], a.total_pad[0], a.opad[0]).ok_or_else(bad)?;
        let ow = out_length(w, kw, a.stride[1], a.dil[1], a.total_pad[1], a.opad[1]).ok_or_else(bad)?;
        let o = og.checked_mul(a.groups).ok_or_else(|| cx.error("the output channels overflow"))?;
        let canon_out = [n, o, oh, ow];
        let mut out_shape = vec![0u64; 4];
        for (k, &p) in a.out.iter().enumerate() {
            out_shape[p] = canon_out[k];
        }
        created(cx, &out_shape)?;
        let (_, ost) = canonical(&out_shape, &a.out);
        let geo = Geo {
            n: n as usize,
            h: h as usize,
            w: w as usize,
            ig: (i / a.groups) as usize,
            og: og as usize,
            kh: kh as usize,
            kw: kw as usize,
            oh: oh as usize,
            ow: ow as usize,
            groups: a.groups as usize,
            xs: xst,
            ws: wst,
            os: ost,
        };
        Ok((out_shape, geo))
    }
}

impl Kernel for ConvT {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let x = operand(cx, args, 0, "the data")?;
        let w = operand(cx, args, 1, "the weight")?;
        let dtype = match self.0.out_dtype {
            Some(d) => d,
            None if x.dtype() == w.dtype() => x.dtype(),
            None => return Err(cx.error(format!("operands have different dtypes {} and {}", x.dtype(), w.dtype()))),
        };
        let (out_shape, geo) = self.plan(cx, x.shape(), w.shape())?;
        let xc = if x.dtype() != dtype { Some(convert(cx, x, "the data", dtype)?) } else { None };
        let wc = if w.dtype() != dtype { Some(convert(cx, w, "the weight", dtype)?) } else { None };
        let (x, w) = (xc.as_ref().unwrap_or(x), wc.as_ref().unwrap_or(w));
        match dtype {
            DType::F32 => self.typed::<f32>(cx, x, w, dtype, &out_shape, &geo, Some(sgemm)),
            DType::F64 => self.typed::<f64>(cx, x, w, dtype, &out_shape, &geo, Some(dgemm)),
            _ => with_num!(dtype, T => self.typed::<T>(cx, x, w, dtype, &out_shape, &geo, None)),
        }
    }

    /// LIMIT-fuel: the terms TOPI's sum has, `N·Og·groups·OH·OW·Ig·KH'·KW'` (as the oracle).
    fn work(&self, args: &[Value]) -> Option<u64> {
        let [Value::Tensor(x), Value::Tensor(w)] = args else { return None };
        if x.rank() != 4 || w.rank() != 4 {
            return None;
        }
        let a = &self.0;
        let ([n, _, h, wd], _) = canonical(x.shape(), &a.data);
        let ([i, og, kh, kw], _) = canonical(w.shape(), &a.kernel);
        let oh = out_length(h, kh, a.stride[0], a.dil[0], a.total_pad[0], a.opad[0])?;
        let ow = out_length(wd, kw, a.stride[1], a.dil[1], a.total_pad[1], a.opad[1])?;
        let taps = spread(kh, a.dil[0]).saturating_mul(spread(kw, a.dil[1]));
        Some([n, og, i, oh, ow].iter().fold(taps, |t, &v| t.saturating_mul(v)))
    }
}

/// Along one axis, for each output position, the kernel taps from the last to the
/// first with the input position each one meets (`None`: a hole or the padding).
fn axis_taps(out: usize, k: usize, len: usize, s: i64, d: i64, before: i64) -> Vec<Vec<(usize, Option<usize>)>> {
    (0..out)
        .map(|y| {
            (0..k)
                .rev()
                .map(|t| {
                    let u = y as i64 + before - t as i64 * d;
                    let at = (u >= 0 && u % s == 0).then(|| (u / s) as usize).filter(|&v| v < len);
                    (t, at)
                })
                .collect()
        })
        .collect()
}

/// Along one axis, for each output position, the input positions that fall on a hole
/// of the dilated kernel (inside its extent, between two taps).
fn hole_taps(out: usize, len: usize, s: i64, d: i64, before: i64, extent: u64) -> Vec<Vec<(usize, bool)>> {
    (0..out)
        .map(|y| {
            (0..len)
                .filter_map(|iy| {
                    let a = y as i64 + before - iy as i64 * s;
                    (a >= 0 && (a as u64) < extent).then_some((iy, a % d != 0))
                })
                .collect()
        })
        .collect()
}

impl ConvT {
    #[allow(clippy::too_many_arguments)]
    fn typed<T: Num + Send + Sync>(
        &self,
        cx: &KernelCx,
        x: &Tensor,
        w: &Tensor,
        dtype: DType,
        out_shape: &[u64],
        g: &Geo,
        fast: Option<Gemm<T>>,
    ) -> Result<Value> {
        let out = cx.alloc(dtype, out_shape)?;
        if out.numel() == 0 || g.ig == 0 {
            // No terms (no input channels): zeros, without planning the kernel's taps,
            // which an empty weight may have 2^32 of.
            return Ok(Value::tensor(out));
        }
        let (xv, wv) = (read::<T>(cx, x, "the data")?, read::<T>(cx, w, "the weight")?);
        let k = g.ig * g.kh * g.kw;
        let gemm = match (fast, max_abs(&xv), max_abs(&wv)) {
            (Some(f), Some(mx), Some(mw)) if k > 0 => {
                let largest = if dtype == DType::F32 { f32::MAX as f64 } else { f64::MAX };
                (mx * mw * k as f64 <= largest / 2.0).then_some(f)
            }
            _ => None,
        };
        let planes: Vec<Vec<T>> = match gemm {
            Some(f) => self.by_gemm(cx, &xv, &wv, g, f),
            None => self.in_order(cx, &xv, &wv, g),
        };
        let mut o = write::<T>(cx, &out)?;
        for (p, plane) in planes.iter().enumerate() {
            let (n, oc) = (p / (g.og * g.groups), p % (g.og * g.groups));
            let base = n * g.os[0] + oc * g.os[1];
            for (y, row) in plane.chunks_exact(g.ow).enumerate() {
                for (xx, &v) in row.iter().enumerate() {
                    o[base + y * g.os[2] + xx * g.os[3]] = v;
                }
            }
        }
        drop(o);
        Ok(Value::tensor(out))
    }

    /// Runs `f` over `items`, on the pool when the output is large.
    fn map<I: Sync, R: Send>(
        &self,
        cx: &KernelCx,
        total: usize,
        items: &[I],
        f: impl Fn(&I) -> R + Sync + Send,
    ) -> Vec<R> {
        let threads = cx.threads_for(total).min(items.len());
        match (threads > 1).then(|| super::simd::pool(threads)).flatten() {
            Some(pool) => {
                use rayon::prelude::*;
                crate::stats::record(crate::stats::Counter::Threaded);
                pool.install(|| items.par_iter().map(f).collect())
            }
            None => items.iter().map(f).collect(),
        }
    }

    /// The spec's order, one output plane (batch, output channel) at a time.
    fn in_order<T: Num + Send + Sync>(&self, cx: &KernelCx, xv: &[T], wv: &[T], g: &Geo) -> Vec<Vec<T>> {
        let a = &self.0;
        let rows = axis_taps(g.oh, g.kh, g.h, a.stride[0], a.dil[0], a.before[0]);
        let cols = axis_taps(g.ow, g.kw, g.w, a.stride[1], a.dil[1], a.before[1]);
        // Data under holes of the dilated kernel matter only when not finite.
        let wild_data = xv.iter().any(|&v| !to_f64(v).is_finite());
        let (hole_rows, hole_cols) = if wild_data {
            (
                hole_taps(g.oh, g.h, a.stride[0], a.dil[0], a.before[0], spread(g.kh as u64, a.dil[0])),
                hole_taps(g.ow, g.w, a.stride[1], a.dil[1], a.before[1], spread(g.kw as u64, a.dil[1])),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let planes: Vec<(usize, usize)> = (0..g.n).flat_map(|n| (0..g.og * g.groups).map(move |oc| (n, oc))).collect();
        let plane = |&(n, oc): &(usize, usize)| -> Vec<T> {
            let grp = oc / g.og;
            let wo = (oc % g.og) * g.ws[1];
            let mut out = vec![T::ZERO; g.oh * g.ow];
            for (y, row) in out.chunks_exact_mut(g.ow).enumerate() {
                for (xx, slot) in row.iter_mut().enumerate() {
                    let mut acc = T::ZERO;
                    for ci in 0..g.ig {
                        let c = grp * g.ig + ci;
                        let (xb, wb) = (n * g.xs[0] + c * g.xs[1], c * g.ws[0] + wo);
                        for &(ky, iy) in &rows[y] {
                            for &(kx, ix) in &cols[xx] {
                                let wval = wv[wb + ky * g.ws[2] + kx * g.ws[3]];
                                match (iy, ix) {
                                    (Some(iy), Some(ix)) => {
                                        acc = acc.add(xv[xb + iy * g.xs[2] + ix * g.xs[3]].mul(wval));
                                    }
                                    _ if !to_f64(wval).is_finite() => acc = acc.add(T::ZERO.mul(wval)),
                                    _ => {}
                                }
                            }
                        }
                        if wild_data {
                            for &(iy, row_hole) in &hole_rows[y] {
                                for &(ix, col_hole) in &hole_cols[xx] {
                                    let v = xv[xb + iy * g.xs[2] + ix * g.xs[3]];
                                    if (row_hole || col_hole) && !to_f64(v).is_finite() {
                                        acc = acc.add(v.mul(T::ZERO));
                                    }
                                }
                            }
                        }
                    }
                    *slot = acc;
                }
            }
            out
        };
        self.map(cx, g.n * g.og * g.groups * g.oh * g.ow, &planes, plane)
    }

    /// Per (batch, group): `Wᵀ @ X` by blocks of input positions, each column added
    /// onto the output at its kernel offsets.
    fn by_gemm<T: Num + Send + Sync>(&self, cx: &KernelCx, xv: &[T], wv: &[T], g: &Geo, gemm: Gemm<T>) -> Vec<Vec<T>> {
        let a = &self.0;
        let m = g.og * g.kh * g.kw;
        let positions = g.h * g.w;
        // The group weights as `m × Ig` matrices, rows in (oc, ky, kx) order.
        let weights: Vec<Vec<T>> = (0..g.groups)
            .map(|grp| {
                let mut wm = Vec::with_capacity(m * g.ig);
                for oc in 0..g.og {
                    for ky in 0..g.kh {
                        for kx in 0..g.kw {
                            for ci in 0..g.ig {
                                let c = grp * g.ig + ci;
                                wm.push(wv[c * g.ws[0] + oc * g.ws[1] + ky * g.ws[2] + kx * g.ws[3]]);
                            }
                        }
                    }
                }
                wm
            })
            .collect();
        let blocks: Vec<(usize, usize)> = (0..g.n).flat_map(|n| (0..g.groups).map(move |grp| (n, grp))).collect();
        let block = |&(n, grp): &(usize, usize)| -> Vec<Vec<T>> {
            let mut planes = vec![vec![T::ZERO; g.oh * g.ow]; g.og];
            let cols_per = (BLOCK_ELEMENTS / m.max(g.ig).max(1)).max(1);
            let mut p0 = 0;
            while p0 < positions {
                let p1 = (p0 + cols_per).min(positions);
                let pn = p1 - p0;
                let mut xm = vec![T::ZERO; g.ig * pn];
                for ci in 0..g.ig {
                    let plane = n * g.xs[0] + (grp * g.ig + ci) * g.xs[1];
                    for (slot, p) in xm[ci * pn..(ci + 1) * pn].iter_mut().zip(p0..p1) {
                        *slot = xv[plane + (p / g.w) * g.xs[2] + (p % g.w) * g.xs[3]];
                    }
                }
                let mut cm = vec![T::ZERO; m * pn];
                gemm(&weights[grp], &xm, &mut cm, m, g.ig, pn);
                for (r, crow) in cm.chunks_exact(pn).enumerate() {
                    let (oc, ky, kx) = (r / (g.kh * g.kw), (r / g.kw) % g.kh, r % g.kw);
                    let out = &mut planes[oc];
                    for (j, &v) in crow.iter().enumerate() {
                        let (iy, ix) = ((p0 + j) / g.w, (p0 + j) % g.w);
                        let oy = iy as i64 * a.stride[0] - a.before[0] + ky as i64 * a.dil[0];
                        let ox = ix as i64 * a.stride[1] - a.before[1] + kx as i64 * a.dil[1];
                        if oy >= 0 && (oy as usize) < g.oh && ox >= 0 && (ox as usize) < g.ow {
                            let at = oy as usize * g.ow + ox as usize;
                            out[at] = out[at].add(v);
                        }
                    }
                }
                p0 = p1;
            }
            planes
        };
        let per_block = self.map(cx, g.n * g.og * g.groups * g.oh * g.ow, &blocks, block);
        per_block.into_iter().flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::run_standalone;
    use crate::{DType, Memory, Tensor, Value};
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;

    fn run(attrs: &Attrs, dt: DType, x: (&[u64], &[f32]), w: (&[u64], &[f32])) -> crate::error::Result<Vec<f64>> {
        let mem = Memory::new(1 << 24);
        let make = |s: &[u64], v: &[f32]| match dt {
            DType::I32 => Tensor::from_slice(dt, s, &v.iter().map(|&x| x as i32).collect::<Vec<_>>(), &mem),
            _ => Tensor::from_slice(dt, s, v, &mem),
        };
        let vals: Vec<Value> = [x, w].iter().map(|(s, v)| Value::tensor(make(s, v).unwrap())).collect();
        let Value::Tensor(r) = run_standalone(Op::Conv2dTranspose, attrs, &vals, &mem).unwrap()? else {
            panic!("not a tensor")
        };
        Ok((0..r.numel()).map(|i| r.get_f64(i).unwrap()).collect())
    }

    fn ints(xs: &[i64]) -> AttrValue {
        AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
    }

    #[test]
    fn stamps_and_layouts() {
        // Along W with stride 2 and output_padding 1: [1, 10, 2, 20, 3, 30, 0].
        let mut a = Attrs::default();
        a.insert("strides", ints(&[1, 2]));
        a.insert("output_padding", ints(&[0, 1]));
        let x: (&[u64], &[f32]) = (&[1, 1, 1, 3], &[1., 2., 3.]);
        let w: (&[u64], &[f32]) = (&[1, 1, 1, 2], &[1., 10.]);
        let want = vec![1., 10., 2., 20., 3., 30., 0.];
        assert_eq!(run(&a, DType::F32, x, w).unwrap(), want);
        // The same in int32 (the in-order path) and with NHWC data and an HWOI kernel.
        assert_eq!(run(&a, DType::I32, x, w).unwrap(), want);
        a.insert("data_layout", AttrValue::Str("NHWC".into()));
        a.insert("kernel_layout", AttrValue::Str("HWOI".into()));
        assert_eq!(run(&a, DType::F32, (&[1, 1, 3, 1], &[1., 2., 3.]), (&[1, 2, 1, 1], &[1., 10.])).unwrap(), want);
    }

    #[test]
    fn non_finite_values_take_the_ordered_path() {
        // A dilation hole under an infinite input: NaN at out[1]; inf at out[0].
        let mut a = Attrs::default();
        a.insert("dilation", ints(&[1, 2]));
        let r = run(&a, DType::F32, (&[1, 1, 1, 2], &[f32::INFINITY, 2.]), (&[1, 1, 1, 2], &[1., 1.])).unwrap();
        assert!(r[0].is_infinite() && r[1].is_nan() && r[2].is_infinite(), "{r:?}");
        // A stride hole against an infinite weight.
        let mut s = Attrs::default();
        s.insert("strides", ints(&[1, 3]));
        let r = run(&s, DType::F32, (&[1, 1, 1, 2], &[1., 2.]), (&[1, 1, 1, 2], &[1., f32::INFINITY])).unwrap();
        assert!(r[0].is_nan() && r[1] == f64::INFINITY && r[2].is_nan(), "{r:?}");
    }

    #[test]
    fn errors_and_empty_results() {
        let x: (&[u64], &[f32]) = (&[1, 2, 1, 1], &[1., 2.]);
        let w: (&[u64], &[f32]) = (&[2, 1, 1, 1], &[1., 1.]);
        for (k, v) in
            [("groups", AttrValue::Int(3)), ("output_padding", AttrValue::Int(1)), ("padding", AttrValue::Int(1))]
        {
            let mut a = Attrs::default();
            a.insert(k, v);
            let e = run(&a, DType::F32, x, w).unwrap_err();
            assert_eq!((e.kind, e.rule), (crate::ErrorKind::OpError, "OP-nn.conv2d_transpose"));
        }
        assert_eq!(run(&Attrs::default(), DType::F32, (&[0, 2, 1, 1], &[]), w).unwrap(), vec![]);
    }

    #[test]
    fn one_pixel_and_nan_data() {
        // A 1x1 image, a 1x1 kernel, stride 3 and output_padding 2 along W.
        let mut a = Attrs::default();
        a.insert("strides", AttrValue::Int(3));
        a.insert("output_padding", ints(&[0, 2]));
        assert_eq!(run(&a, DType::F32, (&[1, 1, 1, 1], &[1.5]), (&[1, 1, 1, 1], &[-2.])).unwrap(), vec![-3., 0., 0.]);
        // A NaN pixel reaches only the outputs its stamp covers.
        let mut s = Attrs::default();
        s.insert("strides", ints(&[1, 2]));
        let r = run(&s, DType::F32, (&[1, 1, 1, 3], &[1., f32::NAN, 2.]), (&[1, 1, 1, 2], &[1., 1.])).unwrap();
        assert_eq!(r.len(), 6);
        assert!(r[0] == 1. && r[1] == 1. && r[2].is_nan() && r[3].is_nan() && r[4] == 2. && r[5] == 2., "{r:?}");
    }

    #[test]
    fn huge_shapes_meet_the_budget() {
        // Stride 2^31 - 1: an output row of 2^31 elements.
        let mut a = Attrs::default();
        a.insert("strides", ints(&[1, i32::MAX as i64]));
        let e = run(&a, DType::F32, (&[1, 1, 1, 2], &[1., 2.]), (&[1, 1, 1, 1], &[1.])).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::MemoryExhausted);
        // No input channels and a 2^32-tap kernel without elements, cropped to 2 rows:
        // zeros, without planning the kernel's taps.
        let mut p = Attrs::default();
        p.insert("padding", ints(&[i32::MAX as i64, 0, i32::MAX as i64, 0]));
        let r = run(&p, DType::F32, (&[1, 0, 1, 1], &[]), (&[0, 1, 1 << 32, 1], &[])).unwrap();
        assert_eq!(r, vec![0., 0.]);
    }
}
