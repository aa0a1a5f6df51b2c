//! Operators with evaluation rules of their own (the spec's Notable Operators:
//! `call_tir`, `call_dps_packed`, `call_packed`, `call_pure_packed`, `shape_of`, and
//! `null_value`, `print`, `assert_op`, `cast`), the dispatch to the tensor kernels, and
//! the registry of built-in packed functions (SEM-8).
//!
//! Built-in packed functions (documented in the README):
//!
//! | name | does |
//! |---|---|
//! | `oracle.identity(x)` | returns `x` itself (an alias) |
//! | `oracle.copy(t)` | returns a new tensor with `t`'s contents |
//! | `oracle.add_one_inplace(t)` | adds 1 to every element of `t` **in place**, returns `t` |
//! | `oracle.copy_into(src, dst)` | destination-passing copy: writes `src` into `dst` |
//! | `oracle.print(v, ...)` | prints its arguments (as `.rx` literals), returns `()` |
//!
//! and every TIR PrimFunc of the module with a `global_symbol` attribute, under that
//! symbol (SEM-8), called in destination-passing style on its tensor arguments.

use super::interp::{Interp, Scope};
use super::kernels::eval_tensor_op;
use super::literal::print_value;
use super::match_cast::{eval_dim, match_cast};
use super::tir::run_prim_func;
use super::value::{ErrorKind, EvalResult, PrimScalar, RuntimeError, TensorRef, Value};
use spec_model::grammar::{AttrValue, Call, DataType, ExprKind, NDArray, Scalar, StructInfo, StructInfoKind};
use spec_model::prim_eval::PrimValue;
use spec_model::Span;
use std::rc::Rc;

/// The built-in packed functions' names.
pub const PACKED: &[&str] =
    &["oracle.identity", "oracle.copy", "oracle.add_one_inplace", "oracle.copy_into", "oracle.print"];

/// A `PrimValue`'s scalar in its dtype.
pub fn prim_scalar(v: PrimValue, dtype: DataType) -> PrimScalar {
    match v {
        PrimValue::Int(i) => PrimScalar::Int(i, dtype),
        PrimValue::Bool(b) => PrimScalar::Bool(b),
        PrimValue::Float(f) => PrimScalar::Float(f, dtype),
    }
}

fn op_error(op: &str, msg: impl Into<String>, span: Span) -> RuntimeError {
    RuntimeError::new(ErrorKind::OpError, format!("OP-{op}"), msg, span)
}

/// SEM-8: the packed function named `symbol`, or `UnknownExternFunc`.
pub fn extern_func(it: &Interp, symbol: &str, span: Span) -> EvalResult<Value> {
    let known = PACKED.contains(&symbol) || prim_func_by_symbol(it, symbol).is_some();
    if known {
        Ok(Value::PackedFunc(symbol.into()))
    } else {
        Err(RuntimeError::new(ErrorKind::UnknownExternFunc, "SEM-8", format!("no packed function `{symbol}`"), span))
    }
}

fn prim_func_by_symbol(it: &Interp, symbol: &str) -> Option<(String, Rc<spec_model::grammar::PrimFunc>)> {
    it.module.prim_funcs().find_map(|(gv, f)| match f.attrs.get("global_symbol") {
        Some(AttrValue::Str(s)) if s == symbol => Some((gv.name.clone(), f.clone())),
        _ => None,
    })
}

fn tensor_arg(v: &Value, op: &str, what: &str, span: Span) -> EvalResult<TensorRef> {
    match v {
        Value::Tensor(t) => Ok(t.clone()),
        other => Err(op_error(op, format!("{what} must be a tensor, got {}", other.kind()), span)),
    }
}

/// SEM-9.2.2: calls the packed function `name` on `args`.
pub fn call_packed(it: &mut Interp, name: &str, args: &[Value], span: Span) -> EvalResult<Value> {
    let op = "call_packed";
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(op_error(op, format!("`{name}` takes {n} arguments, {} given", args.len()), span))
        }
    };
    match name {
        "oracle.identity" => {
            arity(1)?;
            Ok(args[0].clone())
        }
        "oracle.copy" => {
            arity(1)?;
            let t = tensor_arg(&args[0], op, "the argument", span)?;
            let copy = t.borrow().clone();
            Ok(Value::tensor(copy))
        }
        "oracle.add_one_inplace" => {
            arity(1)?;
            let t = tensor_arg(&args[0], op, "the argument", span)?;
            add_one_inplace(&t, span)?;
            Ok(args[0].clone())
        }
        "oracle.copy_into" => {
            arity(2)?;
            let (src, dst) =
                (tensor_arg(&args[0], op, "the source", span)?, tensor_arg(&args[1], op, "the destination", span)?);
            let data = src.borrow().clone();
            let mut d = dst.borrow_mut();
            if d.shape != data.shape || d.dtype != data.dtype {
                return Err(op_error(op, "`oracle.copy_into`: source and destination differ in shape or dtype", span));
            }
            *d = data;
            Ok(Value::Tuple(Rc::new(Vec::new())))
        }
        "oracle.print" => {
            let line = args.iter().map(print_value).collect::<Vec<_>>().join(" ");
            it.printed.push(line);
            Ok(Value::Tuple(Rc::new(Vec::new())))
        }
        _ => match prim_func_by_symbol(it, name) {
            Some((gname, f)) => {
                let mut tensors = Vec::new();
                for a in args {
                    tensors.push(tensor_arg(a, op, "each argument of a PrimFunc", span)?);
                }
                run_prim_func(&f, &gname, &tensors, &[], span, &mut it.fuel)?;
                Ok(Value::Tuple(Rc::new(Vec::new())))
            }
            None => Err(RuntimeError::new(
                ErrorKind::UnknownExternFunc,
                "SEM-8",
                format!("no packed function `{name}`"),
                span,
            )),
        },
    }
}

