//! `nn.pad`, `nn.conv1d`, `nn.conv2d`.
//!
//! A convolution is lowered per (batch, group, block of output positions) to a matrix
//! product: the weight of the group as an `Og × K` matrix (`K = I·KH·KW`, in
//! `(ci, ky, kx)` order) times the im2col matrix `K × P` of the input patches (zeros
//! where a patch leaves the input). Floats go through `matrixmultiply` when the
//! product is tame (F-8's tolerance admits the reassociation, G-11); everything else
//! folds each output's terms in `k` order, the spec's order, bit for bit. Blocks run on
//! the rayon pool when the output is large.

use super::common::{created, operand, read, write};
use super::convert::convert;
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::Num;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use spec_model::grammar::{AttrValue, Attrs};

const I32_MAX: i64 = i32::MAX as i64;
/// The most im2col elements one block holds.
pub(super) const BLOCK_ELEMENTS: usize = 1 << 20;

/// The canonical letters' positions in a layout attribute (a permutation of them).
pub(super) fn positions(
    a: &Attrs,
    name: &str,
    default: &str,
    canonical: &str,
) -> std::result::Result<Vec<usize>, String> {
    let l = match a.get(name).filter(|v| !matches!(v, AttrValue::None)) {
        None => default.to_string(),
        Some(AttrValue::Str(s)) => s.clone(),
        Some(_) => return Err(format!("attribute `{name}` must be a string")),
    };
    let bad = || format!("{name} \"{l}\" is not supported: it must be a permutation of the letters of \"{canonical}\"");
    if l.len() != canonical.len() {
        return Err(bad());
    }
    let mut out: Vec<usize> = Vec::with_capacity(4);
    for ch in canonical.chars() {
        match l.find(ch) {
            Some(p) if !out.contains(&p) => out.push(p),
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

/// A string attribute's value, or `default`.
pub(super) fn string_or(a: &Attrs, name: &str, default: &str) -> String {
    match a.get(name) {
        Some(AttrValue::Str(s)) => s.clone(),
        _ => default.to_string(),
    }
}

/// `n` values of a window attribute (one value stands for all), each in `lo..=2^31-1`.
pub(super) fn per_axis(
    a: &Attrs,
    name: &str,
    n: usize,
    default: i64,
    lo: i64,
) -> std::result::Result<Vec<i64>, String> {
    let v = attrs::ints(a, name)?.unwrap_or_else(|| vec![default]);
    let v = if v.len() == 1 {
        vec![v[0]; n]
    } else if v.len() == n {
        v
    } else {
        return Err(format!("{name} must have 1 or {n} values, got {}", v.len()));
    };
    for &x in &v {
        if x < lo || x > I32_MAX {
            return Err(format!("{name} value {x} is out of range ({lo} to {I32_MAX})"));
        }
    }
    Ok(v)
}

/// `padding` for `spatial` axes as (before.., after..).
pub(super) fn pads(a: &Attrs, spatial: usize) -> std::result::Result<Vec<i64>, String> {
    let p = attrs::ints(a, "padding")?.unwrap_or_else(|| vec![0]);
    let full = match p.len() {
        1 => vec![p[0]; 2 * spatial],
        2 if spatial == 2 => vec![p[0], p[1], p[0], p[1]],
        k if k == 2 * spatial => p,
        k => return Err(format!("padding must have 1, 2 or 4 values, got {k}")),
    };
    for &x in &full {
        if !(0..=I32_MAX).contains(&x) {
            return Err(format!("padding value {x} is out of range (0 to {I32_MAX})"));
        }
    }
    Ok(full)
}

/// A window's output length, `floor((len + pads - dil·(k-1) - 1) / stride) + 1`, or
/// `None` when negative.
pub(super) fn window_len(len: u64, pads: i64, dil: i64, k: u64, stride: i64) -> Option<u64> {
    let top = len as i128 + pads as i128 - 1 - dil as i128 * (k as i128 - 1);
    let q = top.div_euclid(stride as i128) + 1;
    if q < 0 {
        None
    } else {
        u64::try_from(q).ok()
    }
}

/// Row-major element strides.
pub(super) fn row_major(shape: &[u64]) -> Vec<usize> {
    let mut st = vec![0usize; shape.len()];
    let mut acc = 1usize;
    for i in (0..shape.len()).rev() {
        st[i] = acc;
        acc = acc.saturating_mul(shape[i] as usize);
    }
    st
}

/// OP-nn.pad (the oracle's semantics): constant `pad_value` (converted as OP-astype),
/// or `reflect` / `replicate` / `circular`. Errors (`OpError`): not one tensor;
/// `pad_width` missing, ill-kinded, not two per axis, negative or over 2^31-1; an
/// unknown mode; an axis too short for its mode; a pad value that does not convert.
pub fn pad(l: &Lowering) -> Box<dyn Kernel> {
    let widths = match attrs::ints(l.attrs, "pad_width") {
        Ok(Some(w)) => w,
        Ok(None) => return Box::new(Failing("needs the attribute `pad_width`".into())),
        Err(m) => return Box::new(Failing(m)),
    };
    if let Some(bad) = widths.iter().find(|&&w| !(0..=I32_MAX).contains(&w)) {
        return Box::new(Failing(format!("pad_width value {bad} is out of range (0 to {I32_MAX})")));
    }
    let mode = match l.attrs.get("pad_mode").filter(|v| !matches!(v, AttrValue::None)) {
        None => Mode::Constant,
        Some(AttrValue::Str(s)) => match s.as_str() {
            "constant" => Mode::Constant,
            "reflect" => Mode::Reflect,
            "replicate" => Mode::Replicate,
            "circular" => Mode::Circular,
            _ => return Box::new(Failing(format!("pad_mode \"{s}\" is not a known mode"))),
        },
        Some(_) => return Box::new(Failing("attribute `pad_mode` must be a string".into())),
    };
    match attrs::float(l.attrs, "pad_value", 0.0) {
        Ok(value) => Box::new(Pad { widths: widths.iter().map(|&w| w as u64).collect(), mode, value }),
        Err(m) => Box::new(Failing(m)),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Constant,
    Reflect,
    Replicate,
    Circular,
}

struct Pad {
    widths: Vec<u64>,
    mode: Mode,
    value: f64,
}

impl Kernel for Pad {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the data")?;
        let shape = x.shape();
        if self.widths.len() != 2 * shape.len() {
            return Err(cx.error(format!("pad_width must have 2 values per axis, got {}", self.widths.len())));
        }
        with_num!(x.dtype(), T => {
            let fill = if self.mode == Mode::Constant {
                <T as Num>::from_f64(self.value).ok_or_else(|| cx.error(format!("{} is out of the range of {}", self.value, x.dtype())))?
            } else {
                T::ZERO
            };
            self.run_typed::<T>(cx, x, fill)
        })
    }
}

impl Pad {
    /// An `OpError` when axis `axis` (of length `d`) is too short for the mode.
    fn check_axis(&self, cx: &KernelCx, axis: usize, d: u64) -> Result<()> {
        let (b, a) = (self.widths[2 * axis], self.widths[2 * axis + 1]);
        let fits = b == 0 && a == 0
            || match self.mode {
                Mode::Constant => true,
                Mode::Reflect => b < d && a < d,
                Mode::Replicate => d > 0,
                Mode::Circular => d > 0 && b <= d && a <= d,
            };
        if !fits {
            return Err(
                cx.error(format!("axis {axis} of length {d} is too short for {:?} padding ({b}, {a})", self.mode))
            );
        }
        Ok(())
    }

    /// For each output index along an axis of length `d`, its source index (`None`: the fill).
    fn axis_map(&self, axis: usize, d: u64) -> Vec<Option<usize>> {
        let (b, a) = (self.widths[2 * axis], self.widths[2 * axis + 1]);
        let (d, b) = (d as i64, b as i64);
        let len = d + b + a as i64;
        (0..len)
            .map(|o| {
                let j = o - b;
                let k = match self.mode {
                    _ if (0..d).contains(&j) => j,
                    Mode::Constant => return None,
                    Mode::Reflect => {
                        if j < 0 {
                            -j
                        } else {
                            2 * d - 2 - j
                        }
                    }
                    Mode::Replicate => j.max(0).min(d - 1),
                    Mode::Circular => ((j % d) + d) % d,
                };
                Some(k as usize)
            })
            .collect()
    }

    fn run_typed<T: Num>(&self, cx: &KernelCx, x: &Tensor, fill: T) -> Result<Value> {
        let shape = x.shape().to_vec();
        let mut out_shape = Vec::with_capacity(shape.len());
        for (i, &d) in shape.iter().enumerate() {
            let w = self.widths[2 * i] + self.widths[2 * i + 1];
            out_shape.push(d.checked_add(w).ok_or_else(|| cx.error("the padded shape overflows"))?);
        }
        let total = created(cx, &out_shape)?;
        // Every axis is checked (its mode needs input there), even for an empty result.
        for (i, &d) in shape.iter().enumerate() {
            self.check_axis(cx, i, d)?;
        }
        let out = cx.alloc_for_overwrite(x.dtype(), &out_shape)?;
        if total == 0 {
            return Ok(Value::tensor(out));
        }
        let maps: Vec<Vec<Option<usize>>> = shape.iter().enumerate().map(|(i, &d)| self.axis_map(i, d)).collect();
        let src = read::<T>(cx, x, "the data")?;
        let mut dst = write::<T>(cx, &out)?;
        let r = shape.len();
        if r == 0 {
            dst[0] = src[0];
            drop(dst);
            return Ok(Value::tensor(out));
        }
        let ist = row_major(&shape);
        let last = &maps[r - 1];
        let row = last.len();
        // The odometer over the leading axes; each output row is one pass over `last`.
        let mut idx = vec![0usize; r - 1];
        for out_row in dst.chunks_exact_mut(row) {
            let mut base = Some(0usize);
            for (k, &o) in idx.iter().enumerate() {
                base = match (base, maps[k][o]) {
                    (Some(b), Some(s)) => Some(b + s * ist[k]),
                    _ => None,
                };
            }
            match base {
                None => out_row.fill(fill),
                Some(b) => {
                    for (slot, m) in out_row.iter_mut().zip(last) {
                        *slot = match m {
                            Some(s) => src[b + s],
                            None => fill,
                        };
                    }
                }
            }
            for k in (0..r - 1).rev() {
                idx[k] += 1;
                if idx[k] < maps[k].len() {
                    break;
                }
                idx[k] = 0;
            }
        }
        drop(dst);
        Ok(Value::tensor(out))
    }
}

/// A convolution's attributes, read at lowering.
struct ConvAttrs {
    spatial: usize,
    data: Vec<usize>,
    kernel: Vec<usize>,
    out: Vec<usize>,
    strides: Vec<i64>,
    dilation: Vec<i64>,
    pads: Vec<i64>,
    groups: u64,
    out_dtype: Option<DType>,
}

fn conv_attrs(a: &Attrs, spatial: usize) -> std::result::Result<ConvAttrs, String> {
    let (dl, kl) = if spatial == 1 { ("NCW", "OIW") } else { ("NCHW", "OIHW") };
    let data = positions(a, "data_layout", dl, dl)?;
    let kernel = positions(a, "kernel_layout", kl, kl)?;
    let out = positions(a, "out_layout", &string_or(a, "data_layout", dl), dl)?;
    let strides = per_axis(a, "strides", spatial, 1, 1)?;
    let dilation = per_axis(a, "dilation", spatial, 1, 1)?;
    let pads = pads(a, spatial)?;
    let groups = attrs::opt_int(a, "groups")?.unwrap_or(1);
    if !(1..=I32_MAX).contains(&groups) {
        return Err(format!("groups must be at least 1 (and at most {I32_MAX}), got {groups}"));
    }
    let out_dtype = match attrs::dtype(a, "out_dtype")?.filter(|d| !d.is_void()) {
        None => None,
        Some(d) => Some(DType::of(d).ok_or_else(|| format!("dtype {d} has no tensor storage"))?),
    };
    Ok(ConvAttrs { spatial, data, kernel, out, strides, dilation, pads, groups: groups as u64, out_dtype })
}

/// OP-nn.conv1d, OP-nn.conv2d (the oracle's semantics: each output the sum over
/// `(ci, ky, kx)` of input times weight, zeros outside the input). Errors (`OpError`) as
/// the oracle's.
pub fn conv(l: &Lowering, spatial: usize) -> Box<dyn Kernel> {
    match conv_attrs(l.attrs, spatial) {
        Ok(a) => Box::new(Conv(a)),
        Err(m) => Box::new(Failing(m)),
    }
}

struct Conv(ConvAttrs);

/// One call's geometry in canonical order, with each tensor's canonical strides.
#[derive(Clone, Copy)]
struct Geo {
    n: usize,
    o: usize,
    i: usize,
    h: usize,
    w: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    groups: usize,
    /// (stride, dilation, pad before) for H and W.
    win: [(i64, i64, i64); 2],
    xs: [usize; 4],
    ws: [usize; 4],
    os: [usize; 4],
}

/// Canonical dimensions and strides of `shape` in layout `pos`; 1-D gets `H = 1`
/// (stride 0) at index 2.
fn canon(shape: &[u64], pos: &[usize]) -> ([u64; 4], [usize; 4]) {
    let st = row_major(shape);
    if pos.len() == 3 {
        ([shape[pos[0]], shape[pos[1]], 1, shape[pos[2]]], [st[pos[0]], st[pos[1]], 0, st[pos[2]]])
    } else {
        let d = [shape[pos[0]], shape[pos[1]], shape[pos[2]], shape[pos[3]]];
        (d, [st[pos[0]], st[pos[1]], st[pos[2]], st[pos[3]]])
    }
}

impl Conv {
    /// The output shape (in the out layout) and the geometry; `OpError`s of the shapes.
    fn plan(&self, cx: &KernelCx, xs: &[u64], wsh: &[u64]) -> Result<(Vec<u64>, Geo)> {
        let a = &self.0;
        let rank = a.spatial + 2;
        if xs.len() != rank || wsh.len() != rank {
            return Err(cx.error(format!(
                "the data and the weight must have rank {rank}, got {} and {}",
                xs.len(),
                wsh.len()
            )));
        }
        let ([n, c, h, w], xst) = canon(xs, &a.data);
        let ([o, i, kh, kw], wst) = canon(wsh, &a.kernel);
        if i.checked_mul(a.groups) != Some(c) || o % a.groups != 0 {
            return Err(
                cx.error(format!("channels do not match: data {c}, weight (out {o}, in {i}) with groups {}", a.groups))
            );
        }
        let sp = a.spatial;
        let axis = |k: usize| (a.strides[k], a.dilation[k], a.pads[k], a.pads[k] + a.pads[k + sp]);
        let (hw, ww) = if sp == 1 { ((1, 1, 0, 0), axis(0)) } else { (axis(0), axis(1)) };
        let neg = || cx.error("the window is longer than the padded input: the output length is negative");
        let oh = window_len(h, hw.3, hw.1, kh, hw.0).ok_or_else(neg)?;
        let ow = window_len(w, ww.3, ww.1, kw, ww.0).ok_or_else(neg)?;
        let full = [n, o, oh, ow];
        let canon_out: Vec<u64> = if sp == 1 { vec![n, o, ow] } else { full.to_vec() };
        let mut out_shape = vec![0u64; rank];
        for (k, &p) in a.out.iter().enumerate() {
            out_shape[p] = canon_out[k];
        }
        created(cx, &out_shape)?;
        let (_, ost) = canon(&out_shape, &a.out);
        let geo = Geo {
            n: n as usize,
            o: o as usize,
            i: i as usize,
            h: h as usize,
            w: w as usize,
            kh: kh as usize,
            kw: kw as usize,
            oh: oh as usize,
            ow: ow as usize,
            groups: a.groups as usize,
            win: [(hw.0, hw.1, hw.2), (ww.0, ww.1, ww.2)],
            xs: xst,
            ws: wst,
            os: ost,
        };
        Ok((out_shape, geo))
    }

    /// The multiply-adds of a call (`N·O·OH·OW·I·KH·KW`, saturating), when well-formed.
    fn macs(&self, args: &[Value]) -> Option<u64> {
        let [Value::Tensor(x), Value::Tensor(w)] = args else { return None };
        let a = &self.0;
        if x.rank() != a.spatial + 2 || w.rank() != a.spatial + 2 {
            return None;
        }
        let ([n, _, h, wd], _) = canon(x.shape(), &a.data);
        let ([o, i, kh, kw], _) = canon(w.shape(), &a.kernel);
        let sp = a.spatial;
        let mut total = n.saturating_mul(o).saturating_mul(i);
        let dims: &[(u64, u64, usize)] = if sp == 1 { &[(wd, kw, 0)] } else { &[(h, kh, 0), (wd, kw, 1)] };
        for &(len, k, ax) in dims {
            let out = window_len(len, a.pads[ax] + a.pads[ax + sp], a.dilation[ax], k, a.strides[ax])?;
            total = total.saturating_mul(out).saturating_mul(k);
        }
        Some(total)
    }
}

impl Kernel for Conv {
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
            DType::F32 => conv_typed::<f32>(cx, x, w, dtype, &out_shape, &geo, Some(sgemm)),
            DType::F64 => conv_typed::<f64>(cx, x, w, dtype, &out_shape, &geo, Some(dgemm)),
            _ => with_num!(dtype, T => conv_typed::<T>(cx, x, w, dtype, &out_shape, &geo, None)),
        }
    }

    fn work(&self, args: &[Value]) -> Option<u64> {
        self.macs(args)
    }
}

/// `c = a @ b` for row-major `a` (m × k), `b` (k × n), `c` (m × n) zeroed, all non-empty.
pub(super) type Gemm<T> = fn(&[T], &[T], &mut [T], usize, usize, usize);

pub(super) fn sgemm(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) {
    if a.len() < m * k || b.len() < k * n || c.len() < m * n {
        return;
    }
    // SAFETY: the three lengths were just checked against the row-major strides used.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        )
    }
}

