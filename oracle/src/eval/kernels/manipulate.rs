//! Shape manipulation: `reshape`, `permute_dims`, `broadcast_to`, `concat`, `split`,
//! `strided_slice`, `take`.

use super::broadcast::{broadcast_walk, strides, Walk};
use super::elem::{gather, map_data, Storage};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, Value};
use spec_model::grammar::{AttrValue, NDArray, Scalar, TensorData};
use std::cell::Ref;
use std::rc::Rc;

/// The most parts `split` makes (as the static rule).
const MAX_PARTS: usize = 1 << 16;

fn product(dims: &[u64]) -> Option<u64> {
    super::broadcast::element_count(dims)
}

/// OP-reshape: `reshape(x, shape)` is `x`'s elements in row-major order with the new
/// shape; one dimension may be `-1`, inferred as the element count divided by the
/// product of the others. Errors: `x` not a tensor, `shape` not a shape (`OpError`);
/// more than one `-1`, a `-1` beside dimensions multiplying to 0 or not dividing the
/// count, a different element count (`OpError`); another negative dimension
/// (`NegativeDimension`).
pub(crate) fn reshape(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let want = cx.shape(&args[1], "the new shape")?;
    let holes: Vec<usize> = (0..want.len()).filter(|&i| want[i] == -1).collect();
    if holes.len() > 1 {
        return Err(cx.error("at most one dimension of the new shape may be -1"));
    }
    let known: Vec<i64> = want.iter().map(|&d| if d == -1 { 1 } else { d }).collect();
    let mut dims = cx.dims(&known)?;
    let count = a.data.len() as u64;
    let rest = product(&dims);
    match (holes.first(), rest) {
        (Some(&h), Some(r)) if r != 0 && count.is_multiple_of(r) => dims[h] = count / r,
        (Some(_), _) => {
            return Err(cx.error(format!("cannot infer the -1 dimension of {want:?} for {count} elements")));
        }
        (None, Some(r)) if r == count => {}
        (None, _) => {
            return Err(cx.error(format!("cannot reshape {count} elements (shape {:?}) to {want:?}", a.shape)));
        }
    }
    Ok(tensor_value(a.dtype, dims, a.data.clone()))
}

/// OP-permute_dims: result dimension `i` is input dimension `axes[i]` (default:
/// reversed). Errors: not a tensor; `axes` not a permutation of the axes (negative
/// ones count from the end).
pub(crate) fn permute_dims(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let n = a.ndim();
    let order = match cx.attr_ints("axes")? {
        Some(list) if list.len() != n => {
            return Err(cx.error(format!("{} axes given for a tensor of rank {n}", list.len())));
        }
        Some(list) => cx.axes(&list, n)?,
        None => (0..n).rev().collect(),
    };
    let st = strides(&a.shape);
    let dims: Vec<u64> = order.iter().map(|&i| a.shape[i]).collect();
    let data = gather(&a.data, Walk::new(0, dims.clone(), order.iter().map(|&i| st[i]).collect()));
    Ok(tensor_value(a.dtype, dims, data))
}

/// OP-broadcast_to: `x` broadcast (NumPy) to exactly `shape`. Errors: not a tensor /
/// not a shape; `shape` of lower rank than `x`; a dimension of `x` neither 1 nor the
/// target's (`OpError`); a negative target dimension (`NegativeDimension`).
pub(crate) fn broadcast_to(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let target = cx.dims(&cx.shape(&args[1], "the target shape")?)?;
    let off = target
        .len()
        .checked_sub(a.ndim())
        .ok_or_else(|| cx.error(format!("cannot broadcast a tensor of rank {} to rank {}", a.ndim(), target.len())))?;
    for (i, &d) in a.shape.iter().enumerate() {
        if d != 1 && d != target[off + i] {
            return Err(cx.error(format!("shape {:?} cannot be broadcast to {target:?}", a.shape)));
        }
    }
    cx.numel(&target)?;
    let data = gather(&a.data, broadcast_walk(&a.shape, &target));
    Ok(tensor_value(a.dtype, target, data))
}

