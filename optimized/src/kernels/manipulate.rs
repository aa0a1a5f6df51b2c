//! Moving elements: `reshape`, `permute_dims`, `broadcast_to`, `concat`, `split`,
//! `strided_slice`, `take`.
//!
//! None of these operators looks at an element's value, so each is written once per
//! element *width* (`by_width!`): the code that moves a `float32` moves a `uint32`.
//! Every result is a new tensor, never a view or an alias of an operand (as in the
//! oracle: aliasing is observable through packed functions that write in place).

/// Runs `$body` with `$t` an unsigned integer type as wide as an element of `$dtype`.
macro_rules! by_width {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype.size() {
            1 => {
                type $t = u8;
                $body
            }
            2 => {
                type $t = u16;
                $body
            }
            4 => {
                type $t = u32;
                $body
            }
            _ => {
                type $t = u64;
                $body
            }
        }
    };
}

mod slice;
mod take;
#[cfg(test)]
mod tests;

pub use slice::strided_slice;
pub use take::take;

use super::layout::{broadcast_strides, for_each_row, strides};
use super::simd::{self, loops::Transpose, Exec};
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::Element;
use crate::error::{Error, ErrorKind, Result};
use crate::tensor::Tensor;
use crate::value::Value;
use spec_model::grammar::AttrValue;
use std::cell::{Ref, RefMut};
use std::rc::Rc;

/// The most parts `split` makes (as the static rule and the oracle).
const MAX_PARTS: i64 = 1 << 16;

/// The element count of `shape`: 0 when a dimension is 0, however large the others;
/// `None` past `u64`.
fn elements_of(shape: &[u64]) -> Option<u64> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
}

/// The product of some dimensions of a non-empty tensor (so it is exact).
fn product(dims: &[u64]) -> usize {
    dims.iter().fold(1usize, |n, &d| n.saturating_mul(usize::try_from(d).unwrap_or(usize::MAX)))
}

/// `MemoryExhausted` for a result whose element count does not fit in `u64` (the memory
/// budget, checked when the result is allocated, bounds the others).
fn check_size(cx: &KernelCx, shape: &[u64]) -> Result<()> {
    match elements_of(shape) {
        Some(_) => Ok(()),
        None => Err(Error::new(
            ErrorKind::MemoryExhausted,
            "LIMIT-memory",
            format!("{}: a tensor of shape {shape:?} has more elements than memory holds", cx.op),
            cx.span,
        )),
    }
}

/// Argument `i` as a tensor that can be read now: one that a packed function is
/// writing is an `OpError`, raised where the oracle raises it (before the others).
fn operand<'v>(cx: &KernelCx, args: &'v [Value], i: usize, what: &str) -> Result<&'v Rc<Tensor>> {
    let t = cx.tensor(args, i, what)?;
    if t.data().is_none() {
        return Err(cx.error(format!("{what} is being mutated")));
    }
    Ok(t)
}

/// Argument `i` as a shape value's dimensions (not yet checked to be non-negative).
fn shape_arg<'v>(cx: &KernelCx, args: &'v [Value], i: usize, what: &str) -> Result<&'v [i64]> {
    match cx.arg(args, i)? {
        Value::Shape(s) => Ok(s),
        other => Err(cx.error(format!("{what} must be a shape, got {}", other.kind()))),
    }
}

/// Dimensions that must be non-negative (`NegativeDimension`).
fn non_negative(cx: &KernelCx, dims: &[i64]) -> Result<Vec<u64>> {
    dims.iter()
        .map(|&d| {
            u64::try_from(d).map_err(|_| cx.fail(ErrorKind::NegativeDimension, format!("dimension {d} is negative")))
        })
        .collect()
}

/// Normalized axes (negative ones count from the end), none repeated.
fn distinct_axes(cx: &KernelCx, axes: &[i64], rank: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = cx.axis(a, rank)?;
        if out.contains(&n) {
            return Err(cx.error(format!("axis {a} is repeated")));
        }
        out.push(n);
    }
    Ok(out)
}

/// The elements of an operand, as `T`s of its width.
fn read<'t, T: Element>(cx: &KernelCx, t: &'t Tensor) -> Result<Ref<'t, [T]>> {
    t.elements::<T>().ok_or_else(|| cx.error("an operand is being mutated"))
}

