//! TIR expressions: scalars with their dtypes, TVM's operand promotion
//! (`BinaryOpMatchTypes`), exact integer arithmetic that is an error when the result
//! leaves its dtype (as `spec_model::prim_eval`), IEEE float arithmetic rounded to the
//! dtype, casts, buffer loads and the math intrinsics.

use super::Machine;
use crate::eval::value::{ErrorKind, EvalResult};
use half::f16;
use spec_model::grammar::tir::{Buffer, Intrinsic, TirExpr, TirExprKind};
use spec_model::grammar::{DataType, PrimBinOp, Scalar, TensorData, TypeCode};
use spec_model::prim_eval::{int_binary, int_range, IntResult, PrimEvalError};
use spec_model::Span;

/// A TIR scalar. Integers (and `bool`, as 0 or 1) are exact and fit their dtype;
/// floats are already rounded to theirs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Val {
    Int(i128, DataType),
    Float(f64, DataType),
}

impl Val {
    pub(super) fn bool(b: bool) -> Val {
        Val::Int(b as i128, DataType::bool())
    }
    pub(super) fn dtype(self) -> DataType {
        match self {
            Val::Int(_, d) | Val::Float(_, d) => d,
        }
    }
    /// A condition's truth: non-zero.
    pub(super) fn truthy(self) -> bool {
        match self {
            Val::Int(i, _) => i != 0,
            Val::Float(f, _) => f != 0.0,
        }
    }
    fn as_f64(self) -> f64 {
        match self {
            Val::Int(i, _) => i as f64,
            Val::Float(f, _) => f,
        }
    }
}

/// Why an operation on scalars has no value (placed at a span by [`Machine::at`]).
#[derive(Debug)]
pub(super) struct Fault {
    pub(super) kind: ErrorKind,
    pub(super) message: String,
}

impl Fault {
    fn op(message: impl Into<String>) -> Fault {
        Fault { kind: ErrorKind::OpError, message: message.into() }
    }
    fn overflow(message: impl Into<String>) -> Fault {
        Fault { kind: ErrorKind::IntegerOverflow, message: message.into() }
    }
}

/// The scalar dtypes the interpreter computes in: those with tensor storage (`bool`,
/// `int8..64`, `uint8..64`, `float16/32/64`, one lane).
pub(super) fn supported(d: DataType) -> bool {
    d.lanes == 1
        && matches!(
            (d.code, d.bits),
            (TypeCode::UInt, 1) | (TypeCode::Int | TypeCode::UInt, 8 | 16 | 32 | 64) | (TypeCode::Float, 16 | 32 | 64)
        )
}

/// `x` rounded to the float dtype `d` (round to nearest, ties to even).
pub(super) fn round_to(x: f64, d: DataType) -> f64 {
    match d.bits {
        16 => spec_model::grammar::f16_nearest(x).to_f64(),
        32 => x as f32 as f64,
        _ => x,
    }
}

/// The integer `i` as a value of dtype `d`, or `IntegerOverflow` if it does not fit.
pub(super) fn fit(i: i128, d: DataType) -> Result<Val, Fault> {
    let (lo, hi) = int_range(d);
    if (lo..=hi).contains(&i) {
        Ok(Val::Int(i, d))
    } else {
        Err(Fault::overflow(format!("{i} does not fit in {d}")))
    }
}

/// TVM's `BinaryOpMatchTypes`: the common dtype of two operands. An integer meets a
/// float as the float; two floats or two integers of one signedness meet as the wider;
/// a signed and an unsigned integer meet as the signed integer of the wider width.
pub(super) fn promote(a: DataType, b: DataType) -> DataType {
    use TypeCode::*;
    if a == b {
        return a;
    }
    match (a.code, b.code) {
        (Float, Float) | (Int, Int) | (UInt, UInt) => {
            if a.bits >= b.bits {
                a
            } else {
                b
            }
        }
        (Float, _) => a,
        (_, Float) => b,
        (Int, UInt) | (UInt, Int) => DataType::int(a.bits.max(b.bits)),
        _ => a,
    }
}

