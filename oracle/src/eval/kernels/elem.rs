//! Element arithmetic in the declared dtype: [`Elem`] for every storage type (integers
//! wrap in two's complement; `bool` is `uint1`, so arithmetic is modulo 2; floats are
//! IEEE, float16 computed in float32 and rounded once per operation), [`Real`] for the
//! floating-point functions, and the macros that dispatch on a `TensorData`'s dtype.

use half::f16;
use spec_model::grammar::{DataType, Scalar, TensorData, TypeCode};

/// The arithmetic of one element type, in that type.
pub(crate) trait Elem: Copy + PartialOrd + 'static {
    fn zero() -> Self;
    fn plus(self, o: Self) -> Self;
    fn minus(self, o: Self) -> Self;
    fn times(self, o: Self) -> Self;
    /// `x / y`: truncating for integers, `None` when an integer divisor is 0.
    fn quot(self, o: Self) -> Option<Self>;
    /// `floor(x / y)`; `None` when an integer divisor is 0.
    fn floor_quot(self, o: Self) -> Option<Self>;
    /// `x ** y`; an error for an integer to a negative power.
    fn power(self, o: Self) -> Result<Self, String>;
    fn negate(self) -> Self;
    fn absolute(self) -> Self;
    /// NumPy's `maximum`: a NaN operand gives NaN.
    fn propagating_max(self, o: Self) -> Self;
    /// NumPy's `minimum`: a NaN operand gives NaN.
    fn propagating_min(self, o: Self) -> Self;
    /// `sum / count` in this type (truncating for integers); `None` for an integer
    /// mean of zero elements.
    fn mean(sum: Self, count: usize) -> Option<Self>;
}

/// The floating-point functions (float16: computed in float32, rounded once).
pub(crate) trait Real: Elem {
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn tanh(self) -> Self;
    /// `1 / (1 + exp(-x))`.
    fn sigmoid(self) -> Self;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn zero() -> Self {
                0
            }
            fn plus(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn minus(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn times(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn quot(self, o: Self) -> Option<Self> {
                (o != 0).then(|| self.wrapping_div(o))
            }
            fn floor_quot(self, o: Self) -> Option<Self> {
                if o == 0 {
                    return None;
                }
                let (a, b) = (self as i128, o as i128);
                let q = a / b;
                let q = if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q };
                Some(q as $t)
            }
            fn power(self, o: Self) -> Result<Self, String> {
                let e = o as i128;
                if e < 0 {
                    return Err(format!("an integer to the negative power {e}"));
                }
                let (mut e, mut base, mut acc): (i128, $t, $t) = (e, self, 1);
                while e > 0 {
                    if e & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                Ok(acc)
            }
            fn negate(self) -> Self {
                self.wrapping_neg()
            }
            fn absolute(self) -> Self {
                (self as i128).unsigned_abs() as $t
            }
            fn propagating_max(self, o: Self) -> Self {
                if self >= o { self } else { o }
            }
            fn propagating_min(self, o: Self) -> Self {
                if self <= o { self } else { o }
            }
            fn mean(sum: Self, count: usize) -> Option<Self> {
                (count != 0).then(|| ((sum as i128) / (count as i128)) as $t)
            }
        }
    )*};
}

int_elem!(i8, i16, i32, i64, u8, u16, u32, u64);

/// `bool` is `uint1`: arithmetic modulo 2.
impl Elem for bool {
    fn zero() -> Self {
        false
    }
    fn plus(self, o: Self) -> Self {
        self ^ o
    }
    fn minus(self, o: Self) -> Self {
        self ^ o
    }
    fn times(self, o: Self) -> Self {
        self & o
    }
    fn quot(self, o: Self) -> Option<Self> {
        o.then_some(self)
    }
    fn floor_quot(self, o: Self) -> Option<Self> {
        o.then_some(self)
    }
    fn power(self, o: Self) -> Result<Self, String> {
        Ok(if o { self } else { true })
    }
    fn negate(self) -> Self {
        self
    }
    fn absolute(self) -> Self {
        self
    }
    fn propagating_max(self, o: Self) -> Self {
        self | o
    }
    fn propagating_min(self, o: Self) -> Self {
        self & o
    }
    fn mean(sum: Self, count: usize) -> Option<Self> {
        (count != 0).then_some(sum && count == 1)
    }
}