/// The elements of a result being filled.
fn write<'t, T: Element>(cx: &KernelCx, t: &'t Tensor) -> Result<RefMut<'t, [T]>> {
    t.elements_mut::<T>().ok_or_else(|| cx.fail(ErrorKind::Crash, "a new result is already borrowed"))
}

/// Copies every byte of `src` into `dst`, a new tensor of the same dtype and count.
fn copy_all(cx: &KernelCx, src: &Tensor, dst: &Tensor) -> Result<()> {
    let from = src.data().ok_or_else(|| cx.error("the operand is being mutated"))?;
    let mut to = dst.data_mut().ok_or_else(|| cx.fail(ErrorKind::Crash, "a new result is already borrowed"))?;
    if from.len_bytes() != to.len_bytes() {
        return Err(cx.fail(ErrorKind::Crash, "a copy between tensors of different sizes"));
    }
    to.bytes_mut().copy_from_slice(from.bytes());
    Ok(())
}

/// A strided view of an operand: element `idx` of the view is the operand's element
/// `base + Σ idx[d]·up[d] − Σ idx[d]·down[d]`. A negative stride is a `down` one, so
/// every stride is a `usize` and [`for_each_row`] can walk the view.
struct View<'a> {
    base: usize,
    up: &'a [usize],
    down: &'a [usize],
}

/// Copies the view `v` of `src`, of shape `shape`, into `dst` in row-major order: a
/// contiguous row in one `copy_from_slice`, a broadcast row as one `fill`. `false`
/// (a bug of the caller, never an input's fault) if some row would reach outside
/// `src` or `dst`; each row is checked at its two ends, since its offsets are linear.
fn copy_view<T: Copy>(src: &[T], dst: &mut [T], shape: &[u64], v: &View) -> bool {
    let mut ok = true;
    for_each_row(shape, [v.up, v.down], |start, [up, down], len, [su, sd]| {
        let first = v.base.checked_add(up).and_then(|o| o.checked_sub(down));
        let last =
            first.and_then(|o| o.checked_add((len - 1).checked_mul(su)?)?.checked_sub((len - 1).checked_mul(sd)?));
        let (Some(first), Some(last), Some(out)) = (first, last, dst.get_mut(start..start + len)) else {
            ok = false;
            return;
        };
        if !ok || first.max(last) >= src.len() {
            ok = false;
            return;
        }
        match (su, sd) {
            (1, 0) => out.copy_from_slice(&src[first..=last]),
            (0, 0) => out.fill(src[first]),
            (0, 1) => {
                out.copy_from_slice(&src[last..=first]);
                out.reverse();
            }
            _ => {
                for (j, o) in out.iter_mut().enumerate() {
                    *o = src[first + j * su - j * sd];
                }
            }
        }
    });
    ok
}

/// Copies the view `v` of tensor `src` into the new tensor `dst` (of shape `shape`).
fn copy_view_of(cx: &KernelCx, src: &Tensor, dst: &Tensor, v: &View) -> Result<()> {
    let ok = by_width!(src.dtype(), T => copy_view(&read::<T>(cx, src)?, &mut write::<T>(cx, dst)?, dst.shape(), v));
    if !ok {
        return Err(cx.fail(ErrorKind::Crash, "a strided read outside the operand"));
    }
    Ok(())
}

/// `OP-reshape`: the lowering of `reshape(x, shape)` (no attributes).
pub fn reshape(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Reshape)
}

/// `OP-reshape`: `x`'s elements in row-major order with the new shape, in a new
/// tensor (the oracle's result is fresh too). One dimension may be `-1` (E-11).
struct Reshape;

impl Kernel for Reshape {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let x = operand(cx, args, 0, "the operand")?;
        let want = shape_arg(cx, args, 1, "the new shape")?;
        let dims = reshape_dims(cx, want, x.numel() as u64)?;
        let out = cx.alloc(x.dtype(), &dims)?;
        copy_all(cx, x, &out)?;
        Ok(Value::tensor(out))
    }
}

