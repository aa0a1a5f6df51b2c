//! Unary math and activations (issue 19). The functions of one element ([`Math`]) are
//! the bodies of the [`simd`] map loops: `floor`, `ceil`, `round`, `sign`, `square`,
//! `rsqrt`, `leakyrelu`, `clip` and the checks are branch-free selects and IEEE
//! operations that LLVM vectorizes per instruction set; `erf`, `sin`, `cos` (and those
//! inside `gelu`, `gelu_tanh`, `silu`) are the C library's (`libm` for `erf`), called
//! per element, so every path gives the same bits. The float kernels of
//! [`Unary`]'s new variants go through [`simd::unary_at`] (and so can fuse, G-10);
//! `isnan`, `isinf`, `nn.leakyrelu` and `clip` have kernels of their own here.

use super::common::{operand, read, write};
use super::elementwise::Unary;
use super::lanes::map;
use super::simd::{loops, run, Exec, Level};
use super::{attrs, Failing, Kernel, KernelCx, Lowering};
use crate::dtype::DType;
use crate::error::Result;
use crate::scalar::{Num, B8};
use crate::tensor::Tensor;
use crate::value::{Prim, Value};
use crate::with_num;
use half::f16;

/// The functions of this family on one float type, each correctly the formula TVM's
/// legalization writes, evaluated in the type (float16: in float32, rounded once).
pub trait Math: Num {
    fn erf(self) -> Self;
    fn rsqrt(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    /// To nearest, ties to even.
    fn round(self) -> Self;
    /// -1, 0 or 1; NaN stays NaN; both zeros give +0.
    fn sign(self) -> Self;
    fn square(self) -> Self;
    fn gelu(self) -> Self;
    fn gelu_tanh(self) -> Self;
    fn silu(self) -> Self;
    fn nan(self) -> bool;
    fn inf(self) -> bool;
}

macro_rules! native {
    ($t:ident, $erf:path) => {
        impl Math for $t {
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn rsqrt(self) -> Self {
                1.0 / self.sqrt()
            }
            #[inline(always)]
            fn sin(self) -> Self {
                $t::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $t::cos(self)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                $t::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $t::ceil(self)
            }
            #[inline(always)]
            fn round(self) -> Self {
                self.round_ties_even()
            }
            #[inline(always)]
            fn sign(self) -> Self {
                let s: $t = if self < 0.0 { -1.0 } else { 0.0 };
                let s = if self > 0.0 { 1.0 } else { s };
                if self != self {
                    self
                } else {
                    s
                }
            }
            #[inline(always)]
            fn square(self) -> Self {
                self * self
            }
            #[inline(always)]
            fn gelu(self) -> Self {
                const C: $t = std::f64::consts::FRAC_1_SQRT_2 as $t;
                let e = $erf(self * C);
                self * (0.5 + e * 0.5)
            }
            #[inline(always)]
            fn gelu_tanh(self) -> Self {
                // sqrt(2 / pi), rounded once to the type as TVM's constant is.
                let k = (2.0f64 / std::f64::consts::PI).sqrt() as $t;
                const B: $t = 0.044715f64 as $t;
                let x = self;
                let t = (k * x * (1.0 + B * x * x)).tanh();
                0.5 * x * (1.0 + t)
            }
            #[inline(always)]
            fn silu(self) -> Self {
                let s = 1.0 / (1.0 + (-self).exp());
                self * s
            }
            #[inline(always)]
            fn nan(self) -> bool {
                self.is_nan()
            }
            #[inline(always)]
            fn inf(self) -> bool {
                self.is_infinite()
            }
        }
    };
}

native!(f32, libm::erff);
native!(f64, libm::erf);

/// float16: the float32 function of the widened value, rounded once.
macro_rules! via_f32 {
    ($($f:ident),*) => {$(
        #[inline(always)]
        fn $f(self) -> Self {
            f16::from_f32(<f32 as Math>::$f(self.to_f32()))
        }
    )*};
}

impl Math for f16 {
    via_f32!(erf, rsqrt, sin, cos, floor, ceil, round, sign, square, gelu, gelu_tanh, silu);
    fn nan(self) -> bool {
        self.is_nan()
    }
    fn inf(self) -> bool {
        self.is_infinite()
    }
}

/// Whether `op` is one of this family's (the rest of [`Unary`] is `elementwise.rs`'s).
pub fn is_math(op: Unary) -> bool {
    use Unary::*;
    matches!(op, Erf | Rsqrt | Sin | Cos | Floor | Ceil | Round | Sign | Square | Gelu | GeluTanh | Silu)
}

/// Calls `$go!(f)` with the element function of `op` (one of [`is_math`]'s).
macro_rules! with_fn {
    ($op:expr, $t:ty, $go:ident) => {
        match $op {
            Unary::Erf => $go!(<$t as Math>::erf),
            Unary::Rsqrt => $go!(<$t as Math>::rsqrt),
            Unary::Sin => $go!(<$t as Math>::sin),
            Unary::Cos => $go!(<$t as Math>::cos),
            Unary::Floor => $go!(<$t as Math>::floor),
            Unary::Ceil => $go!(<$t as Math>::ceil),
            Unary::Round => $go!(<$t as Math>::round),
            Unary::Sign => $go!(<$t as Math>::sign),
            Unary::Square => $go!(<$t as Math>::square),
            Unary::Gelu => $go!(<$t as Math>::gelu),
            Unary::GeluTanh => $go!(<$t as Math>::gelu_tanh),
            _ => $go!(<$t as Math>::silu),
        }
    };
}

/// `out[i] = op(x[i])` at `level` (the loop [`simd::unary_at`] runs for this family).
pub fn math_at<T: Math>(level: Level, op: Unary, out: &mut [T], x: &[T]) {
    macro_rules! go {
        ($f:expr) => {
            run(level, loops::Map { out, x, f: &$f })
        };
    }
    with_fn!(op, T, go)
}

/// `acc[i] = op(acc[i])` at `level`.
pub fn math_in_place_at<T: Math>(level: Level, op: Unary, acc: &mut [T]) {
    macro_rules! go {
        ($f:expr) => {
            run(level, loops::MapInPlace { acc, f: &$f })
        };
    }
    with_fn!(op, T, go)
}

/// A float16 tensor's function (float32 and float64 go through `simd::unary_at`).
pub fn half_map(cx: &KernelCx, a: &Tensor, op: Unary) -> Result<Value> {
    let x = read::<f16>(cx, a, "the operand")?;
    let out = cx.alloc_for_overwrite(a.dtype(), a.shape())?;
    let exec = Exec::of(cx);
    super::lanes::map_parts(exec, &mut write::<f16>(cx, &out)?, &x, |o, x| math_at(exec.level, op, o, x));
    Ok(Value::tensor(out))
}

/// OP-floor, OP-ceil, OP-round (the identity), OP-sign (-1, 0, 1; `bool` is its own
/// sign) and OP-square (wrapping; `bool` is `uint1`) of an integer or `bool` tensor;
/// `None` for a float-only function.
pub fn int_map<T: Num>(cx: &KernelCx, a: &Tensor, op: Unary) -> Option<Result<Value>> {
    let go = |f: fn(T) -> T| -> Result<Value> {
        let x = read::<T>(cx, a, "the operand")?;
        let out = cx.alloc_for_overwrite(a.dtype(), a.shape())?;
        map(Exec::of(cx), &mut write::<T>(cx, &out)?, &x, f);
        Ok(Value::tensor(out))
    };
    Some(match op {
        Unary::Floor | Unary::Ceil | Unary::Round => go(|x| x),
        Unary::Sign => go(|x| {
            let s = if x < T::ZERO { T::ZERO.sub(T::ONE) } else { T::ZERO };
            if x > T::ZERO {
                T::ONE
            } else {
                s
            }
        }),
        Unary::Square => go(|x| x.mul(x)),
        _ => return None,
    })
}

/// OP-isnan (`inf` false), OP-isinf: a `bool` tensor of the operand's shape; integer
/// and `bool` operands give all false. Errors: not one tensor.
pub fn check(_: &Lowering, inf: bool) -> Box<dyn Kernel> {
    Box::new(Check { inf })
}

struct Check {
    inf: bool,
}

impl Kernel for Check {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        fn test<T: Math>(cx: &KernelCx, a: &Tensor, inf: bool) -> Result<Value> {
            let x = read::<T>(cx, a, "the operand")?;
            let out = cx.alloc_for_overwrite(DType::Bool, a.shape())?;
            let mut o = write::<B8>(cx, &out)?;
            let exec = Exec::of(cx);
            if inf {
                map(exec, &mut o, &x, |v: T| B8::new(v.inf()));
            } else {
                map(exec, &mut o, &x, |v: T| B8::new(v.nan()));
            }
            drop(o);
            Ok(Value::tensor(out))
        }
        match a.dtype() {
            DType::F16 => test::<f16>(cx, a, self.inf),
            DType::F32 => test::<f32>(cx, a, self.inf),
            DType::F64 => test::<f64>(cx, a, self.inf),
            _ => Ok(Value::tensor(cx.alloc(DType::Bool, a.shape())?)),
        }
    }
}

