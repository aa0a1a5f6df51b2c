//! Shape manipulation: `reshape`, `permute_dims`, `broadcast_to`, `concat`, `split`,
//! `strided_slice`, `take`.

use super::infer::{dim_op, show, tensor_si, Infer, TensorInfo};
use super::OpError;
use crate::grammar::{Expr, ExprKind, PrimBinOp, PrimExpr, StructInfo, StructInfoKind};
use crate::require;
use crate::struct_info::prover::fold;
use crate::struct_info::Verdict;

/// The product of dimensions, constant-folded (`1` for none).
fn product(ds: &[PrimExpr]) -> PrimExpr {
    match ds.split_first() {
        None => PrimExpr::int(1),
        Some((first, rest)) => rest.iter().fold(fold(first), |acc, d| dim_op(PrimBinOp::Mul, &acc, d)),
    }
}

/// A tensor whose shape is the shape-typed argument `i` when its values are unknown
/// but it is a variable (so the result's shape is that variable).
pub(super) fn tensor_of_shape_arg(cx: &Infer, i: usize, dtype: crate::grammar::DataType, ndim: i64) -> StructInfo {
    match &cx.call.args[i].kind {
        ExprKind::Var(v) if ndim != -1 => {
            StructInfo::new(StructInfoKind::Tensor { shape: Some(Expr::var(v)), dtype, ndim }, crate::Span::SYNTHETIC)
        }
        _ => tensor_si(None, dtype, ndim),
    }
}

/// OP-reshape: `reshape(x, shape)` views `x`'s elements (row-major) with the new shape.
/// `shape` is a shape expression or a shape-typed variable; one dimension may be `-1`,
/// inferred as the element count divided by the product of the others.
/// Errors: `x` not a tensor; `shape` not a shape; more than one `-1`; another negative
/// constant; a `-1` beside dimensions whose product is 0 (or a constant count they do
/// not divide); element counts provably different. Warning: element counts undecided.
pub fn reshape(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let (ndim, values) = cx.shape_arg(1, "the new shape")?;
    let Some(values) = values else {
        return Ok(tensor_of_shape_arg(cx, 1, x.dtype, ndim));
    };
    let values: Vec<PrimExpr> = values.iter().map(fold).collect();
    let holes: Vec<usize> = values.iter().enumerate().filter(|(_, v)| v.as_int() == Some(-1)).map(|(i, _)| i).collect();
    require!(cx => holes.len() <= 1, "at most one dimension of the new shape may be -1");
    if let Some(bad) = values.iter().find(|v| v.as_int().is_some_and(|i| i < -1)) {
        return Err(cx.error(format!("dimension {} of the new shape is negative", show(bad))));
    }
    let Some(in_dims) = &x.dims else {
        return Ok(if holes.is_empty() { tensor_si(Some(values), x.dtype, 0) } else { tensor_si(None, x.dtype, ndim) });
    };
    let count = product(in_dims);
    let mut out = values.clone();
    if let Some(&h) = holes.first() {
        let others: Vec<PrimExpr> =
            values.iter().enumerate().filter(|(i, _)| *i != h).map(|(_, v)| v.clone()).collect();
        let rest = product(&others);
        require!(cx => rest.as_int() != Some(0), "cannot infer the -1 dimension: the other dimensions multiply to 0");
        if let (Some(c), Some(r)) = (count.as_int(), rest.as_int()) {
            if r == 0 || c % r != 0 {
                return Err(
                    cx.error(format!("{c} elements do not fill a shape whose other dimensions multiply to {r}"))
                );
            }
        }
        out[h] = dim_op(PrimBinOp::FloorDiv, &count, &rest);
    } else {
        match cx.compare(&count, &product(&values)) {
            Verdict::Equal => {}
            Verdict::NotEqual => {
                return Err(cx.error(format!(
                    "the element count changes from {} to {}",
                    show(&count),
                    show(&product(&values))
                )))
            }
            Verdict::Unknown => cx.warn(format!(
                "cannot prove the element counts {} and {} equal; checked at run time",
                show(&count),
                show(&product(&values))
            )),
        }
    }
    Ok(tensor_si(Some(out), x.dtype, 0))
}