/// `OP-reshape`: the shape `want` gives `count` elements. More than one `-1` is an
/// `OpError` (checked first); another negative dimension `NegativeDimension`; a `-1`
/// is `count` divided by the product of the others, which must be non-zero and divide
/// it; without one the product must be `count` (`OpError`).
fn reshape_dims(cx: &KernelCx, want: &[i64], count: u64) -> Result<Vec<u64>> {
    let holes: Vec<usize> = (0..want.len()).filter(|&i| want[i] == -1).collect();
    if holes.len() > 1 {
        return Err(cx.error("at most one dimension of the new shape may be -1"));
    }
    let known: Vec<i64> = want.iter().map(|&d| if d == -1 { 1 } else { d }).collect();
    let mut dims = non_negative(cx, &known)?;
    let rest = elements_of(&dims);
    match (holes.first(), rest) {
        (Some(&h), Some(r)) if r != 0 && count.is_multiple_of(r) => dims[h] = count / r,
        (Some(_), _) => return Err(cx.error(format!("cannot infer the -1 dimension of {want:?} for {count} elements"))),
        (None, Some(r)) if r == count => {}
        (None, _) => return Err(cx.error(format!("cannot reshape {count} elements to {want:?}"))),
    }
    Ok(dims)
}

/// `OP-permute_dims`: the lowering; `axes` is read once (a list of integers, or one).
pub fn permute_dims(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::ints(l.attrs, "axes") {
        Ok(axes) => Box::new(PermuteDims { axes }),
        Err(e) => Box::new(Failing(e)),
    }
}

/// `OP-permute_dims`: result dimension `i` is operand dimension `axes[i]` (default:
/// the dimensions reversed). `axes` must name every axis once (`OpError`). Swapping the
/// last two axes is a batch of tiled transposes; other orders copy rows (contiguous
/// runs with `copy_from_slice`).
struct PermuteDims {
    axes: Option<Vec<i64>>,
}

impl Kernel for PermuteDims {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        let n = x.rank();
        let order = match &self.axes {
            Some(list) if list.len() != n => {
                return Err(cx.error(format!("{} axes given for a tensor of rank {n}", list.len())));
            }
            Some(list) => distinct_axes(cx, list, n)?,
            None => (0..n).rev().collect(),
        };
        let dims: Vec<u64> = order.iter().map(|&i| x.shape()[i]).collect();
        let out = cx.alloc(x.dtype(), &dims)?;
        if out.numel() == 0 {
            return Ok(Value::tensor(out));
        }
        if order.iter().enumerate().all(|(i, &a)| i == a) {
            copy_all(cx, x, &out)?;
        } else if n >= 2 && order[n - 2..] == [n - 1, n - 2] && order[..n - 2].iter().enumerate().all(|(i, &a)| i == a)
        {
            // The last two axes swap: a batch of matrix transposes, copied in tiles.
            let (rows, cols) = (x.shape()[n - 2] as usize, x.shape()[n - 1] as usize);
            let exec = Exec::of(cx);
            by_width!(x.dtype(), T => {
                let (src, mut dst) = (read::<T>(cx, x)?, write::<T>(cx, &out)?);
                for (src, dst) in src.chunks_exact(rows * cols).zip(dst.chunks_exact_mut(rows * cols)) {
                    simd::run(exec.level, Transpose { src, dst, rows, cols });
                }
            });
            exec.record(out.numel(), false);
        } else {
            let st = strides(x.shape());
            let up: Vec<usize> = order.iter().map(|&i| st[i]).collect();
            copy_view_of(cx, x, &out, &View { base: 0, up: &up, down: &vec![0; n] })?;
        }
        Ok(Value::tensor(out))
    }
}

/// `OP-broadcast_to`: the lowering (no attributes).
pub fn broadcast_to(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(BroadcastTo)
}

/// `OP-broadcast_to`: `x` broadcast (NumPy) to exactly `shape`. A negative target
/// dimension is `NegativeDimension` (checked before the rest); a target of lower rank,
/// a dimension of `x` neither 1 nor the target's `OpError`.
struct BroadcastTo;