/// `T.Cast(to, v)`: to `bool` is "non-zero"; to a float rounds to nearest (once); to an
/// integer truncates a float toward zero, and the result must fit (never wraps).
pub(super) fn cast(v: Val, to: DataType) -> Result<Val, Fault> {
    if v.dtype() == to {
        return Ok(v);
    }
    if !supported(to) {
        return Err(Fault::op(format!("dtype {to} is not supported by the TIR interpreter")));
    }
    if to.is_bool() {
        return Ok(Val::bool(v.truthy()));
    }
    match (to.code, v) {
        // An integer rounds once, to the target (through f64 it would round twice above 2^53).
        (TypeCode::Float, Val::Int(i, _)) if to.bits == 32 => Ok(Val::Float(i as f32 as f64, to)),
        (TypeCode::Float, _) => Ok(Val::Float(round_to(v.as_f64(), to), to)),
        (_, Val::Int(i, _)) => fit(i, to),
        (_, Val::Float(f, _)) => {
            if !f.is_finite() || f.trunc().abs() >= 2f64.powi(100) {
                return Err(Fault::overflow(format!("{f} does not fit in {to}")));
            }
            fit(f.trunc() as i128, to)
        }
    }
}

/// A binary operator: both operands are converted to their common dtype (`promote`),
/// then integers compute exactly (`IntegerOverflow` outside the dtype, `DivisionByZero`
/// for a zero divisor; `Div`/`Mod` truncate, `FloorDiv`/`FloorMod` floor) and floats
/// compute in IEEE arithmetic rounded to the dtype. `Min`/`Max` are TVM's selects
/// (`a < b ? a : b`). `And`/`Or`/comparisons give `bool`.
pub(super) fn binary(op: PrimBinOp, x: Val, y: Val) -> Result<Val, Fault> {
    use PrimBinOp::*;
    match op {
        And => return Ok(Val::bool(x.truthy() && y.truthy())),
        Or => return Ok(Val::bool(x.truthy() || y.truthy())),
        _ => {}
    }
    let d = promote(x.dtype(), y.dtype());
    match (cast(x, d)?, cast(y, d)?) {
        (Val::Int(i, _), Val::Int(j, _)) => match int_binary(op, i, j) {
            Ok(IntResult::Int(r)) => fit(r, d),
            Ok(IntResult::Bool(b)) => Ok(Val::bool(b)),
            Err(PrimEvalError::DivisionByZero) => {
                Err(Fault { kind: ErrorKind::DivisionByZero, message: format!("{} of {i} by zero", op.spec_name()) })
            }
            Err(_) => Err(Fault::overflow(format!("{} of {i} and {j} overflows", op.spec_name()))),
        },
        (a, b) => {
            let (f, g) = (a.as_f64(), b.as_f64());
            let r = match op {
                Add => f + g,
                Sub => f - g,
                Mul => f * g,
                Div => f / g,
                Mod => f % g,
                FloorDiv => round_to(f / g, d).floor(),
                FloorMod => {
                    let q = round_to(f / g, d).floor();
                    f - round_to(q * g, d)
                }
                Min => {
                    if f < g {
                        f
                    } else {
                        g
                    }
                }
                Max => {
                    if f > g {
                        f
                    } else {
                        g
                    }
                }
                Eq => return Ok(Val::bool(f == g)),
                Ne => return Ok(Val::bool(f != g)),
                Lt => return Ok(Val::bool(f < g)),
                Le => return Ok(Val::bool(f <= g)),
                Gt => return Ok(Val::bool(f > g)),
                Ge => return Ok(Val::bool(f >= g)),
                And | Or => f,
            };
            Ok(Val::Float(round_to(r, d), d))
        }
    }
}

/// A one-argument float intrinsic, computed in the dtype: `float64` in `f64`,
/// `float32` in `f32`, `float16` in `f32` and rounded to `float16`.
fn float_unary(op: Intrinsic, x: f64, d: DataType) -> f64 {
    if d.bits == 64 {
        match op {
            Intrinsic::Exp => x.exp(),
            Intrinsic::Log => x.ln(),
            Intrinsic::Sqrt => x.sqrt(),
            Intrinsic::Tanh => x.tanh(),
            Intrinsic::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Intrinsic::Fabs => x.abs(),
            Intrinsic::Floor => x.floor(),
            Intrinsic::Ceil => x.ceil(),
            Intrinsic::Round => x.round_ties_even(),
            Intrinsic::Rsqrt => 1.0 / x.sqrt(),
            Intrinsic::Sin => x.sin(),
            Intrinsic::Cos => x.cos(),
            Intrinsic::Erf => libm::erf(x),
            Intrinsic::Pow
            | Intrinsic::IfThenElse
            | Intrinsic::BitwiseAnd
            | Intrinsic::BitwiseOr
            | Intrinsic::BitwiseXor
            | Intrinsic::BitwiseNot
            | Intrinsic::ShiftLeft
            | Intrinsic::ShiftRight => x,
        }
    } else {
        let x = x as f32;
        let r = match op {
            Intrinsic::Exp => x.exp(),
            Intrinsic::Log => x.ln(),
            Intrinsic::Sqrt => x.sqrt(),
            Intrinsic::Tanh => x.tanh(),
            Intrinsic::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            Intrinsic::Fabs => x.abs(),
            Intrinsic::Floor => x.floor(),
            Intrinsic::Ceil => x.ceil(),
            Intrinsic::Round => x.round_ties_even(),
            Intrinsic::Rsqrt => 1.0 / x.sqrt(),
            Intrinsic::Sin => x.sin(),
            Intrinsic::Cos => x.cos(),
            Intrinsic::Erf => libm::erff(x),
            Intrinsic::Pow
            | Intrinsic::IfThenElse
            | Intrinsic::BitwiseAnd
            | Intrinsic::BitwiseOr
            | Intrinsic::BitwiseXor
            | Intrinsic::BitwiseNot
            | Intrinsic::ShiftLeft
            | Intrinsic::ShiftRight => x,
        };
        round_to(r as f64, d)
    }
}

