//! Evaluating `MatchCast` (SI-MC-1..5): check a value against a StructInfo at run
//! time, binding the shape variables that appear alone in a dimension. The function
//! boundary checks ("Checking Structural Information at the Start and End of a
//! Function") are `MatchCast`s too (see `interp.rs`).

use super::machine::Machine;
use super::value::{Env, ErrorKind, EvalResult, PrimScalar, RuntimeError, ShapeEnv, Value};
use spec_model::grammar::{Expr, ExprKind, PrimExpr, PrimExprKind, StructInfo, StructInfoKind};
use spec_model::prim_eval::{eval_prim, PrimEvalError, PrimValue};
use spec_model::text::{print_prim_expr, print_struct_info};
use spec_model::Span;

/// Evaluates a `PrimExpr` in the shape context (overflow and division by zero are
/// errors, DESIGN.md).
pub fn eval_shape_prim(e: &PrimExpr, shapes: &ShapeEnv, rule: &str, span: Span) -> EvalResult<PrimValue> {
    eval_prim(e, &|v| shapes.get(v).copied()).map_err(|err| {
        let (kind, what) = match err {
            PrimEvalError::IntegerOverflow => (ErrorKind::IntegerOverflow, "overflows its dtype".to_string()),
            PrimEvalError::DivisionByZero => (ErrorKind::DivisionByZero, "divides by zero".to_string()),
            PrimEvalError::Unbound(n) => {
                (ErrorKind::ShapeVarMismatch, format!("uses the unbound shape variable `{n}`"))
            }
            PrimEvalError::Unsupported(m) => (ErrorKind::OpError, m),
        };
        RuntimeError::new(kind, rule, format!("`{}` {what}", print_prim_expr(e)), span)
    })
}

/// An integer dimension value of `e`.
pub fn eval_dim(e: &PrimExpr, shapes: &ShapeEnv, rule: &str, span: Span) -> EvalResult<i64> {
    match eval_shape_prim(e, shapes, rule, span)? {
        PrimValue::Int(i) => Ok(i),
        PrimValue::Bool(b) => Ok(i64::from(b)),
        PrimValue::Float(_) => Err(RuntimeError::new(
            ErrorKind::OpError,
            rule,
            format!("`{}` is not an integer", print_prim_expr(e)),
            span,
        )),
    }
}

/// Matches dimension `e` against the concrete `actual`: a lone unbound shape variable
/// binds (`rules.0`), anything else is evaluated and compared (`rules.1`).
fn match_dim(
    mach: &mut Machine,
    e: &PrimExpr,
    actual: i64,
    shapes: &mut ShapeEnv,
    rules: (&str, &str),
    span: Span,
) -> EvalResult<()> {
    if let PrimExprKind::Var(v) = &*e.kind {
        if !shapes.contains_key(v) {
            mach.fire(rules.0);
            shapes.insert(v.clone(), actual);
            return Ok(());
        }
    }
    mach.fire(rules.1);
    let want = eval_dim(e, shapes, rules.1, span)?;
    if want == actual {
        return Ok(());
    }
    let kind = if e.vars().is_empty() { ErrorKind::MatchCastMismatch } else { ErrorKind::ShapeVarMismatch };
    Err(RuntimeError::new(
        kind,
        rules.1,
        format!("dimension `{}` is {want}, but the value has {actual}", print_prim_expr(e)),
        span,
    ))
}

fn mismatch(rule: &str, sinfo: &StructInfo, what: String, span: Span) -> RuntimeError {
    RuntimeError::new(
        ErrorKind::MatchCastMismatch,
        rule,
        format!("{what}: does not match {}", print_struct_info(sinfo)),
        span,
    )
}

/// `MatchCast(value, struct_info)` (SI-MC-1..5): checks `value` in the shape context
/// `shapes` and returns that context extended with the shape variables the match
/// binds; `env` gives the values of Relax variables used as shapes.
pub fn match_cast(
    mach: &mut Machine,
    value: &Value,
    sinfo: &StructInfo,
    env: &Env,
    shapes: &ShapeEnv,
    span: Span,
) -> EvalResult<ShapeEnv> {
    let mut extended = shapes.clone();
    match_into(mach, value, sinfo, env, &mut extended, span)?;
    Ok(extended)
}