macro_rules! float_elem {
    ($($t:ident),*) => {$(
        impl Elem for $t {
            fn zero() -> Self {
                0.0
            }
            fn plus(self, o: Self) -> Self {
                self + o
            }
            fn minus(self, o: Self) -> Self {
                self - o
            }
            fn times(self, o: Self) -> Self {
                self * o
            }
            fn quot(self, o: Self) -> Option<Self> {
                Some(self / o)
            }
            fn floor_quot(self, o: Self) -> Option<Self> {
                Some((self / o).floor())
            }
            fn power(self, o: Self) -> Result<Self, String> {
                Ok(self.powf(o))
            }
            fn negate(self) -> Self {
                -self
            }
            fn absolute(self) -> Self {
                $t::abs(self)
            }
            fn propagating_max(self, o: Self) -> Self {
                if self.is_nan() || self >= o { self } else { o }
            }
            fn propagating_min(self, o: Self) -> Self {
                if self.is_nan() || self <= o { self } else { o }
            }
            fn mean(sum: Self, count: usize) -> Option<Self> {
                Some(sum / count as $t)
            }
        }

        impl Real for $t {
            fn exp(self) -> Self {
                $t::exp(self)
            }
            fn ln(self) -> Self {
                $t::ln(self)
            }
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            fn tanh(self) -> Self {
                $t::tanh(self)
            }
            fn sigmoid(self) -> Self {
                1.0 / (1.0 + $t::exp(-self))
            }
        }
    )*};
}

float_elem!(f32, f64);

/// float16 through float32: one rounding per operation.
fn h(x: f32) -> f16 {
    f16::from_f32(x)
}

impl Elem for f16 {
    fn zero() -> Self {
        f16::ZERO
    }
    fn plus(self, o: Self) -> Self {
        h(self.to_f32() + o.to_f32())
    }
    fn minus(self, o: Self) -> Self {
        h(self.to_f32() - o.to_f32())
    }
    fn times(self, o: Self) -> Self {
        h(self.to_f32() * o.to_f32())
    }
    fn quot(self, o: Self) -> Option<Self> {
        Some(h(self.to_f32() / o.to_f32()))
    }
    fn floor_quot(self, o: Self) -> Option<Self> {
        Some(h((self.to_f32() / o.to_f32()).floor()))
    }
    fn power(self, o: Self) -> Result<Self, String> {
        Ok(h(self.to_f32().powf(o.to_f32())))
    }
    fn negate(self) -> Self {
        -self
    }
    fn absolute(self) -> Self {
        h(self.to_f32().abs())
    }
    fn propagating_max(self, o: Self) -> Self {
        if self.is_nan() || self >= o {
            self
        } else {
            o
        }
    }
    fn propagating_min(self, o: Self) -> Self {
        if self.is_nan() || self <= o {
            self
        } else {
            o
        }
    }
    fn mean(sum: Self, count: usize) -> Option<Self> {
        sum.quot(spec_model::grammar::f16_nearest(count as f64))
    }
}

impl Real for f16 {
    fn exp(self) -> Self {
        h(self.to_f32().exp())
    }
    fn ln(self) -> Self {
        h(self.to_f32().ln())
    }
    fn sqrt(self) -> Self {
        h(self.to_f32().sqrt())
    }
    fn tanh(self) -> Self {
        h(self.to_f32().tanh())
    }
    fn sigmoid(self) -> Self {
        h(self.to_f32().sigmoid())
    }
}

/// An element type of some `TensorData` variant.
pub(crate) trait Storage: Copy {
    /// The elements, if `d` holds this type.
    fn slice(d: &TensorData) -> Option<&[Self]>;
}

macro_rules! storage {
    ($($t:ty => $var:ident),*) => {$(
        impl Storage for $t {
            fn slice(d: &TensorData) -> Option<&[Self]> {
                match d {
                    TensorData::$var(v) => Some(v),
                    _ => None,
                }
            }
        }
    )*};
}

storage!(bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32,
    u64 => U64, f16 => F16, f32 => F32, f64 => F64);