/// `x ** y` in the float dtype `d`.
fn float_pow(x: f64, y: f64, d: DataType) -> f64 {
    if d.bits == 64 {
        x.powf(y)
    } else {
        round_to((x as f32).powf(y as f32) as f64, d)
    }
}

/// A one-argument intrinsic. On integers `fabs` is the (checked) absolute value,
/// `floor`/`ceil`/`round` the identity and `bitwise_not` flips every bit of the dtype;
/// the others need a float (and `bitwise_not` an integer).
fn unary(op: Intrinsic, v: Val) -> Result<Val, Fault> {
    match v {
        Val::Float(_, d) if op.is_integer_only() => {
            Err(Fault::op(format!("T.{} needs an integer argument, got {d}", op.name())))
        }
        Val::Float(f, d) => Ok(Val::Float(float_unary(op, f, d), d)),
        Val::Int(i, d) => match op {
            Intrinsic::Fabs => fit(i.abs(), d),
            Intrinsic::Floor | Intrinsic::Ceil | Intrinsic::Round => Ok(v),
            // Signed: two's complement, -i - 1; unsigned (bool included): max - i.
            Intrinsic::BitwiseNot if d.is_uint() => fit(int_range(d).1 - i, d),
            Intrinsic::BitwiseNot => fit(-i - 1, d),
            _ => Err(Fault::op(format!("T.{} needs a float argument, got {d}", op.name()))),
        },
    }
}

/// `a & b`, `a | b`, `a ^ b`, `a << k`, `a >> k` on integers of one dtype `d` (after
/// promotion). The bitwise operations act on the two's-complement bits, so a result
/// fits `d` whenever the operands do. A shift amount outside `[0, bits)` is an
/// `OpError` (LLVM's shift is poison there); `a << k` is `a * 2**k` and an
/// `IntegerOverflow` when that leaves `d` (never wraps); `a >> k` is `floor(a / 2**k)`.
fn bitwise(op: Intrinsic, i: i128, j: i128, d: DataType) -> Result<Val, Fault> {
    match op {
        Intrinsic::BitwiseAnd => fit(i & j, d),
        Intrinsic::BitwiseOr => fit(i | j, d),
        Intrinsic::BitwiseXor => fit(i ^ j, d),
        _ => {
            if !(0..i128::from(d.bits)).contains(&j) {
                return Err(Fault::op(format!(
                    "T.{} by {j}: the shift amount must lie in [0, {}) for {d}",
                    op.name(),
                    d.bits
                )));
            }
            if op == Intrinsic::ShiftLeft {
                fit(i << j, d)
            } else {
                fit(i >> j, d)
            }
        }
    }
}

/// The dtype of `e` under the interpreter's rules (what [`Machine::eval`] returns for it);
/// needed for the branch `T.if_then_else` does not evaluate.
pub(super) fn static_dtype(e: &TirExpr) -> DataType {
    match &*e.kind {
        TirExprKind::Var(v) => v.dtype(),
        TirExprKind::IntImm { dtype, .. } | TirExprKind::FloatImm { dtype, .. } => *dtype,
        TirExprKind::Binary { op, .. } if op.is_comparison() || op.is_logical() => DataType::bool(),
        TirExprKind::Binary { a, b, .. } => promote(static_dtype(a), static_dtype(b)),
        TirExprKind::Not(_) => DataType::bool(),
        TirExprKind::Select { then_value, else_value, .. } => {
            promote(static_dtype(then_value), static_dtype(else_value))
        }
        TirExprKind::Cast { dtype, .. } => *dtype,
        TirExprKind::BufferLoad { buffer, .. } => buffer.dtype(),
        TirExprKind::Call { op: Intrinsic::IfThenElse, args } => match args.as_slice() {
            [_, a, b] => promote(static_dtype(a), static_dtype(b)),
            _ => DataType::void(),
        },
        TirExprKind::Call { op, args } if *op == Intrinsic::Pow || op.is_bitwise_binary() => match args.as_slice() {
            [a, b] => promote(static_dtype(a), static_dtype(b)),
            _ => DataType::void(),
        },
        TirExprKind::Call { args, .. } => args.first().map_or(DataType::void(), static_dtype),
    }
}

