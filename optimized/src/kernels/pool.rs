//! `nn.max_pool2d`, `nn.avg_pool2d`, `nn.adaptive_avg_pool2d`.
//!
//! The taps of every output row and column are computed once per call (the input
//! positions a window covers along that axis, and for average pooling how many count);
//! each `(n, c)` plane is then a loop over its outputs, and the planes are split across
//! the rayon pool when the output is large. Each output folds its taps in row-major
//! order from the dtype's least value (max) or zero (sum), the spec's order, so results
//! are the oracle's bit for bit.

use super::common::{created, operand, read, write};
use super::conv::{pads, per_axis, positions, row_major, string_or, window_len};
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::error::Result;
use crate::scalar::Num;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use spec_model::grammar::Attrs;

/// Where the canonical `N, C, H, W` axes of the data and the result are.
struct Layouts {
    data: Vec<usize>,
    out: Vec<usize>,
}

fn layouts(a: &Attrs) -> std::result::Result<Layouts, String> {
    let data = positions(a, "layout", "NCHW", "NCHW")?;
    let out = positions(a, "out_layout", &string_or(a, "layout", "NCHW"), "NCHW")?;
    Ok(Layouts { data, out })
}

/// One axis of a pooling window: per output index, the input positions it reads and
/// the count average pooling divides by.
struct Taps {
    reads: Vec<Vec<usize>>,
    counts: Vec<usize>,
}

/// The call's geometry: canonical dims of the data, strides of both tensors.
struct Frame {
    n: usize,
    c: usize,
    xs: [usize; 4],
    os: [usize; 4],
    oh: usize,
    ow: usize,
}

fn frame(cx: &KernelCx, l: &Layouts, shape: &[u64], oh: u64, ow: u64) -> Result<(Vec<u64>, Frame)> {
    let d = |k: usize| shape[l.data[k]];
    let canon = [d(0), d(1), oh, ow];
    let mut out_shape = vec![0u64; 4];
    for (k, &p) in l.out.iter().enumerate() {
        out_shape[p] = canon[k];
    }
    created(cx, &out_shape)?;
    let (xst, ost) = (row_major(shape), row_major(&out_shape));
    let f = Frame {
        n: d(0) as usize,
        c: d(1) as usize,
        xs: [xst[l.data[0]], xst[l.data[1]], xst[l.data[2]], xst[l.data[3]]],
        os: [ost[l.out[0]], ost[l.out[1]], ost[l.out[2]], ost[l.out[3]]],
        oh: oh as usize,
        ow: ow as usize,
    };
    Ok((out_shape, f))
}

/// Runs `plane(n, c) -> values in (y, x) order` over every plane (threaded when large)
/// and writes the results through the out layout.
fn planes<T: Num + Send + Sync>(
    cx: &KernelCx,
    out: &Tensor,
    f: &Frame,
    plane: impl Fn(usize, usize) -> Vec<T> + Sync,
) -> Result<()> {
    let ids: Vec<(usize, usize)> = (0..f.n).flat_map(|n| (0..f.c).map(move |c| (n, c))).collect();
    let threads = cx.threads_for(out.numel()).min(ids.len());
    let results: Vec<Vec<T>> = match (threads > 1).then(|| super::simd::pool(threads)).flatten() {
        Some(pool) => {
            use rayon::prelude::*;
            crate::stats::record(crate::stats::Counter::Threaded);
            pool.install(|| ids.par_iter().map(|&(n, c)| plane(n, c)).collect())
        }
        None => ids.iter().map(|&(n, c)| plane(n, c)).collect(),
    };
    let mut o = write::<T>(cx, out)?;
    for (&(n, c), vals) in ids.iter().zip(&results) {
        let base = n * f.os[0] + c * f.os[1];
        for (j, &v) in vals.iter().enumerate() {
            o[base + (j / f.ow) * f.os[2] + (j % f.ow) * f.os[3]] = v;
        }
    }
    Ok(())
}

/// The attributes of a max or average pooling call.
struct PoolAttrs {
    layouts: Layouts,
    size: Vec<i64>,
    strides: Vec<i64>,
    dilation: Vec<i64>,
    pads: Vec<i64>,
    ceil: bool,
    include_pad: bool,
}

fn pool_attrs(a: &Attrs) -> std::result::Result<PoolAttrs, String> {
    Ok(PoolAttrs {
        layouts: layouts(a)?,
        size: per_axis(a, "pool_size", 2, 1, 1)?,
        strides: per_axis(a, "strides", 2, 1, 1)?,
        dilation: per_axis(a, "dilation", 2, 1, 1)?,
        pads: pads(a, 2)?,
        ceil: attrs::bool(a, "ceil_mode", false)?,
        include_pad: attrs::bool(a, "count_include_pad", false)?,
    })
}

