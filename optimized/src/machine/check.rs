//! Running the compiled checks: `MatchCast` (SI-MC-1..5) and the first pass of a
//! function's entry (E-3).

use super::eval_dim;
use crate::compile::plan::{Check, Dim, Lone, TensorShape};
use crate::error::{Error, ErrorKind, Result};
use crate::value::{Prim, Value};
use spec_model::grammar::{DataType, StructInfo};
use spec_model::text::print_struct_info;
use spec_model::Span;

fn mismatch(rule: &'static str, sinfo: &StructInfo, what: String, span: Span) -> Error {
    Error::new(ErrorKind::MatchCastMismatch, rule, format!("{what}: does not match {}", print_struct_info(sinfo)), span)
}

/// Matches dimension `d` against `actual`: a lone unbound shape variable binds
/// (SI-MC-2.2.1, SI-MC-3.1); anything else is evaluated and compared (`rule`).
fn match_dim(d: &Dim, actual: i64, shapes: &mut [Option<i64>], rule: &'static str, span: Span) -> Result<()> {
    let code = match d {
        Dim::Lone { slot, code } => {
            let s = &mut shapes[*slot as usize];
            if s.is_none() {
                *s = Some(actual);
                return Ok(());
            }
            code
        }
        Dim::Expr(code) => code,
    };
    let want = eval_dim(code, shapes, rule, span)?;
    if want == actual {
        return Ok(());
    }
    let kind = if code.constant { ErrorKind::MatchCastMismatch } else { ErrorKind::ShapeVarMismatch };
    let message = format!("dimension `{}` is {want}, but the value has {actual}", code.text);
    Err(Error::new(kind, rule, message, span))
}