pub(super) fn dgemm(a: &[f64], b: &[f64], c: &mut [f64], m: usize, k: usize, n: usize) {
    if a.len() < m * k || b.len() < k * n || c.len() < m * n {
        return;
    }
    // SAFETY: as in `sgemm`.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        )
    }
}

/// `c = a @ b` with each element's terms added in `k` order from zero (the spec's order).
fn gemm_in_order<T: Num>(a: &[T], b: &[T], c: &mut [T], _m: usize, k: usize, n: usize) {
    for (crow, arow) in c.chunks_exact_mut(n).zip(a.chunks_exact(k)) {
        for (&av, brow) in arow.iter().zip(b.chunks_exact(n)) {
            for (cv, &bv) in crow.iter_mut().zip(brow) {
                *cv = cv.add(av.mul(bv));
            }
        }
    }
}

/// The largest magnitude when every element is finite.
pub(super) fn max_abs<T: Num>(xs: &[T]) -> Option<f64> {
    let mut m = 0.0f64;
    for &x in xs {
        let v = crate::scalar::to_f64(x).abs();
        if !v.is_finite() {
            return None;
        }
        m = m.max(v);
    }
    Some(m)
}

/// One block of work: batch `n`, group `g`, output positions `p0..p1` (of `OH·OW`).
#[derive(Clone, Copy)]
struct Block {
    n: usize,
    g: usize,
    p0: usize,
    p1: usize,
}

