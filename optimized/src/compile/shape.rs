//! Shape expressions (`PrimExpr`) compiled to a small stack bytecode over the frame's
//! shape-variable slots. The semantics are the spec's for dimensions with DESIGN.md's
//! interpretations: integer arithmetic is exact and an error outside the dtype's range,
//! division and modulo by zero are errors, `Div`/`Mod` truncate and `FloorDiv`/`FloorMod`
//! floor, and every operand is evaluated (no short circuit).

use spec_model::grammar::{DataType, PrimBinOp, PrimExpr, PrimExprKind, PrimVar};

/// A slot of the frame's shape variables.
pub type ShapeSlot = u32;

/// One instruction of a shape expression's code.
#[derive(Clone, Debug)]
enum POp {
    Var {
        slot: ShapeSlot,
        dtype: DataType,
        name: Box<str>,
    },
    Int(i64, DataType),
    Float(f64),
    Not,
    /// Pops else, then, cond.
    Select,
    Cast(DataType),
    /// Pops b, a; range-checks an integer result against `dtype` (the left operand's).
    Bin(PrimBinOp, DataType),
}

/// A compiled `PrimExpr`.
#[derive(Clone, Debug)]
pub struct ShapeCode {
    ops: Box<[POp]>,
    /// The expression mentions no shape variable.
    pub constant: bool,
    /// The expression as written, for messages.
    pub text: Box<str>,
}

/// A value of a shape expression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PVal {
    Int(i64),
    Bool(bool),
    Float(f64),
}

/// Why a shape expression has no value (the caller names the rule and the error kind:
/// overflow, division by zero, an unbound variable, or an operation floats lack).
#[derive(Clone, Debug, PartialEq)]
pub enum PErr {
    Overflow,
    DivisionByZero,
    Unbound(Box<str>),
    Unsupported(&'static str),
}

/// Compiles `e`, giving each shape variable the slot `slot_of` assigns.
pub fn compile(e: &PrimExpr, slot_of: &mut dyn FnMut(&PrimVar) -> ShapeSlot) -> ShapeCode {
    let mut ops = Vec::new();
    emit(e, slot_of, &mut ops);
    ShapeCode { ops: ops.into(), constant: e.vars().is_empty(), text: spec_model::text::print_prim_expr(e).into() }
}

fn emit(e: &PrimExpr, slot_of: &mut dyn FnMut(&PrimVar) -> ShapeSlot, ops: &mut Vec<POp>) {
    match &*e.kind {
        PrimExprKind::Var(v) => ops.push(POp::Var { slot: slot_of(v), dtype: v.dtype(), name: v.name().into() }),
        PrimExprKind::IntImm { value, dtype } => ops.push(POp::Int(*value, *dtype)),
        PrimExprKind::FloatImm { value, .. } => ops.push(POp::Float(value.0)),
        PrimExprKind::Not(a) => {
            emit(a, slot_of, ops);
            ops.push(POp::Not);
        }
        PrimExprKind::Select { cond, then_value, else_value } => {
            emit(cond, slot_of, ops);
            emit(then_value, slot_of, ops);
            emit(else_value, slot_of, ops);
            ops.push(POp::Select);
        }
        PrimExprKind::Cast { dtype, value } => {
            emit(value, slot_of, ops);
            ops.push(POp::Cast(*dtype));
        }
        PrimExprKind::Binary { op, a, b } => {
            emit(a, slot_of, ops);
            emit(b, slot_of, ops);
            ops.push(POp::Bin(*op, a.dtype()));
        }
    }
}

/// The integer range of `dtype` (int64's for a dtype that is not an integer type).
fn range(dtype: DataType) -> (i128, i128) {
    let bits = dtype.bits.clamp(1, 64);
    if dtype.is_uint() {
        (0, (1i128 << bits) - 1)
    } else if dtype.is_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (i64::MIN.into(), i64::MAX.into())
    }
}

fn fit(v: i128, dtype: DataType) -> Result<PVal, PErr> {
    let (lo, hi) = range(dtype);
    if lo <= v && v <= hi {
        Ok(PVal::Int(v as i64))
    } else {
        Err(PErr::Overflow)
    }
}

fn truth(v: PVal) -> bool {
    match v {
        PVal::Int(i) => i != 0,
        PVal::Bool(b) => b,
        PVal::Float(f) => f != 0.0,
    }
}

fn integer(v: PVal) -> Option<i128> {
    match v {
        PVal::Int(i) => Some(i.into()),
        PVal::Bool(b) => Some(b.into()),
        PVal::Float(_) => None,
    }
}

fn real(v: PVal) -> f64 {
    match v {
        PVal::Int(i) => i as f64,
        PVal::Bool(b) => f64::from(u8::from(b)),
        PVal::Float(f) => f,
    }
}

/// `x` rounded to a float dtype of `bits` bits.
fn round(x: f64, bits: u32) -> f64 {
    match bits {
        16 => crate::dtype::f16_of_f64(x).to_f64(),
        32 => x as f32 as f64,
        _ => x,
    }
}

fn cast(v: PVal, to: DataType) -> Result<PVal, PErr> {
    if to.is_bool() {
        return Ok(PVal::Bool(truth(v)));
    }
    if to.is_float() {
        return Ok(PVal::Float(round(real(v), to.bits)));
    }
    match v {
        PVal::Float(f) => {
            let t = f.trunc();
            if !t.is_finite() || t.abs() >= 2f64.powi(100) {
                return Err(PErr::Overflow);
            }
            fit(t as i128, to)
        }
        other => fit(integer(other).unwrap_or(0), to),
    }
}