/// OP-permute_dims: reorders the axes by `axes` (default: reversed). Result dimension
/// `i` is input dimension `axes[i]`.
/// Errors: not a tensor; `axes` not a permutation of the (known) rank's axes.
pub fn permute_dims(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let axes = cx.attr_ints("axes");
    let ndim = match &axes {
        Some(list) if x.ndim != -1 && list.len() as i64 != x.ndim => {
            return Err(cx.error(format!("{} axes given for a tensor of rank {}", list.len(), x.ndim)))
        }
        Some(list) => list.len() as i64,
        None => x.ndim,
    };
    if ndim == -1 {
        return Ok(tensor_si(None, x.dtype, -1));
    }
    let order: Vec<usize> = match &axes {
        Some(list) => cx.normalize_axes(list, ndim)?,
        None => (0..ndim as usize).rev().collect(),
    };
    let dims = x.dims.as_ref().map(|ds| order.iter().map(|&i| ds[i].clone()).collect());
    Ok(tensor_si(dims, x.dtype, ndim))
}

/// OP-broadcast_to: `x` broadcast (NumPy rules) to `shape`; the result has exactly
/// that shape. Errors: not a tensor / not a shape; `shape` of lower rank than `x`; a
/// dimension of `x` provably neither equal to the target's nor 1. Warning: undecided.
pub fn broadcast_to(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let (ndim, values) = cx.shape_arg(1, "the target shape")?;
    require!(cx => x.ndim == -1 || ndim == -1 || x.ndim <= ndim, "cannot broadcast a tensor of rank {} to rank {ndim}", x.ndim);
    let Some(values) = values else {
        return Ok(tensor_of_shape_arg(cx, 1, x.dtype, ndim));
    };
    if let Some(xd) = &x.dims {
        let offset = values.len() - xd.len();
        let one = PrimExpr::int(1);
        for (i, d) in xd.iter().enumerate() {
            let t = &values[offset + i];
            if cx.compare(d, t) == Verdict::Equal || cx.is_one(d) {
                continue;
            }
            if cx.compare(d, t) == Verdict::NotEqual && cx.compare(d, &one) == Verdict::NotEqual {
                return Err(cx.error(format!("dimension {} cannot be broadcast to {}", show(d), show(t))));
            }
            cx.warn(format!("cannot prove dimension {} broadcasts to {}; checked at run time", show(d), show(t)));
        }
    }
    Ok(tensor_si(Some(values), x.dtype, 0))
}

/// The fields of a tuple argument, each a tensor.
pub(super) fn tensor_fields(cx: &Infer, i: usize) -> Result<Vec<TensorInfo>, OpError> {
    match &*cx.args[i].kind {
        StructInfoKind::Tuple { fields } => {
            fields.iter().enumerate().map(|(j, f)| cx.tensor_of(f, &format!("tuple field {j}"))).collect()
        }
        _ => Err(cx.error("the argument must be a tuple of tensors")),
    }
}