/// `MatchCast(value, struct_info)`: checks `v`, binding shape variables in `shapes`
/// left to right; `slots` give the values of Relax variables used as shapes.
pub fn match_cast(c: &Check, v: &Value, slots: &[Option<Value>], shapes: &mut [Option<i64>], span: Span) -> Result<()> {
    match c {
        // SI-MC-1: every value is an object.
        Check::Object => Ok(()),
        Check::Tensor { ndim, dtype, shape, sinfo } => {
            let Value::Tensor(t) = v else {
                return Err(mismatch("SI-MC-2", sinfo, format!("{} is not a tensor", v.kind()), span));
            };
            if *ndim >= 0 && t.rank() as i64 != *ndim {
                return Err(mismatch("SI-MC-2", sinfo, format!("a tensor of rank {}", t.rank()), span));
            }
            if !dtype.is_void() && *dtype != t.dtype().data_type() {
                return Err(mismatch("SI-MC-2", sinfo, format!("a tensor of dtype {}", t.dtype()), span));
            }
            let actual: Vec<i64> = t.shape().iter().map(|d| *d as i64).collect();
            match shape {
                TensorShape::Any => Ok(()),
                // SI-MC-2.1: the shape held by a variable.
                TensorShape::Var { slot, name } => match slot.and_then(|s| slots[s as usize].as_ref()) {
                    Some(Value::Shape(s)) if **s == *actual => Ok(()),
                    Some(Value::Shape(s)) => Err(Error::new(
                        ErrorKind::MatchCastMismatch,
                        "SI-MC-2.1",
                        format!("the tensor has shape {actual:?} but `{name}` holds {s:?}"),
                        span,
                    )),
                    _ => Err(mismatch("SI-MC-2.1", sinfo, format!("`{name}` does not hold a shape"), span)),
                },
                // SI-MC-2.2: dimension by dimension.
                TensorShape::Dims(dims) => {
                    if dims.len() != actual.len() {
                        return Err(mismatch("SI-MC-2.2", sinfo, format!("a tensor of rank {}", actual.len()), span));
                    }
                    for (d, a) in dims.iter().zip(&actual) {
                        match_dim(d, *a, shapes, "SI-MC-2.2.2", span)?;
                    }
                    Ok(())
                }
                TensorShape::Malformed => {
                    Err(mismatch("SI-MC-2", sinfo, "a shape that is neither a variable nor a ShapeExpr".into(), span))
                }
            }
        }
        Check::Shape { ndim, values, sinfo } => {
            let Value::Shape(s) = v else {
                return Err(mismatch("SI-MC-3", sinfo, format!("{} is not a shape", v.kind()), span));
            };
            if *ndim >= 0 && s.len() as i64 != *ndim {
                return Err(mismatch("SI-MC-3", sinfo, format!("a shape of {} dimensions", s.len()), span));
            }
            if let Some(vals) = values {
                if vals.len() != s.len() {
                    return Err(mismatch("SI-MC-3", sinfo, format!("a shape of {} dimensions", s.len()), span));
                }
                for (d, a) in vals.iter().zip(s.iter()) {
                    match_dim(d, *a, shapes, "SI-MC-3.2", span)?;
                }
            }
            Ok(())
        }
        // PrimStructInfo (the later draft) is read as SI-MC-3 for one scalar (E-6).
        Check::Prim { dtype, value, sinfo } => {
            let Value::Prim(p) = v else {
                return Err(mismatch("SI-MC-3", sinfo, format!("{} is not a prim value", v.kind()), span));
            };
            let actual = match *p {
                Prim::Int(_, d) | Prim::Float(_, d) => d,
                Prim::Bool(_) => DataType::BOOL,
            };
            if !dtype.is_void() && *dtype != actual {
                return Err(mismatch("SI-MC-3", sinfo, format!("a prim value of dtype {actual}"), span));
            }
            // `R.Prim(value=e)`: the value is one dimension of a shape.
            match (value, *p) {
                (None, _) => Ok(()),
                (Some(d), Prim::Int(i, _)) => match_dim(d, i, shapes, "SI-MC-3.2", span),
                (Some(d), Prim::Bool(b)) => match_dim(d, i64::from(b), shapes, "SI-MC-3.2", span),
                (Some(_), Prim::Float(f, _)) => Err(mismatch("SI-MC-3.2", sinfo, format!("the value {f}"), span)),
            }
        }
        Check::Tuple { fields, sinfo } => {
            let Value::Tuple(vs) = v else {
                return Err(mismatch("SI-MC-4", sinfo, format!("{} is not a tuple", v.kind()), span));
            };
            if vs.len() != fields.len() {
                return Err(mismatch("SI-MC-4", sinfo, format!("a tuple of {} fields", vs.len()), span));
            }
            for (f, x) in fields.iter().zip(vs.iter()) {
                match_cast(f, x, slots, shapes, span)?;
            }
            Ok(())
        }
        Check::Func { closure_ok, packed_ok, sinfo } => {
            let ok = match v {
                Value::Closure(_) => *closure_ok,
                Value::PackedFunc(_) => *packed_ok,
                _ => false,
            };
            if ok {
                Ok(())
            } else {
                Err(mismatch("SI-MC-5", sinfo, format!("{} where a function is expected", v.kind()), span))
            }
        }
    }
}

/// Binds the lone shape variables of an annotation from the argument, checking nothing
/// (the first pass of a function's entry, E-3): a variable already bound keeps its value.
pub fn bind_lone(lone: &Lone, v: &Value, shapes: &mut [Option<i64>]) {
    let bind = |slots: &[Option<u32>], actual: &[i64], shapes: &mut [Option<i64>]| {
        if slots.len() == actual.len() {
            for (s, a) in slots.iter().zip(actual) {
                if let Some(s) = s {
                    let slot = &mut shapes[*s as usize];
                    if slot.is_none() {
                        *slot = Some(*a);
                    }
                }
            }
        }
    };
    match (lone, v) {
        (Lone::Tensor(slots), Value::Tensor(t)) => {
            let actual: Vec<i64> = t.shape().iter().map(|d| *d as i64).collect();
            bind(slots, &actual, shapes);
        }
        (Lone::Shape(slots), Value::Shape(s)) => bind(slots, s, shapes),
        (Lone::Prim(slot), Value::Prim(Prim::Int(i, _))) => bind(&[Some(*slot)], &[*i], shapes),
        (Lone::Tuple(fields), Value::Tuple(vs)) => {
            for (f, x) in fields.iter().zip(vs.iter()) {
                if let Some(f) = f {
                    bind_lone(f, x, shapes);
                }
            }
        }
        _ => {}
    }
}