/// OP-nn.leakyrelu: `x` where `x > 0`, else `alpha * x` with `alpha` (default 0.01)
/// rounded to the dtype; NaN stays NaN. Errors: not one float tensor; `alpha` not a
/// number.
pub fn leakyrelu(l: &Lowering) -> Box<dyn Kernel> {
    match attrs::float(l.attrs, "alpha", 0.01) {
        Ok(alpha) => Box::new(LeakyRelu { alpha }),
        Err(m) => Box::new(Failing(m)),
    }
}

struct LeakyRelu {
    alpha: f64,
}

impl Kernel for LeakyRelu {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 1)?;
        let a = operand(cx, args, 0, "the operand")?;
        fn go<T: Num>(cx: &KernelCx, a: &Tensor, alpha: f64) -> Result<Value> {
            let k = T::from_f64(alpha).unwrap_or(T::ZERO);
            let x = read::<T>(cx, a, "the operand")?;
            let out = cx.alloc_for_overwrite(a.dtype(), a.shape())?;
            map(Exec::of(cx), &mut write::<T>(cx, &out)?, &x, move |v: T| if v > T::ZERO { v } else { k.mul(v) });
            Ok(Value::tensor(out))
        }
        match a.dtype() {
            DType::F16 => go::<f16>(cx, a, self.alpha),
            DType::F32 => go::<f32>(cx, a, self.alpha),
            DType::F64 => go::<f64>(cx, a, self.alpha),
            d => Err(cx.error(format!("needs a floating-point tensor, not {d}"))),
        }
    }
}

