//! Unary math and activations (issue 19): `erf`, `rsqrt`, `sin`, `cos`, `floor`,
//! `ceil`, `round`, `sign`, `square`, `isnan`, `isinf`, `nn.gelu`, `nn.gelu_tanh`,
//! `nn.silu`, `nn.leakyrelu`, `clip`. Plain loops, one element at a time; the float
//! formulas are written out in the order TVM's legalization evaluates them, in the
//! dtype (float16: the whole formula in float32, rounded once).

use super::elem::{convert_scalar, map_data, map_data2, Elem, Real, Storage};
use super::{tensor_value, Cx};
use crate::eval::value::{EvalResult, PrimScalar, Value};
use half::f16;
use spec_model::grammar::{DataType, NDArray, Scalar, TensorData};

/// The functions of this family on one float type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MathFn {
    Erf,
    Rsqrt,
    Sin,
    Cos,
    Floor,
    Ceil,
    Round,
    Sign,
    Square,
    Gelu,
    GeluTanh,
    Silu,
}

/// One float type's functions (float16: through float32, rounded once).
trait Math: Real {
    fn math(self, f: MathFn) -> Self;
    fn is_nan_(self) -> bool;
    fn is_inf_(self) -> bool;
    /// `x` where `x > 0`, else `alpha * x`, `alpha` rounded to this type first.
    fn leaky(self, alpha: f64) -> Self;
}

macro_rules! native {
    ($t:ident, $erf:path) => {
        impl Math for $t {
            fn math(self, f: MathFn) -> Self {
                let x = self;
                match f {
                    MathFn::Erf => $erf(x),
                    MathFn::Rsqrt => 1.0 / x.sqrt(),
                    MathFn::Sin => x.sin(),
                    MathFn::Cos => x.cos(),
                    MathFn::Floor => x.floor(),
                    MathFn::Ceil => x.ceil(),
                    MathFn::Round => x.round_ties_even(),
                    // NumPy: NaN stays NaN, both zeros give +0.
                    MathFn::Sign if x.is_nan() => x,
                    MathFn::Sign => {
                        if x > 0.0 {
                            1.0
                        } else if x < 0.0 {
                            -1.0
                        } else {
                            0.0
                        }
                    }
                    MathFn::Square => x * x,
                    // TVM: x * (0.5 + erf(x * 0.5**0.5) * 0.5).
                    MathFn::Gelu => x * (0.5 + $erf(x * (0.5f64.sqrt() as $t)) * 0.5),
                    // TVM: 0.5 * x * (1 + tanh(sqrt(2/pi) * x * (1 + 0.044715 * x * x))).
                    MathFn::GeluTanh => {
                        let k = (2.0f64 / std::f64::consts::PI).sqrt() as $t;
                        let inner = k * x * (1.0 + (0.044715f64 as $t) * x * x);
                        0.5 * x * (1.0 + inner.tanh())
                    }
                    MathFn::Silu => x * (1.0 / (1.0 + (-x).exp())),
                }
            }
            fn is_nan_(self) -> bool {
                self.is_nan()
            }
            fn is_inf_(self) -> bool {
                self.is_infinite()
            }
            fn leaky(self, alpha: f64) -> Self {
                if self > 0.0 {
                    self
                } else {
                    (alpha as $t) * self
                }
            }
        }
    };
}

native!(f32, libm::erff);
native!(f64, libm::erf);

impl Math for f16 {
    fn math(self, f: MathFn) -> Self {
        f16::from_f32(self.to_f32().math(f))
    }
    fn is_nan_(self) -> bool {
        self.is_nan()
    }
    fn is_inf_(self) -> bool {
        self.is_infinite()
    }
    fn leaky(self, alpha: f64) -> Self {
        if self.to_f32() > 0.0 {
            self
        } else {
            f16::from_f32(spec_model::grammar::f16_nearest(alpha).to_f32() * self.to_f32())
        }
    }
}

fn floats<T: Math>(v: &[T], f: MathFn) -> Vec<T> {
    v.iter().map(|&x| x.math(f)).collect()
}