impl Kernel for BroadcastTo {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 2)?;
        let x = operand(cx, args, 0, "the operand")?;
        let target = non_negative(cx, shape_arg(cx, args, 1, "the target shape")?)?;
        let Some(lead) = target.len().checked_sub(x.rank()) else {
            return Err(cx.error(format!("cannot broadcast a tensor of rank {} to rank {}", x.rank(), target.len())));
        };
        if x.shape().iter().zip(&target[lead..]).any(|(&d, &t)| d != 1 && d != t) {
            return Err(cx.error(format!("shape {:?} cannot be broadcast to {target:?}", x.shape())));
        }
        check_size(cx, &target)?;
        let out = cx.alloc(x.dtype(), &target)?;
        if out.numel() > 0 {
            let up = broadcast_strides(x.shape(), &target);
            copy_view_of(cx, x, &out, &View { base: 0, up: &up, down: &vec![0; target.len()] })?;
        }
        Ok(Value::tensor(out))
    }
}

/// `OP-concat`: the lowering; `axis` (default 0) is read once.
pub fn concat(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::opt_int(l.attrs, "axis") {
        Ok(axis) => Box::new(Concat { axis: axis.unwrap_or(0) }),
        Err(e) => Box::new(Failing(e)),
    }
}

/// `OP-concat`: joins a tuple of tensors along `axis`. `OpError`: not a tuple of
/// readable tensors, an empty tuple, `axis` out of range for the first tensor, a
/// different dtype or rank, another dimension that differs.
struct Concat {
    axis: i64,
}

impl Kernel for Concat {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let Value::Tuple(fields) = &args[0] else {
            return Err(cx.error(format!("the argument must be a tuple of tensors, got {}", args[0].kind())));
        };
        let ts: Vec<&Rc<Tensor>> =
            (0..fields.len()).map(|i| operand(cx, fields, i, &format!("tuple field {i}"))).collect::<Result<_>>()?;
        let Some(first) = ts.first() else { return Err(cx.error("needs at least one tensor")) };
        let axis = cx.axis(self.axis, first.rank())?;
        let mut shape = first.shape().to_vec();
        shape[axis] = 0;
        for t in &ts {
            if t.dtype() != first.dtype() || t.rank() != first.rank() {
                return Err(cx.error(format!(
                    "cannot join a {} tensor of rank {} with a {} tensor of rank {}",
                    first.dtype(),
                    first.rank(),
                    t.dtype(),
                    t.rank()
                )));
            }
            if let Some(i) = (0..shape.len()).find(|&i| i != axis && t.shape()[i] != shape[i]) {
                return Err(cx.error(format!(
                    "shapes {:?} and {:?} differ at dimension {i}",
                    first.shape(),
                    t.shape()
                )));
            }
            // Saturating: a sum past u64 is past the limit below anyway.
            shape[axis] = shape[axis].saturating_add(t.shape()[axis]);
        }
        check_size(cx, &shape)?;
        let out = cx.alloc(first.dtype(), &shape)?;
        if out.numel() == 0 {
            return Ok(Value::tensor(out));
        }
        let (outer, inner) = (product(&shape[..axis]), product(&shape[axis + 1..]));
        let chunks: Vec<usize> = ts.iter().map(|t| product(&t.shape()[axis..=axis]) * inner).collect();
        by_width!(first.dtype(), T => {
            let parts: Vec<Ref<[T]>> = ts.iter().map(|t| read::<T>(cx, t)).collect::<Result<_>>()?;
            let mut dst = write::<T>(cx, &out)?;
            let mut at = 0;
            for o in 0..outer {
                for (p, &c) in parts.iter().zip(&chunks) {
                    dst[at..at + c].copy_from_slice(&p[o * c..(o + 1) * c]);
                    at += c;
                }
            }
        });
        Ok(Value::tensor(out))
    }
}

/// How `split` cuts: into `n` equal sections, or at indices.
enum Cuts {
    Sections(u64),
    Indices(Vec<i64>),
}

