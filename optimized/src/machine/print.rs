//! Values as `.rx` literals (what `print` prints and `oracle eval --engine optimized`
//! shows), in the text format's own spelling: `R.const(...)`, `R.shape([...])`, tuples,
//! `R.prim_value(...)`, `R.str(...)`, `R.dtype(...)`; values no literal denotes print
//! as `<...>`.

use crate::compile::Executable;
use crate::value::{Prim, Value};
use spec_model::grammar::{DataType, Expr, ExprKind, FloatLit, PrimExpr, PrimExprKind};
use spec_model::text::print_expr;
use spec_model::Span;
use std::rc::Rc;

/// `v` as an `.rx` literal.
pub fn print_value(exe: &Executable, v: &Value) -> String {
    let expr = |kind: ExprKind| print_expr(&Expr::new(kind, Span::SYNTHETIC));
    match v {
        Value::Tensor(t) => match t.to_ndarray() {
            Some(a) => expr(ExprKind::Constant(Rc::new(a))),
            None => "<tensor being written>".to_string(),
        },
        Value::Tuple(vs) => {
            let fields: Vec<String> = vs.iter().map(|f| print_value(exe, f)).collect();
            match fields.len() {
                1 => format!("({},)", fields[0]),
                _ => format!("({})", fields.join(", ")),
            }
        }
        Value::Shape(s) => format!("R.shape([{}])", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
        Value::Prim(p) => {
            let kind = match *p {
                Prim::Int(value, dtype) => PrimExprKind::IntImm { value, dtype },
                Prim::Bool(b) => PrimExprKind::IntImm { value: i64::from(b), dtype: DataType::BOOL },
                Prim::Float(f, dtype) => PrimExprKind::FloatImm { value: FloatLit(f), dtype },
            };
            expr(ExprKind::PrimValue(PrimExpr::new(kind, Span::SYNTHETIC)))
        }
        Value::Str(s) => expr(ExprKind::StringImm(s.to_string())),
        Value::DataType(d) => expr(ExprKind::DataTypeImm(*d)),
        Value::PackedFunc(n) => format!("R.ExternFunc({n:?})"),
        Value::Closure(c) => format!("<closure {}>", exe.funcs.get(c.func).map_or("?", |f| f.name.as_str())),
        Value::PrimFunc(i) => format!("<prim_func {}>", exe.tir_names.get(*i).map_or("?", |n| n.as_str())),
        Value::Null => "<null>".to_string(),
    }
}
