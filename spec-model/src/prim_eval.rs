//! Evaluating `PrimExpr`s: «If all variables in the `PrimExpr` are defined, `PrimExpr`
//! arithmetic will generally be evaluated according to the semantics of TIR» (Informal
//! Semantics of PrimExprs for Dimensions, rule 4), with DESIGN.md's interpretations:
//! integer arithmetic is exact and an error when the result leaves the dtype's range
//! (never wrap-around); division or modulo by zero is an error; `Div`/`Mod` truncate,
//! `FloorDiv`/`FloorMod` floor. Every operand is evaluated (no short circuit, like TIR's
//! `Select`, which evaluates both branches), so an expression is defined exactly when
//! all its subexpressions are. The provers decide equalities against this semantics
//! (proofs-notes/prover.md).

use crate::grammar::{DataType, PrimBinOp, PrimExpr, PrimExprKind, PrimVar};

/// A `PrimExpr`'s value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PrimValue {
    Int(i64),
    Bool(bool),
    Float(f64),
}

/// Why a `PrimExpr` has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrimEvalError {
    /// A result outside its dtype's range.
    IntegerOverflow,
    DivisionByZero,
    /// A shape variable with no value.
    Unbound(String),
    /// An operation the dtypes do not allow (e.g. `%` on floats).
    Unsupported(String),
}

/// The range of an integer dtype (`int64` when the dtype is not an integer type).
pub fn int_range(dtype: DataType) -> (i128, i128) {
    let bits = dtype.bits.clamp(1, 64);
    if dtype.is_uint() {
        (0, (1i128 << bits) - 1)
    } else if dtype.is_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (i64::MIN as i128, i64::MAX as i128)
    }
}

fn checked(v: i128, dtype: DataType) -> Result<PrimValue, PrimEvalError> {
    let (lo, hi) = int_range(dtype);
    if (lo..=hi).contains(&v) {
        Ok(PrimValue::Int(v as i64))
    } else {
        Err(PrimEvalError::IntegerOverflow)
    }
}

/// `floor(x / y)` for `y != 0`.
pub fn floor_div(x: i128, y: i128) -> i128 {
    let q = x / y;
    if x % y != 0 && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}

/// `x - y * floor(x / y)` for `y != 0` (the sign of `y`).
pub fn floor_mod(x: i128, y: i128) -> i128 {
    x - y * floor_div(x, y)
}

/// The result of an integer operation before it is fitted to a dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntResult {
    Int(i128),
    Bool(bool),
}

/// An integer binary operation computed exactly (shared by shape expressions and the
/// oracle's TIR interpreter): `Div`/`Mod` truncate, `FloorDiv`/`FloorMod` floor, a zero
/// divisor is `DivisionByZero`, a result outside `i128` is `IntegerOverflow`;
/// comparisons give `Bool`. `And`/`Or` are the caller's (they read truth values).
pub fn int_binary(op: PrimBinOp, i: i128, j: i128) -> Result<IntResult, PrimEvalError> {
    use PrimBinOp::*;
    let r = match op {
        Add => i.checked_add(j),
        Sub => i.checked_sub(j),
        Mul => i.checked_mul(j),
        Div | Mod | FloorDiv | FloorMod if j == 0 => return Err(PrimEvalError::DivisionByZero),
        Div => i.checked_div(j),
        Mod => i.checked_rem(j),
        FloorDiv => Some(floor_div(i, j)),
        FloorMod => Some(floor_mod(i, j)),
        Min => Some(i.min(j)),
        Max => Some(i.max(j)),
        Eq => return Ok(IntResult::Bool(i == j)),
        Ne => return Ok(IntResult::Bool(i != j)),
        Lt => return Ok(IntResult::Bool(i < j)),
        Le => return Ok(IntResult::Bool(i <= j)),
        Gt => return Ok(IntResult::Bool(i > j)),
        Ge => return Ok(IntResult::Bool(i >= j)),
        And => return Ok(IntResult::Bool(i != 0 && j != 0)),
        Or => return Ok(IntResult::Bool(i != 0 || j != 0)),
    };
    r.map(IntResult::Int).ok_or(PrimEvalError::IntegerOverflow)
}

