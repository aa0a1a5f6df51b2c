//! Normalizations: `nn.log_softmax`, `nn.layer_norm`, `nn.rms_norm`, `nn.group_norm`,
//! `nn.batch_norm`, `nn.dropout`.
//!
//! A norm lays its data out as rows (one per normalized group, [`rows`]), computes each
//! row's moments and outputs in order (no reassociation: the bits are the oracle's),
//! rows split across threads when large, and writes the rows back in place. float16
//! computes in float32, rounded once at the end; float32/float64 in their dtype.

use super::common::{created, operand, read, write};
use super::simd::pool;
use super::statistical::rows;
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::Real;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use half::f16;
use rayon::prelude::*;
use std::rc::Rc;

/// OP-nn.log_softmax: per line along `axis` (default -1): `m` the NaN-propagating
/// maximum, `s = Σ exp(x - m)` in order, `y = (x - m) - ln(s)`, each step in the dtype
/// (float16 rounded per operation). Errors: not a float tensor; `axis` out of range.
pub fn log_softmax(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::opt_int(l.attrs, "axis") {
        Ok(a) => Box::new(LogSoftmax { axis: a.unwrap_or(-1) }),
        Err(m) => Box::new(Failing(m)),
    }
}

struct LogSoftmax {
    axis: i64,
}

impl Kernel for LogSoftmax {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        let axis = cx.axis(self.axis, a.rank())?;
        match a.dtype() {
            DType::F16 => log_softmax_typed::<f16>(cx, a, axis),
            DType::F32 => log_softmax_typed::<f32>(cx, a, axis),
            DType::F64 => log_softmax_typed::<f64>(cx, a, axis),
            d => Err(cx.error(format!("needs a floating-point tensor, not {}", d.data_type()))),
        }
    }
}

fn log_softmax_typed<T: Real + Send + Sync>(cx: &KernelCx, a: &Tensor, axis: usize) -> Result<Value> {
    let x = read::<T>(cx, a, "the operand")?;
    let out = cx.alloc_for_overwrite(a.dtype(), a.shape())?;
    {
        let mut o = write::<T>(cx, &out)?;
        let len = a.shape()[axis] as usize;
        let inner: usize = a.shape()[axis + 1..].iter().map(|&d| d as usize).product();
        let block = len * inner;
        if block > 0 && !x.is_empty() {
            let x = &x[..];
            // Whole blocks (of `len` rows of `inner` columns), each computed as a unit.
            let body = |(b, ob): (usize, &mut [T])| {
                let xb = &x[b * block..(b + 1) * block];
                let mut m = xb[..inner].to_vec();
                for row in xb.chunks_exact(inner).skip(1) {
                    m.iter_mut().zip(row).for_each(|(m, &v)| *m = m.max_nan(v));
                }
                let mut s = vec![T::ZERO; inner];
                for row in xb.chunks_exact(inner) {
                    s.iter_mut().zip(row).zip(&m).for_each(|((s, &v), &m)| *s = s.add(v.sub(m).exp()));
                }
                s.iter_mut().for_each(|v| *v = v.ln());
                for (row, orow) in xb.chunks_exact(inner).zip(ob.chunks_exact_mut(inner)) {
                    for (((y, &v), &m), &ls) in orow.iter_mut().zip(row).zip(&m).zip(&s) {
                        *y = v.sub(m).sub(ls);
                    }
                }
            };
            in_rows(cx.threads_for(x.len()), &mut o, block, body);
        }
    }
    Ok(Value::tensor(out))
}

/// Runs `f` on each row of `n` elements of `out` (with its index), on `threads`
/// threads when more than one (rayon splits at row boundaries).
fn in_rows<T: Send>(threads: usize, out: &mut [T], n: usize, f: impl Fn((usize, &mut [T])) + Sync + Send) {
    match (threads > 1).then(|| pool(threads)).flatten() {
        Some(p) => p.install(|| out.par_chunks_mut(n).enumerate().for_each(f)),
        None => out.chunks_mut(n).enumerate().for_each(f),
    }
}