/// An element read from storage, as a value of the buffer's dtype.
fn scalar_val(s: Scalar, d: DataType) -> Val {
    match s {
        Scalar::Bool(b) => Val::Int(b as i128, d),
        Scalar::Int(i) => Val::Int(i, d),
        Scalar::Float(f) => Val::Float(f, d),
    }
}

/// Writes `v` (already of the storage's dtype) to element `i < data.len()`.
pub(super) fn store_elem(data: &mut TensorData, i: usize, v: Val) {
    let int = match v {
        Val::Int(x, _) => x,
        Val::Float(f, _) => f as i128,
    };
    let fl = v.as_f64();
    match data {
        TensorData::Bool(x) => x[i] = v.truthy(),
        TensorData::I8(x) => x[i] = int as i8,
        TensorData::I16(x) => x[i] = int as i16,
        TensorData::I32(x) => x[i] = int as i32,
        TensorData::I64(x) => x[i] = int as i64,
        TensorData::U8(x) => x[i] = int as u8,
        TensorData::U16(x) => x[i] = int as u16,
        TensorData::U32(x) => x[i] = int as u32,
        TensorData::U64(x) => x[i] = int as u64,
        TensorData::F16(x) => x[i] = spec_model::grammar::f16_nearest(fl),
        TensorData::F32(x) => x[i] = fl as f32,
        TensorData::F64(x) => x[i] = fl,
    }
}

/// Zero-initialized storage of `n` elements of `d`, or `None` for a dtype without storage.
pub(super) fn zeros(d: DataType, n: usize) -> Option<TensorData> {
    Some(match TensorData::empty(d)? {
        TensorData::Bool(_) => TensorData::Bool(vec![false; n]),
        TensorData::I8(_) => TensorData::I8(vec![0; n]),
        TensorData::I16(_) => TensorData::I16(vec![0; n]),
        TensorData::I32(_) => TensorData::I32(vec![0; n]),
        TensorData::I64(_) => TensorData::I64(vec![0; n]),
        TensorData::U8(_) => TensorData::U8(vec![0; n]),
        TensorData::U16(_) => TensorData::U16(vec![0; n]),
        TensorData::U32(_) => TensorData::U32(vec![0; n]),
        TensorData::U64(_) => TensorData::U64(vec![0; n]),
        TensorData::F16(_) => TensorData::F16(vec![f16::ZERO; n]),
        TensorData::F32(_) => TensorData::F32(vec![0.0; n]),
        TensorData::F64(_) => TensorData::F64(vec![0.0; n]),
    })
}