/// OP-nn.max_pool2d, OP-nn.avg_pool2d (the oracle's semantics). Errors (`OpError`):
/// not one tensor; a layout not a permutation of `NCHW`; rank other than 4; attributes
/// ill-kinded or out of range; a negative output length.
pub fn pool2d(l: &Lowering, max: bool) -> Box<dyn Kernel> {
    match pool_attrs(l.attrs) {
        Ok(a) => Box::new(Pool { a, max }),
        Err(m) => Box::new(Failing(m)),
    }
}

struct Pool {
    a: PoolAttrs,
    max: bool,
}

impl Pool {
    /// The output length along axis `k` (0: H, 1: W) of an input of length `len`.
    fn out_len(&self, cx: &KernelCx, k: usize, len: u64) -> Result<u64> {
        let a = &self.a;
        let s = a.strides[k];
        let ceil_extra = if a.ceil { s - 1 } else { 0 };
        let raw = window_len(len, a.pads[k] + a.pads[k + 2] + ceil_extra, a.dilation[k], a.size[k] as u64, s)
            .ok_or_else(|| cx.error("the window is longer than the padded input: the output length is negative"))?;
        // In ceil mode a last window starting in the bottom padding is dropped (TVM).
        let starts_late = raw > 0 && (raw as i128 - 1) * s as i128 >= len as i128 + a.pads[k] as i128;
        Ok(if a.ceil && starts_late { raw - 1 } else { raw })
    }

    fn taps(&self, k: usize, len: usize, outs: usize) -> Taps {
        let a = &self.a;
        let (s, d, head, tail) = (a.strides[k], a.dilation[k], a.pads[k], a.pads[k + 2]);
        let mut reads = Vec::with_capacity(outs);
        let mut counts = Vec::with_capacity(outs);
        // The taps `start + t·d` (t < size) inside `0..len`, and inside `[-head, len + tail)`,
        // found arithmetically: a window may be 2^31 taps long.
        let (len_i, size) = (len as i64, a.size[k]);
        let taps_below = |limit: i64, start: i64| -> i64 {
            // How many t in 0..size have start + t·d < limit.
            if limit <= start {
                0
            } else {
                ((limit - start + d - 1) / d).min(size)
            }
        };
        for y in 0..outs {
            let start = y as i64 * s - head;
            let first = if start >= 0 { 0 } else { (-start + d - 1) / d };
            let last = taps_below(len_i, start);
            let r: Vec<usize> = (first..last.max(first)).map(|t| (start + t * d) as usize).collect();
            // start >= -head always, so every tap below the upper bound is in the padded extent.
            let padded = taps_below(len_i + tail, start) as usize;
            counts.push(if a.include_pad { padded } else { r.len() });
            reads.push(r);
        }
        Taps { reads, counts }
    }

    fn run_typed<T: Num + Send + Sync>(&self, cx: &KernelCx, x: &Tensor) -> Result<Value> {
        let shape = x.shape();
        let l = &self.a.layouts;
        let (h, w) = (shape[l.data[2]], shape[l.data[3]]);
        let (oh, ow) = (self.out_len(cx, 0, h)?, self.out_len(cx, 1, w)?);
        let (out_shape, f) = frame(cx, l, shape, oh, ow)?;
        let out = cx.alloc_for_overwrite(x.dtype(), &out_shape)?;
        if out.numel() == 0 {
            return Ok(Value::tensor(out));
        }
        let rows = self.taps(0, h as usize, f.oh);
        let cols = self.taps(1, w as usize, f.ow);
        let xv = read::<T>(cx, x, "the data")?;
        let data: &[T] = &xv;
        let max = self.max;
        let plane = |n: usize, c: usize| -> Vec<T> {
            let base = n * f.xs[0] + c * f.xs[1];
            let mut vals = Vec::with_capacity(f.oh * f.ow);
            for (rr, &rc) in rows.reads.iter().zip(&rows.counts) {
                for (cc, &ccount) in cols.reads.iter().zip(&cols.counts) {
                    let mut acc = if max { T::LOWEST } else { T::ZERO };
                    for &r in rr {
                        let row = base + r * f.xs[2];
                        for &q in cc {
                            let v = data[row + q * f.xs[3]];
                            acc = if max { acc.max_nan(v) } else { acc.add(v) };
                        }
                    }
                    if !max {
                        let count = (rc * ccount).max(1);
                        acc = T::mean(acc, count).unwrap_or(acc);
                    }
                    vals.push(acc);
                }
            }
            vals
        };
        planes(cx, &out, &f, plane)?;
        Ok(Value::tensor(out))
    }
}