/// [`match_cast`] binding into `shapes`, left to right (a later dimension may use a
/// variable an earlier one bound).
fn match_into(
    mach: &mut Machine,
    value: &Value,
    sinfo: &StructInfo,
    env: &Env,
    shapes: &mut ShapeEnv,
    span: Span,
) -> EvalResult<()> {
    match &*sinfo.kind {
        // SI-MC-1: every value is an object.
        StructInfoKind::Object => {
            mach.fire("SI-MC-1");
            Ok(())
        }
        StructInfoKind::Tensor { shape, dtype, ndim } => {
            mach.fire("SI-MC-2");
            let Value::Tensor(t) = value else {
                return Err(mismatch("SI-MC-2", sinfo, format!("{} is not a tensor", value.kind()), span));
            };
            let (actual_shape, actual_dtype) = {
                let t = t.borrow();
                (t.shape.iter().map(|d| *d as i64).collect::<Vec<i64>>(), t.dtype)
            };
            if *ndim >= 0 && actual_shape.len() as i64 != *ndim {
                return Err(mismatch("SI-MC-2", sinfo, format!("a tensor of rank {}", actual_shape.len()), span));
            }
            if !dtype.is_void() && *dtype != actual_dtype {
                return Err(mismatch("SI-MC-2", sinfo, format!("a tensor of dtype {actual_dtype}"), span));
            }
            match shape.as_ref().map(|s| &s.kind) {
                None => Ok(()),
                // SI-MC-2.1: the shape held by a variable.
                Some(ExprKind::Var(v)) => {
                    mach.fire("SI-MC-2.1");
                    match env.get(v) {
                        Some(Value::Shape(s)) if **s == actual_shape => Ok(()),
                        Some(Value::Shape(s)) => Err(RuntimeError::new(
                            ErrorKind::MatchCastMismatch,
                            "SI-MC-2.1",
                            format!("the tensor has shape {actual_shape:?} but `{}` holds {:?}", v.name(), s),
                            span,
                        )),
                        _ => Err(mismatch("SI-MC-2.1", sinfo, format!("`{}` does not hold a shape", v.name()), span)),
                    }
                }
                // SI-MC-2.2: dimension by dimension.
                Some(ExprKind::ShapeExpr(dims)) => {
                    mach.fire("SI-MC-2.2");
                    if dims.len() != actual_shape.len() {
                        return Err(mismatch(
                            "SI-MC-2.2",
                            sinfo,
                            format!("a tensor of rank {}", actual_shape.len()),
                            span,
                        ));
                    }
                    for (d, a) in dims.iter().zip(&actual_shape) {
                        match_dim(mach, d, *a, shapes, ("SI-MC-2.2.1", "SI-MC-2.2.2"), span)?;
                    }
                    Ok(())
                }
                Some(_) => match_tensor_shape_expr(shape.as_ref(), sinfo, span),
            }
        }
        StructInfoKind::Shape { values, ndim } => {
            mach.fire("SI-MC-3");
            let Value::Shape(s) = value else {
                return Err(mismatch("SI-MC-3", sinfo, format!("{} is not a shape", value.kind()), span));
            };
            if *ndim >= 0 && s.len() as i64 != *ndim {
                return Err(mismatch("SI-MC-3", sinfo, format!("a shape of {} dimensions", s.len()), span));
            }
            if let Some(vals) = values {
                if vals.len() != s.len() {
                    return Err(mismatch("SI-MC-3", sinfo, format!("a shape of {} dimensions", s.len()), span));
                }
                for (d, a) in vals.iter().zip(s.iter()) {
                    match_dim(mach, d, *a, shapes, ("SI-MC-3.1", "SI-MC-3.2"), span)?;
                }
            }
            Ok(())
        }
        // The later draft's PrimStructInfo (dtype only): read as SI-MC-3 for one scalar.
        StructInfoKind::Prim { dtype, value: expected } => {
            mach.fire("SI-MC-3");
            let Value::Prim(p) = value else {
                return Err(mismatch("SI-MC-3", sinfo, format!("{} is not a prim value", value.kind()), span));
            };
            let actual_dtype = match *p {
                PrimScalar::Int(_, d) | PrimScalar::Float(_, d) => d,
                PrimScalar::Bool(_) => spec_model::grammar::DataType::BOOL,
            };
            if !dtype.is_void() && *dtype != actual_dtype {
                return Err(mismatch("SI-MC-3", sinfo, format!("a prim value of dtype {actual_dtype}"), span));
            }
            // `R.Prim(value=e)` (S-prim-value): the value is one dimension of a shape.
            match (expected, p) {
                (None, _) => Ok(()),
                (Some(d), PrimScalar::Int(i, _)) => match_dim(mach, d, *i, shapes, ("SI-MC-3.1", "SI-MC-3.2"), span),
                (Some(d), PrimScalar::Bool(b)) => {
                    match_dim(mach, d, i64::from(*b), shapes, ("SI-MC-3.1", "SI-MC-3.2"), span)
                }
                // A value annotation is an integer expression (the parser's rule), so
                // a float has the wrong dtype already; kept total all the same.
                (Some(_), PrimScalar::Float(f, _)) => Err(mismatch("SI-MC-3.2", sinfo, format!("the value {f}"), span)),
            }
        }
        StructInfoKind::Tuple { fields } => {
            mach.fire("SI-MC-4");
            let Value::Tuple(vs) = value else {
                return Err(mismatch("SI-MC-4", sinfo, format!("{} is not a tuple", value.kind()), span));
            };
            if vs.len() != fields.len() {
                return Err(mismatch("SI-MC-4", sinfo, format!("a tuple of {} fields", vs.len()), span));
            }
            for (v, f) in vs.iter().zip(fields) {
                match_into(mach, v, f, env, shapes, span)?;
            }
            Ok(())
        }
        StructInfoKind::Func { params, derive_func, .. } => {
            mach.fire("SI-MC-5");
            let ok = match value {
                Value::Closure(_) => derive_func.is_none(),
                Value::PackedFunc(_) => params.is_none(),
                _ => false,
            };
            if ok {
                Ok(())
            } else {
                Err(mismatch("SI-MC-5", sinfo, format!("{} where a function is expected", value.kind()), span))
            }
        }
    }
}

