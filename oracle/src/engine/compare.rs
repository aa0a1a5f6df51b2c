//! Do two engines agree on a call? Integers and bools bitwise; floats within a tolerance
//! that allows a reassociated reduction (an engine may sum in another order); the same
//! error kind; resource exhaustion on either side is "poisoned" (neither agreement nor
//! disagreement: the limits, not the program, decided); a `Crash` is a bug.
//!
//! The float tolerance (proofs-notes/fuzzing.md, F-8): `|a - b| <= k * eps * n * (1 + m)`
//! where `eps` is the dtype's machine epsilon, `n` the longest reduction the program can
//! perform (bounded by the largest element count among its inputs and results), `m` the
//! largest magnitude among the two values' elements (a reordered sum errs in proportion
//! to its terms, not its result), and `k = 4`. NaN equals NaN; `-0.0` equals `0.0`;
//! infinities equal themselves.

use crate::eval::value::{ErrorKind, PrimScalar, Value};
use spec_model::grammar::{Scalar, TypeCode};

/// What comparing two outcomes found.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    Agree,
    /// One side ran out of a resource (fuel, depth, memory): not comparable.
    Poisoned(ErrorKind),
    Differ(String),
}

/// The scale of float errors a reordered reduction may introduce.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// The longest reduction (at least 1).
    pub reduction: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance { reduction: 1.0 }
    }
}

impl Tolerance {
    /// The tolerance of a call whose inputs and results hold at most `elements` elements per tensor.
    pub fn for_elements(elements: usize) -> Tolerance {
        Tolerance { reduction: (elements as f64).max(1.0) }
    }

    fn bound(self, eps: f64, magnitude: f64) -> f64 {
        4.0 * eps * self.reduction * (1.0 + magnitude)
    }
}

fn epsilon(bits: u32) -> f64 {
    match bits {
        16 => 9.765625e-4,
        32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    }
}

fn floats_close(a: f64, b: f64, bound: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a.is_finite() && b.is_finite() && (a - b).abs() <= bound)
}

/// Are two values the same, floats within `tol`? Closures compare equal to closures
/// (functions cannot be compared; the engine's closures arrive as opaque objects named
/// `<closure ...>`).
pub fn values_agree(a: &Value, b: &Value, tol: Tolerance) -> bool {
    let is_closure = |v: &Value| match v {
        Value::Closure(_) => true,
        Value::Object(n) => n.starts_with("<closure"),
        _ => false,
    };
    match (a, b) {
        _ if is_closure(a) && is_closure(b) => true,
        (Value::Tensor(x), Value::Tensor(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            if x.dtype != y.dtype || x.shape != y.shape || x.data.len() != y.data.len() {
                return false;
            }
            if x.dtype.code != TypeCode::Float {
                return (0..x.data.len()).all(|i| x.data.get(i) == y.data.get(i));
            }
            let f = |s: Scalar| if let Scalar::Float(v) = s { v } else { f64::NAN };
            let magnitude = (0..x.data.len())
                .flat_map(|i| [f(x.data.get(i)).abs(), f(y.data.get(i)).abs()])
                .filter(|m| m.is_finite())
                .fold(0.0, f64::max);
            let bound = tol.bound(epsilon(x.dtype.bits), magnitude);
            (0..x.data.len()).all(|i| floats_close(f(x.data.get(i)), f(y.data.get(i)), bound))
        }
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| values_agree(p, q, tol))
        }
        (Value::Prim(PrimScalar::Float(p, d)), Value::Prim(PrimScalar::Float(q, e))) => {
            d == e && floats_close(*p, *q, tol.bound(epsilon(d.bits), p.abs().max(q.abs())))
        }
        _ => crate::eval::literal::values_equal(a, b, 0.0),
    }
}

/// Compares two outcomes (the reference's first): a value or an error kind each.
pub fn compare(a: &Result<Value, ErrorKind>, b: &Result<Value, ErrorKind>, tol: Tolerance) -> Verdict {
    let kinds: Vec<ErrorKind> = [a, b].into_iter().filter_map(|r| r.as_ref().err().copied()).collect();
    if kinds.contains(&ErrorKind::Crash) {
        return Verdict::Differ("a run raised Crash (a bug)".into());
    }
    if let Some(k) = kinds.iter().find(|k| k.is_resource()) {
        return Verdict::Poisoned(*k);
    }
    match (a, b) {
        (Ok(x), Ok(y)) if values_agree(x, y, tol) => Verdict::Agree,
        (Err(x), Err(y)) if x == y => Verdict::Agree,
        _ => Verdict::Differ("the outcomes differ".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec_model::grammar::{DataType, NDArray};

    fn f32s(v: &[f64]) -> Value {
        let s: Vec<Scalar> = v.iter().map(|x| Scalar::Float(*x)).collect();
        Value::tensor(NDArray::from_scalars(DataType::FLOAT32, vec![v.len() as u64], &s).unwrap())
    }

    #[test]
    fn floats_allow_reordering_but_not_more() {
        let t = Tolerance::for_elements(1000);
        assert!(values_agree(&f32s(&[1.0, f64::NAN, -0.0]), &f32s(&[1.00001, f64::NAN, 0.0]), t));
        assert!(!values_agree(&f32s(&[1.0]), &f32s(&[1.01]), t));
        assert!(!values_agree(&f32s(&[f64::INFINITY]), &f32s(&[f64::NEG_INFINITY]), t));
        let e = Err;
        assert_eq!(
            compare(&e(ErrorKind::FuelExhausted), &Ok(Value::Null), t),
            Verdict::Poisoned(ErrorKind::FuelExhausted)
        );
        assert!(matches!(compare(&e(ErrorKind::Crash), &e(ErrorKind::Crash), t), Verdict::Differ(_)));
        assert_eq!(compare(&e(ErrorKind::OpError), &e(ErrorKind::OpError), t), Verdict::Agree);
    }
}
