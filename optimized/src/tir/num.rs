//! TIR scalar arithmetic (OP-call_tir): values with their dtypes, TVM's operand
//! promotion, exact integer arithmetic that is an error outside the dtype (never
//! wrap-around, DESIGN.md), IEEE floats rounded to their dtype, casts and the math
//! intrinsics.
//!
//! A value carries its dtype at run time because TIR's promotion is not symmetric for
//! every dtype (`int32x4` beside `int32`, handles): which branch of `T.if_then_else`
//! runs can decide the result's dtype. Payloads are exact: integers (and `bool` as
//! zero or one) in `i64`, or `u64` above `i64::MAX` (so every int64 and uint64),
//! computed in `i128`; floats in `f64`, already rounded to their dtype.

use crate::dtype::DType;
use crate::error::ErrorKind;
use spec_model::grammar::tir::Intrinsic;
use spec_model::grammar::{DataType, PrimBinOp, TypeCode};

/// A value's payload (16 bytes: values are passed around by copy).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    /// An integer that fits `i64`.
    I(i64),
    /// An integer above `i64::MAX` (a uint64).
    U(u64),
    F(f64),
}

impl Num {
    pub fn from_u64(x: u64) -> Num {
        i64::try_from(x).map_or(Num::U(x), Num::I)
    }
}

/// A TIR scalar: a payload and its dtype.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Val {
    pub n: Num,
    pub dt: DataType,
}

impl Val {
    /// An integer value; `i` lies in `[i64::MIN, u64::MAX]` (every dtype's range, as
    /// [`fit`] checks), else it saturates.
    pub fn int(i: i128, dt: DataType) -> Val {
        let n = match (i64::try_from(i), u64::try_from(i)) {
            (Ok(x), _) => Num::I(x),
            (_, Ok(x)) => Num::U(x),
            _ => Num::I(if i < 0 { i64::MIN } else { i64::MAX }),
        };
        Val { n, dt }
    }
    pub fn float(f: f64, dt: DataType) -> Val {
        Val { n: Num::F(f), dt }
    }
    pub fn bool(b: bool) -> Val {
        Val { n: Num::I(i64::from(b)), dt: DataType::bool() }
    }
    /// The integer payload; `None` for a float.
    pub fn int_value(self) -> Option<i128> {
        match self.n {
            Num::I(i) => Some(i.into()),
            Num::U(u) => Some(u.into()),
            Num::F(_) => None,
        }
    }
    /// A condition holds when the value is non-zero (NaN is non-zero).
    pub fn truthy(self) -> bool {
        match self.n {
            Num::I(i) => i != 0,
            Num::U(_) => true,
            Num::F(f) => f != 0.0,
        }
    }
    /// The value as a float (an integer rounds to nearest).
    pub fn as_f64(self) -> f64 {
        match self.n {
            Num::I(i) => i as f64,
            Num::U(u) => u as f64,
            Num::F(f) => f,
        }
    }
}

/// Why a scalar operation has no value; the machine places it at a span.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub kind: ErrorKind,
    pub message: String,
}

impl Fault {
    pub fn op(message: impl Into<String>) -> Box<Fault> {
        Box::new(Fault { kind: ErrorKind::OpError, message: message.into() })
    }
    fn overflow(message: impl Into<String>) -> Box<Fault> {
        Box::new(Fault { kind: ErrorKind::IntegerOverflow, message: message.into() })
    }
}

/// A scalar result; the fault is boxed so that results stay small.
pub type NumResult = Result<Val, Box<Fault>>;

/// The dtypes TIR computes in: exactly those with tensor storage.
pub fn supported(d: DataType) -> bool {
    DType::of(d).is_some()
}

/// The integers a dtype holds. The width counts from 1 to 64; a dtype that is not an
/// integer (a float or handle loop variable) holds int64's range.
#[inline]
pub fn int_range(d: DataType) -> (i128, i128) {
    let bits = d.bits.clamp(1, 64);
    match d.code {
        TypeCode::UInt => (0, (1i128 << bits) - 1),
        TypeCode::Int => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        _ => (i64::MIN.into(), i64::MAX.into()),
    }
}

/// The integer `i` in dtype `d`, or `IntegerOverflow`.
#[inline]
pub fn fit(i: i128, d: DataType) -> NumResult {
    let (lo, hi) = int_range(d);
    if lo <= i && i <= hi {
        Ok(Val::int(i, d))
    } else {
        Err(Fault::overflow(format!("{i} does not fit in {d}")))
    }
}