/// The type a norm computes in: `f32` for float16 and float32 data, `f64` for float64.
trait Acc: Copy + Send + Sync + 'static {
    const ZERO: Self;
    fn of(x: f64) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn sqrt(self) -> Self;
    /// A tensor's elements in this type (float16 widened exactly).
    fn load(cx: &KernelCx, t: &Tensor, what: &str) -> Result<Vec<Self>>;
    /// A new tensor of `dtype` holding `v` (float16: rounded once).
    fn store(cx: &KernelCx, v: &[Self], dtype: DType, shape: &[u64]) -> Result<Tensor>;
}

macro_rules! acc {
    ($t:ty, $($src:ty)|*) => {
        impl Acc for $t {
            const ZERO: Self = 0.0;
            fn of(x: f64) -> Self { x as $t }
            fn add(self, o: Self) -> Self { self + o }
            fn sub(self, o: Self) -> Self { self - o }
            fn mul(self, o: Self) -> Self { self * o }
            fn div(self, o: Self) -> Self { self / o }
            fn sqrt(self) -> Self { <$t>::sqrt(self) }
            fn load(cx: &KernelCx, t: &Tensor, what: &str) -> Result<Vec<Self>> {
                match t.dtype() {
                    DType::F16 => Ok(read::<f16>(cx, t, what)?.iter().map(|v| v.to_f32() as $t).collect()),
                    $(d if d == <$src as crate::dtype::Element>::DTYPE => Ok(read::<$src>(cx, t, what)?.to_vec()),)*
                    d => Err(cx.error(format!("{what} has dtype {}", d.data_type()))),
                }
            }
            fn store(cx: &KernelCx, v: &[Self], dtype: DType, shape: &[u64]) -> Result<Tensor> {
                let out = cx.alloc_for_overwrite(dtype, shape)?;
                if dtype == DType::F16 {
                    write::<f16>(cx, &out)?.iter_mut().zip(v).for_each(|(o, &x)| *o = f16::from_f32(x as f32));
                } else {
                    write::<$t>(cx, &out)?.copy_from_slice(v);
                }
                Ok(out)
            }
        }
    };
}
acc!(f32, f32);
acc!(f64, f64);

/// Calls `$f::<A>` with the compute type of data's dtype (`OpError` for other dtypes).
macro_rules! by_float {
    ($cx:expr, $a:expr, $f:ident($($arg:expr),*)) => {
        match $a.dtype() {
            DType::F16 | DType::F32 => $f::<f32>($($arg),*),
            DType::F64 => $f::<f64>($($arg),*),
            d => Err($cx.error(format!("needs floating-point data, not {}", d.data_type()))),
        }
    };
}

/// A parameter: a tensor of data's dtype and exactly `shape`, in the compute type.
fn param<A: Acc>(cx: &KernelCx, args: &[Value], i: usize, what: &str, data: &Tensor, shape: &[u64]) -> Result<Vec<A>> {
    let p = operand(cx, args, i, what)?;
    if p.dtype() != data.dtype() {
        return Err(cx.error(format!("{what} has dtype {}, not data's", p.dtype().data_type())));
    }
    if p.shape() != shape {
        return Err(cx.error(format!("{what} has shape {:?}, not {shape:?}", p.shape())));
    }
    A::load(cx, p, what)
}

/// `y` laid out as [`rows`] lays out a tensor of `shape`, put back in place.
fn unrows<A: Acc>(y: Vec<A>, shape: &[u64], reduced: &[bool]) -> Vec<A> {
    let first = reduced.iter().position(|&r| r).unwrap_or(reduced.len());
    if reduced[first..].iter().all(|&r| r) {
        return y;
    }
    let index: Vec<usize> = (0..y.len()).collect();
    let order = rows(&index, shape, reduced);
    let mut out = vec![A::ZERO; y.len()];
    for (k, &at) in order.iter().enumerate() {
        out[at] = y[k];
    }
    out
}