/// OP-concat: joins a tuple of tensors along `axis` (default 0). All have the same
/// rank and dtype; the dimensions other than `axis` agree; the result's `axis`
/// dimension is the sum. Errors: not a tuple of tensors; an empty tuple; known
/// different ranks or dtypes; `axis` out of range; other dimensions provably different.
/// Warning: other dimensions undecided (the result's shape is then unknown).
pub fn concat(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let ts = tensor_fields(cx, 0)?;
    require!(cx => !ts.is_empty(), "needs at least one tensor");
    let known: Vec<crate::grammar::DataType> = ts.iter().map(|t| t.dtype).filter(|d| !d.is_void()).collect();
    if let Some(other) = known.iter().find(|d| **d != known[0]) {
        return Err(cx.error(format!("tensors of dtypes {} and {other}", known[0])));
    }
    let dtype = if ts.iter().any(|t| t.dtype.is_void()) { crate::grammar::DataType::void() } else { ts[0].dtype };
    let mut ndim = -1;
    for t in &ts {
        if t.ndim != -1 {
            require!(cx => ndim == -1 || ndim == t.ndim, "tensors of ranks {ndim} and {}", t.ndim);
            ndim = t.ndim;
        }
    }
    if ndim == -1 {
        return Ok(tensor_si(None, dtype, -1));
    }
    let axis = cx.normalize_axis(cx.attr_int("axis", 0), ndim)?;
    if ts.iter().any(|t| t.ndim == -1 || t.dims.is_none()) {
        return Ok(tensor_si(None, dtype, ndim));
    }
    let all: Vec<&Vec<PrimExpr>> = ts.iter().filter_map(|t| t.dims.as_ref()).collect();
    let mut out = all[0].clone();
    let mut known = true;
    for ds in &all[1..] {
        for (i, d) in ds.iter().enumerate() {
            if i == axis {
                out[i] = dim_op(PrimBinOp::Add, &out[i], d);
            } else if !cx.expect_equal(&all[0][i], d, &format!("dimension {i}"))? {
                known = false;
            }
        }
    }
    Ok(tensor_si(known.then_some(out), dtype, ndim))
}

/// OP-split: splits `x` along `axis` (default 0), as TVM 0.27 does.
/// `indices_or_sections` an integer `n`: parts of `ceil(d / n)` along the axis, the
/// last one `d - ceil(d / n) * (n - 1)` (ONNX `Split` and TOPI's `split_n_sections`:
/// an indivisible dimension gives a shorter last part; a symbolic dimension gets these
/// expressions, a negative last part is an error at run time). A list of indices: the
/// parts `[0:i1]`, `[i1:i2]`, …, `[ik:]` with Python slice semantics (a negative index
/// counts from the end, bounds clamp to the dimension, a decreasing pair gives an empty
/// part). One part (`n = 1`, or no indices) is `x` itself, not a tuple (TVM 0.27's
/// `InferTypeSplit` returns the operand's type); otherwise the result is a tuple of
/// tensors. Errors: not a tensor; `n` < 1; constant `d` and `n` whose last part would
/// be negative (`ceil(d / n) * (n - 1) > d`); `axis` out of range.
pub fn split(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let axis_attr = cx.attr_int("axis", 0);
    let axis = if x.ndim == -1 { None } else { Some(cx.normalize_axis(axis_attr, x.ndim)?) };
    let sections = match cx.attr("indices_or_sections") {
        Some(crate::grammar::AttrValue::Int(n)) => Some(*n),
        _ => None,
    };
    let indices = cx.attr_ints("indices_or_sections").unwrap_or_default();
    let parts = match sections {
        Some(n) if n < 1 => return Err(cx.error(format!("cannot split into {n} sections"))),
        Some(n) => n as usize,
        None => indices.len() + 1,
    };
    require!(cx => parts <= 1 << 16, "{parts} parts are more than this model allows (65536)");
    if parts == 1 {
        return Ok(cx.args[0].clone());
    }
    let field = |dims: Option<Vec<PrimExpr>>| tensor_si(dims, x.dtype, x.ndim);
    let (Some(axis), Some(ds)) = (axis, &x.dims) else {
        return Ok(StructInfo::new(
            StructInfoKind::Tuple { fields: (0..parts).map(|_| field(None)).collect() },
            crate::Span::SYNTHETIC,
        ));
    };
    let d = &ds[axis];
    let sizes: Vec<PrimExpr> = match sections {
        Some(n) => {
            let (seg, last) = match d.as_int() {
                Some(c) => {
                    let seg = c / n + i64::from(c % n != 0);
                    let last = i128::from(c) - i128::from(seg) * i128::from(n - 1);
                    require!(cx => last >= 0, "{n} sections of {seg} exceed dimension {c}");
                    let last = last as i64;
                    (PrimExpr::int(seg), PrimExpr::int(last))
                }
                None => {
                    let seg = dim_op(
                        PrimBinOp::FloorDiv,
                        &dim_op(PrimBinOp::Add, d, &PrimExpr::int(n - 1)),
                        &PrimExpr::int(n),
                    );
                    let last = dim_op(PrimBinOp::Sub, d, &dim_op(PrimBinOp::Mul, &seg, &PrimExpr::int(n - 1)));
                    (seg, last)
                }
            };
            let mut sizes = vec![seg; parts - 1];
            sizes.push(last);
            sizes
        }
        None => {
            // Bounds with the index as written (`None`: the implicit 0 and end).
            let mut bounds: Vec<(Option<i64>, PrimExpr)> = vec![(None, PrimExpr::int(0))];
            bounds.extend(indices.iter().map(|&i| (Some(i), clamp_index(d, i))));
            bounds.push((None, d.clone()));
            bounds
                .windows(2)
                .map(|w| {
                    let ((lo_i, lo), (hi_i, hi)) = (&w[0], &w[1]);
                    let diff = dim_op(PrimBinOp::Sub, hi, lo);
                    // Only between two written indices can the clamped difference be negative.
                    match (lo_i, hi_i) {
                        (Some(a), Some(b)) if !(0 <= *a && a <= b) => match diff.as_int() {
                            Some(v) => PrimExpr::int(v.max(0)),
                            None => dim_op(PrimBinOp::Max, &diff, &PrimExpr::int(0)),
                        },
                        _ => diff,
                    }
                })
                .collect()
        }
    };
    let fields = sizes
        .into_iter()
        .map(|s| {
            let mut part = ds.clone();
            part[axis] = s;
            field(Some(part))
        })
        .collect();
    Ok(StructInfo::new(StructInfoKind::Tuple { fields }, crate::Span::SYNTHETIC))
}

