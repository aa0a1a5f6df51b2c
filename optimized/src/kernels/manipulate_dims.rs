//! Dimension manipulation and creation-like operators: `zeros_like`, `ones_like`,
//! `full_like`, `squeeze`, `expand_dims`, `flatten`, `flip`, `tril`, `triu`, `tile`,
//! `repeat`, `collapse_sum_like`.
//!
//! Every result is a new tensor (aliasing an operand is observable through packed
//! functions that write in place), so `squeeze`, `expand_dims` and `flatten` are one
//! byte copy; `flip`, `tile` and `repeat` are strided views of the operand copied row
//! by row (a contiguous row in one `copy_from_slice`, a repeated element in one
//! `fill`); large results are split across threads.

use super::common::{created, operand, read, write};
use super::layout::{for_each_row, for_each_row_in, strides};
use super::simd::{parallel_chunks_mut, Exec};
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::{DType, Element};
use crate::error::Result;
use crate::scalar::{to_f64, Num};
use crate::tensor::Tensor;
use crate::value::{Prim, Value};
use crate::with_num;
use spec_model::grammar::DataType;
use std::sync::atomic::{AtomicBool, Ordering};

/// The fewest elements one thread of a split copy gets.
const MIN_CHUNK: usize = 1 << 15;

/// A dtype attribute as read at lowering (its error is raised at run time).
type DtypeAttr = std::result::Result<Option<DataType>, String>;

/// The dtype of a `*_like` result: the attribute, else the operand's.
fn like_dtype(cx: &KernelCx, attr: &DtypeAttr, own: DType) -> Result<DType> {
    match attr {
        Ok(Some(d)) if !d.is_void() => {
            DType::of(*d).ok_or_else(|| cx.error(format!("dtype {d} has no tensor storage")))
        }
        Ok(_) => Ok(own),
        Err(m) => Err(cx.error(m.clone())),
    }
}

/// A new tensor of `shape` and `dtype` with every element `value`.
fn filled<T: Num>(cx: &KernelCx, shape: &[u64], dtype: DType, value: T) -> Result<Value> {
    created(cx, shape)?;
    let out = cx.alloc_for_overwrite(dtype, shape)?;
    let exec = Exec::of(cx);
    let threaded =
        parallel_chunks_mut(cx.threads_for(out.numel()), &mut write::<T>(cx, &out)?, MIN_CHUNK, |_, p| p.fill(value));
    exec.record(out.numel(), threaded);
    Ok(Value::tensor(out))
}

/// `OP-zeros_like`, `OP-ones_like`: the lowering; `dtype` is read once.
pub fn zeros_ones_like(l: &Lowering, one: bool) -> Box<dyn Kernel> {
    Box::new(ZerosOnesLike { one, dtype: attrs::dtype(l.attrs, "dtype") })
}

/// `OP-zeros_like`, `OP-ones_like`: a new tensor of `x`'s shape filled with 0 (1), of
/// the attribute `dtype` (default `x`'s). `OpError`: `x` not a tensor, a dtype
/// ill-kinded or without storage.
struct ZerosOnesLike {
    one: bool,
    dtype: DtypeAttr,
}

impl Kernel for ZerosOnesLike {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        let t = like_dtype(cx, &self.dtype, x.dtype())?;
        with_num!(t, T => filled(cx, x.shape(), t, <T as Num>::from_bool(self.one)))
    }
}

/// `OP-full_like`: the lowering; `dtype` is read once.
pub fn full_like(l: &Lowering) -> Box<dyn Kernel> {
    Box::new(FullLike { dtype: attrs::dtype(l.attrs, "dtype") })
}

/// `OP-full_like`: a new tensor of `x`'s shape filled with `fill_value` (a rank-0
/// tensor or a `PrimValue`) converted to the attribute `dtype` (default `x`'s) as
/// OP-astype converts. `OpError`: `x` not a tensor; the fill value not a scalar; a
/// dtype ill-kinded or without storage; a conversion out of range.
struct FullLike {
    dtype: DtypeAttr,
}