fn as_int(v: PrimValue) -> Option<i128> {
    match v {
        PrimValue::Int(i) => Some(i as i128),
        PrimValue::Bool(b) => Some(b as i128),
        PrimValue::Float(_) => None,
    }
}

fn as_bool(v: PrimValue) -> bool {
    match v {
        PrimValue::Int(i) => i != 0,
        PrimValue::Bool(b) => b,
        PrimValue::Float(f) => f != 0.0,
    }
}

fn as_float(v: PrimValue) -> f64 {
    match v {
        PrimValue::Int(i) => i as f64,
        PrimValue::Bool(b) => b as i64 as f64,
        PrimValue::Float(f) => f,
    }
}

fn round_float(x: f64, dtype: DataType) -> f64 {
    match dtype.bits {
        16 => crate::grammar::f16_nearest(x).to_f64(),
        32 => x as f32 as f64,
        _ => x,
    }
}

/// Evaluates `e` with the shape variables' values from `env`.
pub fn eval_prim(e: &PrimExpr, env: &dyn Fn(&PrimVar) -> Option<i64>) -> Result<PrimValue, PrimEvalError> {
    match &*e.kind {
        PrimExprKind::Var(v) => match env(v) {
            Some(x) if v.dtype().is_bool() => Ok(PrimValue::Bool(x != 0)),
            Some(x) => checked(x as i128, v.dtype()),
            None => Err(PrimEvalError::Unbound(v.name().to_string())),
        },
        PrimExprKind::IntImm { value, dtype } if dtype.is_bool() => Ok(PrimValue::Bool(*value != 0)),
        PrimExprKind::IntImm { value, dtype } => checked(*value as i128, *dtype),
        PrimExprKind::FloatImm { value, .. } => Ok(PrimValue::Float(value.0)),
        PrimExprKind::Not(a) => Ok(PrimValue::Bool(!as_bool(eval_prim(a, env)?))),
        PrimExprKind::Select { cond, then_value, else_value } => {
            let c = as_bool(eval_prim(cond, env)?);
            let (t, f) = (eval_prim(then_value, env)?, eval_prim(else_value, env)?);
            Ok(if c { t } else { f })
        }
        PrimExprKind::Cast { dtype, value } => {
            let v = eval_prim(value, env)?;
            if dtype.is_bool() {
                Ok(PrimValue::Bool(as_bool(v)))
            } else if dtype.is_float() {
                Ok(PrimValue::Float(round_float(as_float(v), *dtype)))
            } else {
                match v {
                    PrimValue::Float(f) if !f.is_finite() => Err(PrimEvalError::IntegerOverflow),
                    PrimValue::Float(f) if f.trunc().abs() >= 2f64.powi(100) => Err(PrimEvalError::IntegerOverflow),
                    PrimValue::Float(f) => checked(f.trunc() as i128, *dtype),
                    other => checked(as_int(other).unwrap_or(0), *dtype),
                }
            }
        }
        PrimExprKind::Binary { op, a, b } => {
            let (x, y) = (eval_prim(a, env)?, eval_prim(b, env)?);
            // Both sides are converted to the promoted dtype first (TVM's
            // `BinaryOpMatchTypes`), so `int32 + int64` is checked as int64.
            binary(*op, x, y, a.dtype().promote_binary(b.dtype()))
        }
    }
}