/// Applies `$body` (generic in the element type, `$v: &Vec<T>`, giving `Vec<T>`) to
/// the storage, keeping its dtype.
macro_rules! map_data {
    ($data:expr, $v:ident => $body:expr) => {
        match $data {
            ::spec_model::grammar::TensorData::Bool($v) => ::spec_model::grammar::TensorData::Bool($body),
            ::spec_model::grammar::TensorData::I8($v) => ::spec_model::grammar::TensorData::I8($body),
            ::spec_model::grammar::TensorData::I16($v) => ::spec_model::grammar::TensorData::I16($body),
            ::spec_model::grammar::TensorData::I32($v) => ::spec_model::grammar::TensorData::I32($body),
            ::spec_model::grammar::TensorData::I64($v) => ::spec_model::grammar::TensorData::I64($body),
            ::spec_model::grammar::TensorData::U8($v) => ::spec_model::grammar::TensorData::U8($body),
            ::spec_model::grammar::TensorData::U16($v) => ::spec_model::grammar::TensorData::U16($body),
            ::spec_model::grammar::TensorData::U32($v) => ::spec_model::grammar::TensorData::U32($body),
            ::spec_model::grammar::TensorData::U64($v) => ::spec_model::grammar::TensorData::U64($body),
            ::spec_model::grammar::TensorData::F16($v) => ::spec_model::grammar::TensorData::F16($body),
            ::spec_model::grammar::TensorData::F32($v) => ::spec_model::grammar::TensorData::F32($body),
            ::spec_model::grammar::TensorData::F64($v) => ::spec_model::grammar::TensorData::F64($body),
        }
    };
}

/// Applies `$body` to two storages of the same dtype (`wrap`: the result keeps the
/// dtype; `plain`: the body's value as is); `$else` when the dtypes differ.
macro_rules! map_data2 {
    (@arms $a:expr, $b:expr, $x:ident, $y:ident, $else:expr, $($var:ident)*; $k:ident => $body:expr) => {
        match ($a, $b) {
            $((::spec_model::grammar::TensorData::$var($x), ::spec_model::grammar::TensorData::$var($y)) => {
                map_data2!(@wrap $k $var $body)
            })*
            _ => $else,
        }
    };
    (@wrap wrap $var:ident $body:expr) => { ::spec_model::grammar::TensorData::$var($body) };
    (@wrap plain $var:ident $body:expr) => { $body };
    ($k:ident, $a:expr, $b:expr, $x:ident, $y:ident => $body:expr, $else:expr) => {
        map_data2!(@arms $a, $b, $x, $y, $else, Bool I8 I16 I32 I64 U8 U16 U32 U64 F16 F32 F64; $k => $body)
    };
}

pub(crate) use {map_data, map_data2};

/// The elements of `data` at the offsets `at`, in order (same dtype).
pub(crate) fn gather(data: &TensorData, at: impl Iterator<Item = usize>) -> TensorData {
    map_data!(data, v => at.map(|i| v[i]).collect())
}

/// `v` wrapped into the integer dtype `dt` (two's complement, modulo 2^bits).
pub(crate) fn wrap_int(v: i128, dt: DataType) -> i128 {
    let bits = dt.bits.clamp(1, 64);
    let m = 1i128 << bits;
    let r = v.rem_euclid(m);
    if dt.code == TypeCode::Int && r >= m / 2 {
        r - m
    } else {
        r
    }
}

/// One element converted to `to` (OP-astype): integers wrap; anything to `bool` is
/// `x != 0` (NaN is true); a float to an integer truncates toward zero, and NaN, an
/// infinity or a value outside the dtype's range is an error; to a float rounds to
/// nearest (overflow to an infinity). The result is what `TensorData::push` stores
/// exactly.
pub(crate) fn convert_scalar(s: Scalar, to: DataType) -> Result<Scalar, String> {
    if to.is_bool() {
        return Ok(Scalar::Bool(match s {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(f) => f != 0.0,
        }));
    }
    match to.code {
        TypeCode::Int | TypeCode::UInt => {
            let i = match s {
                Scalar::Bool(b) => b as i128,
                Scalar::Int(i) => i,
                Scalar::Float(f) => {
                    let t = f.trunc();
                    // Every finite f64 below 2^100 in magnitude converts to i128 exactly.
                    if !t.is_finite() || t.abs() >= 2f64.powi(100) || !to.fits(t as i128) {
                        return Err(format!("{f} is out of the range of {to}"));
                    }
                    return Ok(Scalar::Int(t as i128));
                }
            };
            Ok(Scalar::Int(wrap_int(i, to)))
        }
        _ => Ok(Scalar::Float(match s {
            Scalar::Bool(b) => b as u8 as f64,
            // Rounded once to float32 (an i64 beyond 2^53 would round twice through f64).
            Scalar::Int(i) if to.bits == 32 => i as f32 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
        })),
    }
}