/// One normalization: for each row of `x` (as [`rows`] lays it out, `n` elements),
/// `f(row index, row, output row)`; rows split across threads when large.
fn by_rows<A: Acc>(
    cx: &KernelCx,
    x: &[A],
    shape: &[u64],
    reduced: &[bool],
    n: usize,
    f: impl Fn(usize, &[A], &mut [A]) + Sync,
) -> Vec<A> {
    let laid = rows(x, shape, reduced);
    let mut y = vec![A::ZERO; x.len()];
    if n > 0 && !y.is_empty() {
        in_rows(cx.threads_for(x.len()), &mut y, n, |(r, orow)| f(r, &laid[r * n..(r + 1) * n], orow));
    }
    unrows(y, shape, reduced)
}

/// `(mean, var)` of a row: `Σx/n`, `Σ(x - mean)²/n`, in order.
fn moments<A: Acc>(row: &[A]) -> (A, A) {
    let n = A::of(row.len() as f64);
    let mean = row.iter().fold(A::ZERO, |s, &x| s.add(x)).div(n);
    let var = row.iter().fold(A::ZERO, |s, &x| {
        let d = x.sub(mean);
        s.add(d.mul(d))
    });
    (mean, var.div(n))
}

/// Normalized axes (none repeated) and the dimensions they reduce.
fn axes_of(cx: &KernelCx, axes: &[i64], rank: usize) -> Result<(Vec<usize>, Vec<bool>)> {
    let mut reduced = vec![false; rank];
    let mut out = Vec::new();
    for &a in axes {
        let i = cx.axis(a, rank)?;
        if reduced[i] {
            return Err(cx.error(format!("axis {a} is repeated")));
        }
        reduced[i] = true;
        out.push(i);
    }
    Ok((out, reduced))
}