fn conv_typed<T: Num + Send + Sync>(
    cx: &KernelCx,
    x: &Tensor,
    w: &Tensor,
    dtype: DType,
    out_shape: &[u64],
    geo: &Geo,
    fast: Option<Gemm<T>>,
) -> Result<Value> {
    let out = cx.alloc(dtype, out_shape)?;
    let g = *geo;
    let og = g.o / g.groups.max(1);
    let k = g.i * g.kh * g.kw;
    let positions = g.oh * g.ow;
    if out.numel() == 0 || k == 0 {
        return Ok(Value::tensor(out));
    }
    let (xv, wv) = (read::<T>(cx, x, "the data")?, read::<T>(cx, w, "the weight")?);
    // Reordering is safe only without non-finite values and overflow (G-11).
    let gemm: Gemm<T> = match (fast, max_abs(&xv), max_abs(&wv)) {
        (Some(f), Some(mx), Some(mw)) => {
            let largest = if dtype == DType::F32 { f32::MAX as f64 } else { f64::MAX };
            if mx * mw * k as f64 <= largest / 2.0 {
                f
            } else {
                gemm_in_order::<T>
            }
        }
        _ => gemm_in_order::<T>,
    };
    // The weight matrices of the groups, `Og × K` each, in (ci, ky, kx) order.
    let mut wm: Vec<T> = Vec::with_capacity(g.o * k);
    for o in 0..g.o {
        for ci in 0..g.i {
            for ky in 0..g.kh {
                for kx in 0..g.kw {
                    wm.push(wv[o * g.ws[0] + ci * g.ws[1] + ky * g.ws[2] + kx * g.ws[3]]);
                }
            }
        }
    }
    let cols = (BLOCK_ELEMENTS / k).max(1);
    let mut blocks = Vec::new();
    for n in 0..g.n {
        for grp in 0..g.groups {
            let mut p0 = 0;
            while p0 < positions {
                let p1 = (p0 + cols).min(positions);
                blocks.push(Block { n, g: grp, p0, p1 });
                p0 = p1;
            }
        }
    }
    let x_ref: &[T] = &xv;
    let compute = |b: &Block| -> Vec<T> {
        let pn = b.p1 - b.p0;
        let mut col = vec![T::ZERO; k * pn];
        for ci in 0..g.i {
            let c = b.g * g.i + ci;
            let plane = b.n * g.xs[0] + c * g.xs[1];
            for ky in 0..g.kh {
                for kx in 0..g.kw {
                    let row = &mut col[((ci * g.kh + ky) * g.kw + kx) * pn..][..pn];
                    for (slot, p) in row.iter_mut().zip(b.p0..b.p1) {
                        let (y, xx) = (p / g.ow, p % g.ow);
                        let iy = y as i64 * g.win[0].0 + ky as i64 * g.win[0].1 - g.win[0].2;
                        let ix = xx as i64 * g.win[1].0 + kx as i64 * g.win[1].1 - g.win[1].2;
                        if iy >= 0 && (iy as usize) < g.h && ix >= 0 && (ix as usize) < g.w {
                            *slot = x_ref[plane + iy as usize * g.xs[2] + ix as usize * g.xs[3]];
                        }
                    }
                }
            }
        }
        let mut c = vec![T::ZERO; og * pn];
        gemm(&wm[b.g * og * k..(b.g + 1) * og * k], &col, &mut c, og, k, pn);
        c
    };
    let threads = cx.threads_for(out.numel()).min(blocks.len());
    let results: Vec<Vec<T>> = match (threads > 1).then(|| super::simd::pool(threads)).flatten() {
        Some(pool) => {
            use rayon::prelude::*;
            crate::stats::record(crate::stats::Counter::Threaded);
            pool.install(|| blocks.par_iter().map(compute).collect())
        }
        None => blocks.iter().map(compute).collect(),
    };
    let mut o = write::<T>(cx, &out)?;
    for (b, c) in blocks.iter().zip(&results) {
        let pn = b.p1 - b.p0;
        for oo in 0..og {
            let oc = b.g * og + oo;
            let base = b.n * g.os[0] + oc * g.os[1];
            for (j, p) in (b.p0..b.p1).enumerate() {
                o[base + (p / g.ow) * g.os[2] + (p % g.ow) * g.os[3]] = c[oo * pn + j];
            }
        }
    }
    drop(o);
    Ok(Value::tensor(out))
}