/// Integer division rounding toward negative infinity (`y != 0`).
fn div_floor(x: i128, y: i128) -> i128 {
    let q = x / y;
    if (x % y != 0) && ((x < 0) != (y < 0)) {
        q - 1
    } else {
        q
    }
}

fn binary(op: PrimBinOp, x: PVal, y: PVal, dtype: DataType) -> Result<PVal, PErr> {
    use PrimBinOp::*;
    match op {
        And => return Ok(PVal::Bool(truth(x) && truth(y))),
        Or => return Ok(PVal::Bool(truth(x) || truth(y))),
        _ => {}
    }
    if let (Some(i), Some(j)) = (integer(x), integer(y)) {
        if matches!(op, Div | Mod | FloorDiv | FloorMod) && j == 0 {
            return Err(PErr::DivisionByZero);
        }
        let r = match op {
            Add => i.checked_add(j),
            Sub => i.checked_sub(j),
            Mul => i.checked_mul(j),
            Div => i.checked_div(j),
            Mod => i.checked_rem(j),
            FloorDiv => Some(div_floor(i, j)),
            FloorMod => Some(i - j * div_floor(i, j)),
            Min => Some(i.min(j)),
            Max => Some(i.max(j)),
            Eq => return Ok(PVal::Bool(i == j)),
            Ne => return Ok(PVal::Bool(i != j)),
            Lt => return Ok(PVal::Bool(i < j)),
            Le => return Ok(PVal::Bool(i <= j)),
            Gt => return Ok(PVal::Bool(i > j)),
            Ge => return Ok(PVal::Bool(i >= j)),
            And | Or => unreachable!("handled above"),
        };
        return fit(r.ok_or(PErr::Overflow)?, dtype);
    }
    let (f, g) = (real(x), real(y));
    let r = match op {
        Add => f + g,
        Sub => f - g,
        Mul => f * g,
        Div => f / g,
        Min => f.min(g),
        Max => f.max(g),
        Eq => return Ok(PVal::Bool(f == g)),
        Ne => return Ok(PVal::Bool(f != g)),
        Lt => return Ok(PVal::Bool(f < g)),
        Le => return Ok(PVal::Bool(f <= g)),
        Gt => return Ok(PVal::Bool(f > g)),
        Ge => return Ok(PVal::Bool(f >= g)),
        Mod | FloorDiv | FloorMod | And | Or => return Err(PErr::Unsupported("an integer operation on floats")),
    };
    Ok(PVal::Float(round(r, dtype.bits)))
}

impl ShapeCode {
    /// Evaluates the expression with the shape variables of `slots`.
    pub fn eval(&self, slots: &[Option<i64>]) -> Result<PVal, PErr> {
        let mut stack: Vec<PVal> = Vec::with_capacity(4);
        let pop = |stack: &mut Vec<PVal>| stack.pop().ok_or(PErr::Unsupported("a malformed expression"));
        for op in self.ops.iter() {
            let v = match op {
                POp::Var { slot, dtype, name } => match slots.get(*slot as usize).copied().flatten() {
                    Some(x) if dtype.is_bool() => PVal::Bool(x != 0),
                    Some(x) => fit(x.into(), *dtype)?,
                    None => return Err(PErr::Unbound(name.clone())),
                },
                POp::Int(v, dtype) if dtype.is_bool() => PVal::Bool(*v != 0),
                POp::Int(v, dtype) => fit((*v).into(), *dtype)?,
                POp::Float(f) => PVal::Float(*f),
                POp::Not => PVal::Bool(!truth(pop(&mut stack)?)),
                POp::Select => {
                    let (f, t, c) = (pop(&mut stack)?, pop(&mut stack)?, pop(&mut stack)?);
                    if truth(c) {
                        t
                    } else {
                        f
                    }
                }
                POp::Cast(to) => cast(pop(&mut stack)?, *to)?,
                POp::Bin(op, dtype) => {
                    let (b, a) = (pop(&mut stack)?, pop(&mut stack)?);
                    binary(*op, a, b, *dtype)?
                }
            };
            stack.push(v);
        }
        pop(&mut stack)
    }

    /// The expression is a literal `-1` (reshape's inferred dimension, E-11).
    pub fn is_minus_one(&self) -> bool {
        matches!(&*self.ops, [POp::Int(-1, _)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::text::parse_prim_exprs;

    fn run(src: &str, n: Option<i64>) -> Result<PVal, PErr> {
        let e = parse_prim_exprs(&[src]).unwrap().remove(0);
        let code = compile(&e, &mut |_| 0);
        code.eval(&[n])
    }

    #[test]
    fn dimensions_are_exact_and_checked() {
        assert_eq!(run("n + 1", Some(41)), Ok(PVal::Int(42)));
        assert_eq!(run("n + 1", Some(i64::MAX)), Err(PErr::Overflow));
        assert_eq!(run("7 // n", Some(0)), Err(PErr::DivisionByZero));
        assert_eq!(run("7 // n", Some(-2)), Ok(PVal::Int(-4)));
        assert_eq!(run("-7 % n", Some(2)), Ok(PVal::Int(1)));
        assert_eq!(run("n * 2", None), Err(PErr::Unbound("n".into())));
        assert_eq!(run("n < 3", Some(1)), Ok(PVal::Bool(true)));
    }
}