impl Kernel for FullLike {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let x = operand(cx, args, 0, "the operand")?;
        let fill = match &args[1] {
            Value::Prim(p) => Ok(*p),
            _ => {
                let t = operand(cx, args, 1, "the fill value")?;
                if t.rank() != 0 {
                    return Err(cx.error(format!("the fill value must be a scalar (rank 0), not rank {}", t.rank())));
                }
                Err(t)
            }
        };
        let t = like_dtype(cx, &self.dtype, x.dtype())?;
        with_num!(t, D => {
            let (v, shown): (Option<D>, f64) = match fill {
                Ok(Prim::Int(i, _)) => (Some(<D as Num>::from_i64(i)), i as f64),
                Ok(Prim::Float(f, _)) => (<D as Num>::from_f64(f), f),
                Ok(Prim::Bool(b)) => (Some(<D as Num>::from_bool(b)), b as u8 as f64),
                Err(s) => with_num!(s.dtype(), S => {
                    let v = read::<S>(cx, s, "the fill value")?.first().copied().unwrap_or(<S as Num>::ZERO);
                    (<S as Num>::cast::<D>(v), to_f64(v))
                }),
            };
            let v = v.ok_or_else(|| cx.error(format!("{shown} is out of the range of {}", t.data_type())))?;
            filled(cx, x.shape(), t, v)
        })
    }
}

/// A new tensor of `x`'s dtype and `shape` (of `x`'s element count) with `x`'s bytes,
/// copied in parallel parts when large.
fn same_elements(cx: &KernelCx, x: &Tensor, shape: &[u64]) -> Result<Value> {
    let out = cx.alloc_for_overwrite(x.dtype(), shape)?;
    let exec = Exec::of(cx);
    let threaded = with_num!(x.dtype(), T => {
        let src = read::<T>(cx, x, "the operand")?;
        let src: &[T] = &src;
        parallel_chunks_mut(cx.threads_for(out.numel()), &mut write::<T>(cx, &out)?, MIN_CHUNK, |at, p| {
            p.copy_from_slice(&src[at..at + p.len()])
        })
    });
    exec.record(out.numel(), threaded);
    Ok(Value::tensor(out))
}

/// Normalized axes (negative from the end), none repeated.
fn distinct_axes(cx: &KernelCx, axes: &[i64], rank: usize) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = cx.axis(a, rank)?;
        if out.contains(&n) {
            return Err(cx.error(format!("axis {a} is repeated")));
        }
        out.push(n);
    }
    Ok(out)
}

/// `OP-squeeze`: the lowering; `axis` (an integer or a list; absent: every axis of
/// length 1) is read once.
pub fn squeeze(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::ints(l.attrs, "axis") {
        Ok(axes) => Box::new(Squeeze { axes }),
        Err(e) => Box::new(Failing(e)),
    }
}

/// `OP-squeeze`: removes the listed axes, each of length 1 (`OpError` otherwise, and
/// for an axis out of range or repeated), or every axis of length 1.
struct Squeeze {
    axes: Option<Vec<i64>>,
}

impl Kernel for Squeeze {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        let s = x.shape();
        let shape: Vec<u64> = match &self.axes {
            None => s.iter().copied().filter(|&d| d != 1).collect(),
            Some(list) => {
                let axes = distinct_axes(cx, list, x.rank())?;
                if let Some(&a) = axes.iter().find(|&&a| s[a] != 1) {
                    return Err(cx.error(format!("cannot squeeze axis {a} of length {}", s[a])));
                }
                (0..s.len()).filter(|i| !axes.contains(i)).map(|i| s[i]).collect()
            }
        };
        same_elements(cx, x, &shape)
    }
}

/// `OP-expand_dims`: the lowering; `axis` (required) is read once.
pub fn expand_dims(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::ints(l.attrs, "axis") {
        Ok(Some(axes)) => Box::new(ExpandDims { axes }),
        Ok(None) => Box::new(Failing("needs the attribute `axis`".into())),
        Err(e) => Box::new(Failing(e)),
    }
}

/// `OP-expand_dims`: inserts axes of length 1 at `axes` of the result (`OpError` for
/// one out of range of the result's rank, or repeated).
struct ExpandDims {
    axes: Vec<i64>,
}

