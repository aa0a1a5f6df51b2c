//! The e-graph language of shape expressions and the translation of `PrimExpr` into
//! it. Booleans are the integers 0 and 1; `a > b` is `b < a` and `a >= b` is `b <= a`.
//! Floating-point values and narrowing casts have no translation (the egg back end
//! answers `Unknown` for them).

use egg::{define_language, Id, RecExpr, Symbol};
use spec_model::grammar::{DataType, PrimBinOp, PrimExpr, PrimExprKind, PrimVar};
use spec_model::prim_eval::int_range;
use std::collections::HashMap;

define_language! {
    /// `PrimExpr` over unbounded integers: `tdiv`/`tmod` truncate, `fdiv`/`fmod` floor.
    pub enum Shape {
        Num(i64),
        "+" = Add([Id; 2]),
        "-" = Sub([Id; 2]),
        "*" = Mul([Id; 2]),
        "tdiv" = TDiv([Id; 2]),
        "tmod" = TMod([Id; 2]),
        "fdiv" = FDiv([Id; 2]),
        "fmod" = FMod([Id; 2]),
        "min" = Min([Id; 2]),
        "max" = Max([Id; 2]),
        "==" = Eq([Id; 2]),
        "!=" = Ne([Id; 2]),
        "<" = Lt([Id; 2]),
        "<=" = Le([Id; 2]),
        "and" = And([Id; 2]),
        "or" = Or([Id; 2]),
        "not" = Not(Id),
        "select" = Select([Id; 3]),
        Var(Symbol),
    }
}

/// The range a variable ranges over: shape variables are `>= 0` (DESIGN.md), within
/// their dtype.
pub fn var_range(v: &PrimVar) -> (i128, i128) {
    if v.dtype().is_bool() {
        return (0, 1);
    }
    let (_, hi) = int_range(v.dtype());
    (0, hi)
}

/// The symbol naming a variable (by identity: two variables may share a name).
pub fn var_symbol(v: &PrimVar) -> Symbol {
    Symbol::from(format!("v{}", v.id()))
}

/// A translation in progress: the expression and the ranges of its variables.
#[derive(Default)]
pub struct Translation {
    pub expr: RecExpr<Shape>,
    pub ranges: HashMap<Symbol, (i128, i128)>,
}

impl Translation {
    /// Adds `e`; `None` if it has no translation.
    pub fn add(&mut self, e: &PrimExpr) -> Option<Id> {
        let node = match &*e.kind {
            PrimExprKind::Var(v) => {
                let s = var_symbol(v);
                self.ranges.insert(s, var_range(v));
                Shape::Var(s)
            }
            PrimExprKind::IntImm { value, .. } => Shape::Num(*value),
            PrimExprKind::FloatImm { .. } => return None,
            PrimExprKind::Not(a) => Shape::Not(self.add(a)?),
            PrimExprKind::Select { cond, then_value, else_value } => {
                Shape::Select([self.add(cond)?, self.add(then_value)?, self.add(else_value)?])
            }
            PrimExprKind::Cast { dtype, value } => return self.cast(*dtype, value),
            PrimExprKind::Binary { op, a, b } => {
                if a.dtype().is_float() || b.dtype().is_float() {
                    return None;
                }
                let (x, y) = (self.add(a)?, self.add(b)?);
                match op {
                    PrimBinOp::Add => Shape::Add([x, y]),
                    PrimBinOp::Sub => Shape::Sub([x, y]),
                    PrimBinOp::Mul => Shape::Mul([x, y]),
                    PrimBinOp::Div => Shape::TDiv([x, y]),
                    PrimBinOp::Mod => Shape::TMod([x, y]),
                    PrimBinOp::FloorDiv => Shape::FDiv([x, y]),
                    PrimBinOp::FloorMod => Shape::FMod([x, y]),
                    PrimBinOp::Min => Shape::Min([x, y]),
                    PrimBinOp::Max => Shape::Max([x, y]),
                    PrimBinOp::Eq => Shape::Eq([x, y]),
                    PrimBinOp::Ne => Shape::Ne([x, y]),
                    PrimBinOp::Lt => Shape::Lt([x, y]),
                    PrimBinOp::Le => Shape::Le([x, y]),
                    PrimBinOp::Gt => Shape::Lt([y, x]),
                    PrimBinOp::Ge => Shape::Le([y, x]),
                    PrimBinOp::And => Shape::And([x, y]),
                    PrimBinOp::Or => Shape::Or([x, y]),
                }
            }
        };
        Some(self.expr.add(node))
    }

    /// A cast that keeps every value (widening between integer types, bool to int) is
    /// the identity; int to bool is `x != 0`; anything else has no translation.
    fn cast(&mut self, to: DataType, value: &PrimExpr) -> Option<Id> {
        let from = value.dtype();
        if from.is_float() || to.is_float() {
            return None;
        }
        let x = self.add(value)?;
        if to.is_bool() {
            let zero = self.expr.add(Shape::Num(0));
            return Some(self.expr.add(Shape::Ne([x, zero])));
        }
        let (flo, fhi) = if from.is_bool() { (0, 1) } else { int_range(from) };
        let (tlo, thi) = int_range(to);
        (tlo <= flo && fhi <= thi).then_some(x)
    }
}
