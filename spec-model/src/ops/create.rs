//! Tensor creation: `zeros`, `ones`, `full`, `arange`.

use super::infer::{dim_op, tensor_si, Infer};
use super::OpError;
use crate::grammar::{DataType, ExprKind, PrimBinOp, PrimExpr, PrimExprKind, StructInfo, StructInfoKind};

/// OP-zeros, OP-ones: a new tensor of `shape` and the attribute `dtype`, filled with 0
/// (1). Errors: `shape` is not a shape; `dtype` missing.
pub fn zeros_ones(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let (ndim, values) = cx.shape_arg(0, "the shape")?;
    let dtype = cx.attr_dtype("dtype").ok_or_else(|| cx.error("needs `dtype`"))?;
    Ok(tensor_si(values, dtype, ndim))
}

/// OP-full: a new tensor of `shape` filled with `fill_value`, a rank-0 tensor; the
/// dtype is the attribute `dtype` if given, else `fill_value`'s.
/// Errors: `shape` not a shape; `fill_value` not a tensor or of known rank other than 0.
pub fn full(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let (ndim, values) = cx.shape_arg(0, "the shape")?;
    let v = cx.tensor(1, "the fill value")?;
    if v.ndim != -1 && v.ndim != 0 {
        return Err(cx.error(format!("the fill value must be a scalar (rank 0), not rank {}", v.ndim)));
    }
    let dtype = cx.attr_dtype("dtype").unwrap_or(v.dtype);
    Ok(tensor_si(values, dtype, ndim))
}

/// A literal integer `PrimValue` argument, if that is what argument `i` is.
fn int_arg(cx: &Infer, i: usize) -> Option<i64> {
    match &cx.call.args[i].kind {
        ExprKind::PrimValue(p) => match &*p.kind {
            PrimExprKind::IntImm { value, .. } => Some(*value),
            _ => None,
        },
        _ => None,
    }
}

fn prim_expr_arg(cx: &Infer, i: usize) -> Option<PrimExpr> {
    match &cx.call.args[i].kind {
        ExprKind::PrimValue(p) if p.dtype().is_int() => Some(p.clone()),
        _ => None,
    }
}

/// OP-arange: the 1-D tensor `start, start + step, …` below `end` (above, for a
/// negative step), of `ceil((end - start) / step)` elements (0 if negative).
/// `start`, `end`, `step` are PrimValues; with integer literals (or integer
/// expressions and a literal step) the length is known. The dtype is `dtype` if given,
/// else `int64` when all three are integers and `float32` otherwise.
/// Errors: an argument that is not a PrimValue; a literal step of 0.
pub fn arange(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let mut all_int = true;
    for (i, what) in ["start", "end", "step"].iter().enumerate() {
        match &*cx.args[i].kind {
            StructInfoKind::Prim { dtype } => all_int &= dtype.is_int() || dtype.is_uint(),
            _ => return Err(cx.error(format!("`{what}` must be a PrimValue"))),
        }
    }
    let dtype = cx.attr_dtype("dtype").unwrap_or(if all_int { DataType::INT64 } else { DataType::FLOAT32 });
    let step = int_arg(cx, 2);
    if step == Some(0) {
        return Err(cx.error("the step is 0"));
    }
    let len = match (prim_expr_arg(cx, 0), prim_expr_arg(cx, 1), step) {
        (Some(start), Some(end), Some(s)) => {
            let (lo, hi, s) = if s > 0 { (start, end, s) } else { (end, start, -s) };
            let span = dim_op(PrimBinOp::Add, &dim_op(PrimBinOp::Sub, &hi, &lo), &PrimExpr::int(s - 1));
            Some(dim_op(PrimBinOp::Max, &dim_op(PrimBinOp::FloorDiv, &span, &PrimExpr::int(s)), &PrimExpr::int(0)))
        }
        _ => None,
    };
    Ok(tensor_si(len.map(|l| vec![l]), dtype, 1))
}