/// The tensors of a tuple argument.
fn tensor_fields<'v>(cx: &Cx, v: &'v Value) -> EvalResult<Vec<Ref<'v, NDArray>>> {
    match v {
        Value::Tuple(fs) => fs.iter().enumerate().map(|(i, f)| cx.tensor(f, &format!("tuple field {i}"))).collect(),
        _ => Err(cx.error(format!("the argument must be a tuple of tensors, got {}", v.kind()))),
    }
}

/// OP-concat: joins a tuple of tensors along `axis` (default 0). Errors: not a tuple
/// of tensors; an empty tuple; different ranks or dtypes; `axis` out of range; other
/// dimensions that differ.
pub(crate) fn concat(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let ts = tensor_fields(cx, &args[0])?;
    let Some(first) = ts.first() else { return Err(cx.error("needs at least one tensor")) };
    let axis = cx.axis(cx.attr_int("axis", 0)?, first.ndim())?;
    let mut shape = first.shape.clone();
    shape[axis] = 0;
    for t in &ts {
        if t.dtype != first.dtype || t.ndim() != first.ndim() {
            return Err(cx.error(format!(
                "cannot join tensors of dtype {} and rank {} with dtype {} and rank {}",
                first.dtype,
                first.ndim(),
                t.dtype,
                t.ndim()
            )));
        }
        for i in (0..shape.len()).filter(|&i| i != axis) {
            if t.shape[i] != shape[i] {
                return Err(cx.error(format!("shapes {:?} and {:?} differ at dimension {i}", first.shape, t.shape)));
            }
        }
        shape[axis] = shape[axis].saturating_add(t.shape[axis]);
    }
    if cx.numel(&shape)? == 0 {
        // Nothing to copy, however many (empty) rows the other dimensions make.
        return Ok(tensor_value(first.dtype, shape, cx.storage(first.dtype)?));
    }
    let outer = product(&shape[..axis]).unwrap_or(0) as usize;
    let inner = product(&shape[axis + 1..]).unwrap_or(0) as usize;
    let chunks: Vec<usize> = ts.iter().map(|t| (t.shape[axis] as usize).saturating_mul(inner)).collect();
    let parts: Vec<&TensorData> = ts.iter().map(|t| &t.data).collect();
    let data = map_data!(&first.data, _v => concat_loop(&parts, &chunks, outer)
        .ok_or_else(|| cx.error("tensors of different storage"))?);
    Ok(tensor_value(first.dtype, shape, data))
}

fn concat_loop<T: Storage>(parts: &[&TensorData], chunks: &[usize], outer: usize) -> Option<Vec<T>> {
    let vs: Vec<&[T]> = parts.iter().map(|d| T::slice(d)).collect::<Option<_>>()?;
    let mut out = Vec::new();
    for o in 0..outer {
        for (v, &c) in vs.iter().zip(chunks) {
            out.extend_from_slice(&v[o * c..(o + 1) * c]);
        }
    }
    Some(out)
}

/// The part `[lo, lo + len)` of `a` along `axis`.
fn part(a: &NDArray, axis: usize, lo: u64, len: u64) -> Value {
    let st = strides(&a.shape);
    let mut dims = a.shape.clone();
    dims[axis] = len;
    let data = gather(&a.data, Walk::new((lo as i64).wrapping_mul(st[axis]), dims.clone(), st));
    tensor_value(a.dtype, dims, data)
}