/// `t += 1` in place, with the `relax.add` kernel's arithmetic (integers wrap).
fn add_one_inplace(t: &TensorRef, span: Span) -> EvalResult<()> {
    let dtype = t.borrow().dtype;
    let one = if dtype.is_float() {
        Scalar::Float(1.0)
    } else if dtype.is_bool() {
        Scalar::Bool(true)
    } else {
        Scalar::Int(1)
    };
    let one = NDArray::from_scalars(dtype, Vec::new(), &[one]).map_err(|m| op_error("call_packed", m, span))?;
    let sum = eval_tensor_op("relax.add", &[Value::Tensor(t.clone()), Value::tensor(one)], &Default::default(), span)?;
    if let Value::Tensor(s) = sum {
        let s = s.borrow().clone();
        *t.borrow_mut() = s;
    }
    Ok(())
}

/// Allocates the outputs of a destination-passing call from its `out_sinfo`: tensors
/// (zero-filled) whose shapes are evaluated in the current shape context.
fn alloc_outputs(op: &str, call: &Call, sc: &Scope, span: Span) -> EvalResult<(Value, Vec<TensorRef>)> {
    let Some(out) = call.sinfo_args.first() else {
        return Err(op_error(op, "no output StructInfo", span));
    };
    let one = |si: &StructInfo| -> EvalResult<TensorRef> {
        let StructInfoKind::Tensor { shape: Some(shape), dtype, .. } = &*si.kind else {
            return Err(op_error(op, "each output must be a tensor with a shape", span));
        };
        let dims: Vec<u64> = match &shape.kind {
            ExprKind::ShapeExpr(ds) => {
                let mut v = Vec::new();
                for d in ds {
                    let x = eval_dim(d, &sc.shapes, &format!("OP-{op}"), span)?;
                    v.push(u64::try_from(x).map_err(|_| {
                        RuntimeError::new(
                            ErrorKind::NegativeDimension,
                            format!("OP-{op}"),
                            format!("output dimension {x}"),
                            span,
                        )
                    })?);
                }
                v
            }
            ExprKind::Var(x) => match sc.env.get(x) {
                Some(Value::Shape(s)) => s.iter().map(|d| *d as u64).collect(),
                _ => return Err(op_error(op, "the output shape variable holds no shape", span)),
            },
            _ => return Err(op_error(op, "an output shape must be a ShapeExpr or a variable", span)),
        };
        Ok(Rc::new(std::cell::RefCell::new(zeros(*dtype, dims, op, span)?)))
    };
    match &*out.kind {
        StructInfoKind::Tuple { fields } => {
            let ts = fields.iter().map(one).collect::<EvalResult<Vec<_>>>()?;
            Ok((Value::Tuple(Rc::new(ts.iter().map(|t| Value::Tensor(t.clone())).collect())), ts))
        }
        _ => {
            let t = one(out)?;
            Ok((Value::Tensor(t.clone()), vec![t]))
        }
    }
}

/// Refuses allocations over 2^26 elements (a typed error, not an abort).
fn zeros(dtype: DataType, shape: Vec<u64>, op: &str, span: Span) -> EvalResult<NDArray> {
    let n = shape.iter().try_fold(1u64, |a, d| a.checked_mul(*d)).filter(|n| *n <= 1 << 26);
    let Some(n) = n else {
        return Err(op_error(op, format!("refusing to allocate a tensor of shape {shape:?}"), span));
    };
    let zero = if dtype.is_float() {
        Scalar::Float(0.0)
    } else if dtype.is_bool() {
        Scalar::Bool(false)
    } else {
        Scalar::Int(0)
    };
    NDArray::from_scalars(dtype, shape, &vec![zero; n as usize]).map_err(|m| op_error(op, m, span))
}

fn tuple_of_tensors(v: &Value, op: &str, span: Span) -> EvalResult<Vec<TensorRef>> {
    match v {
        Value::Tuple(vs) => vs.iter().map(|x| tensor_arg(x, op, "each argument", span)).collect(),
        Value::Tensor(t) => Ok(vec![t.clone()]),
        other => Err(op_error(op, format!("the arguments must be a tuple of tensors, got {}", other.kind()), span)),
    }
}