/// A slice bound `i` of a dimension `d` (positive step), as Python clamps it:
/// `min(i, d)` for `i >= 0`, `max(d + i, 0)` for `i < 0`.
fn clamp_index(d: &PrimExpr, i: i64) -> PrimExpr {
    if i < 0 {
        let shifted = match i.checked_neg() {
            Some(k) => dim_op(PrimBinOp::Sub, d, &PrimExpr::int(k)),
            None => dim_op(PrimBinOp::Add, d, &PrimExpr::int(i)),
        };
        dim_op(PrimBinOp::Max, &shifted, &PrimExpr::int(0))
    } else {
        dim_op(PrimBinOp::Min, &PrimExpr::int(i), d)
    }
}

/// The length of Python's `range(d)[b:e:s]` for a constant `d` (in i128: no overflow
/// for any bounds and stride).
fn slice_len(d: i64, b: i64, e: i64, s: i64) -> i64 {
    let (d, b, e, s) = (d as i128, b as i128, e as i128, s as i128);
    let norm = |i: i128, lo: i128, hi: i128| (if i < 0 { i + d } else { i }).clamp(lo, hi);
    let len = if s > 0 {
        let (b, e) = (norm(b, 0, d), norm(e, 0, d));
        if e > b {
            (e - b + s - 1) / s
        } else {
            0
        }
    } else {
        let (b, e) = (norm(b, -1, d - 1), norm(e, -1, d - 1));
        if b > e {
            (b - e - s - 1) / -s
        } else {
            0
        }
    };
    len as i64
}

/// The slice length for a symbolic dimension and positive stride, following Python's
/// clamping: `max((e' - b' + s - 1) // s, 0)`.
fn symbolic_slice_len(d: &PrimExpr, b: i64, e: i64, s: i64) -> PrimExpr {
    let (b, e) = (clamp_index(d, b), clamp_index(d, e));
    let span = dim_op(PrimBinOp::Add, &dim_op(PrimBinOp::Sub, &e, &b), &PrimExpr::int(s - 1));
    dim_op(PrimBinOp::Max, &dim_op(PrimBinOp::FloorDiv, &span, &PrimExpr::int(s)), &PrimExpr::int(0))
}