impl Kernel for ExpandDims {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        let n = x.rank() + self.axes.len();
        let axes = distinct_axes(cx, &self.axes, n)?;
        let mut rest = x.shape().iter();
        let shape: Vec<u64> =
            (0..n).map(|i| if axes.contains(&i) { 1 } else { rest.next().copied().unwrap_or(1) }).collect();
        same_elements(cx, x, &shape)
    }
}

/// `OP-flatten`: the lowering (no attributes).
pub fn flatten(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Flatten)
}

/// `OP-flatten`: `x`'s elements as one dimension.
struct Flatten;

impl Kernel for Flatten {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        same_elements(cx, x, &[x.numel() as u64])
    }
}

/// Copies into `dst` (of `shape`, row-major) the view of `src` whose element `idx` is
/// `src[base + Σ idx·up − Σ idx·down]`, split across `threads`. `false` (a layout bug,
/// never an input's fault) if a row would leave `src`: each row is checked at its ends.
fn copy_view<T: Element>(
    threads: usize,
    src: &[T],
    dst: &mut [T],
    shape: &[u64],
    (base, up, down): (usize, &[usize], &[usize]),
) -> (bool, bool) {
    let ok = AtomicBool::new(true);
    let threaded = parallel_chunks_mut(threads, dst, MIN_CHUNK, |at, part| {
        for_each_row_in(shape, [up, down], at..at + part.len(), |start, [u, d], len, [su, sd]| {
            let first = (base + u).checked_sub(d);
            let last = first.and_then(|f| (f + (len - 1) * su).checked_sub((len - 1) * sd));
            let (Some(first), Some(last)) = (first, last) else { return ok.store(false, Ordering::Relaxed) };
            if first.max(last) >= src.len() {
                return ok.store(false, Ordering::Relaxed);
            }
            let out = &mut part[start - at..start - at + len];
            match (su, sd) {
                (1, 0) => out.copy_from_slice(&src[first..=last]),
                (0, 0) => out.fill(src[first]),
                (0, 1) => {
                    out.copy_from_slice(&src[last..=first]);
                    out.reverse();
                }
                _ => out.iter_mut().enumerate().for_each(|(j, o)| *o = src[first + j * su - j * sd]),
            }
        });
    });
    (ok.load(Ordering::Relaxed), threaded)
}

/// A new tensor of `out_shape` copied from the view (`view_shape`, `base`, `up`,
/// `down`) of `x`, whose row-major order is the result's.
fn from_view(
    cx: &KernelCx,
    x: &Tensor,
    out_shape: &[u64],
    view_shape: &[u64],
    view: (usize, &[usize], &[usize]),
) -> Result<Value> {
    created(cx, out_shape)?;
    let out = cx.alloc_for_overwrite(x.dtype(), out_shape)?;
    if out.numel() == 0 {
        return Ok(Value::tensor(out));
    }
    let exec = Exec::of(cx);
    let threads = cx.threads_for(out.numel());
    let (ok, threaded) = with_num!(x.dtype(), T => copy_view(
        threads,
        &read::<T>(cx, x, "the operand")?,
        &mut write::<T>(cx, &out)?,
        view_shape,
        view
    ));
    if !ok {
        return Err(super::common::layout_bug(cx));
    }
    exec.record(out.numel(), threaded);
    Ok(Value::tensor(out))
}

/// `OP-flip`: the lowering; `axis` (required) is read once.
pub fn flip(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::opt_int(l.attrs, "axis") {
        Ok(Some(axis)) => Box::new(Flip { axis }),
        Ok(None) => Box::new(Failing("needs the attribute `axis`".into())),
        Err(e) => Box::new(Failing(e)),
    }
}

/// `OP-flip`: `x` reversed along `axis` (`OpError` when out of range): a view with a
/// negative stride there.
struct Flip {
    axis: i64,
}

impl Kernel for Flip {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        let ax = cx.axis(self.axis, x.rank())?;
        let s = x.shape();
        let mut up = strides(s);
        let mut down = vec![0; s.len()];
        // The view is read only when the tensor is not empty (then this is exact).
        let base = if x.numel() == 0 { 0 } else { (s[ax] as usize - 1) * up[ax] };
        down[ax] = up[ax];
        up[ax] = 0;
        from_view(cx, x, s, s, (base, &up, &down))
    }
}

