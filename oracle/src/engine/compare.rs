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

/// Do two runs' printed lines agree? The same lines, except that numbers written with
/// a fraction or an exponent (floats) may differ within `tol` (an engine may compute a
/// printed tensor in another order, F-8), the line's float dtype (`float16`, else
/// `float64` when named, else `float32`) giving the epsilon.
pub fn printed_agree(a: &[String], b: &[String], tol: Tolerance) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || line_agrees(x, y, tol))
}

fn line_agrees(a: &str, b: &str, tol: Tolerance) -> bool {
    let (ta, tb) = (tokens(a), tokens(b));
    if ta.len() != tb.len() {
        return false;
    }
    let bits = if a.contains("float16") {
        16
    } else if a.contains("float64") && !a.contains("float32") {
        64
    } else {
        32
    };
    let floats = |ts: &[Token]| -> Vec<f64> {
        ts.iter().filter_map(|t| if let Token::Float(f) = t { Some(*f) } else { None }).collect()
    };
    let magnitude =
        floats(&ta).into_iter().chain(floats(&tb)).map(f64::abs).filter(|m| m.is_finite()).fold(0.0, f64::max);
    let bound = tol.bound(epsilon(bits), magnitude);
    ta.iter().zip(&tb).all(|(p, q)| match (p, q) {
        (Token::Float(x), Token::Float(y)) => floats_close(*x, *y, bound),
        _ => p == q,
    })
}

#[derive(Debug, PartialEq)]
enum Token<'a> {
    Float(f64),
    Text(&'a str),
}

/// A line cut into float literals and the text between them.
fn tokens(s: &str) -> Vec<Token<'_>> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut text) = (0, 0);
    while i < bytes.len() {
        let starts =
            bytes[i].is_ascii_digit() || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        let after_word = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if starts && !after_word {
            let mut j = i + 1;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || matches!(bytes[j], b'.' | b'+' | b'-')) {
                if matches!(bytes[j], b'+' | b'-') && !matches!(bytes[j - 1], b'e' | b'E') {
                    break;
                }
                j += 1;
            }
            let lit = &s[i..j];
            if lit.contains(['.', 'e', 'E']) {
                if let Ok(f) = lit.parse::<f64>() {
                    out.push(Token::Text(&s[text..i]));
                    out.push(Token::Float(f));
                    text = j;
                }
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out.push(Token::Text(&s[text..]));
    out
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

    #[test]
    fn printed_floats_agree_within_the_tolerance_and_nothing_else_may_differ() {
        let tol = Tolerance::for_elements(9);
        let line = |s: &str| vec![s.to_string()];
        let a = line("R.const([[0.0, 0.4762869, -2.8577225]], \"float32\") 3");
        assert!(printed_agree(&a, &line("R.const([[0.0, 0.476287, -2.8577223]], \"float32\") 3"), tol));
        assert!(!printed_agree(&a, &line("R.const([[0.0, 0.4762869, -2.8577225]], \"float32\") 4"), tol));
        assert!(!printed_agree(&a, &line("R.const([[0.0, 0.48, -2.8577225]], \"float32\") 3"), tol));
        assert!(!printed_agree(&a, &line("R.const([[0.0, 0.4762869]], \"float32\") 3"), tol));
        assert!(printed_agree(&line("x1.5e-3 v2"), &line("x1.5e-3 v2"), tol));
        assert!(!printed_agree(&line("int32 1"), &line("int64 1"), tol));
    }
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