fn binary(op: PrimBinOp, x: PrimValue, y: PrimValue, dtype: DataType) -> Result<PrimValue, PrimEvalError> {
    use PrimBinOp::*;
    if matches!(op, And | Or) {
        let (p, q) = (as_bool(x), as_bool(y));
        return Ok(PrimValue::Bool(if op == And { p && q } else { p || q }));
    }
    if let (Some(i), Some(j)) = (as_int(x), as_int(y)) {
        return match int_binary(op, i, j)? {
            IntResult::Int(r) => checked(r, dtype),
            IntResult::Bool(b) => Ok(PrimValue::Bool(b)),
        };
    }
    let (f, g) = (as_float(x), as_float(y));
    let r = match op {
        Add => f + g,
        Sub => f - g,
        Mul => f * g,
        Div => f / g,
        Min => f.min(g),
        Max => f.max(g),
        Eq => return Ok(PrimValue::Bool(f == g)),
        Ne => return Ok(PrimValue::Bool(f != g)),
        Lt => return Ok(PrimValue::Bool(f < g)),
        Le => return Ok(PrimValue::Bool(f <= g)),
        Gt => return Ok(PrimValue::Bool(f > g)),
        Ge => return Ok(PrimValue::Bool(f >= g)),
        Mod | FloorDiv | FloorMod | And | Or => {
            return Err(PrimEvalError::Unsupported(format!("{} on floating-point values", op.spec_name())))
        }
    };
    Ok(PrimValue::Float(round_float(r, dtype)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(e: &PrimExpr, n: i64) -> Result<PrimValue, PrimEvalError> {
        eval_prim(e, &|_| Some(n))
    }

    #[test]
    fn arithmetic_is_exact_and_checked() {
        let n = PrimExpr::var(&PrimVar::shape_var("n"));
        let add = PrimExpr::binary(PrimBinOp::Add, n.clone(), PrimExpr::int(1));
        assert_eq!(ev(&add, 41), Ok(PrimValue::Int(42)));
        assert_eq!(ev(&add, i64::MAX), Err(PrimEvalError::IntegerOverflow));
        let div = PrimExpr::binary(PrimBinOp::FloorDiv, PrimExpr::int(7), n.clone());
        assert_eq!(ev(&div, 0), Err(PrimEvalError::DivisionByZero));
        assert_eq!(ev(&div, -2), Ok(PrimValue::Int(-4)));
        let tdiv = PrimExpr::binary(PrimBinOp::Div, PrimExpr::int(7), n.clone());
        assert_eq!(ev(&tdiv, -2), Ok(PrimValue::Int(-3)));
        let fmod = PrimExpr::binary(PrimBinOp::FloorMod, PrimExpr::int(-7), n.clone());
        assert_eq!(ev(&fmod, 2), Ok(PrimValue::Int(1)));
        let tmod = PrimExpr::binary(PrimBinOp::Mod, PrimExpr::int(-7), n.clone());
        assert_eq!(ev(&tmod, 2), Ok(PrimValue::Int(-1)));
        let min_div = PrimExpr::binary(PrimBinOp::Div, PrimExpr::int(i64::MIN), n);
        assert_eq!(ev(&min_div, -1), Err(PrimEvalError::IntegerOverflow));
    }

    #[test]
    fn mixed_widths_compute_in_the_promoted_dtype() {
        let n = PrimExpr::var(&PrimVar::shape_var("n"));
        let narrow = |bits| {
            PrimExpr::new(PrimExprKind::Cast { dtype: DataType::int(bits), value: n.clone() }, crate::Span::SYNTHETIC)
        };
        // int32 + int64: the sum is an int64, so 2^40 is no overflow.
        let wide = PrimExpr::binary(PrimBinOp::Add, narrow(32), PrimExpr::int(1 << 40));
        assert_eq!(wide.dtype(), DataType::INT64);
        assert_eq!(ev(&wide, 0), Ok(PrimValue::Int(1 << 40)));
        // int8 + int8 stays an int8: 100 + 100 overflows.
        let small = PrimExpr::binary(PrimBinOp::Add, narrow(8), narrow(8));
        assert_eq!(small.dtype(), DataType::int(8));
        assert_eq!(ev(&small, 100), Err(PrimEvalError::IntegerOverflow));
        assert_eq!(DataType::int(32).promote_binary(DataType::uint(32)), DataType::uint(32));
        assert_eq!(DataType::bool().promote_binary(DataType::int(8)), DataType::int(8));
        assert_eq!(DataType::int(64).promote_binary(DataType::float(16)), DataType::float(16));
    }

    #[test]
    fn select_evaluates_both_branches() {
        let n = PrimExpr::var(&PrimVar::shape_var("n"));
        let bad = PrimExpr::binary(PrimBinOp::FloorDiv, PrimExpr::int(1), PrimExpr::int(0));
        let cond = PrimExpr::binary(PrimBinOp::Lt, n.clone(), PrimExpr::int(3));
        let sel = PrimExpr::new(PrimExprKind::Select { cond, then_value: n, else_value: bad }, crate::Span::SYNTHETIC);
        assert_eq!(ev(&sel, 1), Err(PrimEvalError::DivisionByZero));
    }
}