fn needs_float(cx: &Cx, a: &NDArray) -> crate::eval::value::RuntimeError {
    cx.error(format!("needs a floating-point tensor, not {}", a.dtype))
}

/// OP-erf, OP-rsqrt (`1 / sqrt(x)`), OP-sin, OP-cos, OP-nn.gelu, OP-nn.gelu_tanh,
/// OP-nn.silu (`x * (1 / (1 + exp(-x)))`) of a float tensor, and OP-floor, OP-ceil,
/// OP-round (ties to even), OP-sign (NaN stays NaN, ±0 gives +0), OP-square of a
/// tensor of any dtype (integers: floor, ceil and round are the identity, sign is
/// -1/0/1, square wraps; `bool` is `uint1`). Same shape and dtype.
/// Errors: not one tensor; a float-only function of a non-float tensor.
pub(crate) fn unary(cx: &Cx, args: &[Value], f: MathFn) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    cx.numel(&a.shape)?;
    let data = match &a.data {
        TensorData::F16(v) => TensorData::F16(floats(v, f)),
        TensorData::F32(v) => TensorData::F32(floats(v, f)),
        TensorData::F64(v) => TensorData::F64(floats(v, f)),
        d => match f {
            MathFn::Floor | MathFn::Ceil | MathFn::Round => d.clone(),
            MathFn::Square => map_data!(d, v => v.iter().map(|x| x.times(*x)).collect()),
            MathFn::Sign => int_sign(d),
            _ => return Err(needs_float(cx, &a)),
        },
    };
    Ok(tensor_value(a.dtype, a.shape.clone(), data))
}

/// The sign of integers (and `bool`, which is its own sign).
fn int_sign(d: &TensorData) -> TensorData {
    fn s<T: PartialOrd + Copy>(v: &[T], zero: T, one: T, minus_one: T) -> Vec<T> {
        v.iter()
            .map(|&x| {
                if x > zero {
                    one
                } else if x < zero {
                    minus_one
                } else {
                    zero
                }
            })
            .collect()
    }
    match d {
        TensorData::I8(v) => TensorData::I8(s(v, 0, 1, -1)),
        TensorData::I16(v) => TensorData::I16(s(v, 0, 1, -1)),
        TensorData::I32(v) => TensorData::I32(s(v, 0, 1, -1)),
        TensorData::I64(v) => TensorData::I64(s(v, 0, 1, -1)),
        TensorData::U8(v) => TensorData::U8(s(v, 0, 1, 0)),
        TensorData::U16(v) => TensorData::U16(s(v, 0, 1, 0)),
        TensorData::U32(v) => TensorData::U32(s(v, 0, 1, 0)),
        TensorData::U64(v) => TensorData::U64(s(v, 0, 1, 0)),
        other => other.clone(),
    }
}

/// OP-isnan, OP-isinf (`inf`): elementwise test of a tensor of any dtype; a `bool`
/// tensor of its shape (integers and `bool` are never NaN or infinite).
/// Errors: not one tensor.
pub(crate) fn check(cx: &Cx, args: &[Value], inf: bool) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    cx.numel(&a.shape)?;
    fn test<T: Math>(v: &[T], inf: bool) -> Vec<bool> {
        v.iter().map(|&x| if inf { x.is_inf_() } else { x.is_nan_() }).collect()
    }
    let out = match &a.data {
        TensorData::F16(v) => test(v, inf),
        TensorData::F32(v) => test(v, inf),
        TensorData::F64(v) => test(v, inf),
        d => vec![false; d.len()],
    };
    Ok(tensor_value(DataType::BOOL, a.shape.clone(), TensorData::Bool(out)))
}