/// Storage converted to `to` element by element ([`convert_scalar`]).
pub(crate) fn convert_data(data: &TensorData, to: DataType) -> Result<TensorData, String> {
    let mut out = TensorData::empty(to).ok_or_else(|| format!("dtype {to} has no tensor storage"))?;
    for i in 0..data.len() {
        out.push(convert_scalar(data.get(i), to)?)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps_and_floors() {
        assert_eq!(127i8.plus(1), -128);
        assert_eq!(0u8.minus(1), 255);
        assert_eq!(i64::MIN.quot(-1), Some(i64::MIN));
        assert_eq!(i64::MIN.floor_quot(-1), Some(i64::MIN));
        assert_eq!((-7i32).quot(2), Some(-3));
        assert_eq!((-7i32).floor_quot(2), Some(-4));
        assert_eq!(7i32.floor_quot(-2), Some(-4));
        assert_eq!(7u32.quot(0), None);
        assert_eq!(i8::MIN.absolute(), i8::MIN);
        assert_eq!(3u8.negate(), 253);
        assert_eq!(2i8.power(7), Ok(-128));
        assert_eq!(3i64.power(0), Ok(1));
        assert!(2i32.power(-1).is_err());
        assert_eq!(u64::MAX.power(u64::MAX), Ok(u64::MAX));
        assert_eq!(<i32 as Elem>::mean(-7, 2), Some(-3));
        assert_eq!(<u8 as Elem>::mean(1, 0), None);
    }

    #[test]
    fn bool_is_uint1() {
        assert!(!true.plus(true));
        assert!(true.minus(false));
        assert!(!true.times(false));
        assert_eq!(true.quot(false), None);
        assert!(true.propagating_max(false));
        assert!(!true.propagating_min(false));
    }

    #[test]
    fn floats_follow_ieee_and_numpy_maximum() {
        assert!(f32::NAN.propagating_max(1.0).is_nan());
        assert!(1.0f32.propagating_max(f32::NAN).is_nan());
        assert!(1.0f64.propagating_min(f64::NAN).is_nan());
        assert_eq!(1.0f32.quot(0.0), Some(f32::INFINITY));
        assert_eq!((-7.0f64).floor_quot(2.0), Some(-4.0));
        let x = f16::from_f32(1.0);
        let tiny = f16::from_f32(2f32.powi(-11));
        assert_eq!(x.plus(tiny), x, "ties round to even in float16");
        assert!(f16::NAN.propagating_max(x).is_nan());
        assert!(f16::from_f32(-0.0) == f16::ZERO);
        assert!(f16::NAN != f16::NAN);
    }

    #[test]
    fn conversions() {
        let i8t = DataType::int(8);
        assert_eq!(convert_scalar(Scalar::Int(300), i8t), Ok(Scalar::Int(44)));
        assert_eq!(convert_scalar(Scalar::Int(-1), DataType::uint(16)), Ok(Scalar::Int(65535)));
        assert_eq!(convert_scalar(Scalar::Float(-3.9), i8t), Ok(Scalar::Int(-3)));
        assert_eq!(convert_scalar(Scalar::Float(127.9), i8t), Ok(Scalar::Int(127)));
        assert!(convert_scalar(Scalar::Float(128.0), i8t).is_err());
        assert!(convert_scalar(Scalar::Float(f64::NAN), DataType::INT64).is_err());
        assert!(convert_scalar(Scalar::Float(-1.0), DataType::uint(8)).is_err());
        assert!(convert_scalar(Scalar::Float(1e300), DataType::INT64).is_err());
        assert_eq!(convert_scalar(Scalar::Float(f64::NAN), DataType::BOOL), Ok(Scalar::Bool(true)));
        assert_eq!(convert_scalar(Scalar::Int(2), DataType::BOOL), Ok(Scalar::Bool(true)));
        let big = (1i128 << 62) + 1;
        assert_eq!(convert_scalar(Scalar::Int(big), DataType::FLOAT32), Ok(Scalar::Float(2f64.powi(62))));
        assert_eq!(wrap_int(-129, i8t), 127);
        assert_eq!(wrap_int(1 << 64, DataType::uint(64)), 0);
    }
}