/// `OP-tril`, `OP-triu`: the lowering (no attributes; `k` is an argument).
pub fn tril_triu(_: &Lowering, lower: bool) -> Box<dyn Kernel> {
    Box::new(TrilTriu { lower })
}

/// `OP-tril` (`lower`), `OP-triu`: each matrix of the last two dimensions keeps the
/// elements with `j - i <= k` (`j - i >= k`), the others 0. `OpError`: `k` not an
/// integer `PrimValue`; a rank below 2. Each row is one kept run copied and the rest filled.
struct TrilTriu {
    lower: bool,
}

impl Kernel for TrilTriu {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let x = operand(cx, args, 0, "the operand")?;
        let k = match &args[1] {
            Value::Prim(Prim::Int(k, _)) => *k as i128,
            v => return Err(cx.error(format!("the diagonal `k` must be an integer PrimValue, got {}", v.kind()))),
        };
        let n = x.rank();
        if n < 2 {
            return Err(cx.error(format!("needs a tensor of at least two dimensions, not rank {n}")));
        }
        let out = cx.alloc_for_overwrite(x.dtype(), x.shape())?;
        if out.numel() == 0 {
            return Ok(Value::tensor(out));
        }
        let (rows, cols) = (x.shape()[n - 2] as usize, x.shape()[n - 1] as usize);
        let exec = Exec::of(cx);
        let lower = self.lower;
        let threaded = with_num!(x.dtype(), T => {
            let src = read::<T>(cx, x, "the operand")?;
            let src: &[T] = &src;
            parallel_chunks_mut(cx.threads_for(out.numel()), &mut write::<T>(cx, &out)?, MIN_CHUNK, |at, part| {
                tri_part(src, part, at, (rows, cols), k, lower)
            })
        });
        exec.record(out.numel(), threaded);
        Ok(Value::tensor(out))
    }
}

/// The elements `at..at + part.len()` of a `tril`/`triu` result, row by row: the kept
/// columns `[lo, hi)` of row `i` copied, the others zeroed.
fn tri_part<T: Num>(src: &[T], part: &mut [T], at: usize, (rows, cols): (usize, usize), k: i128, lower: bool) {
    let end = at + part.len();
    let mut e = at;
    while e < end {
        let row_start = e - e % cols;
        let i = ((e / cols) % rows) as i128;
        let c = cols as i128;
        let (lo, hi) = if lower { (0, (i + k + 1).clamp(0, c) as usize) } else { ((i + k).clamp(0, c) as usize, cols) };
        let (a, b) = (e - row_start, (row_start + cols).min(end) - row_start);
        for (from, to, keep) in [(a, lo.max(a), false), (lo.max(a), hi.min(b), true), (hi.max(a), b, false)] {
            let (from, to) = (from.min(b), to.min(b));
            if from >= to {
                continue;
            }
            let dst = &mut part[row_start + from - at..row_start + to - at];
            if keep {
                dst.copy_from_slice(&src[row_start + from..row_start + to]);
            } else {
                dst.fill(T::ZERO);
            }
        }
        e = row_start + b;
    }
}

/// `OP-tile`: the lowering; `repeats` (required) is read once.
pub fn tile(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::ints(l.attrs, "repeats") {
        Ok(Some(reps)) => Box::new(Tile { reps }),
        Ok(None) => Box::new(Failing("needs the attribute `repeats`".into())),
        Err(e) => Box::new(Failing(e)),
    }
}

/// `OP-tile`: NumPy `tile` (`OpError` for a negative repeat). Output dimension `i` of
/// length `r·d` is the pair `(r, d)` of the view, read with strides `(0, stride)`.
struct Tile {
    reps: Vec<i64>,
}

impl Kernel for Tile {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        if let Some(r) = self.reps.iter().find(|&&r| r < 0) {
            return Err(cx.error(format!("a repeat count is negative ({r})")));
        }
        let n = self.reps.len().max(x.rank());
        let dims: Vec<u64> = std::iter::repeat_n(1, n - x.rank()).chain(x.shape().iter().copied()).collect();
        let reps: Vec<u64> =
            std::iter::repeat_n(1, n - self.reps.len()).chain(self.reps.iter().map(|&r| r as u64)).collect();
        let shape: Vec<u64> = dims.iter().zip(&reps).map(|(&d, &r)| d.saturating_mul(r)).collect();
        let st = strides(&dims);
        let view: Vec<u64> = (0..n).flat_map(|i| [reps[i], dims[i]]).collect();
        let up: Vec<usize> = (0..n).flat_map(|i| [0, st[i]]).collect();
        from_view(cx, x, &shape, &view, (0, &up, &vec![0; 2 * n]))
    }
}