/// OP-nn.leakyrelu: `x` where `x > 0`, else `alpha * x` (`alpha`, default 0.01, rounded
/// to the dtype first, as TVM's constant is); NaN stays NaN. Errors: not one tensor;
/// not a float tensor; `alpha` not a number.
pub(crate) fn leakyrelu(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 1)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let alpha = cx.attr_float("alpha", 0.01)?;
    cx.numel(&a.shape)?;
    fn go<T: Math>(v: &[T], alpha: f64) -> Vec<T> {
        v.iter().map(|&x| x.leaky(alpha)).collect()
    }
    let data = match &a.data {
        TensorData::F16(v) => TensorData::F16(go(v, alpha)),
        TensorData::F32(v) => TensorData::F32(go(v, alpha)),
        TensorData::F64(v) => TensorData::F64(go(v, alpha)),
        _ => return Err(needs_float(cx, &a)),
    };
    Ok(tensor_value(a.dtype, a.shape.clone(), data))
}

/// A bound of OP-clip: a PrimValue's value.
fn bound(cx: &Cx, v: &Value, what: &str) -> EvalResult<Scalar> {
    match v {
        Value::Prim(PrimScalar::Int(i, _)) => Ok(Scalar::Int(*i as i128)),
        Value::Prim(PrimScalar::Float(f, _)) => Ok(Scalar::Float(*f)),
        Value::Prim(PrimScalar::Bool(b)) => Ok(Scalar::Bool(*b)),
        v => Err(cx.error(format!("`{what}` must be a PrimValue, got {}", v.kind()))),
    }
}