/// `x` rounded to nearest-even in the float dtype `d` (by its width).
pub fn round_to(x: f64, d: DataType) -> f64 {
    match d.bits {
        16 => crate::dtype::f16_of_f64(x).to_f64(),
        32 => f64::from(x as f32),
        _ => x,
    }
}

/// The common dtype of two operands (TVM's `BinaryOpMatchTypes`): a float wins over an
/// integer; the same kind meets at the wider (the first on a tie); a signed and an
/// unsigned integer meet as the signed integer of the wider width. Not symmetric in
/// general (lanes, handles): the first operand wins where nothing else decides.
pub fn promote(a: DataType, b: DataType) -> DataType {
    use TypeCode::{Float, Int, UInt};
    if a == b {
        return a;
    }
    match (a.code, b.code) {
        (Float, Float) | (Int, Int) | (UInt, UInt) => {
            if b.bits > a.bits {
                b
            } else {
                a
            }
        }
        (Float, _) => a,
        (_, Float) => b,
        (Int, UInt) | (UInt, Int) => DataType::int(a.bits.max(b.bits)),
        _ => a,
    }
}

/// Beyond every dtype's range, and within `i128`'s: a float truncated to at least
/// this is an overflow before it is converted.
const TRUNC_LIMIT: f64 = (1u128 << 100) as f64;

/// `T.Cast(to, v)` (and the conversion of a stored or bound value): nothing to do in
/// the same dtype; else `to` must have storage. To `bool`: non-zero. To a float: the
/// value (through `f64`) rounded. To an integer: a float truncates toward zero, and
/// the result must fit (`IntegerOverflow` for NaN, infinities and out-of-range values).
#[inline]
pub fn cast(v: Val, to: DataType) -> NumResult {
    if v.dt == to {
        Ok(v)
    } else {
        convert(v, to)
    }
}

/// [`cast`] to another dtype.
fn convert(v: Val, to: DataType) -> NumResult {
    if !supported(to) {
        return Err(Fault::op(format!("dtype {to} is not supported by TIR here")));
    }
    if to.is_bool() {
        return Ok(Val::bool(v.truthy()));
    }
    if to.is_float() {
        // An integer rounds once, to the target (through f64 it would round twice above 2^53).
        if let (32, Num::I(_) | Num::U(_)) = (to.bits, v.n) {
            return Ok(Val::float(v.int_value().unwrap_or_default() as f32 as f64, to));
        }
        return Ok(Val::float(round_to(v.as_f64(), to), to));
    }
    match v.n {
        Num::I(_) | Num::U(_) => fit(v.int_value().unwrap_or_default(), to),
        Num::F(f) => {
            let t = f.trunc();
            if !t.is_finite() || t.abs() >= TRUNC_LIMIT {
                return Err(Fault::overflow(format!("{f} does not fit in {to}")));
            }
            fit(t as i128, to)
        }
    }
}

/// A binary operator. `And`/`Or` read truth values. Otherwise both operands convert to
/// the common dtype first; integers compute exactly (`Div`/`Mod` truncate,
/// `FloorDiv`/`FloorMod` floor, a zero divisor is `DivisionByZero`, a result outside
/// the dtype `IntegerOverflow`); floats compute in `f64` and round to the dtype (the
/// same as computing in the dtype for `+ - * /`). `Min`/`Max` are selects on `<`/`>`.
pub fn binary(op: PrimBinOp, x: Val, y: Val) -> NumResult {
    use PrimBinOp::*;
    match op {
        And => return Ok(Val::bool(x.truthy() & y.truthy())),
        Or => return Ok(Val::bool(x.truthy() | y.truthy())),
        _ => {}
    }
    // Operands of one dtype (the common case) need no conversion.
    let (x, y, d) = if x.dt == y.dt {
        (x, y, x.dt)
    } else {
        let d = promote(x.dt, y.dt);
        (cast(x, d)?, cast(y, d)?, d)
    };
    match (x.int_value(), y.int_value()) {
        (Some(i), Some(j)) => int_binary(op, i, j, d),
        _ => Ok(float_binary(op, x.as_f64(), y.as_f64(), d)),
    }
}