impl Machine<'_> {
    /// Evaluates `e` in the current variables and buffers.
    pub(super) fn eval(&self, e: &TirExpr) -> EvalResult<Val> {
        match &*e.kind {
            TirExprKind::Var(v) => {
                self.vars.get(&v.id()).copied().ok_or_else(|| {
                    self.error(ErrorKind::OpError, e.span, format!("variable `{}` has no value", v.name()))
                })
            }
            TirExprKind::IntImm { value, dtype } => {
                let v = if dtype.is_bool() {
                    Ok(Val::bool(*value != 0))
                } else {
                    cast(Val::Int(*value as i128, DataType::INT64), *dtype)
                };
                self.at(e.span, v)
            }
            TirExprKind::FloatImm { value, dtype } => {
                self.at(e.span, cast(Val::Float(value.0, DataType::float(64)), *dtype))
            }
            TirExprKind::Binary { op, a, b } => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                self.at(e.span, binary(*op, x, y))
            }
            TirExprKind::Not(a) => Ok(Val::bool(!self.eval(a)?.truthy())),
            TirExprKind::Select { cond, then_value, else_value } => {
                let c = self.eval(cond)?.truthy();
                let t = self.eval(then_value)?;
                let f = self.eval(else_value)?;
                let d = promote(t.dtype(), f.dtype());
                self.at(e.span, cast(if c { t } else { f }, d))
            }
            TirExprKind::Cast { dtype, value } => {
                let v = self.eval(value)?;
                self.at(e.span, cast(v, *dtype))
            }
            TirExprKind::BufferLoad { buffer, indices } => {
                let (slot, off) = self.locate(buffer, indices, e.span)?;
                let a = slot.tensor.try_borrow().map_err(|_| {
                    self.error(ErrorKind::OpError, e.span, format!("buffer `{}` is busy", buffer.name()))
                })?;
                if off >= a.data.len() {
                    return Err(self.error(
                        ErrorKind::OpError,
                        e.span,
                        format!("buffer `{}`'s storage is smaller than its shape", buffer.name()),
                    ));
                }
                Ok(scalar_val(a.data.get(off), buffer.dtype()))
            }
            TirExprKind::Call { op, args } => self.call(*op, args, e.span),
        }
    }

    /// A value that must be an integer (a loop bound, an index, a dimension).
    pub(super) fn eval_int(&self, e: &TirExpr, what: &str) -> EvalResult<i128> {
        match self.eval(e)? {
            Val::Int(i, _) => Ok(i),
            Val::Float(f, d) => {
                Err(self.error(ErrorKind::OpError, e.span, format!("{what} must be an integer, got {f} ({d})")))
            }
        }
    }

    /// The slot of `buffer` and the row-major offset of `indices` in it; an index
    /// outside its dimension is an `OpError`.
    pub(super) fn locate(&self, buffer: &Buffer, indices: &[TirExpr], span: Span) -> EvalResult<(&super::Slot, usize)> {
        let Some(slot) = self.buffers.get(&buffer.id()) else {
            return Err(self.error(ErrorKind::OpError, span, format!("buffer `{}` is not allocated", buffer.name())));
        };
        if indices.len() != slot.shape.len() {
            return Err(self.error(
                ErrorKind::OpError,
                span,
                format!(
                    "buffer `{}` has rank {} but is indexed with {} indices",
                    buffer.name(),
                    slot.shape.len(),
                    indices.len()
                ),
            ));
        }
        let mut off: u128 = 0;
        for (k, (ix, &dim)) in indices.iter().zip(&slot.shape).enumerate() {
            let i = self.eval_int(ix, "a buffer index")?;
            if i < 0 || i >= dim as i128 {
                return Err(self.error(
                    ErrorKind::OpError,
                    ix.span,
                    format!(
                        "index {i} is out of bounds for dimension {k} of buffer `{}` (extent {dim})",
                        buffer.name()
                    ),
                ));
            }
            off = off.saturating_mul(dim as u128).saturating_add(i as u128);
        }
        Ok((slot, usize::try_from(off).unwrap_or(usize::MAX)))
    }

    /// An intrinsic call. `T.if_then_else` evaluates only the chosen side; its result
    /// has the common dtype of both sides.
    fn call(&self, op: Intrinsic, args: &[TirExpr], span: Span) -> EvalResult<Val> {
        match (op, args) {
            (Intrinsic::IfThenElse, [c, a, b]) => {
                let (taken, other) = if self.eval(c)?.truthy() { (a, b) } else { (b, a) };
                let v = self.eval(taken)?;
                self.at(span, cast(v, promote(v.dtype(), static_dtype(other))))
            }
            (Intrinsic::Pow, [a, b]) => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                let d = promote(x.dtype(), y.dtype());
                match (self.at(span, cast(x, d))?, self.at(span, cast(y, d))?) {
                    (Val::Float(f, _), Val::Float(g, _)) => Ok(Val::Float(float_pow(f, g, d), d)),
                    _ => Err(self.error(ErrorKind::OpError, span, format!("T.pow needs float arguments, got {d}"))),
                }
            }
            (op, [a, b]) if op.is_bitwise_binary() => {
                let x = self.eval(a)?;
                let y = self.eval(b)?;
                let d = promote(x.dtype(), y.dtype());
                match (self.at(span, cast(x, d))?, self.at(span, cast(y, d))?) {
                    (Val::Int(i, _), Val::Int(j, _)) => self.at(span, bitwise(op, i, j, d)),
                    _ => Err(self.error(
                        ErrorKind::OpError,
                        span,
                        format!("T.{} needs integer arguments, got {d}", op.name()),
                    )),
                }
            }
            (op, _) if op.arity() != 1 => Err(self.error(
                ErrorKind::OpError,
                span,
                format!("T.{} takes {} arguments, {} given", op.name(), op.arity(), args.len()),
            )),
            (_, [a]) => {
                let x = self.eval(a)?;
                self.at(span, unary(op, x))
            }
            _ => Err(self.error(
                ErrorKind::OpError,
                span,
                format!("T.{} takes one argument, {} given", op.name(), args.len()),
            )),
        }
    }
}
