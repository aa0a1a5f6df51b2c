//! StructInfo compiled for the run-time checks: `MatchCast` (SI-MC-1..5), the
//! function-boundary checks, `cast`, and the first pass of a function's entry that
//! binds the lone shape variables of its parameters (E-3).

use super::plan::{Check, Dim, Lone, Operand, TensorShape};
use super::shape::{compile, ShapeSlot};
use spec_model::grammar::{ExprKind, PrimExpr, PrimVar, StructInfo, StructInfoKind, Var};
use std::rc::Rc;

/// How names map to slots while compiling a check.
pub trait Slots {
    fn shape_slot(&mut self, v: &PrimVar) -> ShapeSlot;
    /// The slot of a Relax variable, if the function has one.
    fn var_slot(&mut self, v: &Var) -> Operand;
}

fn dim(d: &PrimExpr, slots: &mut dyn Slots) -> Dim {
    let code = compile(d, &mut |v| slots.shape_slot(v));
    match d.as_var() {
        Some(v) => Dim::Lone { slot: slots.shape_slot(v), code },
        None => Dim::Expr(code),
    }
}

/// The check of `si`.
pub fn check(si: &StructInfo, slots: &mut dyn Slots) -> Check {
    let sinfo = Rc::new(si.clone());
    match &*si.kind {
        StructInfoKind::Object => Check::Object,
        StructInfoKind::Tensor { shape, dtype, ndim } => {
            let shape = match shape.as_ref().map(|s| &s.kind) {
                None => TensorShape::Any,
                Some(ExprKind::Var(v)) => TensorShape::Var { slot: slots.var_slot(v), name: v.name().into() },
                Some(ExprKind::ShapeExpr(ds)) => TensorShape::Dims(ds.iter().map(|d| dim(d, slots)).collect()),
                Some(_) => TensorShape::Malformed,
            };
            Check::Tensor { ndim: *ndim, dtype: *dtype, shape, sinfo }
        }
        StructInfoKind::Shape { values, ndim } => Check::Shape {
            ndim: *ndim,
            values: values.as_ref().map(|vs| vs.iter().map(|d| dim(d, slots)).collect()),
            sinfo,
        },
        StructInfoKind::Prim { dtype, value } => {
            Check::Prim { dtype: *dtype, value: value.as_ref().map(|d| dim(d, slots)), sinfo }
        }
        StructInfoKind::Tuple { fields } => {
            Check::Tuple { fields: fields.iter().map(|f| check(f, slots)).collect(), sinfo }
        }
        StructInfoKind::Func { params, derive_func, .. } => {
            Check::Func { closure_ok: derive_func.is_none(), packed_ok: params.is_none(), sinfo }
        }
    }
}

/// Where the lone shape variables of a parameter annotation sit (`None` when there are none).
pub fn lone(si: &StructInfo, slots: &mut dyn Slots) -> Option<Lone> {
    let lone_dims = |ds: &[PrimExpr], slots: &mut dyn Slots| -> Box<[Option<ShapeSlot>]> {
        ds.iter().map(|d| d.as_var().map(|v| slots.shape_slot(v))).collect()
    };
    match &*si.kind {
        StructInfoKind::Tensor { shape: Some(s), .. } => match &s.kind {
            ExprKind::ShapeExpr(ds) => Some(Lone::Tensor(lone_dims(ds, slots))),
            _ => None,
        },
        StructInfoKind::Shape { values: Some(vs), .. } => Some(Lone::Shape(lone_dims(vs, slots))),
        StructInfoKind::Prim { value: Some(v), .. } => v.as_var().map(|v| Lone::Prim(slots.shape_slot(v))),
        StructInfoKind::Tuple { fields } => Some(Lone::Tuple(fields.iter().map(|f| lone(f, slots)).collect())),
        _ => None,
    }
}