fn int_binary(op: PrimBinOp, i: i128, j: i128, d: DataType) -> NumResult {
    use PrimBinOp::*;
    if matches!(op, Div | Mod | FloorDiv | FloorMod) && j == 0 {
        let message = format!("{} of {i} by zero", op.spec_name());
        return Err(Box::new(Fault { kind: ErrorKind::DivisionByZero, message }));
    }
    let r = match op {
        Add => i.checked_add(j),
        Sub => i.checked_sub(j),
        Mul => i.checked_mul(j),
        Div => i.checked_div(j),
        Mod => i.checked_rem(j),
        // Truncating quotient and remainder, moved one step down where they disagree in sign.
        FloorDiv => match (i.checked_div(j), i.checked_rem(j)) {
            (Some(q), Some(r)) if r != 0 && ((r < 0) != (j < 0)) => q.checked_sub(1),
            (q, _) => q,
        },
        FloorMod => i.checked_rem(j).map(|r| if r != 0 && ((r < 0) != (j < 0)) { r + j } else { r }),
        Min => Some(i.min(j)),
        Max => Some(i.max(j)),
        Eq => return Ok(Val::bool(i == j)),
        Ne => return Ok(Val::bool(i != j)),
        Lt => return Ok(Val::bool(i < j)),
        Le => return Ok(Val::bool(i <= j)),
        Gt => return Ok(Val::bool(i > j)),
        Ge => return Ok(Val::bool(i >= j)),
        // `binary` reads these as truth values before it comes here.
        And | Or => unreachable!("And and Or are not integer arithmetic"),
    };
    match r {
        Some(r) => fit(r, d),
        None => Err(Fault::overflow(format!("{} of {i} and {j} overflows", op.spec_name()))),
    }
}

/// `T.bitwise_and/or/xor` and the shifts: both operands converted to their common
/// dtype, which must be an integer one. The bitwise operations act on the
/// two's-complement bits (the result fits whenever the operands do); a shift amount
/// must lie in `[0, bits)`; `a << k` is `a * 2**k`, an `IntegerOverflow` outside the
/// dtype; `a >> k` rounds toward negative infinity.
pub fn bitwise(op: Intrinsic, x: Val, y: Val) -> NumResult {
    let (x, y, d) = if x.dt == y.dt {
        (x, y, x.dt)
    } else {
        let d = promote(x.dt, y.dt);
        (cast(x, d)?, cast(y, d)?, d)
    };
    let (Some(i), Some(k)) = (x.int_value(), y.int_value()) else {
        return Err(Fault::op(format!("T.{} needs integer arguments, got {d}", op.name())));
    };
    let shift = |k: i128| -> Result<u32, Box<Fault>> {
        u32::try_from(k).ok().filter(|&s| s < d.bits).ok_or_else(|| {
            Fault::op(format!("T.{} by {k}: the shift amount must lie in [0, {}) for {d}", op.name(), d.bits))
        })
    };
    match op {
        Intrinsic::BitwiseAnd => fit(i & k, d),
        Intrinsic::BitwiseOr => fit(i | k, d),
        Intrinsic::BitwiseXor => fit(i ^ k, d),
        // |i| < 2^64 and s < 64: exact in i128.
        Intrinsic::ShiftLeft => fit(i * (1i128 << shift(k)?), d),
        _ => fit(i >> shift(k)?, d),
    }
}

fn float_binary(op: PrimBinOp, f: f64, g: f64, d: DataType) -> Val {
    use PrimBinOp::*;
    let r = match op {
        Add => f + g,
        Sub => f - g,
        Mul => f * g,
        Div => f / g,
        Mod => f % g,
        FloorDiv => round_to(f / g, d).floor(),
        FloorMod => f - round_to(round_to(f / g, d).floor() * g, d),
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
        Eq => return Val::bool(f == g),
        Ne => return Val::bool(f != g),
        Lt => return Val::bool(f < g),
        Le => return Val::bool(f <= g),
        Gt => return Val::bool(f > g),
        Ge => return Val::bool(f >= g),
        And | Or => f,
    };
    Val::float(round_to(r, d), d)
}

