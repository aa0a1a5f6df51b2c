//! Statistics: `prod`, `variance`, `std` (TVM's `InferStructInfoStatistical`, shared
//! with `sum`), `argmax`, `argmin` (one axis, an `int64` result) and `cumsum` (a scan).

use super::infer::{tensor_si, Infer};
use super::linalg;
use super::OpError;
use crate::grammar::{DataType, PrimBinOp, PrimExpr, StructInfo, StructInfoKind};
use crate::require;

/// OP-prod, OP-variance: as OP-sum (TVM registers them with the same
/// `InferStructInfoStatistical`): reduce along `axis` (`None`: every axis), keeping
/// reduced dimensions as 1 with `keepdims`; the dtype is the operand's (any dtype).
/// Errors: not a tensor; an axis out of range for a known rank; a repeated axis.
pub fn prod_variance(cx: &mut Infer) -> Result<StructInfo, OpError> {
    linalg::reduce(cx)
}

/// OP-std: as OP-variance, on a floating-point tensor (TVM's rule accepts any dtype,
/// but its legalization takes `sqrt` of the integer variance, which no TVM target
/// compiles; see operator-semantics.md). Errors: those of OP-variance; a known
/// non-float dtype.
pub fn std(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    require!(cx => x.dtype.is_void() || x.dtype.is_float(), "needs a floating-point tensor, not {}", x.dtype);
    linalg::reduce(cx)
}

/// OP-argmax, OP-argmin: the index of the first largest (smallest) element along the
/// integer `axis`, or of the flattened tensor when `axis` is `None`; the result is
/// `int64`. Without `keepdims` the axis (every axis, for `None`) is removed, with it
/// kept as 1. With a known rank and unknown shape, `axis=None, keepdims=True` gives
/// the all-ones shape (as TVM). Errors: not a tensor; `axis` out of range for a known
/// rank.
pub fn arg_reduce(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let keepdims = cx.attr_bool("keepdims", false);
    let axis = cx.attr("axis").map(|_| cx.attr_int("axis", 0));
    let i64t = DataType::INT64;
    if x.ndim == -1 {
        let ndim = if axis.is_none() && !keepdims { 0 } else { -1 };
        return Ok(tensor_si((ndim == 0).then(Vec::new), i64t, ndim));
    }
    let axis = match axis {
        Some(a) => Some(cx.normalize_axis(a, x.ndim)?),
        None => None,
    };
    let reduced = |i: usize| axis.is_none_or(|a| a == i);
    let ndim = if keepdims {
        x.ndim
    } else if axis.is_some() {
        x.ndim - 1
    } else {
        0
    };
    let dims = match &x.dims {
        Some(ds) => Some(
            ds.iter()
                .enumerate()
                .filter_map(|(i, d)| match (reduced(i), keepdims) {
                    (false, _) => Some(d.clone()),
                    (true, true) => Some(PrimExpr::int(1)),
                    (true, false) => None,
                })
                .collect(),
        ),
        None if axis.is_none() => Some(vec![PrimExpr::int(1); ndim as usize]),
        None => None,
    };
    Ok(tensor_si(dims, i64t, ndim))
}

/// OP-cumsum: the inclusive (with `exclusive`, exclusive) running sum along the
/// integer `axis`, in the attribute `dtype` (default: the operand's). With `axis` set
/// the result has the operand's shape; with `axis=None` the operand is flattened and
/// the result is 1-D of the element count (TVM 0.27 keeps the operand's rank when the
/// shape is unknown; see operator-semantics.md). Errors: not a tensor; `axis` out of
/// range for a known rank (TVM checks it only when legalizing).
pub fn cumsum(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let dtype = cx.attr_dtype("dtype").unwrap_or(x.dtype);
    if cx.attr("axis").is_none() {
        let dims = x.dims.as_ref().map(|ds| {
            let n = ds.iter().fold(PrimExpr::int(1), |acc, d| super::dim_op(PrimBinOp::Mul, &acc, d));
            vec![n]
        });
        return Ok(tensor_si(dims, dtype, 1));
    }
    if x.ndim != -1 {
        cx.normalize_axis(cx.attr_int("axis", 0), x.ndim)?;
    }
    Ok(StructInfo::new(StructInfoKind::Tensor { shape: x.shape.clone(), dtype, ndim: x.ndim }, crate::Span::SYNTHETIC))
}