/// OP-clip: `clip(x, min, max)` is `maximum(minimum(x, max), min)` elementwise (TVM's
/// order: when `min > max` the result is `min`), NaN-propagating as NumPy's
/// `minimum`/`maximum`; the PrimValue bounds are first converted to `x`'s dtype as
/// OP-astype converts. Errors: not three arguments; `x` not a tensor; a bound not a
/// PrimValue; a bound that does not convert (NaN, infinite or out of range for an
/// integer dtype).
pub(crate) fn clip(cx: &Cx, args: &[Value]) -> EvalResult<Value> {
    cx.arity(args, 3)?;
    let a = cx.tensor(&args[0], "the operand")?;
    let (lo, hi) = (bound(cx, &args[1], "min")?, bound(cx, &args[2], "max")?);
    let one = |s: Scalar| -> EvalResult<TensorData> {
        let mut d = cx.storage(a.dtype)?;
        let s = convert_scalar(s, a.dtype).map_err(|m| cx.error(m))?;
        d.push(s).map_err(|m| cx.error(m))?;
        Ok(d)
    };
    let (lo, hi) = (one(lo)?, one(hi)?);
    cx.numel(&a.shape)?;
    fn go<T: Elem + Storage>(x: &[T], lo: &[T], hi: &TensorData) -> Vec<T> {
        let (lo, hi) = (lo[0], T::slice(hi).map_or(lo[0], |h| h[0]));
        x.iter().map(|&v| v.propagating_min(hi).propagating_max(lo)).collect()
    }
    let data = map_data2!(wrap, &a.data, &lo, x, l => go(x, l, &hi), return Err(cx.error("malformed bound")));
    Ok(tensor_value(a.dtype, a.shape.clone(), data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::value::ErrorKind;
    use spec_model::grammar::Attrs;
    use spec_model::ops::Op;
    use spec_model::Span;

    fn f32s(v: &[f32]) -> Value {
        let s: Vec<Scalar> = v.iter().map(|x| Scalar::Float(*x as f64)).collect();
        Value::tensor(NDArray::from_scalars(DataType::FLOAT32, vec![v.len() as u64], &s).unwrap())
    }

    fn out(v: EvalResult<Value>) -> TensorData {
        let Value::Tensor(t) = v.unwrap() else { panic!("a tensor") };
        let d = t.borrow().data.clone();
        d
    }

    fn cx(op: Op, attrs: &Attrs) -> Cx<'_> {
        Cx::new(op, attrs, Span::SYNTHETIC)
    }

    #[test]
    fn rounding_and_sign_corner_cases() {
        let a = Attrs::default();
        let x = f32s(&[0.5, 1.5, 2.5, -0.5, -2.5, f32::NAN, -0.0]);
        let r = out(unary(&cx(Op::Round, &a), std::slice::from_ref(&x), MathFn::Round));
        let TensorData::F32(r) = r else { panic!() };
        assert_eq!(&r[..5], &[0.0, 2.0, 2.0, -0.0, -2.0]);
        assert!(r[5].is_nan());
        let TensorData::F32(s) = out(unary(&cx(Op::Sign, &a), &[x], MathFn::Sign)) else { panic!() };
        assert_eq!(&s[..5], &[1.0, 1.0, 1.0, -1.0, -1.0]);
        assert!(s[5].is_nan());
        assert!(s[6] == 0.0 && s[6].is_sign_positive());
        let i = Value::tensor(NDArray {
            dtype: DataType::int(8),
            shape: vec![3],
            data: TensorData::I8(vec![-128, 0, 100]),
        });
        assert_eq!(
            out(unary(&cx(Op::Sign, &a), std::slice::from_ref(&i), MathFn::Sign)),
            TensorData::I8(vec![-1, 0, 1])
        );
        assert_eq!(
            out(unary(&cx(Op::Square, &a), std::slice::from_ref(&i), MathFn::Square)),
            TensorData::I8(vec![0, 0, 16])
        );
        let Err(e) = unary(&cx(Op::Erf, &a), &[i], MathFn::Erf) else { panic!("erf of int8") };
        assert_eq!((e.kind, e.rule.as_str()), (ErrorKind::OpError, "OP-erf"));
    }

    #[test]
    fn clip_converts_bounds_and_min_wins() {
        let a = Attrs::default();
        let p = |f: f64| Value::Prim(PrimScalar::Float(f, DataType::float(64)));
        let x = f32s(&[-3.0, 0.25, 9.0, f32::NAN]);
        let TensorData::F32(r) = out(clip(&cx(Op::Clip, &a), &[x.clone(), p(0.0), p(6.0)])) else { panic!() };
        assert_eq!(&r[..3], &[0.0, 0.25, 6.0]);
        assert!(r[3].is_nan());
        let TensorData::F32(r) = out(clip(&cx(Op::Clip, &a), &[x.clone(), p(2.0), p(1.0)])) else { panic!() };
        assert_eq!(&r[..3], &[2.0, 2.0, 2.0]);
        let i = Value::tensor(NDArray { dtype: DataType::INT32, shape: vec![2], data: TensorData::I32(vec![-5, 5]) });
        let Err(e) = clip(&cx(Op::Clip, &a), &[i.clone(), p(f64::NAN), p(1.0)]) else { panic!("a NaN bound") };
        assert_eq!((e.kind, e.rule.as_str()), (ErrorKind::OpError, "OP-clip"));
        assert_eq!(out(clip(&cx(Op::Clip, &a), &[i, p(-1.5), p(2.9)])), TensorData::I32(vec![-1, 2]));
        assert!(clip(&cx(Op::Clip, &a), &[x, Value::Null, p(1.0)]).is_err());
    }

    #[test]
    fn leakyrelu_and_checks() {
        let mut a = Attrs::default();
        a.insert("alpha", spec_model::grammar::AttrValue::Float(spec_model::grammar::FloatLit(0.5)));
        let x = f32s(&[-2.0, 3.0, f32::NAN, f32::NEG_INFINITY]);
        let TensorData::F32(r) = out(leakyrelu(&cx(Op::LeakyRelu, &a), std::slice::from_ref(&x))) else { panic!() };
        assert_eq!((r[0], r[1], r[3]), (-1.0, 3.0, f32::NEG_INFINITY));
        assert!(r[2].is_nan());
        let none = Attrs::default();
        let b = out(check(&cx(Op::IsInf, &none), std::slice::from_ref(&x), true));
        assert_eq!(b, TensorData::Bool(vec![false, false, false, true]));
        let b = out(check(&cx(Op::IsNan, &none), &[x], false));
        assert_eq!(b, TensorData::Bool(vec![false, false, true, false]));
    }
}
