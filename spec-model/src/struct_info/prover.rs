//! Deciding equalities of shape expressions for `check_compatibility` and
//! `unify_struct_info`: the [`ShapeProver`] trait, and the spec's minimum, a syntactic
//! prover (alpha-equivalence after constant folding). The `prover` crate adds egg and
//! Z3 back ends behind the same trait.
//!
//! Semantics (DESIGN.md, proofs-notes/prover.md): shape variables are int64 and >= 0;
//! `+ - *` overflowing int64 and division by zero are errors. "Equal" means equal under
//! every assignment where both sides evaluate; "not equal", different under every one.

use crate::grammar::{DataType, FloatLit, PrimBinOp, PrimExpr, PrimExprKind, PrimVar};

/// A prover's answer about `lhs == rhs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Equal,
    NotEqual,
    Unknown,
}

/// Decides equalities of shape expressions; `scope` holds the shape variables in
/// scope (all >= 0).
pub trait ShapeProver {
    fn compare(&self, lhs: &PrimExpr, rhs: &PrimExpr, scope: &[PrimVar]) -> Verdict;
}

/// The spec's minimum: alpha-equivalence (here: syntactic equality, since the
/// variables are the same ones) after constant folding; `NotEqual` only when both
/// sides fold to different constants.
#[derive(Clone, Copy, Debug, Default)]
pub struct SyntacticProver;

impl ShapeProver for SyntacticProver {
    fn compare(&self, lhs: &PrimExpr, rhs: &PrimExpr, _scope: &[PrimVar]) -> Verdict {
        let (a, b) = (fold(lhs), fold(rhs));
        if a == b && same_literals(&a, &b) {
            return Verdict::Equal;
        }
        match (literal(&a), literal(&b)) {
            (Some(x), Some(y)) if x != y => Verdict::NotEqual,
            _ => Verdict::Unknown,
        }
    }
}