/// OP-split: splits `x` along `axis` (default 0), as TVM 0.27 does.
/// `indices_or_sections` an integer `n`: parts of `ceil(d / n)`, the last one
/// `d - ceil(d / n) * (n - 1)` (ONNX `Split`, TOPI `split_n_sections`; negative is an
/// error). A list of indices: the parts `[0:i1]`, `[i1:i2]`, …, `[ik:]` with Python's
/// slice bounds (a negative index counts from the end, bounds clamp to the dimension,
/// a decreasing pair gives an empty part). One part (`n = 1` or no indices) is a
/// tensor (a fresh copy of `x`); more are a tuple. Errors: not a tensor; `indices_or_sections` missing;
/// `n < 1`; a negative last part; more than 2^16 parts; `axis` out of range.
pub(crate) fn split(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let axis = cx.axis(cx.attr_int("axis", 0)?, a.ndim())?;
    let d = a.shape[axis];
    let bounds: Vec<(u64, u64)> = match cx.attr("indices_or_sections") {
        Some(AttrValue::Int(n)) => {
            let n = *n;
            if n < 1 || n as u64 > MAX_PARTS as u64 {
                return Err(cx.error(format!("cannot split into {n} sections")));
            }
            let n = n as u64;
            let seg = d / n + u64::from(d % n != 0);
            let Some(last) = seg.checked_mul(n - 1).and_then(|p| d.checked_sub(p)) else {
                return Err(cx.error(format!("{n} sections of {seg} exceed dimension {d}")));
            };
            (0..n).map(|i| (i * seg, if i + 1 == n { last } else { seg })).collect()
        }
        Some(_) => {
            let idx = cx.attr_ints("indices_or_sections")?.unwrap_or_default();
            if idx.len() >= MAX_PARTS {
                return Err(cx.error(format!("{} parts are more than 2^16", idx.len() + 1)));
            }
            let clamp = |i: i64| if i < 0 { (d as i128 + i as i128).max(0) as u64 } else { (i as u64).min(d) };
            let mut cuts = vec![0u64];
            cuts.extend(idx.iter().map(|&i| clamp(i)));
            cuts.push(d);
            cuts.windows(2).map(|w| (w[0], w[1].saturating_sub(w[0]))).collect()
        }
        None => return Err(cx.error("needs the attribute `indices_or_sections`")),
    };
    let mut parts: Vec<Value> = bounds.into_iter().map(|(lo, len)| part(&a, axis, lo, len)).collect();
    // One part is a fresh copy of the operand, not a 1-tuple.
    if parts.len() == 1 {
        return Ok(parts.remove(0));
    }
    Ok(Value::Tuple(Rc::new(parts)))
}

/// Python's `range(d)[b:e:s]`: its first index and its length.
fn slice_bounds(d: i128, b: i128, e: i128, s: i128) -> (i128, i128) {
    let norm = |i: i128, lo: i128, hi: i128| (if i < 0 { i + d } else { i }).clamp(lo, hi);
    if s > 0 {
        let (b, e) = (norm(b, 0, d), norm(e, 0, d));
        (b, if e > b { (e - b + s - 1) / s } else { 0 })
    } else {
        let (b, e) = (norm(b, -1, d - 1), norm(e, -1, d - 1));
        (b, if b > e { (b - e - s - 1) / -s } else { 0 })
    }
}