/// The offset, in a parameter whose dimension `k` runs along `axes[k]`, of each element
/// of a row (the reduced dimensions in increasing order).
fn row_param_offsets(shape: &[u64], axes: &[usize]) -> Vec<usize> {
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    let mut pst = vec![0usize; axes.len()];
    let mut acc = 1usize;
    for k in (0..axes.len()).rev() {
        pst[k] = acc;
        acc *= shape[axes[k]] as usize;
    }
    let n: usize = sorted.iter().map(|&a| shape[a] as usize).product();
    let mut idx = vec![0usize; sorted.len()];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(sorted.iter().zip(&idx).map(|(a, i)| i * pst[axes.iter().position(|b| b == a).unwrap_or(0)]).sum());
        for d in (0..sorted.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[sorted[d]] as usize {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// Which norm a [`NormKernel`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    Layer,
    Rms,
    Group,
    Batch,
}

/// OP-nn.layer_norm, OP-nn.rms_norm, OP-nn.group_norm, OP-nn.batch_norm: the oracle's
/// formulas (`operator-semantics.md`), row by row. Attributes of the wrong kind (or a
/// missing required one): a failing kernel.
pub fn norm(l: &Lowering, which: Norm) -> Box<dyn Kernel> {
    let read = || -> std::result::Result<NormKernel, String> {
        let axes = match which {
            Norm::Batch => vec![attrs::opt_int(l.attrs, "axis")?.unwrap_or(1)],
            Norm::Rms => attrs::ints(l.attrs, "axes")?.unwrap_or(vec![-1]),
            _ => attrs::ints(l.attrs, "axes")?.ok_or("needs the attribute `axes`")?,
        };
        Ok(NormKernel {
            which,
            axes,
            epsilon: attrs::float(l.attrs, "epsilon", 1e-5)?,
            center: attrs::bool(l.attrs, "center", true)?,
            scale: attrs::bool(l.attrs, "scale", true)?,
            groups: attrs::opt_int(l.attrs, "num_groups")?.unwrap_or(1),
            channel_axis: attrs::opt_int(l.attrs, "channel_axis")?.unwrap_or(1),
            momentum: attrs::float(l.attrs, "momentum", 0.1)?,
            training: attrs::bool(l.attrs, "training", true)?,
        })
    };
    match read() {
        Ok(k) => Box::new(k),
        Err(m) => Box::new(Failing(m)),
    }
}

struct NormKernel {
    which: Norm,
    axes: Vec<i64>,
    epsilon: f64,
    center: bool,
    scale: bool,
    groups: i64,
    channel_axis: i64,
    momentum: f64,
    training: bool,
}

impl Kernel for NormKernel {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(
            args,
            match self.which {
                Norm::Layer | Norm::Group => 3,
                Norm::Rms => 2,
                Norm::Batch => 5,
            },
        )?;
        let a = operand(cx, args, 0, "data")?;
        match self.which {
            Norm::Layer | Norm::Rms => by_float!(cx, a, layer_rms(self, cx, args, a)),
            Norm::Group => by_float!(cx, a, group(self, cx, args, a)),
            Norm::Batch => by_float!(cx, a, batch(self, cx, args, a)),
        }
    }
}

fn layer_rms<A: Acc>(k: &NormKernel, cx: &KernelCx, args: &[Value], a: &Tensor) -> Result<Value> {
    let shape = a.shape();
    let (axes, reduced) = axes_of(cx, &k.axes, a.rank())?;
    let pshape: Vec<u64> = axes.iter().map(|&i| shape[i]).collect();
    let names: &[&str] = if k.which == Norm::Rms { &["weight"] } else { &["gamma", "beta"] };
    let ps: Vec<Vec<A>> =
        names.iter().enumerate().map(|(i, w)| param::<A>(cx, args, i + 1, w, a, &pshape)).collect::<Result<_>>()?;
    let x = A::load(cx, a, "data")?;
    let poff = row_param_offsets(shape, &axes);
    let n = poff.len();
    let eps = A::of(k.epsilon);
    let one = A::of(1.0);
    let y = if k.which == Norm::Rms {
        by_rows(cx, &x, shape, &reduced, n, |_, row, out| {
            let ms = row.iter().fold(A::ZERO, |s, &v| s.add(v.mul(v))).div(A::of(n as f64));
            let r = one.div(ms.add(eps).sqrt());
            for ((o, &v), &p) in out.iter_mut().zip(row).zip(&poff) {
                *o = v.mul(r).mul(ps[0][p]);
            }
        })
    } else {
        by_rows(cx, &x, shape, &reduced, n, |_, row, out| {
            let (mean, var) = moments(row);
            let r = one.div(var.add(eps).sqrt());
            for ((o, &v), &p) in out.iter_mut().zip(row).zip(&poff) {
                let mut t = v.sub(mean).mul(r);
                if k.scale {
                    t = t.mul(ps[0][p]);
                }
                if k.center {
                    t = t.add(ps[1][p]);
                }
                *o = t;
            }
        })
    };
    Ok(Value::tensor(A::store(cx, &y, a.dtype(), shape)?))
}

fn group<A: Acc>(k: &NormKernel, cx: &KernelCx, args: &[Value], a: &Tensor) -> Result<Value> {
    let shape = a.shape();
    let c = cx.axis(k.channel_axis, a.rank())?;
    let (axes, _) = axes_of(cx, &k.axes, a.rank())?;
    if axes.contains(&c) {
        return Err(cx.error(format!("channel_axis {c} is among the axes")));
    }
    let channels = shape[c];
    if k.groups <= 0 || !channels.is_multiple_of(k.groups as u64) {
        return Err(cx.error(format!("{channels} channels do not split into {} groups", k.groups)));
    }
    let gamma = param::<A>(cx, args, 1, "gamma", a, &[channels])?;
    let beta = param::<A>(cx, args, 2, "beta", a, &[channels])?;
    let x = A::load(cx, a, "data")?;
    // The channel axis split into (groups, group size): the size part is reduced.
    let (g, gs) = (k.groups as usize, (channels / k.groups as u64) as usize);
    let mut split: Vec<u64> = shape[..c].to_vec();
    split.extend([g as u64, gs as u64]);
    split.extend(&shape[c + 1..]);
    let mut reduced = vec![false; split.len()];
    reduced[c + 1] = true;
    axes.iter().for_each(|&i| reduced[if i < c { i } else { i + 1 }] = true);
    let kept_after: usize = (c + 2..split.len()).filter(|&i| !reduced[i]).map(|i| split[i] as usize).product();
    let red_after: usize = (c + 2..split.len()).filter(|&i| reduced[i]).map(|i| split[i] as usize).product();
    let n: usize = (0..split.len()).filter(|&i| reduced[i]).map(|i| split[i] as usize).product();
    let (eps, one) = (A::of(k.epsilon), A::of(1.0));
    let y = by_rows(cx, &x, &split, &reduced, n, |r, row, out| {
        let base = (r / kept_after.max(1)) % g * gs;
        let (mean, var) = moments(row);
        let rs = one.div(var.add(eps).sqrt());
        for (j, (o, &v)) in out.iter_mut().zip(row).enumerate() {
            let ch = base + (j / red_after.max(1)) % gs;
            let mut t = v.sub(mean).mul(rs);
            if k.scale {
                t = t.mul(gamma[ch]);
            }
            if k.center {
                t = t.add(beta[ch]);
            }
            *o = t;
        }
    });
    Ok(Value::tensor(A::store(cx, &y, a.dtype(), shape)?))
}

fn batch<A: Acc>(k: &NormKernel, cx: &KernelCx, args: &[Value], a: &Tensor) -> Result<Value> {
    let shape = a.shape();
    let c = cx.axis(k.axes[0], a.rank())?;
    let ch = [shape[c]];
    let names = ["gamma", "beta", "moving_mean", "moving_var"];
    let ps: Vec<Vec<A>> = (0..4).map(|i| param::<A>(cx, args, i + 1, names[i], a, &ch)).collect::<Result<_>>()?;
    let x = A::load(cx, a, "data")?;
    let mut reduced = vec![true; a.rank()];
    reduced[c] = false;
    let n = x.len().checked_div(ch[0] as usize).unwrap_or(0);
    let eps = A::of(k.epsilon);
    // Per channel: the statistics used (batch or moving), computed first.
    let stats: Vec<(A, A)> = if k.training {
        let laid = rows(&x, shape, &reduced);
        (0..ch[0] as usize).map(|r| moments(laid.get(r * n..(r + 1) * n).unwrap_or(&[]))).collect()
    } else {
        ps[2].iter().zip(&ps[3]).map(|(&m, &v)| (m, v)).collect()
    };
    let y = by_rows(cx, &x, shape, &reduced, n, |r, row, out| {
        let (m, v) = stats[r];
        let d = v.add(eps).sqrt();
        for (o, &x) in out.iter_mut().zip(row) {
            let mut t = x.sub(m).div(d);
            if k.scale {
                t = t.mul(ps[0][r]);
            }
            if k.center {
                t = t.add(ps[1][r]);
            }
            *o = t;
        }
    });
    let (keep, mom) = (A::of(1.0 - k.momentum), A::of(k.momentum));
    let blend = |old: &[A], pick: fn(&(A, A)) -> A| -> Vec<A> {
        if k.training {
            old.iter().zip(&stats).map(|(&o, s)| keep.mul(o).add(mom.mul(pick(s)))).collect()
        } else {
            old.to_vec()
        }
    };
    let (nm, nv) = (blend(&ps[2], |s| s.0), blend(&ps[3], |s| s.1));
    let out = [
        Value::tensor(A::store(cx, &y, a.dtype(), shape)?),
        Value::tensor(A::store(cx, &nm, a.dtype(), &ch)?),
        Value::tensor(A::store(cx, &nv, a.dtype(), &ch)?),
    ];
    Ok(Value::Tuple(Rc::from(out)))
}

/// OP-nn.dropout at inference: `(data, ones)` of data's shape and dtype (`rate` unused).
pub fn dropout(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::float(l.attrs, "rate", 0.5) {
        Ok(_) => Box::new(Dropout),
        Err(m) => Box::new(Failing(m)),
    }
}

struct Dropout;

impl Kernel for Dropout {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "data")?;
        created(cx, a.shape())?;
        with_num!(a.dtype(), T => {
            let ones = cx.alloc_for_overwrite(a.dtype(), a.shape())?;
            write::<T>(cx, &ones)?.fill(<T as crate::scalar::Num>::ONE);
            Ok(Value::Tuple(Rc::from([Value::Tensor(a.clone()), Value::tensor(ones)])))
        })
    }
}