/// `PrimExpr` equality compares literal values and dtypes; also compare int values
/// across dtypes is not done (an `int32` 1 is not an `int64` 1).
fn same_literals(a: &PrimExpr, b: &PrimExpr) -> bool {
    a.dtype() == b.dtype()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Lit {
    Int(i64),
    Float(u64),
}

fn literal(e: &PrimExpr) -> Option<Lit> {
    match &*e.kind {
        PrimExprKind::IntImm { value, .. } => Some(Lit::Int(*value)),
        PrimExprKind::FloatImm { value, .. } => Some(Lit::Float(value.0.to_bits())),
        _ => None,
    }
}

fn int(value: i64, dtype: DataType, like: &PrimExpr) -> PrimExpr {
    PrimExpr::new(PrimExprKind::IntImm { value, dtype }, like.span)
}

/// Constant folding with the semantics above: an operation whose result would be an
/// error (overflow, division by zero) is left unfolded.
pub fn fold(e: &PrimExpr) -> PrimExpr {
    match &*e.kind {
        PrimExprKind::Binary { op, a, b } => {
            let (a, b) = (fold(a), fold(b));
            if let (Some(Lit::Int(x)), Some(Lit::Int(y))) = (literal(&a), literal(&b)) {
                let dt = a.dtype();
                let folded = match op {
                    PrimBinOp::Add => x.checked_add(y),
                    PrimBinOp::Sub => x.checked_sub(y),
                    PrimBinOp::Mul => x.checked_mul(y),
                    PrimBinOp::Div => x.checked_div(y),
                    PrimBinOp::Mod => x.checked_rem(y),
                    PrimBinOp::FloorDiv => floor_div(x, y),
                    PrimBinOp::FloorMod => floor_mod(x, y),
                    PrimBinOp::Min => Some(x.min(y)),
                    PrimBinOp::Max => Some(x.max(y)),
                    _ => None,
                };
                if let Some(v) = folded {
                    return int(v, dt, e);
                }
                let cmp = match op {
                    PrimBinOp::Eq => Some(x == y),
                    PrimBinOp::Ne => Some(x != y),
                    PrimBinOp::Lt => Some(x < y),
                    PrimBinOp::Le => Some(x <= y),
                    PrimBinOp::Gt => Some(x > y),
                    PrimBinOp::Ge => Some(x >= y),
                    PrimBinOp::And => Some(x != 0 && y != 0),
                    PrimBinOp::Or => Some(x != 0 || y != 0),
                    _ => None,
                };
                if let Some(c) = cmp {
                    return int(c as i64, DataType::bool(), e);
                }
            }
            PrimExpr::new(PrimExprKind::Binary { op: *op, a, b }, e.span)
        }
        PrimExprKind::Not(a) => {
            let a = fold(a);
            match literal(&a) {
                Some(Lit::Int(x)) => int((x == 0) as i64, DataType::bool(), e),
                _ => PrimExpr::new(PrimExprKind::Not(a), e.span),
            }
        }
        PrimExprKind::Select { cond, then_value, else_value } => {
            let (c, t, f) = (fold(cond), fold(then_value), fold(else_value));
            match literal(&c) {
                Some(Lit::Int(0)) => f,
                Some(Lit::Int(_)) => t,
                _ => PrimExpr::new(PrimExprKind::Select { cond: c, then_value: t, else_value: f }, e.span),
            }
        }
        PrimExprKind::Cast { dtype, value } => {
            let v = fold(value);
            match (&*v.kind, dtype.is_int() || dtype.is_uint()) {
                (PrimExprKind::IntImm { value, .. }, true) if dtype.fits(*value as i128) => int(*value, *dtype, e),
                (PrimExprKind::IntImm { value, .. }, false) if dtype.is_float() => {
                    PrimExpr::new(PrimExprKind::FloatImm { value: FloatLit(*value as f64), dtype: *dtype }, e.span)
                }
                _ => PrimExpr::new(PrimExprKind::Cast { dtype: *dtype, value: v }, e.span),
            }
        }
        _ => e.clone(),
    }
}

fn floor_div(x: i64, y: i64) -> Option<i64> {
    let q = x.checked_div(y)?;
    if (x % y != 0) && ((x < 0) != (y < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

fn floor_mod(x: i64, y: i64) -> Option<i64> {
    let q = floor_div(x, y)?;
    x.checked_sub(q.checked_mul(y)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n() -> PrimVar {
        PrimVar::shape_var("n")
    }

    #[test]
    fn folds_and_compares() {
        let p = SyntacticProver;
        let two_plus_two = PrimExpr::binary(PrimBinOp::Add, PrimExpr::int(2), PrimExpr::int(2));
        assert_eq!(p.compare(&two_plus_two, &PrimExpr::int(4), &[]), Verdict::Equal);
        assert_eq!(p.compare(&two_plus_two, &PrimExpr::int(5), &[]), Verdict::NotEqual);
        let v = n();
        let nv = PrimExpr::var(&v);
        assert_eq!(p.compare(&nv, &nv, std::slice::from_ref(&v)), Verdict::Equal);
        assert_eq!(p.compare(&nv, &PrimExpr::int(3), std::slice::from_ref(&v)), Verdict::Unknown);
        // n + 0 is not syntactically n: the syntactic prover does not know identities.
        let n0 = PrimExpr::binary(PrimBinOp::Add, nv.clone(), PrimExpr::int(0));
        assert_eq!(p.compare(&n0, &nv, &[v]), Verdict::Unknown);
        // Overflow and division by zero are not folded.
        let big = PrimExpr::binary(PrimBinOp::Mul, PrimExpr::int(i64::MAX), PrimExpr::int(2));
        assert_eq!(p.compare(&big, &PrimExpr::int(-2), &[]), Verdict::Unknown);
        let div0 = PrimExpr::binary(PrimBinOp::FloorDiv, PrimExpr::int(1), PrimExpr::int(0));
        assert_eq!(p.compare(&div0, &div0, &[]), Verdict::Equal);
        assert_eq!(floor_div(-7, 2), Some(-4));
        assert_eq!(floor_mod(-7, 2), Some(1));
    }
}
