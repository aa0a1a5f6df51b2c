//! The gradient pass's markers (TVM 0.27's `relax/op/tensor/grad.cc`): `grad.no_grad`,
//! `grad.start_checkpoint`, `grad.end_checkpoint`. Each is the identity on its
//! argument; they only tell Relax's `Gradient` pass where not to differentiate and
//! which stage to recompute, so their meaning here is their argument's.

use super::{Infer, OpError};
use crate::grammar::{ExprKind, StructInfo};
use crate::require;

/// OP-grad.no_grad: the identity; the result has the argument's StructInfo (any kind).
pub fn no_grad(cx: &mut Infer) -> Result<StructInfo, OpError> {
    Ok(cx.args[0].clone())
}

/// The argument of a checkpoint marker must be a variable, as TVM checks.
fn checkpoint(cx: &mut Infer) -> Result<StructInfo, OpError> {
    let is_var = matches!(cx.call.args[0].kind, ExprKind::Var(_));
    require!(cx => is_var, "the argument must be a variable");
    Ok(cx.args[0].clone())
}

/// OP-grad.start_checkpoint: marks the input of a checkpoint stage; the identity, with
/// the argument's StructInfo. Error: the argument is not a variable (a constant, say).
pub fn start_checkpoint(cx: &mut Infer) -> Result<StructInfo, OpError> {
    checkpoint(cx)
}

/// OP-grad.end_checkpoint: marks the output of a checkpoint stage; the identity, with
/// the argument's StructInfo. Error: the argument is not a variable.
pub fn end_checkpoint(cx: &mut Infer) -> Result<StructInfo, OpError> {
    checkpoint(cx)
}
