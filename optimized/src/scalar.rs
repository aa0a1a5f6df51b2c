//! Element arithmetic shared by the kernels: conversions between element types and
//! the per-dtype operations (integer arithmetic wraps; floats follow IEEE-754; `f16`
//! computes through `f32`, rounded once per operation; `bool` is `uint1`, so its
//! arithmetic is modulo 2). The semantics are `proofs-notes/operator-semantics.md`.
//!
//! [`Num`] is implemented for the storage type of every dtype, with [`B8`] standing for
//! `bool` (whose storage byte `u8` also stores `uint8`, with other arithmetic). Kernels
//! pick the type once per call with [`with_num!`](crate::with_num) and run generic
//! loops over typed slices.

use crate::dtype::{DType, Element};
use half::f16;

/// Widening to `f64` (exact for every element type but 64-bit integers beyond 2^53).
pub fn to_f64<T: ToF64>(x: T) -> f64 {
    x.to_f64()
}

pub trait ToF64: Copy {
    fn to_f64(self) -> f64;
}

macro_rules! to_f64_as {
    ($($t:ty),*) => {
        $(impl ToF64 for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
        })*
    };
}
to_f64_as!(u8, i8, i16, i32, i64, u16, u32, u64, f32, f64);

impl ToF64 for f16 {
    fn to_f64(self) -> f64 {
        self.to_f64()
    }
}

impl ToF64 for B8 {
    fn to_f64(self) -> f64 {
        self.0 as f64
    }
}

/// A `bool` element: one byte, 0 or 1 (the storage of [`DType::Bool`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct B8(pub u8);

impl B8 {
    pub const FALSE: B8 = B8(0);
    pub const TRUE: B8 = B8(1);

    pub fn new(b: bool) -> B8 {
        B8(b as u8)
    }

    pub fn get(self) -> bool {
        self.0 != 0
    }
}

impl Element for B8 {
    const DTYPE: DType = DType::Bool;
}

/// The arithmetic of one element type, in that type, and the conversions into it.
///
/// The operations that can fail (integer division by zero, an integer to a negative
/// power) are total here; kernels check their operands with [`Num::is_zero_divisor`]
/// and [`Num::is_negative_exponent`] before the loop, so the loops have no error path.
pub trait Num: Element + Copy + PartialOrd + ToF64 {
    const ZERO: Self;
    const ONE: Self;
    /// The identity of [`Num::max_nan`]: the least value (`-inf` for floats).
    const LOWEST: Self;
    /// The identity of [`Num::min_nan`]: the greatest value (`+inf` for floats).
    const HIGHEST: Self;

    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// Truncating for integers; an integer divisor 0 gives 0 (checked before).
    fn div(self, o: Self) -> Self;
    /// `floor(x / y)`; an integer divisor 0 gives 0 (checked before).
    fn floor_div(self, o: Self) -> Self;
    /// `x ** y`, wrapping for integers; a negative integer exponent gives 0 (checked before).
    fn pow(self, o: Self) -> Self;
    fn neg(self) -> Self;
    fn abs(self) -> Self;
    /// NumPy's `maximum`: `x` if `x` is NaN or `x >= y`, else `y`.
    fn max_nan(self, o: Self) -> Self;
    /// NumPy's `minimum`: `x` if `x` is NaN or `x <= y`, else `y`.
    fn min_nan(self, o: Self) -> Self;
    /// Whether this divisor is an integer (or `bool`) zero.
    fn is_zero_divisor(self) -> bool;
    /// Whether this exponent is a negative integer.
    fn is_negative_exponent(self) -> bool;
    /// `sum / count` in this type (truncating for integers); `None` for an integer (or
    /// `bool`) mean of zero elements.
    fn mean(sum: Self, count: usize) -> Option<Self>;