/// `OP-split`: the lowering. `axis` (default 0) and `indices_or_sections` are read
/// once: an integer is a count of sections (1 to 2^16), a list the indices (fewer
/// than 2^16); absent or ill-kinded, the call fails with `OpError`.
pub fn split(l: &Lowering) -> Box<dyn Kernel> {
    let axis = match attrs::opt_int(l.attrs, "axis") {
        Ok(axis) => axis.unwrap_or(0),
        Err(e) => return Box::new(Failing(e)),
    };
    let name = "indices_or_sections";
    let cuts = match l.attrs.get(name).filter(|v| !matches!(v, AttrValue::None)) {
        None => return Box::new(Failing(format!("needs the attribute `{name}`"))),
        Some(AttrValue::Int(n)) if (1..=MAX_PARTS).contains(n) => Cuts::Sections(*n as u64),
        Some(AttrValue::Int(n)) => return Box::new(Failing(format!("cannot split into {n} sections"))),
        Some(_) => match attrs::ints(l.attrs, name) {
            Ok(Some(idx)) if idx.len() < MAX_PARTS as usize => Cuts::Indices(idx),
            Ok(Some(idx)) => return Box::new(Failing(format!("{} parts are more than 2^16", idx.len() + 1))),
            Ok(None) => return Box::new(Failing(format!("needs the attribute `{name}`"))),
            Err(e) => return Box::new(Failing(e)),
        },
    };
    Box::new(Split { axis, cuts })
}

/// `OP-split`: the parts of `x` along `axis` (one part: `x` itself, more: a tuple).
/// `n` sections are `ceil(d / n)` long, the last one the rest (negative: `OpError`);
/// indices `i1, …, ik` give the parts `[0:i1]`, `[i1:i2]`, …,
/// `[ik:]` with Python's bounds (negative from the end, clamped to the dimension; a
/// decreasing pair gives an empty part).
struct Split {
    axis: i64,
    cuts: Cuts,
}

/// A split index as a bound in `[0, d]`, as a Python slice bound.
fn clamp_bound(i: i64, d: u64) -> u64 {
    if i < 0 {
        d.saturating_sub(i.unsigned_abs())
    } else {
        d.min(i as u64)
    }
}

impl Kernel for Split {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let x = operand(cx, args, 0, "the operand")?;
        let axis = cx.axis(self.axis, x.rank())?;
        let d = x.shape()[axis];
        // Each part as (first index along the axis, length).
        let parts: Vec<(u64, u64)> = match &self.cuts {
            // Parts of ceil(d / n), the rest last (TOPI's `split_n_sections`).
            Cuts::Sections(n) => {
                let seg = d.div_ceil(*n);
                let Some(last) = seg.checked_mul(n - 1).and_then(|p| d.checked_sub(p)) else {
                    return Err(cx.error(format!("{n} sections of {seg} exceed dimension {d}")));
                };
                (0..*n).map(|i| (i * seg, if i + 1 == *n { last } else { seg })).collect()
            }
            Cuts::Indices(idx) => {
                let mut bounds = Vec::with_capacity(idx.len() + 2);
                bounds.push(0);
                bounds.extend(idx.iter().map(|&i| clamp_bound(i, d)));
                bounds.push(d);
                bounds.windows(2).map(|w| (w[0], w[1].saturating_sub(w[0]))).collect()
            }
        };
        let (outer, inner) = (product(&x.shape()[..axis]), product(&x.shape()[axis + 1..]));
        let mut out = Vec::with_capacity(parts.len());
        by_width!(x.dtype(), T => {
            let src = read::<T>(cx, x)?;
            for (lo, len) in parts {
                let mut dims = x.shape().to_vec();
                dims[axis] = len;
                let part = cx.alloc(x.dtype(), &dims)?;
                if part.numel() > 0 {
                    // Non-empty, so the operand is too and these are exact.
                    let (d, lo, len) = (d as usize, lo as usize, len as usize);
                    let mut dst = write::<T>(cx, &part)?;
                    let row = len * inner;
                    for o in 0..outer {
                        let from = (o * d + lo) * inner;
                        dst[o * row..(o + 1) * row].copy_from_slice(&src[from..from + row]);
                    }
                }
                out.push(Value::tensor(part));
            }
        });
        // One part is the tensor (a copy of the operand, TVM 0.27), not a 1-tuple.
        if out.len() == 1 {
            return Ok(out.remove(0));
        }
        Ok(Value::tuple(out))
    }
}
