//! Unary math and activations (issue 19): `erf`, `rsqrt`, `sin`, `cos`, `floor`,
//! `ceil`, `round`, `sign`, `square`, `isnan`, `isinf`, `nn.gelu`, `nn.gelu_tanh`,
//! `nn.silu`, `nn.leakyrelu`, `clip`. TVM 0.27 infers them with `InferTypeUnaryArith`
//! (`require_float_dtype` true or false), `InferTypeUnaryCheck` (a `bool` result), and
//! for `clip` the first argument's type.

use super::infer::{Infer, TensorInfo};
use super::OpError;
use crate::grammar::{DataType, StructInfo, StructInfoKind};
use crate::require;

fn same_shape(x: &TensorInfo, dtype: DataType) -> StructInfo {
    StructInfo::new(StructInfoKind::Tensor { shape: x.shape.clone(), dtype, ndim: x.ndim }, crate::Span::SYNTHETIC)
}

/// OP-erf, OP-rsqrt, OP-sin, OP-cos, OP-nn.gelu, OP-nn.gelu_tanh, OP-nn.silu: the
/// result has the operand's StructInfo (shape, rank, dtype; TVM's
/// `require_float_dtype=true`). Errors: the operand is not a tensor; its known dtype
/// is not a float.
pub fn float(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    require!(cx => x.dtype.is_void() || x.dtype.is_float(), "needs a floating-point tensor, not {}", x.dtype);
    Ok(same_shape(&x, x.dtype))
}

/// OP-floor, OP-ceil, OP-round, OP-sign, OP-square: the result has the operand's
/// StructInfo, of any dtype (TVM's `require_float_dtype=false`). Error: the operand is
/// not a tensor.
pub fn any(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    Ok(same_shape(&x, x.dtype))
}

/// OP-isnan, OP-isinf: a `bool` tensor of the operand's shape and rank, for an operand
/// of any dtype (TVM's `InferTypeUnaryCheck`). Error: the operand is not a tensor.
pub fn check(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    Ok(same_shape(&x, DataType::bool()))
}

/// OP-nn.leakyrelu: as OP-nn.gelu (a float tensor, same StructInfo); the attribute
/// `alpha` (a number, default 0.01) is the slope below 0. Errors: the operand is not a
/// tensor or of a known non-float dtype; `alpha` not a number (the schema).
pub fn leakyrelu(cx: &mut Infer) -> Result<StructInfo, OpError> {
    float(cx)
}

/// OP-clip: `clip(x, min, max)` has `x`'s StructInfo; `min` and `max` are PrimValues
/// (TVM 0.27 prints `R.clip(x, 0, 6)` or `R.clip(x, T.float64(0.5), ...)`), converted
/// to `x`'s dtype at run time. TVM's rule returns the first argument's type without
/// checking it; here `x` must be a tensor. Errors: `x` not a tensor; `min` or `max` not
/// a PrimValue.
pub fn clip(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let x = cx.tensor(0, "the operand")?;
    for (i, what) in [(1, "min"), (2, "max")] {
        let ok = matches!(&*cx.args[i].kind, StructInfoKind::Prim { .. });
        require!(cx => ok, "`{what}` must be a PrimValue, got {}", crate::text::print_struct_info(&cx.args[i]));
    }
    Ok(same_shape(&x, x.dtype))
}
