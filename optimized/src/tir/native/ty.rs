//! How TIR scalars live in native registers, and the integer intervals the code
//! generator proves bounds and overflow-freedom with.
//!
//! Every integer dtype (and `bool`, a 1-bit unsigned integer) is held exactly in an
//! `i64` register (a `uint64` above `i64::MAX` by its bits); `float16` and `float32` in
//! an `f32` register (a `float16` always holds a value it can represent), `float64` in
//! an `f64` register.

use crate::dtype::DType;
use cranelift_codegen::ir::{types, Type};
use spec_model::grammar::DataType;

/// The native form of a TIR dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Int { bits: u8, signed: bool },
    Float { bits: u8 },
}

/// A closed interval of integers.
pub type Iv = (i128, i128);

impl Ty {
    /// The native form of `d`, when it has storage (the dtypes TIR computes in).
    pub fn of(d: DataType) -> Option<Ty> {
        Some(match DType::of(d)? {
            DType::Bool => Ty::Int { bits: 1, signed: false },
            DType::I8 => Ty::Int { bits: 8, signed: true },
            DType::I16 => Ty::Int { bits: 16, signed: true },
            DType::I32 => Ty::Int { bits: 32, signed: true },
            DType::I64 => Ty::Int { bits: 64, signed: true },
            DType::U8 => Ty::Int { bits: 8, signed: false },
            DType::U16 => Ty::Int { bits: 16, signed: false },
            DType::U32 => Ty::Int { bits: 32, signed: false },
            DType::U64 => Ty::Int { bits: 64, signed: false },
            DType::F16 => Ty::Float { bits: 16 },
            DType::F32 => Ty::Float { bits: 32 },
            DType::F64 => Ty::Float { bits: 64 },
        })
    }

    pub fn reg(self) -> Type {
        match self {
            Ty::Int { .. } => types::I64,
            Ty::Float { bits: 64 } => types::F64,
            Ty::Float { .. } => types::F32,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::Float { .. })
    }

    /// A `uint64`: the one integer dtype whose values do not all fit `i64`.
    pub fn is_u64(self) -> bool {
        self == Ty::Int { bits: 64, signed: false }
    }

    /// The integers the dtype holds (a float: none is claimed, `None`).
    pub fn range(self) -> Option<Iv> {
        match self {
            Ty::Int { bits, signed: false } => Some((0, (1i128 << bits) - 1)),
            Ty::Int { bits, signed: true } => Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)),
            Ty::Float { .. } => None,
        }
    }
}

/// `a` within `b`.
pub fn within(a: Iv, b: Iv) -> bool {
    b.0 <= a.0 && a.1 <= b.1
}

/// The interval of `x op y` for `+ - *`, when it stays far inside `i128`.
pub fn arith(op: spec_model::grammar::PrimBinOp, x: Iv, y: Iv) -> Option<Iv> {
    use spec_model::grammar::PrimBinOp::*;
    const CAP: i128 = 1 << 100;
    if [x.0, x.1, y.0, y.1].iter().any(|v| v.abs() > CAP / 2) {
        return None;
    }
    let r = match op {
        Add => (x.0 + y.0, x.1 + y.1),
        Sub => (x.0 - y.1, x.1 - y.0),
        Mul => {
            if [x.0, x.1, y.0, y.1].iter().any(|v| v.abs() > 1 << 50) {
                return None;
            }
            let ps = [x.0 * y.0, x.0 * y.1, x.1 * y.0, x.1 * y.1];
            (*ps.iter().min()?, *ps.iter().max()?)
        }
        Min => (x.0.min(y.0), x.1.min(y.1)),
        Max => (x.0.max(y.0), x.1.max(y.1)),
        // By a positive constant divisor only.
        FloorDiv if y.0 == y.1 && y.0 > 0 => (x.0.div_euclid(y.0), x.1.div_euclid(y.0)),
        FloorMod if y.0 == y.1 && y.0 > 0 => (0, y.0 - 1),
        Div if y.0 == y.1 && y.0 > 0 && x.0 >= 0 => (x.0 / y.0, x.1 / y.0),
        Mod if y.0 == y.1 && y.0 > 0 && x.0 >= 0 => (0, (y.0 - 1).min(x.1)),
        _ => return None,
    };
    Some(r)
}
