//! Dimension manipulation and creation-like operators: `zeros_like`, `ones_like`,
//! `full_like`, `squeeze`, `expand_dims`, `flatten`, `flip`, `tril`, `triu`, `tile`,
//! `repeat`, `collapse_sum_like` (TVM 0.27's `create.cc` and `manipulate.cc`).

use super::infer::{dim_op, show, tensor_si, Infer};
use super::OpError;
use crate::grammar::{ExprKind, PrimBinOp, PrimExpr, StructInfo, StructInfoKind};
use crate::require;
use crate::struct_info::Verdict;

/// Argument `i`'s `TensorStructInfo` as written (its shape a `ShapeExpr` or a
/// variable), with the dtype replaced by `dtype` when given.
fn same_tensor_with_dtype(
    cx: &Infer,
    i: usize,
    dtype: Option<crate::grammar::DataType>,
) -> Result<StructInfo, OpError> {
    cx.tensor(i, "the operand")?;
    match (&*cx.args[i].kind, dtype) {
        (StructInfoKind::Tensor { shape, ndim, .. }, Some(d)) => Ok(StructInfo::new(
            StructInfoKind::Tensor { shape: shape.clone(), dtype: d, ndim: *ndim },
            crate::Span::SYNTHETIC,
        )),
        _ => Ok(cx.args[i].clone()),
    }
}

/// OP-zeros_like, OP-ones_like: a new tensor of `x`'s shape filled with 0 (1), of the
/// attribute `dtype` if given, else `x`'s dtype. The result's StructInfo is `x`'s with
/// that dtype. Error: `x` not a tensor.
pub fn zeros_ones_like(cx: &mut Infer) -> Result<StructInfo, OpError> {
    same_tensor_with_dtype(cx, 0, cx.attr_dtype("dtype"))
}

/// OP-full_like: a new tensor of `x`'s shape filled with `fill_value` (a rank-0
/// tensor), of the attribute `dtype` if given, else `x`'s (not the fill value's)
/// dtype. Errors: `x` or `fill_value` not a tensor; `fill_value` of known rank other
/// than 0 (an unknown rank is checked at run time, as OP-full does).
pub fn full_like(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let v = cx.tensor(1, "the fill value")?;
    require!(cx => v.ndim == -1 || v.ndim == 0, "the fill value must be a scalar (rank 0), not rank {}", v.ndim);
    same_tensor_with_dtype(cx, 0, cx.attr_dtype("dtype"))
}

/// Whether `x`'s shape is written as a variable (not a `ShapeExpr`).
fn shape_is_var(cx: &Infer, i: usize) -> bool {
    matches!(&*cx.args[i].kind, StructInfoKind::Tensor { shape: Some(s), .. } if matches!(s.kind, ExprKind::Var(_)))
}

/// OP-squeeze: removes dimensions of length 1. `axis` absent or `None`: every
/// dimension that is the constant 1 (with some dimension symbolic, the result's rank
/// is unknown). `axis` a list (or one integer): those axes (negative from the end),
/// each of which must be 1: a constant other than 1, or a dimension provably not 1,
/// is an error (TVM 0.27 silently keeps a constant non-1 axis: see
/// operator-semantics.md); a symbolic one is removed with a warning and checked at run
/// time. An empty list leaves `x` as is. Errors: not a tensor; an axis out of range
/// or repeated; a listed dimension not 1. A shape written as a variable gives only
/// the rank (as TVM).
pub fn squeeze(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let axes = cx.attr_ints("axis");
    if axes.as_ref().is_some_and(|a| a.is_empty()) {
        return Ok(cx.args[0].clone());
    }
    if x.ndim == -1 {
        if let Some(a) = &axes {
            cx.reject_repeats(a)?;
        }
        return Ok(tensor_si(None, x.dtype, -1));
    }
    let mut remove = vec![false; x.ndim as usize];
    match &axes {
        Some(list) => {
            let axes = cx.normalize_axes(list, x.ndim)?;
            let Some(dims) = &x.dims else {
                return Ok(tensor_si(None, x.dtype, x.ndim - axes.len() as i64));
            };
            for &a in &axes {
                let d = &dims[a];
                match (d.as_int(), cx.compare(d, &PrimExpr::int(1))) {
                    (Some(1), _) | (None, Verdict::Equal) => {}
                    (Some(c), _) => return Err(cx.error(format!("cannot squeeze axis {a} of length {c}"))),
                    (None, Verdict::NotEqual) => {
                        return Err(cx.error(format!("cannot squeeze axis {a} of length {}, never 1", show(d))))
                    }
                    (None, Verdict::Unknown) => {
                        cx.warn(format!("cannot prove axis {a} (of length {}) is 1; checked at run time", show(d)))
                    }
                }
                remove[a] = true;
            }
        }
        None => {
            let Some(dims) = &x.dims else { return Ok(tensor_si(None, x.dtype, -1)) };
            for (i, d) in dims.iter().enumerate() {
                match d.as_int() {
                    Some(c) => remove[i] = c == 1,
                    None => return Ok(tensor_si(None, x.dtype, -1)),
                }
            }
        }
    }
    let dims = x.dims.clone().unwrap_or_default();
    let out: Vec<PrimExpr> = dims.into_iter().enumerate().filter(|(i, _)| !remove[*i]).map(|(_, d)| d).collect();
    if shape_is_var(cx, 0) {
        // TVM keeps a variable shape only when nothing is removed.
        return Ok(match (out.len() as i64 == x.ndim, axes.is_some()) {
            (true, _) => cx.args[0].clone(),
            (false, true) => tensor_si(None, x.dtype, out.len() as i64),
            (false, false) => tensor_si(None, x.dtype, -1),
        });
    }
    Ok(tensor_si(Some(out), x.dtype, 0))
}