/// OP-strided_slice: slices each of `axes` as Python's `[begin:end:stride]` (negative
/// bounds count from the end, bounds clamp to the dimension; `strides` default 1).
/// `assume_inbound=True` promises `0 <= begin, end <= d`; a broken promise is an error.
/// Errors: not a tensor; `axes`, `begin`, `end` missing; the four lists of different
/// lengths; a zero stride; an axis out of range or repeated; a broken `assume_inbound`.
pub(crate) fn strided_slice(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let list = |name: &str| cx.attr_ints(name)?.ok_or_else(|| cx.error(format!("needs the attribute `{name}`")));
    let (axes, begin, end) = (list("axes")?, list("begin")?, list("end")?);
    let steps = cx.attr_ints("strides")?.unwrap_or_else(|| vec![1; axes.len()]);
    if begin.len() != axes.len() || end.len() != axes.len() || steps.len() != axes.len() {
        return Err(cx.error("`axes`, `begin`, `end` and `strides` must have the same length"));
    }
    if steps.contains(&0) {
        return Err(cx.error("a stride is 0"));
    }
    let axes = cx.axes(&axes, a.ndim())?;
    // `assume_inbound=True` promises 0 <= begin, end <= the dimension: a broken promise is an error.
    if let Some(AttrValue::Bool(true)) = cx.attr("assume_inbound") {
        for (k, &ax) in axes.iter().enumerate() {
            let d = a.shape[ax] as i128;
            let (b, e) = (begin[k] as i128, end[k] as i128);
            if !(0..=d).contains(&b) || !(0..=d).contains(&e) {
                return Err(cx.error(format!(
                    "`assume_inbound` promises bounds in [0, {d}] on axis {ax}, got begin {b} and end {e}"
                )));
            }
        }
    }
    let mut st = strides(&a.shape);
    let mut dims = a.shape.clone();
    let mut base = 0i64;
    for (k, &ax) in axes.iter().enumerate() {
        let (b, len) = slice_bounds(dims[ax] as i128, begin[k] as i128, end[k] as i128, steps[k] as i128);
        dims[ax] = len as u64;
        // Wrapping: the walk's offsets are exact modulo 2^64, and in range when the
        // result is non-empty.
        if len > 0 {
            base = base.wrapping_add((b as i64).wrapping_mul(st[ax]));
        }
        st[ax] = st[ax].wrapping_mul(steps[k]);
    }
    cx.numel(&dims)?;
    let data = gather(&a.data, Walk::new(base, dims.clone(), st));
    Ok(tensor_value(a.dtype, dims, data))
}

/// OP-take: gathers entries of `x` at the integer `indices` along `axis`; the result's
/// shape is `x.shape[:axis] + indices.shape + x.shape[axis+1:]`. Without `axis`, `x`
/// is flattened and the result has `indices`' shape. An index must lie in `[0, n)`
/// (TVM's default mode reads out of bounds otherwise; negative indices are not
/// NumPy's). Errors: not two tensors; non-integer indices; `axis` out of range; an
/// index out of range.
pub(crate) fn take(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 2)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let idx = cx.tensor(&args[1], "the indices")?;
    if idx.dtype.is_float() {
        return Err(cx.error(format!("indices must be integers, not {}", idx.dtype)));
    }
    let axis = cx.attr_opt_int("axis")?.map(|ax| cx.axis(ax, a.ndim())).transpose()?;
    let (outer, d, inner, mut shape) = match axis {
        None => (1, a.data.len() as u64, 1, Vec::new()),
        Some(ax) => {
            let outer = product(&a.shape[..ax]).unwrap_or(0);
            let inner = product(&a.shape[ax + 1..]).unwrap_or(0);
            (outer, a.shape[ax], inner, a.shape[..ax].to_vec())
        }
    };
    shape.extend(idx.shape.iter().copied());
    if let Some(ax) = axis {
        shape.extend(a.shape[ax + 1..].iter().copied());
    }
    cx.numel(&shape)?;
    let positions: Vec<usize> = (0..idx.data.len())
        .map(|i| {
            let v = match idx.data.get(i) {
                Scalar::Int(v) => v,
                Scalar::Bool(b) => b as i128,
                Scalar::Float(_) => -1,
            };
            if (0..d as i128).contains(&v) {
                Ok(v as usize)
            } else {
                Err(cx.error(format!("index {v} is out of range for a dimension of {d}")))
            }
        })
        .collect::<EvalResult<_>>()?;
    if cx.numel(&shape)? == 0 {
        // Nothing to gather, however many (empty) rows the other dimensions make.
        return Ok(tensor_value(a.dtype, shape, cx.storage(a.dtype)?));
    }
    let (d, inner) = (d as usize, inner as usize);
    let at = (0..outer as usize)
        .flat_map(|o| positions.iter().flat_map(move |&j| (0..inner).map(move |i| (o * d + j) * inner + i)));
    Ok(tensor_value(a.dtype, shape, gather(&a.data, at)))
}