impl Kernel for Pool {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the data")?;
        if x.rank() != 4 {
            return Err(cx.error(format!("the data must have rank 4, got rank {}", x.rank())));
        }
        with_num!(x.dtype(), T => self.run_typed::<T>(cx, x))
    }
}

/// OP-nn.adaptive_avg_pool2d (the oracle's semantics: windows
/// `[floor(o·len/out), ceil((o+1)·len/out))`). Errors (`OpError`): not one tensor; a
/// layout not a permutation of `NCHW`; rank other than 4; `output_size` ill-kinded, of
/// another length or out of range; an integer mean of an empty window.
pub fn adaptive_avg_pool2d(l: &Lowering) -> Box<dyn Kernel> {
    let size = match attrs::ints(l.attrs, "output_size") {
        Err(m) => return Box::new(Failing(m)),
        Ok(None) => None,
        Ok(Some(v)) => {
            let v = match v.len() {
                1 => vec![v[0], v[0]],
                2 => v,
                k => return Box::new(Failing(format!("output_size must have 1 or 2 values, got {k}"))),
            };
            if v.iter().any(|&s| !(0..=i32::MAX as i64).contains(&s)) {
                return Box::new(Failing(format!("output_size {v:?} is out of range (0 to {})", i32::MAX)));
            }
            Some((v[0] as u64, v[1] as u64))
        }
    };
    match layouts(l.attrs) {
        Ok(layouts) => Box::new(Adaptive { layouts, size }),
        Err(m) => Box::new(Failing(m)),
    }
}

struct Adaptive {
    layouts: Layouts,
    size: Option<(u64, u64)>,
}

/// The input range `[start, end)` of output `o` of `outs` over `len`.
fn bounds(o: usize, outs: usize, len: usize) -> (usize, usize) {
    let (o, outs, len) = (o as u128, outs as u128, len as u128);
    let start = (o * len) / outs;
    let end = ((o + 1) * len).div_ceil(outs);
    (start as usize, end as usize)
}

impl Adaptive {
    fn run_typed<T: Num + Send + Sync>(&self, cx: &KernelCx, x: &Tensor) -> Result<Value> {
        let shape = x.shape();
        let l = &self.layouts;
        let (h, w) = (shape[l.data[2]], shape[l.data[3]]);
        let (oh, ow) = self.size.unwrap_or((h, w));
        let (out_shape, f) = frame(cx, l, shape, oh, ow)?;
        let out = cx.alloc_for_overwrite(x.dtype(), &out_shape)?;
        if out.numel() == 0 {
            return Ok(Value::tensor(out));
        }
        if (h == 0 || w == 0) && !x.dtype().is_float() {
            return Err(cx.error("an integer mean of an empty window (the input's H or W is 0)"));
        }
        let rows: Vec<(usize, usize)> = (0..f.oh).map(|y| bounds(y, f.oh, h as usize)).collect();
        let cols: Vec<(usize, usize)> = (0..f.ow).map(|c| bounds(c, f.ow, w as usize)).collect();
        let xv = read::<T>(cx, x, "the data")?;
        let data: &[T] = &xv;
        let plane = |n: usize, c: usize| -> Vec<T> {
            let base = n * f.xs[0] + c * f.xs[1];
            let mut vals = Vec::with_capacity(f.oh * f.ow);
            for &(r0, r1) in &rows {
                for &(c0, c1) in &cols {
                    let mut acc = T::ZERO;
                    for r in r0..r1 {
                        let row = base + r * f.xs[2];
                        for q in c0..c1 {
                            acc = acc.add(data[row + q * f.xs[3]]);
                        }
                    }
                    vals.push(T::mean(acc, (r1 - r0) * (c1 - c0)).unwrap_or(acc));
                }
            }
            vals
        };
        planes(cx, &out, &f, plane)?;
        Ok(Value::tensor(out))
    }
}

impl Kernel for Adaptive {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the data")?;
        if x.rank() != 4 {
            return Err(cx.error(format!("the data must have rank 4, got rank {}", x.rank())));
        }
        with_num!(x.dtype(), T => self.run_typed::<T>(cx, x))
    }
}