fn unit() -> Value {
    Value::Tuple(Rc::new(Vec::new()))
}

/// SEM-9.1: an operator on evaluated arguments.
pub fn call_op(it: &mut Interp, name: &str, args: &[Value], call: &Call, span: Span, sc: &Scope) -> EvalResult<Value> {
    let short = name.strip_prefix("relax.").unwrap_or(name);
    it.fire(&format!("OP-{short}"));
    match short {
        // OP-call_tir: allocate the outputs, call the PrimFunc on inputs and outputs.
        "call_tir" => {
            let Some(Value::PrimFunc(fname, f)) = args.first() else {
                return Err(op_error(short, "the callee must be a TIR PrimFunc", span));
            };
            let inputs = tuple_of_tensors(args.get(1).unwrap_or(&unit()), short, span)?;
            let scalars: Vec<i64> = match args.get(2) {
                Some(Value::Shape(s)) => s.to_vec(),
                Some(other) => {
                    return Err(op_error(short, format!("`tir_vars` must be a shape, got {}", other.kind()), span))
                }
                None => Vec::new(),
            };
            let (result, outputs) = alloc_outputs(short, call, sc, span)?;
            let all: Vec<TensorRef> = inputs.into_iter().chain(outputs).collect();
            run_prim_func(f, fname, &all, &scalars, span, &mut it.fuel)?;
            Ok(result)
        }
        // OP-call_dps_packed: likewise with a packed function (which may also mutate its inputs).
        "call_dps_packed" => {
            let Some(Value::PackedFunc(fname)) = args.first() else {
                return Err(op_error(short, "the callee must be a packed function", span));
            };
            let inputs = tuple_of_tensors(args.get(1).unwrap_or(&unit()), short, span)?;
            let (result, outputs) = alloc_outputs(short, call, sc, span)?;
            let all: Vec<Value> = inputs.into_iter().chain(outputs).map(Value::Tensor).collect();
            let fname = fname.clone();
            call_packed(it, &fname, &all, span)?;
            Ok(result)
        }
        "call_packed" | "call_pure_packed" => {
            let fname: Rc<str> = match args.first() {
                Some(Value::PackedFunc(n)) | Some(Value::Str(n)) => n.clone(),
                _ => return Err(op_error(short, "the callee must be a packed function", span)),
            };
            call_packed(it, &fname, &args[1..], span)
        }
        // OP-shape_of: a new shape value.
        "shape_of" => {
            let t = tensor_arg(args.first().unwrap_or(&Value::Null), short, "the argument", span)?;
            let dims = t.borrow().shape.iter().map(|d| *d as i64).collect();
            Ok(Value::Shape(Rc::new(dims)))
        }
        "null_value" => Ok(Value::Null),
        // OP-print: the arguments (with `format`, substituted for `{}`), one line.
        "print" => {
            let texts: Vec<String> = args.iter().map(print_value).collect();
            let line = match call.attrs.get("format") {
                Some(AttrValue::Str(f)) if !f.is_empty() => substitute(f, &texts),
                _ => texts.join(" "),
            };
            it.printed.push(line);
            Ok(unit())
        }
        // OP-assert_op: an error when the condition is false.
        "assert_op" => {
            let holds = match args.first() {
                Some(Value::Tensor(t)) => matches!(t.borrow().data.get(0), Scalar::Bool(true)),
                Some(Value::Prim(PrimScalar::Bool(b))) => *b,
                _ => false,
            };
            if holds {
                Ok(unit())
            } else {
                let texts: Vec<String> = args.iter().skip(1).map(print_value).collect();
                let msg = match call.attrs.get("format") {
                    Some(AttrValue::Str(f)) if !f.is_empty() => substitute(f, &texts),
                    _ => "assertion failed".to_string(),
                };
                Err(op_error(short, msg, span))
            }
        }
        // OP-cast: a run-time MatchCast that binds nothing.
        "cast" => {
            let (Some(v), Some(target)) = (args.first(), call.sinfo_args.first()) else {
                return Err(op_error(short, "needs a value and a target StructInfo", span));
            };
            let mut shapes = sc.shapes.clone();
            let mut trace = |r: &str| it.fire(r);
            match_cast(v, target, &sc.env, &mut shapes, span, &mut trace)?;
            Ok(v.clone())
        }
        _ => eval_tensor_op(name, args, &call.attrs, span),
    }
}

/// `format` with each `{}` replaced by the next argument.
fn substitute(format: &str, args: &[String]) -> String {
    let mut out = String::new();
    let mut rest = args.iter();
    let mut parts = format.split("{}");
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for p in parts {
        out.push_str(rest.next().map_or("{}", |s| s.as_str()));
        out.push_str(p);
    }
    out
}