/// A tensor annotation whose shape is neither a variable nor a `ShapeExpr` cannot
/// occur in a normalized, well-formed program; refuse it as a mismatch.
fn match_tensor_shape_expr(shape: Option<&Expr>, sinfo: &StructInfo, span: Span) -> EvalResult<()> {
    let what = shape.map_or("no shape".to_string(), |_| "a shape that is neither a variable nor a ShapeExpr".into());
    Err(mismatch("SI-MC-2", sinfo, what, span))
}

/// The first pass of a function's entry (E-3): binds every shape variable that stands
/// alone in a dimension of `sinfo` from `value`, checking nothing; the checks follow
/// in a second pass, so a signature binds its shape variables at once (the static
/// reading of WF-5, interpretations.md), e.g. `x: ("n + 1", "n")`. Returns `shapes`
/// extended with those variables.
pub fn bind_lone_shape_vars(value: &Value, sinfo: &StructInfo, shapes: &ShapeEnv) -> ShapeEnv {
    let mut extended = shapes.clone();
    bind_lone_into(value, sinfo, &mut extended);
    extended
}

fn bind_lone_into(value: &Value, sinfo: &StructInfo, shapes: &mut ShapeEnv) {
    let bind = |dims: &[PrimExpr], actual: &[i64], shapes: &mut ShapeEnv| {
        if dims.len() == actual.len() {
            for (d, a) in dims.iter().zip(actual) {
                if let PrimExprKind::Var(v) = &*d.kind {
                    if !shapes.contains_key(v) {
                        shapes.insert(v.clone(), *a);
                    }
                }
            }
        }
    };
    match (&*sinfo.kind, value) {
        (StructInfoKind::Tensor { shape: Some(shape), .. }, Value::Tensor(t)) => {
            if let ExprKind::ShapeExpr(dims) = &shape.kind {
                let actual: Vec<i64> = t.borrow().shape.iter().map(|d| *d as i64).collect();
                bind(dims, &actual, shapes);
            }
        }
        (StructInfoKind::Shape { values: Some(dims), .. }, Value::Shape(s)) => bind(dims, s, shapes),
        (StructInfoKind::Prim { value: Some(d), .. }, Value::Prim(PrimScalar::Int(i, _))) => {
            bind(std::slice::from_ref(d), &[*i], shapes)
        }
        (StructInfoKind::Tuple { fields }, Value::Tuple(vs)) => {
            for (f, v) in fields.iter().zip(vs.iter()) {
                bind_lone_into(v, f, shapes);
            }
        }
        _ => {}
    }
}