/// A one-argument intrinsic. On a float it computes in the dtype (`float64` in `f64`,
/// `float32` in `f32`, `float16` in `f32` rounded to half). On an integer `fabs` is the
/// checked absolute value and `floor`/`ceil`/`round` the identity; the rest need a float.
pub fn unary(op: Intrinsic, v: Val) -> NumResult {
    match (v.n, v.int_value()) {
        (Num::F(_), _) if op.is_integer_only() => {
            Err(Fault::op(format!("T.{} needs an integer argument, got {}", op.name(), v.dt)))
        }
        (Num::F(x), _) => Ok(Val::float(float_unary(op, x, v.dt), v.dt)),
        (_, i) => match op {
            // A payload fits 64 bits: its absolute value fits `i128`.
            Intrinsic::Fabs => fit(i.unwrap_or_default().saturating_abs(), v.dt),
            Intrinsic::Floor | Intrinsic::Ceil | Intrinsic::Round => Ok(v),
            // Every bit of the dtype flipped: `max - i` unsigned, `-1 - i` signed.
            Intrinsic::BitwiseNot => {
                let i = i.unwrap_or_default();
                fit(if v.dt.code == TypeCode::UInt { int_range(v.dt).1 - i } else { -1 - i }, v.dt)
            }
            _ => Err(Fault::op(format!("T.{} needs a float argument, got {}", op.name(), v.dt))),
        },
    }
}

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
        round_to(f64::from(r), d)
    }
}

/// `T.pow(x, y)`: both converted to their common dtype, which must be a float.
pub fn pow(x: Val, y: Val) -> NumResult {
    let d = promote(x.dt, y.dt);
    let (x, y) = (cast(x, d)?, cast(y, d)?);
    match (x.n, y.n) {
        (Num::F(f), Num::F(g)) if d.bits == 64 => Ok(Val::float(f.powf(g), d)),
        (Num::F(f), Num::F(g)) => Ok(Val::float(round_to(f64::from((f as f32).powf(g as f32)), d), d)),
        _ => Err(Fault::op(format!("T.pow needs float arguments, got {d}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const I32: DataType = DataType::INT32;

    #[test]
    fn floor_and_trunc_division() {
        use PrimBinOp::*;
        let v = |op, a, b| match binary(op, Val::int(a, I32), Val::int(b, I32)).map(Val::int_value) {
            Ok(Some(r)) => r,
            other => panic!("{other:?}"),
        };
        for (a, b) in [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (-6, 3), (0, -5)] {
            let q = (a as f64 / b as f64).floor() as i128;
            assert_eq!(v(FloorDiv, a, b), q, "{a} // {b}");
            assert_eq!(v(FloorMod, a, b), a - b * q, "{a} % {b}");
            assert_eq!(v(Div, a, b), a / b);
            assert_eq!(v(Mod, a, b), a % b);
        }
        let e = binary(Div, Val::int(1, I32), Val::int(0, I32)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::DivisionByZero);
        let min = Val::int(i32::MIN.into(), I32);
        assert_eq!(binary(FloorDiv, min, Val::int(-1, I32)).unwrap_err().kind, ErrorKind::IntegerOverflow);
    }

    #[test]
    fn promotion_and_casts() {
        let u8_ = DataType::uint(8);
        assert_eq!(promote(I32, u8_), I32);
        assert_eq!(promote(DataType::uint(64), DataType::int(8)), DataType::INT64);
        assert_eq!(promote(I32, DataType::float(16)), DataType::float(16));
        let x4 = DataType { lanes: 4, ..I32 };
        assert_eq!((promote(x4, I32), promote(I32, x4)), (x4, I32));
        assert_eq!(cast(Val::float(f64::NAN, DataType::FLOAT32), I32).unwrap_err().kind, ErrorKind::IntegerOverflow);
        assert_eq!(cast(Val::float(-2.9, DataType::FLOAT32), I32).unwrap(), Val::int(-2, I32));
        assert_eq!(cast(Val::int(300, I32), u8_).unwrap_err().kind, ErrorKind::IntegerOverflow);
        assert_eq!(cast(Val::int(1, I32), x4).unwrap_err().kind, ErrorKind::OpError);
        assert_eq!(cast(Val::float(f64::NAN, DataType::FLOAT32), DataType::bool()).unwrap(), Val::bool(true));
        assert_eq!(fit(u64::MAX.into(), DataType::uint(64)).unwrap().n, Num::U(u64::MAX));
        assert_eq!(fit(-1, DataType::uint(64)).unwrap_err().kind, ErrorKind::IntegerOverflow);
    }
}