/// OP-expand_dims: inserts dimensions of length 1 at `axis` (an integer or a list),
/// which index the result (of rank `ndim + len(axis)`; negative from its end). An
/// empty list leaves `x` as is. Errors: not a tensor; an axis out of range of the
/// result's rank, or repeated.
pub fn expand_dims(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let axes = cx.attr_ints("axis").unwrap_or_default();
    if axes.is_empty() {
        return Ok(cx.args[0].clone());
    }
    if x.ndim == -1 {
        cx.reject_repeats(&axes)?;
        return Ok(tensor_si(None, x.dtype, -1));
    }
    let out_ndim = x.ndim + axes.len() as i64;
    let axes = cx.normalize_axes(&axes, out_ndim)?;
    let Some(dims) = &x.dims else { return Ok(tensor_si(None, x.dtype, out_ndim)) };
    let mut rest = dims.iter();
    let out: Vec<PrimExpr> = (0..out_ndim as usize)
        .map(|i| if axes.contains(&i) { PrimExpr::int(1) } else { rest.next().cloned().unwrap_or(PrimExpr::int(1)) })
        .collect();
    Ok(tensor_si(Some(out), x.dtype, out_ndim))
}

/// OP-flatten: `x`'s elements as a 1-D tensor: of the product of the dimensions (1 for
/// rank 0); a rank-1 `x` as is. Error: not a tensor.
pub fn flatten(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    match (x.ndim, &x.dims) {
        (1, _) => Ok(cx.args[0].clone()),
        (_, Some(ds)) => {
            let n = ds.iter().fold(PrimExpr::int(1), |acc, d| dim_op(PrimBinOp::Mul, &acc, d));
            Ok(tensor_si(Some(vec![n]), x.dtype, 1))
        }
        (0, None) => Ok(tensor_si(Some(vec![PrimExpr::int(1)]), x.dtype, 1)),
        _ => Ok(tensor_si(None, x.dtype, 1)),
    }
}

/// OP-flip: reverses `x` along `axis` (negative from the end); the StructInfo is
/// `x`'s. Errors: not a tensor; `axis` out of range (so a rank-0 `x` has none).
pub fn flip(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    if x.ndim != -1 {
        cx.normalize_axis(cx.attr_int("axis", 0), x.ndim)?;
    }
    Ok(cx.args[0].clone())
}

/// OP-tril, OP-triu: `tril(x, k)` keeps the elements of each matrix (the last two
/// dimensions) on and below diagonal `k` (`j - i <= k`), `triu` on and above it
/// (`j - i >= k`), and zeroes the others. `k` is an argument, an integer PrimValue
/// (TVM 0.27 prints `R.tril(x, k)`; the `TriluAttrs` attribute is unused). The
/// StructInfo is `x`'s. Errors: `x` not a tensor; a known rank below 2; `k` not an
/// integer PrimValue.
pub fn tril_triu(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    match &*cx.args[1].kind {
        StructInfoKind::Prim { dtype, .. } if dtype.is_void() || dtype.is_int() || dtype.is_uint() => {}
        _ => {
            let got = crate::text::print_struct_info(&cx.args[1]);
            return Err(cx.error(format!("the diagonal `k` must be an integer PrimValue, got {got}")));
        }
    }
    require!(cx => x.ndim == -1 || x.ndim >= 2, "needs a tensor of at least two dimensions, not rank {}", x.ndim);
    Ok(cx.args[0].clone())
}