/// OP-strided_slice: slices each of `axes` as Python's `[begin:end:stride]` (negative
/// bounds count from the end, bounds clamp to the dimension; `strides` default 1).
/// `assume_inbound=True` (TVM 0.27, default False) promises `0 <= begin <= d` and
/// `0 <= end <= d` for each sliced dimension `d`; the slice is then the same, and a
/// broken promise is an error (here when a bound is negative or past a constant
/// dimension, at run time otherwise). Errors: not a tensor; `axes`, `begin`, `end`,
/// `strides` of different lengths; a zero stride; an axis out of range or repeated
/// (with an unknown rank: the same integer twice); a broken `assume_inbound`. A
/// symbolic dimension sliced with a negative stride gets an unknown size (the result's
/// shape is unknown).
pub fn strided_slice(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let axes = cx.attr_ints("axes").unwrap_or_default();
    let begin = cx.attr_ints("begin").unwrap_or_default();
    let end = cx.attr_ints("end").unwrap_or_default();
    let strides = cx.attr_ints("strides").unwrap_or_else(|| vec![1; axes.len()]);
    let same_length = begin.len() == axes.len() && end.len() == axes.len() && strides.len() == axes.len();
    require!(cx => same_length, "`axes`, `begin`, `end` and `strides` must have the same length");
    require!(cx => !strides.contains(&0), "a stride is 0");
    let inbound = matches!(cx.attr("assume_inbound"), Some(crate::grammar::AttrValue::Bool(true)));
    if inbound {
        let negative = begin.iter().chain(&end).find(|&&i| i < 0);
        require!(cx => negative.is_none(), "`assume_inbound` promises bounds of at least 0, got {}", negative.copied().unwrap_or(0));
    }
    if x.ndim == -1 {
        cx.reject_repeats(&axes)?;
        return Ok(tensor_si(None, x.dtype, -1));
    }
    let axes = cx.normalize_axes(&axes, x.ndim)?;
    let Some(mut dims) = x.dims.clone() else {
        return Ok(tensor_si(None, x.dtype, x.ndim));
    };
    for (k, &a) in axes.iter().enumerate() {
        let (b, e, s) = (begin[k], end[k], strides[k]);
        if let (true, Some(d)) = (inbound, dims[a].as_int()) {
            require!(cx => b <= d && e <= d, "`assume_inbound` promises bounds of at most {d} on axis {a}, got begin {b} and end {e}");
        }
        dims[a] = match dims[a].as_int() {
            Some(d) => PrimExpr::int(slice_len(d, b, e, s)),
            None if s > 0 => symbolic_slice_len(&dims[a], b, e, s),
            None => return Ok(tensor_si(None, x.dtype, x.ndim)),
        };
    }
    Ok(tensor_si(Some(dims), x.dtype, x.ndim))
}

/// OP-take: gathers along `axis` the entries of `x` at `indices` (an integer tensor).
/// With `axis` given the result's shape is `x.shape[:axis] + indices.shape +
/// x.shape[axis+1:]`; with `axis=None`, `x` is flattened and the result has `indices`'
/// shape. Errors: an operand not a tensor; `indices` of a known non-integer dtype;
/// `axis` out of range. Out-of-range indices are a run-time error.
pub fn take(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let idx = cx.tensor(1, "the indices")?;
    require!(cx => idx.dtype.is_void() || idx.dtype.is_int() || idx.dtype.is_uint(), "indices must be integers, not {}", idx.dtype);
    let Some(axis) = cx.attr("axis").map(|_| cx.attr_int("axis", 0)) else {
        return Ok(tensor_si(idx.dims.clone(), x.dtype, idx.ndim));
    };
    if x.ndim == -1 || idx.ndim == -1 {
        return Ok(tensor_si(None, x.dtype, -1));
    }
    let axis = cx.normalize_axis(axis, x.ndim)?;
    let ndim = x.ndim - 1 + idx.ndim;
    let dims = match (&x.dims, &idx.dims) {
        (Some(xd), Some(id)) => {
            let mut out = xd[..axis].to_vec();
            out.extend(id.iter().cloned());
            out.extend(xd[axis + 1..].iter().cloned());
            Some(out)
        }
        _ => None,
    };
    Ok(tensor_si(dims, x.dtype, ndim))
}
