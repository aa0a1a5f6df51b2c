//! Values as `.rx` literals (so `oracle eval`'s output can be pasted back as an
//! argument), and the comparison of outcomes used by the corpus runner and the
//! differential tester: bitwise for integers and bools, floats within a tolerance
//! (NaN equal to NaN).

use super::value::{PrimScalar, Value};
use spec_model::grammar::{DataType, Expr, ExprKind, FloatLit, PrimExpr, PrimExprKind, Scalar};
use spec_model::text::print_expr;
use spec_model::Span;
use std::rc::Rc;

/// `v` in the `.rx` syntax: `R.const(...)`, `R.shape([...])`, tuples, `R.prim_value(...)`,
/// `R.str(...)`, `R.dtype(...)`; closures and opaque objects print as `<...>` (no
/// literal denotes them).
pub fn print_value(v: &Value) -> String {
    match v {
        Value::Tensor(t) => print_expr(&Expr::new(ExprKind::Constant(Rc::new(t.borrow().clone())), Span::SYNTHETIC)),
        Value::Tuple(vs) => {
            let fields: Vec<String> = vs.iter().map(print_value).collect();
            match fields.len() {
                1 => format!("({},)", fields[0]),
                _ => format!("({})", fields.join(", ")),
            }
        }
        Value::Shape(s) => format!("R.shape([{}])", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
        Value::Prim(p) => {
            let kind = match *p {
                PrimScalar::Int(value, dtype) => PrimExprKind::IntImm { value, dtype },
                PrimScalar::Bool(b) => PrimExprKind::IntImm { value: i64::from(b), dtype: DataType::BOOL },
                PrimScalar::Float(f, dtype) => PrimExprKind::FloatImm { value: FloatLit(f), dtype },
            };
            let e = PrimExpr::new(kind, Span::SYNTHETIC);
            print_expr(&Expr::new(ExprKind::PrimValue(e), Span::SYNTHETIC))
        }
        Value::Str(s) => print_expr(&Expr::new(ExprKind::StringImm(s.to_string()), Span::SYNTHETIC)),
        Value::DataType(d) => print_expr(&Expr::new(ExprKind::DataTypeImm(*d), Span::SYNTHETIC)),
        Value::PackedFunc(n) => format!("R.ExternFunc({n:?})"),
        Value::Closure(c) => format!("<closure {}>", c.name),
        Value::PrimFunc(n, _) => format!("<prim_func {n}>"),
        Value::Object(n) => format!("<object {n}>"),
        Value::Null => "<null>".to_string(),
    }
}

fn scalars_equal(a: Scalar, b: Scalar, tol: f64) -> bool {
    match (a, b) {
        (Scalar::Float(x), Scalar::Float(y)) => (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= tol,
        _ => a == b,
    }
}

/// Are two outcomes the same value? Tensors: same dtype, shape and elements (floats
/// within `tol`, NaN equal to NaN); closures and objects by identity.
pub fn values_equal(a: &Value, b: &Value, tol: f64) -> bool {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            x.dtype == y.dtype
                && x.shape == y.shape
                && (0..x.data.len()).all(|i| scalars_equal(x.data.get(i), y.data.get(i), tol))
        }
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| values_equal(p, q, tol))
        }
        (Value::Shape(x), Value::Shape(y)) => x == y,
        (Value::Prim(x), Value::Prim(y)) => match (x, y) {
            (PrimScalar::Float(p, d), PrimScalar::Float(q, e)) => {
                d == e && scalars_equal(Scalar::Float(*p), Scalar::Float(*q), tol)
            }
            _ => x == y,
        },
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::DataType(x), Value::DataType(y)) => x == y,
        (Value::PackedFunc(x), Value::PackedFunc(y)) => x == y,
        (Value::Closure(x), Value::Closure(y)) => Rc::ptr_eq(x, y),
        (Value::PrimFunc(x, _), Value::PrimFunc(y, _)) => x == y,
        (Value::Object(x), Value::Object(y)) => x == y,
        (Value::Null, Value::Null) => true,
        _ => false,
    }
}
