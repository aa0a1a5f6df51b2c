//! Tensor creation: `zeros`, `ones`, `full`, `arange`, and `one_hot` (creation-like).

use super::infer::{dim_op, tensor_si, Infer};
use super::OpError;
use crate::grammar::{DataType, ExprKind, PrimBinOp, PrimExpr, PrimExprKind, StructInfo, StructInfoKind};
use crate::require;

/// A tensor of the shape argument `i`: its values when known, else the shape variable
/// itself when the argument is one, else only its rank.
fn of_shape(
    cx: &Infer,
    i: usize,
    values: Option<Vec<crate::grammar::PrimExpr>>,
    dtype: DataType,
    ndim: i64,
) -> StructInfo {
    match values {
        Some(v) => tensor_si(Some(v), dtype, ndim),
        None => super::manipulate::tensor_of_shape_arg(cx, i, dtype, ndim),
    }
}

/// OP-zeros, OP-ones: a new tensor of `shape` and the attribute `dtype`, filled with 0
/// (1); a shape given by a variable of unknown values is the tensor's shape.
/// Errors: `shape` is not a shape; `dtype` missing.
pub fn zeros_ones(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let (ndim, values) = cx.shape_arg(0, "the shape")?;
    let dtype = cx.attr_dtype("dtype").ok_or_else(|| cx.error("needs `dtype`"))?;
    Ok(of_shape(cx, 0, values, dtype, ndim))
}

/// OP-full: a new tensor of `shape` filled with `fill_value`, a rank-0 tensor; the
/// dtype is the attribute `dtype` if given, else `fill_value`'s.
/// Errors: `shape` not a shape; `fill_value` not a tensor or of known rank other than 0.
pub fn full(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let (ndim, values) = cx.shape_arg(0, "the shape")?;
    let v = cx.tensor(1, "the fill value")?;
    require!(cx => v.ndim == -1 || v.ndim == 0, "the fill value must be a scalar (rank 0), not rank {}", v.ndim);
    let dtype = cx.attr_dtype("dtype").unwrap_or(v.dtype);
    Ok(of_shape(cx, 0, values, dtype, ndim))
}

/// A literal `PrimValue` argument's value, if argument `i` is one.
fn literal_arg(cx: &Infer, i: usize) -> Option<f64> {
    match &cx.call.args[i].kind {
        ExprKind::PrimValue(p) => match &*p.kind {
            PrimExprKind::IntImm { value, .. } => Some(*value as f64),
            PrimExprKind::FloatImm { value, .. } => Some(value.0),
            _ => None,
        },
        _ => None,
    }
}

fn int_arg(cx: &Infer, i: usize) -> Option<PrimExpr> {
    match &cx.call.args[i].kind {
        ExprKind::PrimValue(p) if p.dtype().is_int() || p.dtype().is_uint() => Some(p.clone()),
        _ => None,
    }
}

/// OP-arange: `arange(start, end, step)` is the 1-D tensor `start, start + step, …`
/// below `end` (above, for a negative step), of `max(ceil((end - start) / step), 0)`
/// elements. All three arguments are required (TVM's `R.arange(end)` is written
/// `R.arange(0, end, 1)`) and are PrimValues; with literal ones the length is known,
/// otherwise (a PrimValue-typed variable) only the rank is. The dtype is `dtype` if
/// given, else `int64` when all three are integers and `float32` otherwise.
/// Errors: an argument that is not a PrimValue; a literal step of 0; a literal length
/// beyond 2^62.
pub fn arange(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let mut all_int = true;
    for (i, what) in ["start", "end", "step"].iter().enumerate() {
        match &*cx.args[i].kind {
            StructInfoKind::Prim { dtype, .. } => all_int &= dtype.is_int() || dtype.is_uint(),
            _ => return Err(cx.error(format!("`{what}` must be a PrimValue"))),
        }
    }
    let dtype = cx.attr_dtype("dtype").unwrap_or(if all_int { DataType::INT64 } else { DataType::FLOAT32 });
    require!(cx => literal_arg(cx, 2) != Some(0.0), "the step is 0");
    let len = match (int_arg(cx, 0), int_arg(cx, 1), int_arg(cx, 2).and_then(|s| s.as_int())) {
        (Some(start), Some(end), Some(s)) if s.checked_neg().is_some() => {
            let (lo, hi, s) = if s > 0 { (start, end, s) } else { (end, start, -s) };
            let span = dim_op(PrimBinOp::Add, &dim_op(PrimBinOp::Sub, &hi, &lo), &PrimExpr::int(s - 1));
            Some(dim_op(PrimBinOp::Max, &dim_op(PrimBinOp::FloorDiv, &span, &PrimExpr::int(s)), &PrimExpr::int(0)))
        }
        _ => match (literal_arg(cx, 0), literal_arg(cx, 1), literal_arg(cx, 2)) {
            (Some(a), Some(b), Some(s)) => {
                let n = ((b - a) / s).ceil().max(0.0);
                if n.is_nan() || n > (1u64 << 62) as f64 {
                    return Err(cx.error(format!("{n} elements are more than this model allows")));
                }
                Some(PrimExpr::int(n as i64))
            }
            _ => None,
        },
    };
    Ok(tensor_si(len.map(|l| vec![l]), dtype, 1))
}

/// OP-one_hot: `one_hot(indices, on_value, off_value, depth, axis=-1)`: a tensor of
/// `indices`' shape with a new dimension of length `depth` inserted at `axis` (in
/// `-(r+1)..=r` for indices of rank `r`); the element is `on_value` where the index
/// along the new axis equals the element of `indices`, `off_value` elsewhere. The
/// dtype is the values' (two `PrimValue`s of one dtype).
/// Errors: `indices` not a tensor, or of a known dtype other than an integer one
/// (`bool` included, as TVM);
/// `on_value` or `off_value` not a `PrimValue`, or of different dtypes; `depth` not
/// positive (TVM's constructor); `axis` out of range for a known rank.
pub fn one_hot(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "indices")?;
    require!(cx => x.dtype.is_void() || ((x.dtype.is_int() || x.dtype.is_uint()) && !x.dtype.is_bool()),
        "indices must have an integer dtype, not {}", x.dtype);
    let mut dtypes = [DataType::void(); 2];
    for (i, what) in [(1, "on_value"), (2, "off_value")] {
        match &*cx.args[i].kind {
            StructInfoKind::Prim { dtype, .. } => dtypes[i - 1] = *dtype,
            _ => return Err(cx.error(format!("`{what}` must be a PrimValue"))),
        }
    }
    require!(cx => dtypes[0] == dtypes[1],
        "on_value and off_value must have the same dtype, not {} and {}", dtypes[0], dtypes[1]);
    let depth = cx.attr_int("depth", 0);
    require!(cx => depth > 0, "depth must be positive, not {depth}");
    if x.ndim == -1 {
        return Ok(tensor_si(None, dtypes[0], -1));
    }
    let axis = cx.normalize_axis(cx.attr_int("axis", -1), x.ndim + 1)?;
    let dims = x.dims.map(|mut ds| {
        ds.insert(axis, PrimExpr::int(depth));
        ds
    });
    Ok(tensor_si(dims, dtypes[0], x.ndim + 1))
}