/// OP-clip: `maximum(minimum(x, max), min)` elementwise (NaN-propagating; `min` wins
/// over a smaller `max`, as in TVM), the PrimValue bounds converted to `x`'s dtype as
/// OP-astype converts. Errors (`OpError`): not three arguments; `x` not a tensor; a
/// bound not a PrimValue or not convertible (NaN, infinite, out of an integer range).
pub fn clip(_: &Lowering) -> Box<dyn Kernel> {
    Box::new(Clip)
}

struct Clip;

fn bound<'v>(cx: &KernelCx, args: &'v [Value], i: usize, what: &str) -> Result<&'v Prim> {
    match &args[i] {
        Value::Prim(p) => Ok(p),
        v => Err(cx.error(format!("`{what}` must be a PrimValue, got {}", v.kind()))),
    }
}

/// A bound in `T`, converted as OP-astype converts.
fn convert<T: Num>(cx: &KernelCx, p: &Prim, to: DType) -> Result<T> {
    let (v, shown) = match *p {
        Prim::Int(i, _) => (Some(T::from_i64(i)), i as f64),
        Prim::Float(f, _) => (T::from_f64(f), f),
        Prim::Bool(b) => (Some(T::from_bool(b)), b as u8 as f64),
    };
    v.ok_or_else(|| cx.error(format!("{shown} is out of the range of {to}")))
}

impl Kernel for Clip {
    fn run(&self, cx: &KernelCx, args: &[Value]) -> Result<Value> {
        cx.arity(args, 3)?;
        let a = operand(cx, args, 0, "the operand")?;
        let (lo, hi) = (bound(cx, args, 1, "min")?, bound(cx, args, 2, "max")?);
        with_num!(a.dtype(), T => {
            let (lo, hi) = (convert::<T>(cx, lo, a.dtype())?, convert::<T>(cx, hi, a.dtype())?);
            let x = read::<T>(cx, a, "the operand")?;
            let out = cx.alloc_for_overwrite(a.dtype(), a.shape())?;
            map(Exec::of(cx), &mut write::<T>(cx, &out)?, &x, move |v: T| v.min_nan(hi).max_nan(lo));
            Ok(Value::tensor(out))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_functions_corner_cases() {
        assert_eq!([0.5f32, 1.5, 2.5, -0.5].map(Math::round), [0.0, 2.0, 2.0, -0.0]);
        assert!(f32::NAN.sign().is_nan());
        assert!((-0.0f64).sign().is_sign_positive());
        assert_eq!([-3.0f64, 2.0].map(Math::sign), [-1.0, 1.0]);
        assert_eq!(f16::from_f32(0.5).round(), f16::ZERO);
        assert_eq!(0.0f32.gelu(), 0.0);
        assert_eq!(0.0f64.silu(), 0.0);
        assert!((1.0f64.gelu() - 0.8413447460685429).abs() < 1e-15);
        assert!((1.0f32.gelu_tanh() - 0.841192).abs() < 1e-5);
        assert_eq!(4.0f32.rsqrt(), 0.5);
    }
}