/// `OP-repeat`: the lowering; `repeats` (required) and `axis` are read once.
pub fn repeat(l: &Lowering) -> Box<dyn Kernel> {
    match (attrs::opt_int(l.attrs, "repeats"), attrs::opt_int(l.attrs, "axis")) {
        (Ok(Some(reps)), Ok(axis)) => Box::new(Repeat { reps, axis }),
        (Ok(None), _) => Box::new(Failing("needs the attribute `repeats`".into())),
        (Err(e), _) | (_, Err(e)) => Box::new(Failing(e)),
    }
}

/// `OP-repeat`: NumPy `repeat` (`OpError` for a negative count or an axis out of
/// range). The axis of length `d·r` is the pair `(d, r)` of the view, read with
/// strides `(stride, 0)`; without an axis, of the flattened operand.
struct Repeat {
    reps: i64,
    axis: Option<i64>,
}

impl Kernel for Repeat {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        if self.reps < 0 {
            return Err(cx.error(format!("the repeat count is negative ({})", self.reps)));
        }
        let (dims, ax) = match self.axis {
            None => (vec![x.numel() as u64], 0),
            Some(a) => (x.shape().to_vec(), cx.axis(a, x.rank())?),
        };
        let r = self.reps as u64;
        let mut shape = dims.clone();
        shape[ax] = shape[ax].saturating_mul(r);
        let st = strides(&dims);
        let mut view = dims.clone();
        view.insert(ax + 1, r);
        let mut up = st.clone();
        up.insert(ax + 1, 0);
        from_view(cx, x, &shape, &view, (0, &up, &vec![0; view.len()]))
    }
}

/// `OP-collapse_sum_like`: the lowering (no attributes).
pub fn collapse_sum_like(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(CollapseSumLike)
}

/// `OP-collapse_sum_like`: `data` summed to the target's shape (pairs from the right:
/// equal dimensions kept, a target 1 summed, leading ones summed away; `OpError` for
/// a higher-rank target or another pair). Each data row adds into its result row in
/// data's row-major order, so every sum runs in the oracle's order, bit for bit.
struct CollapseSumLike;

impl Kernel for CollapseSumLike {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let data = operand(cx, args, 0, "the data")?;
        let target = operand(cx, args, 1, "the collapse target")?;
        let (ds, ts) = (data.shape(), target.shape());
        let Some(lead) = ds.len().checked_sub(ts.len()) else {
            return Err(cx.error(format!("cannot collapse rank {} to the higher rank {}", ds.len(), ts.len())));
        };
        if let Some(i) = (0..ts.len()).find(|&i| ts[i] != ds[lead + i] && ts[i] != 1) {
            return Err(cx.error(format!(
                "data dimension {} ({}) cannot be summed to {}",
                lead + i,
                ds[lead + i],
                ts[i]
            )));
        }
        created(cx, ts)?;
        let out = cx.alloc(data.dtype(), ts)?;
        if out.numel() == 0 || data.numel() == 0 {
            return Ok(Value::tensor(out));
        }
        let ost = strides(ts);
        let to: Vec<usize> =
            (0..ds.len()).map(|i| if i < lead || ts[i - lead] == 1 { 0 } else { ost[i - lead] }).collect();
        let from = strides(ds);
        let ok = with_num!(data.dtype(), T => {
            collapse::<T>(&read::<T>(cx, data, "the data")?, &mut write::<T>(cx, &out)?, ds, &from, &to)
        });
        if !ok {
            return Err(super::common::layout_bug(cx));
        }
        Exec::of(cx).record(data.numel(), false);
        Ok(Value::tensor(out))
    }
}

