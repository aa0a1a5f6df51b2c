//! The element types a tensor can hold, and their storage.

use half::f16;
use spec_model::grammar::{DataType, TypeCode};
use std::fmt;

/// A tensor's element type: the dtypes with tensor storage (one lane). `bool` is stored
/// as one byte, 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

impl DType {
    pub const ALL: [DType; 12] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::F32,
        DType::F64,
    ];

    /// The storage of `d`, if tensors of it exist.
    pub fn of(d: DataType) -> Option<DType> {
        if d.lanes != 1 {
            return None;
        }
        Some(match (d.code, d.bits) {
            (TypeCode::UInt, 1) => DType::Bool,
            (TypeCode::Int, 8) => DType::I8,
            (TypeCode::Int, 16) => DType::I16,
            (TypeCode::Int, 32) => DType::I32,
            (TypeCode::Int, 64) => DType::I64,
            (TypeCode::UInt, 8) => DType::U8,
            (TypeCode::UInt, 16) => DType::U16,
            (TypeCode::UInt, 32) => DType::U32,
            (TypeCode::UInt, 64) => DType::U64,
            (TypeCode::Float, 16) => DType::F16,
            (TypeCode::Float, 32) => DType::F32,
            (TypeCode::Float, 64) => DType::F64,
            _ => return None,
        })
    }

    pub fn data_type(self) -> DataType {
        match self {
            DType::Bool => DataType::bool(),
            DType::I8 => DataType::int(8),
            DType::I16 => DataType::int(16),
            DType::I32 => DataType::int(32),
            DType::I64 => DataType::int(64),
            DType::U8 => DataType::uint(8),
            DType::U16 => DataType::uint(16),
            DType::U32 => DataType::uint(32),
            DType::U64 => DataType::uint(64),
            DType::F16 => DataType::float(16),
            DType::F32 => DataType::float(32),
            DType::F64 => DataType::float(64),
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::F32 | DType::F64)
    }

    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }

    pub fn is_signed(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.data_type())
    }
}

/// The Rust type that stores elements of one [`DType`]. `Send + Sync` so that a large
/// kernel can split the slices of a tensor across threads.
pub trait Element: bytemuck::Pod + PartialEq + fmt::Debug + Default + Send + Sync + 'static {
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {
        $(impl Element for $t {
            const DTYPE: DType = DType::$d;
        })*
    };
}
element!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u16 => U16, u32 => U32, u64 => U64, f16 => F16, f32 => F32, f64 => F64);

/// `x` rounded once to the nearest `float16`, ties to even (overflow to an infinity).
/// `f16::from_f64` of the `half` crate rounds twice on x86 with F16C (through `f32`),
/// so this goes through `f32` rounded *to odd*: an inexact result keeps a sticky last
/// bit, and with 24 bits against `float16`'s 11 the second rounding is then exact.
#[inline]
pub fn f16_of_f64(x: f64) -> f16 {
    let f = x as f32;
    if !f.is_finite() || f64::from(f) == x {
        return f16::from_f32(f);
    }
    let b = f.to_bits();
    // Of the two f32 neighbours of x, the one with an odd last bit.
    let odd = if b & 1 == 1 {
        f
    } else if f64::from(f).abs() > x.abs() {
        f32::from_bits(b - 1)
    } else {
        f32::from_bits(b + 1)
    };
    f16::from_f32(odd)
}

/// `u8` storage is shared by `uint8` and `bool`; [`Element::DTYPE`] names `uint8`.
impl Element for u8 {
    const DTYPE: DType = DType::U8;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_round_trip_through_data_types() {
        for d in DType::ALL {
            assert_eq!(DType::of(d.data_type()), Some(d));
            let size = crate::with_num!(d, T => std::mem::size_of::<T>());
            assert_eq!(size, d.size(), "{d}");
        }
        assert_eq!(DType::of(DataType::void()), None);
    }

    /// Against the reference's binary search, near every `float16` midpoint (where
    /// double rounding goes wrong) and across the range.
    #[test]
    fn f16_of_f64_rounds_once() {
        use spec_model::grammar::f16_nearest;
        let check = |x: f64| {
            if x.is_nan() {
                // A NaN's payload is not part of the semantics.
                assert!(f16_of_f64(x).is_nan());
            } else {
                assert_eq!(f16_of_f64(x).to_bits(), f16_nearest(x).to_bits(), "{x:e}");
            }
        };
        for b in 0..0x7C00u16 {
            let lo = f16::from_bits(b).to_f64();
            let hi = if b == 0x7BFF { 65536.0 } else { f16::from_bits(b + 1).to_f64() };
            let mid = (lo + hi) / 2.0;
            for k in [0i64, 1, 2, 3, 1 << 20, 1 << 28, (1 << 29) - 1, 1 << 29, (1 << 29) + 1, 1 << 40] {
                for m in [mid, lo, hi] {
                    let up = f64::from_bits(m.to_bits().saturating_add(k as u64));
                    let down = f64::from_bits(m.to_bits().saturating_sub(k as u64));
                    for x in [up, down, -up, -down] {
                        check(x);
                    }
                }
            }
        }
        let mut r = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            check(f64::from_bits(r));
        }
        assert_eq!(f16_of_f64(1.0 + 2f64.powi(-11) + 2f64.powi(-30)).to_f64(), 1.0009765625);
    }
}