#[cfg(test)]
mod tests {
    use crate::kernels::run_standalone;
    use crate::{DType, Memory, Tensor, Value};
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;

    fn run(op: Op, attrs: &Attrs, args: &[(&[u64], &[f32])]) -> crate::error::Result<Vec<f64>> {
        let mem = Memory::new(1 << 24);
        let vals: Vec<Value> =
            args.iter().map(|(s, v)| Value::tensor(Tensor::from_slice(DType::F32, s, v, &mem).unwrap())).collect();
        let Value::Tensor(r) = run_standalone(op, attrs, &vals, &mem).unwrap()? else { panic!("not a tensor") };
        Ok((0..r.numel()).map(|i| r.get_f64(i).unwrap()).collect())
    }

    #[test]
    fn grouped_strided_conv_and_pad_modes() {
        let mut a = Attrs::default();
        a.insert("groups", AttrValue::Int(2));
        a.insert("strides", AttrValue::Int(2));
        // Two channels, each convolved with its own 1x1 weight.
        let r = run(Op::Conv2d, &a, &[(&[1, 2, 1, 3], &[1., 2., 3., 4., 5., 6.]), (&[2, 1, 1, 1], &[10., -1.])]);
        assert_eq!(r.unwrap(), vec![10., 30., -4., -6.]);
        let mut p = Attrs::default();
        p.insert("pad_width", AttrValue::List(vec![AttrValue::Int(2), AttrValue::Int(1)]));
        p.insert("pad_mode", AttrValue::Str("circular".into()));
        assert_eq!(run(Op::Pad, &p, &[(&[3], &[1., 2., 3.])]).unwrap(), vec![2., 3., 1., 2., 3., 1.]);
        p.insert("pad_mode", AttrValue::Str("reflect".into()));
        assert_eq!(run(Op::Pad, &p, &[(&[3], &[1., 2., 3.])]).unwrap(), vec![3., 2., 1., 2., 3., 2.]);
        let e = run(Op::Pad, &p, &[(&[2], &[1., 2.])]).unwrap_err();
        assert_eq!((e.kind, e.rule), (crate::ErrorKind::OpError, "OP-nn.pad"));
    }

    #[test]
    fn empty_kernels_and_results() {
        // No input channels: every sum is empty, 0.
        let r = run(Op::Conv2d, &Attrs::default(), &[(&[1, 0, 2, 2], &[]), (&[3, 0, 1, 1], &[])]);
        assert_eq!(r.unwrap(), vec![0.0; 12]);
        let mut a = Attrs::default();
        a.insert("padding", AttrValue::Int(i32::MAX as i64));
        a.insert("strides", AttrValue::Int(i32::MAX as i64));
        assert_eq!(run(Op::Conv1d, &a, &[(&[0, 1, 1], &[]), (&[1, 1, 1], &[1.])]).unwrap(), vec![]);
    }
}