/// Adds each row of `src` (of `shape`, strides `from`) into `dst` at strides `to`;
/// `false` if some row would leave either.
fn collapse<T: Num>(src: &[T], dst: &mut [T], shape: &[u64], from: &[usize], to: &[usize]) -> bool {
    let mut ok = true;
    for_each_row(shape, [from, to], |_, [f, t], len, [sf, st]| {
        let (Some(s), Some(d)) = (src.get(f..f + len), dst.get_mut(t..t + (len - 1) * st + 1)) else {
            ok = false;
            return;
        };
        if sf != 1 && len > 1 {
            ok = false;
        } else if st == 1 {
            d.iter_mut().zip(s).for_each(|(o, &v)| *o = o.add(v));
        } else {
            // The row is summed into one element, in order.
            d[0] = s.iter().fold(d[0], |acc, &v| acc.add(v));
        }
    });
    ok
}

#[cfg(test)]
mod tests {
    use super::super::{lower, Lowered};
    use super::*;
    use crate::error::ErrorKind;
    use crate::Memory;
    use spec_model::grammar::{AttrValue, Attrs};
    use spec_model::ops::Op;
    use spec_model::Span;
    use std::rc::Rc;

    fn iota(shape: &[u64], m: &Rc<Memory>) -> Value {
        let n = crate::tensor::element_count(shape).unwrap();
        let values: Vec<i32> = (0..n as i32).collect();
        Value::tensor(Tensor::from_slice(DType::I32, shape, &values, m).unwrap())
    }

    fn with(pairs: &[(&str, AttrValue)]) -> Attrs {
        let mut a = Attrs::default();
        for (k, v) in pairs {
            a.insert(*k, v.clone());
        }
        a
    }

    fn list(xs: &[i64]) -> AttrValue {
        AttrValue::List(xs.iter().map(|&x| AttrValue::Int(x)).collect())
    }

    /// Runs `op` on `threads` threads, splitting outputs of 2 elements or more.
    fn run(op: Op, a: &Attrs, args: &[Value], m: &Rc<Memory>, threads: usize) -> Result<Value> {
        let Lowered::Kernel(k) = lower(&Lowering { op, attrs: a, args: &vec![None; args.len()] }) else {
            panic!("a kernel")
        };
        k.run(&KernelCx { op, span: Span::SYNTHETIC, memory: m, threads, parallel_min: 2 }, args)
    }

    fn got(r: Result<Value>) -> (Vec<u64>, Vec<i32>) {
        match r.unwrap() {
            Value::Tensor(t) => (t.shape().to_vec(), t.elements::<i32>().unwrap().to_vec()),
            other => panic!("not a tensor: {other:?}"),
        }
    }

    fn kind(r: Result<Value>) -> ErrorKind {
        r.expect_err("an error").kind
    }