    /// An integer converted (OP-astype): wrapped modulo 2^bits; `!= 0` for `bool`;
    /// rounded to nearest for floats.
    fn from_i64(x: i64) -> Self;
    fn from_u64(x: u64) -> Self;
    fn from_bool(b: bool) -> Self;
    /// A float converted (OP-astype): truncated toward zero for integers (`None` when NaN,
    /// infinite or out of range after truncation); `!= 0` for `bool` (NaN is true);
    /// rounded to nearest for floats.
    fn from_f64(x: f64) -> Option<Self>;
    /// This element converted to `D` (OP-astype); `None` where the conversion fails.
    fn cast<D: Num>(self) -> Option<D>;
}

/// The floating-point functions (`f16`: computed in `f32`, rounded once).
pub trait Real: Num {
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn tanh(self) -> Self;
    /// `1 / (1 + exp(-x))`.
    fn sigmoid(self) -> Self;
}

/// The integer operations common to signed and unsigned types.
macro_rules! int_common {
    ($t:ty) => {
        const ZERO: Self = 0;
        const ONE: Self = 1;
        const LOWEST: Self = <$t>::MIN;
        const HIGHEST: Self = <$t>::MAX;

        #[inline(always)]
        fn add(self, o: Self) -> Self {
            self.wrapping_add(o)
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            self.wrapping_sub(o)
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            self.wrapping_mul(o)
        }
        #[inline(always)]
        fn div(self, o: Self) -> Self {
            if o == 0 {
                0
            } else {
                self.wrapping_div(o)
            }
        }
        #[inline(always)]
        fn neg(self) -> Self {
            self.wrapping_neg()
        }
        #[inline(always)]
        fn max_nan(self, o: Self) -> Self {
            if self >= o {
                self
            } else {
                o
            }
        }
        #[inline(always)]
        fn min_nan(self, o: Self) -> Self {
            if self <= o {
                self
            } else {
                o
            }
        }
        fn is_zero_divisor(self) -> bool {
            self == 0
        }
        fn mean(sum: Self, count: usize) -> Option<Self> {
            // The exact truncating quotient (the count may exceed the type's range).
            (count != 0).then(|| (sum as i128 / count as i128) as $t)
        }
        #[inline(always)]
        fn from_i64(x: i64) -> Self {
            x as $t
        }
        #[inline(always)]
        fn from_u64(x: u64) -> Self {
            x as $t
        }
        #[inline(always)]
        fn from_bool(b: bool) -> Self {
            b as $t
        }
        #[inline(always)]
        fn from_f64(x: f64) -> Option<Self> {
            // The bounds are powers of two (or 0), exact in f64; NaN fails both tests.
            const LO: f64 = <$t>::MIN as f64;
            const HI: f64 = (<$t>::MAX as u128 + 1) as f64;
            let t = x.trunc();
            (LO..HI).contains(&t).then(|| t as $t)
        }
    };
}

/// Wrapping exponentiation by squaring: the product of `e` copies of `base` modulo 2^bits.
macro_rules! wrapping_pow {
    ($base:expr, $e:expr, $t:ty) => {{
        let (mut base, mut e, mut acc): ($t, u64, $t) = ($base, $e, 1);
        while e > 0 {
            if e & 1 == 1 {
                acc = acc.wrapping_mul(base);
            }
            base = base.wrapping_mul(base);
            e >>= 1;
        }
        acc
    }};
}

macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Num for $t {
            int_common!($t);

            #[inline(always)]
            fn floor_div(self, o: Self) -> Self {
                if o == 0 {
                    return 0;
                }
                // MIN / -1 wraps to MIN with remainder 0, as the exact quotient 2^(bits-1) wraps.
                let (q, r) = (self.wrapping_div(o), self.wrapping_rem(o));
                if r != 0 && ((r < 0) != (o < 0)) {
                    q.wrapping_sub(1)
                } else {
                    q
                }
            }
            #[inline(always)]
            fn pow(self, o: Self) -> Self {
                if o < 0 {
                    0
                } else {
                    wrapping_pow!(self, o as u64, $t)
                }
            }
            #[inline(always)]
            fn abs(self) -> Self {
                self.wrapping_abs()
            }
            fn is_negative_exponent(self) -> bool {
                self < 0
            }
            #[inline(always)]
            fn cast<D: Num>(self) -> Option<D> {
                Some(D::from_i64(self as i64))
            }
        }
    )*};
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Num for $t {
            int_common!($t);

            #[inline(always)]
            fn floor_div(self, o: Self) -> Self {
                self.div(o)
            }
            #[inline(always)]
            fn pow(self, o: Self) -> Self {
                wrapping_pow!(self, o as u64, $t)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                self
            }
            fn is_negative_exponent(self) -> bool {
                false
            }
            #[inline(always)]
            fn cast<D: Num>(self) -> Option<D> {
                Some(D::from_u64(self as u64))
            }
        }
    )*};
}

signed!(i8, i16, i32, i64);
unsigned!(u8, u16, u32, u64);

/// `bool` is `uint1`: `+` and `-` are xor, `*` is and, `maximum` or, `minimum` and.
impl Num for B8 {
    const ZERO: Self = B8::FALSE;
    const ONE: Self = B8::TRUE;
    const LOWEST: Self = B8::FALSE;
    const HIGHEST: Self = B8::TRUE;

    #[inline(always)]
    fn add(self, o: Self) -> Self {
        B8(self.0 ^ o.0)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        B8(self.0 ^ o.0)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        B8(self.0 & o.0)
    }
    /// `x / 1 == x` (the divisor 0 is checked before).
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        B8(self.0 & o.0)
    }
    #[inline(always)]
    fn floor_div(self, o: Self) -> Self {
        B8(self.0 & o.0)
    }
    /// `x ** 1 == x`, `x ** 0 == 1`.
    #[inline(always)]
    fn pow(self, o: Self) -> Self {
        B8(self.0 | (o.0 ^ 1))
    }
    #[inline(always)]
    fn neg(self) -> Self {
        self
    }
    #[inline(always)]
    fn abs(self) -> Self {
        self
    }
    #[inline(always)]
    fn max_nan(self, o: Self) -> Self {
        B8(self.0 | o.0)
    }
    #[inline(always)]
    fn min_nan(self, o: Self) -> Self {
        B8(self.0 & o.0)
    }
    fn is_zero_divisor(self) -> bool {
        self.0 == 0
    }
    fn is_negative_exponent(self) -> bool {
        false
    }
    /// The parity divided by the count, truncating: true only for one true element.
    fn mean(sum: Self, count: usize) -> Option<Self> {
        (count != 0).then_some(B8(sum.0 & (count == 1) as u8))
    }
    fn from_i64(x: i64) -> Self {
        B8::new(x != 0)
    }
    fn from_u64(x: u64) -> Self {
        B8::new(x != 0)
    }
    fn from_bool(b: bool) -> Self {
        B8::new(b)
    }
    fn from_f64(x: f64) -> Option<Self> {
        Some(B8::new(x != 0.0))
    }
    #[inline(always)]
    fn cast<D: Num>(self) -> Option<D> {
        Some(D::from_bool(self.get()))
    }
}

