//! Elementwise operators: binary arithmetic, comparisons, logical operators, unary
//! functions, `where`, `astype`, and `nn.softmax` (which keeps its input's shape).

use super::infer::{tensor_si, Infer};
use super::OpError;
use crate::grammar::{DataType, StructInfo};
use crate::require;

/// Broadcasts two tensor operands: `(ndim, dims, dtype)` of the result.
fn binary(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let a = cx.tensor(0, "the first operand")?;
    let b = cx.tensor(1, "the second operand")?;
    let dtype = cx.same_dtype(a.dtype, b.dtype)?;
    let (ndim, dims) = cx.broadcast_tensors(&[&a, &b])?;
    Ok(tensor_si(dims, dtype, ndim))
}

/// OP-add, OP-subtract, OP-multiply, OP-divide, OP-floor_divide, OP-power,
/// OP-maximum, OP-minimum: `x1`, `x2` are tensors; the result has their common dtype
/// (`Void` if either is unknown) and their NumPy-broadcast shape. Dimensions pair up
/// from the right; a pair is fine when provably equal or one is 1.
/// Errors: an operand that is not a tensor; two known, different dtypes; a pair of
/// dimensions provably different where neither can be 1. Warning: a pair that cannot
/// be decided (the result's shape is then unknown, its rank known).
pub fn arith(cx: &mut Infer) -> Result<StructInfo, OpError> {
    binary(cx)
}

/// OP-equal, OP-not_equal, OP-less, OP-less_equal, OP-greater, OP-greater_equal:
/// as OP-add, but the result dtype is `bool`.
pub fn compare(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let si = binary(cx)?;
    Ok(with_dtype(&si, DataType::bool()))
}

fn with_dtype(si: &StructInfo, dtype: DataType) -> StructInfo {
    match &*si.kind {
        crate::grammar::StructInfoKind::Tensor { shape, ndim, .. } => StructInfo::new(
            crate::grammar::StructInfoKind::Tensor { shape: shape.clone(), dtype, ndim: *ndim },
            si.span,
        ),
        _ => si.clone(),
    }
}

fn require_bool(cx: &Infer, dtype: DataType, what: &str) -> Result<(), OpError> {
    require!(cx => dtype.is_void() || dtype.is_bool(), "{what} must have dtype bool, not {dtype}");
    Ok(())
}

/// OP-logical_and, OP-logical_or: as OP-add on `bool` tensors; the result is `bool`.
/// Errors: as OP-add, and an operand whose known dtype is not `bool`.
pub fn logical(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let a = cx.tensor(0, "the first operand")?;
    let b = cx.tensor(1, "the second operand")?;
    require_bool(cx, a.dtype, "the first operand")?;
    require_bool(cx, b.dtype, "the second operand")?;
    let (ndim, dims) = cx.broadcast_tensors(&[&a, &b])?;
    Ok(tensor_si(dims, DataType::bool(), ndim))
}

/// OP-logical_not: a `bool` tensor to a `bool` tensor of the same shape.
/// Errors: the operand is not a tensor, or its known dtype is not `bool`.
pub fn logical_not(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    require_bool(cx, x.dtype, "the operand")?;
    Ok(same_shape(&x, DataType::bool()))
}

fn same_shape(x: &super::infer::TensorInfo, dtype: DataType) -> StructInfo {
    StructInfo::new(
        crate::grammar::StructInfoKind::Tensor { shape: x.shape.clone(), dtype, ndim: x.ndim },
        crate::Span::SYNTHETIC,
    )
}

/// OP-negative, OP-abs, OP-nn.relu: the result has the operand's StructInfo (shape,
/// dtype, rank). Error: the operand is not a tensor.
pub fn unary(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    Ok(same_shape(&x, x.dtype))
}

/// OP-exp, OP-log, OP-sqrt, OP-tanh, OP-sigmoid: as OP-negative, on floating-point
/// tensors. Errors: the operand is not a tensor, or its known dtype is not a float.
pub fn unary_float(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    require!(cx => x.dtype.is_void() || x.dtype.is_float(), "needs a floating-point tensor, not {}", x.dtype);
    Ok(same_shape(&x, x.dtype))
}

/// OP-nn.softmax: softmax along `axis` (default -1) of a floating-point tensor; the
/// result has the operand's StructInfo. Errors: not a tensor; a known non-float dtype;
/// `axis` out of range for a known rank.
pub fn softmax(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    require!(cx => x.dtype.is_void() || x.dtype.is_float(), "needs a floating-point tensor, not {}", x.dtype);
    if x.ndim != -1 {
        cx.normalize_axis(cx.attr_int("axis", -1), x.ndim)?;
    }
    Ok(same_shape(&x, x.dtype))
}

/// OP-where: `where(condition, x1, x2)` picks from `x1` where `condition` holds, else
/// from `x2`. The three broadcast together (as OP-add); the dtype is that of `x1` and
/// `x2`. Errors: an operand that is not a tensor; a condition whose known dtype is not
/// `bool`; `x1`, `x2` of known different dtypes; shapes that provably do not broadcast.
pub fn where_(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let c = cx.tensor(0, "the condition")?;
    let a = cx.tensor(1, "the second operand")?;
    let b = cx.tensor(2, "the third operand")?;
    require_bool(cx, c.dtype, "the condition")?;
    let dtype = cx.same_dtype(a.dtype, b.dtype)?;
    let (ndim, dims) = cx.broadcast_tensors(&[&c, &a, &b])?;
    Ok(tensor_si(dims, dtype, ndim))
}

/// OP-astype: the operand converted to the attribute `dtype`; same shape.
/// Errors: not a tensor; `dtype` missing or not a dtype.
pub fn astype(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    let dtype = cx.attr_dtype("dtype").ok_or_else(|| cx.error("needs `dtype`"))?;
    Ok(same_shape(&x, dtype))
}