    #[test]
    fn small_cases_by_hand() {
        let m = Memory::new(1 << 30);
        let x = iota(&[2, 3], &m);
        let axis = |a: i64| with(&[("axis", AttrValue::Int(a))]);
        assert_eq!(
            got(run(Op::Flip, &axis(-1), std::slice::from_ref(&x), &m, 1)),
            (vec![2, 3], vec![2, 1, 0, 5, 4, 3])
        );
        assert_eq!(got(run(Op::Flip, &axis(0), std::slice::from_ref(&x), &m, 1)), (vec![2, 3], vec![3, 4, 5, 0, 1, 2]));
        let reps = with(&[("repeats", list(&[2, 1, 2]))]);
        let (s, v) = got(run(Op::Tile, &reps, std::slice::from_ref(&x), &m, 1));
        assert_eq!((s, &v[..6]), (vec![2, 2, 6], &[0, 1, 2, 0, 1, 2][..]));
        let rep = with(&[("repeats", AttrValue::Int(2)), ("axis", AttrValue::Int(1))]);
        assert_eq!(
            got(run(Op::Repeat, &rep, std::slice::from_ref(&x), &m, 1)).1,
            vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
        );
        let k = |k: i64| Value::Prim(Prim::Int(k, DataType::INT64));
        let none = Attrs::default();
        assert_eq!(got(run(Op::Tril, &none, &[x.clone(), k(0)], &m, 1)).1, vec![0, 0, 0, 3, 4, 0]);
        assert_eq!(got(run(Op::Triu, &none, &[x.clone(), k(1)], &m, 1)).1, vec![0, 1, 2, 0, 0, 5]);
        assert_eq!(got(run(Op::Tril, &none, &[x.clone(), k(i64::MIN)], &m, 1)).1, vec![0; 6]);
        assert_eq!(got(run(Op::Triu, &none, &[x.clone(), k(i64::MIN)], &m, 1)).1, vec![0, 1, 2, 3, 4, 5]);
        let target = iota(&[1, 3], &m);
        assert_eq!(got(run(Op::CollapseSumLike, &none, &[x.clone(), target], &m, 1)), (vec![1, 3], vec![3, 5, 7]));
        let scalar = iota(&[], &m);
        assert_eq!(got(run(Op::CollapseSumLike, &none, &[x.clone(), scalar], &m, 1)), (vec![], vec![15]));
        // Errors: a non-1 axis, a negative count, rank below 2, a higher-rank target.
        assert_eq!(
            kind(run(Op::Squeeze, &with(&[("axis", list(&[0]))]), std::slice::from_ref(&x), &m, 1)),
            ErrorKind::OpError
        );
        assert_eq!(
            kind(run(Op::Tile, &with(&[("repeats", list(&[-1]))]), std::slice::from_ref(&x), &m, 1)),
            ErrorKind::OpError
        );
        assert_eq!(kind(run(Op::Tril, &none, &[iota(&[3], &m), k(0)], &m, 1)), ErrorKind::OpError);
        assert_eq!(kind(run(Op::CollapseSumLike, &none, &[iota(&[3], &m), x.clone()], &m, 1)), ErrorKind::OpError);
        assert_eq!(kind(run(Op::Flip, &none, &[x], &m, 1)), ErrorKind::OpError);
    }

    #[test]
    fn threads_give_the_serial_result() {
        let m = Memory::new(1 << 30);
        let x = iota(&[3, 5, 7], &m);
        let k = Value::Prim(Prim::Int(-1, DataType::INT64));
        let cases: Vec<(Op, Attrs, Vec<Value>)> = vec![
            (Op::Flip, with(&[("axis", AttrValue::Int(1))]), vec![x.clone()]),
            (Op::Tile, with(&[("repeats", list(&[2, 1, 3]))]), vec![x.clone()]),
            (Op::Repeat, with(&[("repeats", AttrValue::Int(3)), ("axis", AttrValue::Int(-1))]), vec![x.clone()]),
            (Op::Repeat, with(&[("repeats", AttrValue::Int(2))]), vec![x.clone()]),
            (Op::Tril, Attrs::default(), vec![x.clone(), k.clone()]),
            (Op::Triu, Attrs::default(), vec![x.clone(), k]),
            (Op::ExpandDims, with(&[("axis", list(&[0, -1]))]), vec![x.clone()]),
            (Op::Flatten, Attrs::default(), vec![x.clone()]),
            (Op::OnesLike, with(&[("dtype", AttrValue::Str("int32".into()))]), vec![x.clone()]),
        ];
        for (op, a, args) in cases {
            let one = got(run(op, &a, &args, &m, 1));
            for threads in [2, 3, 8] {
                assert_eq!(got(run(op, &a, &args, &m, threads)), one, "{op} on {threads} threads");
            }
        }
    }

    #[test]
    fn empty_and_huge_operands_do_not_panic() {
        let m = Memory::new(1 << 20);
        let empty = Value::tensor(Tensor::zeros(DType::F32, &[0, 1 << 40, u64::MAX], &m).unwrap());
        let axis = |a: i64| with(&[("axis", AttrValue::Int(a))]);
        for op in [Op::Flip, Op::Squeeze, Op::Flatten, Op::ZerosLike] {
            let a = if op == Op::Flip { axis(2) } else { Attrs::default() };
            assert!(run(op, &a, std::slice::from_ref(&empty), &m, 2).is_ok(), "{op}");
        }
        let tiny = iota(&[2], &m);
        let huge = with(&[("repeats", AttrValue::Int(i64::MAX))]);
        assert!(run(Op::Repeat, &huge, &[tiny], &m, 1).err().is_some_and(|e| e.kind.is_resource()));
    }
}