macro_rules! native_float {
    ($($t:ident),*) => {$(
        impl Num for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = $t::NEG_INFINITY;
            const HIGHEST: Self = $t::INFINITY;

            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn div(self, o: Self) -> Self {
                self / o
            }
            #[inline(always)]
            fn floor_div(self, o: Self) -> Self {
                (self / o).floor()
            }
            #[inline(always)]
            fn pow(self, o: Self) -> Self {
                self.powf(o)
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $t::abs(self)
            }
            #[inline(always)]
            fn max_nan(self, o: Self) -> Self {
                if self.is_nan() || self >= o {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn min_nan(self, o: Self) -> Self {
                if self.is_nan() || self <= o {
                    self
                } else {
                    o
                }
            }
            fn is_zero_divisor(self) -> bool {
                false
            }
            fn is_negative_exponent(self) -> bool {
                false
            }
            fn mean(sum: Self, count: usize) -> Option<Self> {
                Some(sum / count as $t)
            }
            #[inline(always)]
            fn from_i64(x: i64) -> Self {
                // One rounding, to nearest even (not through f64 for f32).
                x as $t
            }
            #[inline(always)]
            fn from_u64(x: u64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn from_bool(b: bool) -> Self {
                b as u8 as $t
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Option<Self> {
                Some(x as $t)
            }
            #[inline(always)]
            fn cast<D: Num>(self) -> Option<D> {
                D::from_f64(self as f64)
            }
        }

        impl Real for $t {
            #[inline(always)]
            fn exp(self) -> Self {
                $t::exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $t::ln(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $t::tanh(self)
            }
            #[inline(always)]
            fn sigmoid(self) -> Self {
                1.0 / (1.0 + $t::exp(-self))
            }
        }
    )*};
}

native_float!(f32, f64);

/// An `f16` operation: computed in `f32` (`$x`, `$y` bound to the widened operands)
/// and rounded to `f16` once.
macro_rules! in_f32 {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {{
        let ($x, $y) = ($a.to_f32(), $b.to_f32());
        f16::from_f32($body)
    }};
    ($a:expr, |$x:ident| $body:expr) => {{
        let $x = $a.to_f32();
        f16::from_f32($body)
    }};
}

impl Num for f16 {
    const ZERO: Self = f16::ZERO;
    const ONE: Self = f16::ONE;
    const LOWEST: Self = f16::NEG_INFINITY;
    const HIGHEST: Self = f16::INFINITY;

    #[inline(always)]
    fn add(self, o: Self) -> Self {
        in_f32!(self, o, |x, y| x + y)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        in_f32!(self, o, |x, y| x - y)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        in_f32!(self, o, |x, y| x * y)
    }
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        in_f32!(self, o, |x, y| x / y)
    }
    #[inline(always)]
    fn floor_div(self, o: Self) -> Self {
        in_f32!(self, o, |x, y| (x / y).floor())
    }
    #[inline(always)]
    fn pow(self, o: Self) -> Self {
        in_f32!(self, o, |x, y| x.powf(y))
    }
    #[inline(always)]
    fn neg(self) -> Self {
        -self
    }
    #[inline(always)]
    fn abs(self) -> Self {
        in_f32!(self, |x| x.abs())
    }
    #[inline(always)]
    fn max_nan(self, o: Self) -> Self {
        if self.is_nan() || self >= o {
            self
        } else {
            o
        }
    }
    #[inline(always)]
    fn min_nan(self, o: Self) -> Self {
        if self.is_nan() || self <= o {
            self
        } else {
            o
        }
    }
    fn is_zero_divisor(self) -> bool {
        false
    }
    fn is_negative_exponent(self) -> bool {
        false
    }
    /// The count is first rounded to `f16` (so counts above 2048 may round).
    fn mean(sum: Self, count: usize) -> Option<Self> {
        Some(sum.div(crate::dtype::f16_of_f64(count as f64)))
    }
    #[inline(always)]
    fn from_i64(x: i64) -> Self {
        // Exact to f64 below 2^53; above it both roundings overflow to infinity.
        crate::dtype::f16_of_f64(x as f64)
    }
    #[inline(always)]
    fn from_u64(x: u64) -> Self {
        crate::dtype::f16_of_f64(x as f64)
    }
    #[inline(always)]
    fn from_bool(b: bool) -> Self {
        if b {
            f16::ONE
        } else {
            f16::ZERO
        }
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Option<Self> {
        Some(crate::dtype::f16_of_f64(x))
    }
    #[inline(always)]
    fn cast<D: Num>(self) -> Option<D> {
        D::from_f64(self.to_f64())
    }
}

impl Real for f16 {
    #[inline(always)]
    fn exp(self) -> Self {
        in_f32!(self, |x| x.exp())
    }
    #[inline(always)]
    fn ln(self) -> Self {
        in_f32!(self, |x| x.ln())
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        in_f32!(self, |x| x.sqrt())
    }
    #[inline(always)]
    fn tanh(self) -> Self {
        in_f32!(self, |x| x.tanh())
    }
    #[inline(always)]
    fn sigmoid(self) -> Self {
        in_f32!(self, |x| Real::sigmoid(x))
    }
}

/// Runs `$body` with `$t` bound to the [`Num`] type of `$dtype` (`bool` as [`B8`]):
/// `with_num!(t.dtype(), T => sum::<T>(...))`. The one dispatch on the dtype of a call.
///
/// In `$body`, `$t` is a concrete type, whose inherent methods shadow [`Num`]'s
/// (`i8::abs` panics on `MIN`, `u8::pow` takes a `u32`): call a function generic in
/// `T: Num`, or write `<T as Num>::abs`.
#[macro_export]
macro_rules! with_num {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            $crate::dtype::DType::Bool => {
                type $t = $crate::scalar::B8;
                $body
            }
            $crate::dtype::DType::U8 => {
                type $t = u8;
                $body
            }
            $crate::dtype::DType::I8 => {
                type $t = i8;
                $body
            }
            $crate::dtype::DType::I16 => {
                type $t = i16;
                $body
            }
            $crate::dtype::DType::I32 => {
                type $t = i32;
                $body
            }
            $crate::dtype::DType::I64 => {
                type $t = i64;
                $body
            }
            $crate::dtype::DType::U16 => {
                type $t = u16;
                $body
            }
            $crate::dtype::DType::U32 => {
                type $t = u32;
                $body
            }
            $crate::dtype::DType::U64 => {
                type $t = u64;
                $body
            }
            $crate::dtype::DType::F16 => {
                type $t = half::f16;
                $body
            }
            $crate::dtype::DType::F32 => {
                type $t = f32;
                $body
            }
            $crate::dtype::DType::F64 => {
                type $t = f64;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_arithmetic_wraps_truncates_and_floors() {
        assert_eq!(127i8.add(1), -128);
        assert_eq!(0u8.sub(1), 255);
        assert_eq!(i64::MIN.div(-1), i64::MIN);
        assert_eq!(i64::MIN.floor_div(-1), i64::MIN);
        assert_eq!((-7i32).div(2), -3);
        assert_eq!((-7i32).floor_div(2), -4);
        assert_eq!(7i32.floor_div(-2), -4);
        assert_eq!((-8i32).floor_div(2), -4);
        assert_eq!(i8::MIN.floor_div(3), -43);
        assert_eq!(7u32.floor_div(2), 3);
        assert!(0u16.is_zero_divisor() && B8::FALSE.is_zero_divisor() && !0.0f32.is_zero_divisor());
        assert_eq!(Num::abs(i8::MIN), i8::MIN);
        assert_eq!(3u8.neg(), 253);
        assert_eq!(Num::pow(2i8, 7), -128);
        assert_eq!(Num::pow(3i64, 0), 1);
        assert_eq!(Num::pow(0i64, 0), 1);
        assert_eq!(Num::pow(u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(Num::pow(3u8, 5), 243);
        assert_eq!(Num::pow(3u8, 6), 3u8.wrapping_pow(6));
        assert!((-1i32).is_negative_exponent() && !u8::MAX.is_negative_exponent());
        assert_eq!(<i32 as Num>::mean(-7, 2), Some(-3));
        assert_eq!(<i8 as Num>::mean(-100, 1000), Some(0));
        assert_eq!(<u64 as Num>::mean(u64::MAX, 3), Some(u64::MAX / 3));
        assert_eq!(<u8 as Num>::mean(1, 0), None);
    }

    #[test]
    fn bool_is_uint1() {
        let (t, f) = (B8::TRUE, B8::FALSE);
        assert_eq!((t.add(t), t.sub(f), t.mul(f)), (f, t, f));
        assert_eq!((t.div(t), f.div(t), t.floor_div(t)), (t, f, t));
        assert_eq!((Num::pow(t, t), Num::pow(f, t), Num::pow(t, f), Num::pow(f, f)), (t, f, t, t));
        assert_eq!((t.max_nan(f), t.min_nan(f)), (t, f));
        assert_eq!((B8::mean(t, 1), B8::mean(t, 3), B8::mean(f, 0)), (Some(t), Some(f), None));
    }

    #[test]
    fn floats_follow_ieee_and_numpy_maximum() {
        assert!(f32::NAN.max_nan(1.0).is_nan() && 1.0f32.max_nan(f32::NAN).is_nan());
        assert!(1.0f64.min_nan(f64::NAN).is_nan());
        assert!((-0.0f64).max_nan(0.0).is_sign_negative(), "the first of equal operands");
        assert_eq!(1.0f32.div(0.0), f32::INFINITY);
        assert_eq!((-7.0f64).floor_div(2.0), -4.0);
        let x = f16::from_f32(1.0);
        let tiny = f16::from_f32(2f32.powi(-11));
        assert_eq!(x.add(tiny), x, "ties round to even in float16");
        assert!(f16::NAN.max_nan(x).is_nan());
        assert_eq!(f16::from_f32(60000.0).add(f16::from_f32(60000.0)), f16::INFINITY);
        assert_eq!(f16::LOWEST.max_nan(f16::from_f32(-3.0)), f16::from_f32(-3.0));
        assert_eq!(<f16 as Num>::mean(f16::from_f32(3.0), 2), Some(f16::from_f32(1.5)));
        assert!(<f32 as Num>::mean(0.0, 0).unwrap().is_nan());
        assert_eq!(Real::sigmoid(0.0f64), 0.5);
    }

    #[test]
    fn conversions() {
        assert_eq!(300i64.cast::<i8>(), Some(44));
        assert_eq!((-1i32).cast::<u16>(), Some(65535));
        assert_eq!(u64::MAX.cast::<i64>(), Some(-1));
        assert_eq!((-3.9f64).cast::<i8>(), Some(-3));
        assert_eq!(127.9f32.cast::<i8>(), Some(127));
        assert_eq!(128.0f64.cast::<i8>(), None);
        assert_eq!((-128.9f64).cast::<i8>(), Some(-128));
        assert_eq!(f64::NAN.cast::<i64>(), None);
        assert_eq!(f32::INFINITY.cast::<u8>(), None);
        assert_eq!((-1.0f64).cast::<u8>(), None);
        assert_eq!((-0.5f64).cast::<u8>(), Some(0));
        assert_eq!(9.3e18f64.cast::<i64>(), None);
        assert_eq!(1.8e19f64.cast::<u64>(), Some(18_000_000_000_000_000_000));
        assert_eq!(2f64.powi(64).cast::<u64>(), None);
        assert_eq!((-(2f64.powi(63))).cast::<i64>(), Some(i64::MIN));
        assert_eq!(1e300f64.cast::<i64>(), None);
        assert_eq!(f64::NAN.cast::<B8>(), Some(B8::TRUE));
        assert_eq!((-0.0f32).cast::<B8>(), Some(B8::FALSE));
        assert_eq!(2i32.cast::<B8>(), Some(B8::TRUE));
        assert_eq!(256u32.cast::<B8>(), Some(B8::TRUE), "to bool is != 0, not a wrap to one bit");
        assert_eq!(B8::TRUE.cast::<f16>(), Some(f16::ONE));
        let big = (1i64 << 62) + 1;
        assert_eq!(big.cast::<f32>(), Some(2f32.powi(62)));
        assert_eq!(((1i64 << 24) + 1).cast::<f32>(), Some(16777216.0));
        assert_eq!(70000i32.cast::<f16>(), Some(f16::INFINITY));
        assert_eq!(1e40f64.cast::<f32>(), Some(f32::INFINITY));
        assert_eq!(f16::from_f32(-2.5).cast::<i32>(), Some(-2));
    }
}