/// OP-tile: repeats `x` `repeats[i]` times along each dimension (NumPy `tile`): with
/// `l = len(repeats)` and rank `d`, the result has rank `max(l, d)`; a shorter `x` is
/// promoted with leading 1s, shorter `repeats` with leading 1s; result dimension `i`
/// is `dim * rep`. Errors: not a tensor; a negative repeat (TVM does not check; NumPy
/// refuses it).
pub fn tile(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let reps = cx.attr_ints("repeats").unwrap_or_default();
    if let Some(r) = reps.iter().find(|&&r| r < 0) {
        return Err(cx.error(format!("a repeat count is negative ({r})")));
    }
    if x.ndim == -1 {
        return Ok(tensor_si(None, x.dtype, -1));
    }
    let (l, d) = (reps.len(), x.ndim as usize);
    let n = l.max(d);
    let Some(dims) = &x.dims else {
        if l > d {
            return Ok(tensor_si(None, x.dtype, l as i64));
        }
        return Ok(if reps.iter().all(|&r| r == 1) { cx.args[0].clone() } else { tensor_si(None, x.dtype, d as i64) });
    };
    let out: Vec<PrimExpr> = (0..n)
        .map(|i| {
            let dim = (i + d).checked_sub(n).map(|j| dims[j].clone());
            let rep = (i + l).checked_sub(n).map(|j| reps[j]);
            match (dim, rep) {
                (Some(dim), Some(r)) => dim_op(PrimBinOp::Mul, &dim, &PrimExpr::int(r)),
                (Some(dim), None) => dim,
                (None, Some(r)) => PrimExpr::int(r),
                (None, None) => PrimExpr::int(1),
            }
        })
        .collect();
    Ok(tensor_si(Some(out), x.dtype, n as i64))
}

/// OP-repeat: repeats each element of `x` `repeats` times along `axis` (NumPy
/// `repeat`): that dimension is multiplied by `repeats`. Without `axis`, `x` is
/// flattened first: a 1-D result of the element count times `repeats`. Errors: not a
/// tensor; `axis` out of range; a negative `repeats` (TVM does not check; NumPy
/// refuses it).
pub fn repeat(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let reps = cx.attr_int("repeats", 1);
    require!(cx => reps >= 0, "the repeat count is negative ({reps})");
    let r = PrimExpr::int(reps);
    let Some(axis) = cx.attr("axis").map(|_| cx.attr_int("axis", 0)) else {
        let n = x.dims.as_ref().map(|ds| {
            let count = ds.iter().fold(PrimExpr::int(1), |acc, d| dim_op(PrimBinOp::Mul, &acc, d));
            vec![dim_op(PrimBinOp::Mul, &count, &r)]
        });
        return Ok(tensor_si(n, x.dtype, 1));
    };
    if x.ndim == -1 {
        return Ok(tensor_si(None, x.dtype, -1));
    }
    let axis = cx.normalize_axis(axis, x.ndim)?;
    let Some(dims) = &x.dims else {
        return Ok(if reps == 1 { cx.args[0].clone() } else { tensor_si(None, x.dtype, x.ndim) });
    };
    let mut out = dims.clone();
    out[axis] = dim_op(PrimBinOp::Mul, &out[axis], &r);
    Ok(tensor_si(Some(out), x.dtype, x.ndim))
}

/// OP-collapse_sum_like: sums `data` down to `collapse_target`'s shape (the reverse of
/// broadcasting it): dimensions pair up from the right; a target dimension equal to
/// data's is kept, a target dimension 1 sums its axis (keeping it as 1), and data's
/// leading dimensions beyond the target's rank are summed away. The result has the
/// target's shape (as written) and data's dtype. Errors: an operand not a tensor; a
/// target of higher known rank than data; a pair of dimensions that is neither
/// provably equal nor a constant-1 target (TVM 0.27 refuses an undecided pair too:
/// "consider MatchCast").
pub fn collapse_sum_like(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let data = cx.tensor(0, "the data")?;
    let target = cx.tensor(1, "the collapse target")?;
    if data.ndim != -1 && target.ndim != -1 {
        require!(cx => target.ndim <= data.ndim, "cannot collapse rank {} to the higher rank {}", data.ndim, target.ndim);
    }
    if let (Some(ds), Some(ts)) = (&data.dims, &target.dims) {
        for (k, (d, t)) in ds.iter().rev().zip(ts.iter().rev()).enumerate() {
            if t.as_int() == Some(1) || cx.compare(d, t) == Verdict::Equal {
                continue;
            }
            return Err(cx.error(format!(
                "data dimension {} ({}) cannot be summed to the target's {} ({})",
                ds.len() - 1 - k,
                show(d),
                ts.len() - 1 - k,
                show(t)
            )));
        }
    }
    match &*cx.args[1].kind {
        StructInfoKind::Tensor { shape, ndim, .. } => Ok(StructInfo::new(
            StructInfoKind::Tensor { shape: shape.clone(), dtype: data.dtype, ndim: *ndim },
            crate::Span::SYNTHETIC,
        )),
        _ => Ok(tensor_si(None, data.dtype, target.ndim)),
    }
}
