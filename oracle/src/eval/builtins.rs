//! The Notable Operators' evaluation rules (`call_tir` with `call_tir_inplace` and
//! `call_tir_with_grad`, `call_dps_packed`,
//! `call_packed`, `call_pure_packed`, `shape_of`, and `null_value`, `print`,
//! `assert_op`, `cast`) and the registry of built-in packed functions (SEM-8).
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
//! | `vm.builtin.alloc_storage(size, device, dtype[, scope])` | a storage of `size` bytes (E-16) |
//! | `vm.builtin.copy(t)` | returns a new tensor with `t`'s contents |
//!
//! and every TIR PrimFunc of the module with a `global_symbol` attribute, under that
//! symbol (SEM-8), called in destination-passing style on its tensor arguments.

use super::kernels::elementwise::{arith, Arith};
use super::kernels::Cx;
use super::literal::print_value;
use super::machine::{Machine, Scope};
use super::match_cast::{eval_dim, match_cast};
use super::tir::run_prim_func;
use super::value::{ErrorKind, EvalResult, PrimScalar, RuntimeError, TensorRef, Value};
use crate::bail;
use spec_model::grammar::{
    AttrValue, Call, DataType, ExprKind, NDArray, Scalar, StructInfo, StructInfoKind, TensorData,
};
use spec_model::ops::Op;
use spec_model::prim_eval::PrimValue;
use spec_model::Span;
use std::rc::Rc;

/// The built-in packed functions' names.
pub const PACKED: &[&str] = &[
    "oracle.identity",
    "oracle.copy",
    "oracle.add_one_inplace",
    "oracle.copy_into",
    "oracle.print",
    "vm.builtin.alloc_storage",
    "vm.builtin.copy",
];

/// A `PrimValue`'s scalar in its dtype.
pub fn prim_scalar(v: PrimValue, dtype: DataType) -> PrimScalar {
    match v {
        PrimValue::Int(i) => PrimScalar::Int(i, dtype),
        PrimValue::Bool(b) => PrimScalar::Bool(b),
        PrimValue::Float(f) => PrimScalar::Float(f, dtype),
    }
}

fn op_error(op: Op, msg: impl Into<String>, span: Span) -> RuntimeError {
    RuntimeError::new(ErrorKind::OpError, op.def().rule, msg, span)
}

/// SEM-8: the packed function named `symbol`, or `UnknownExternFunc`.
pub fn extern_func(mach: &Machine, symbol: &str, span: Span) -> EvalResult<Value> {
    if !PACKED.contains(&symbol) && prim_func_by_symbol(mach, symbol).is_none() {
        bail!(ErrorKind::UnknownExternFunc, "SEM-8", span, "no packed function `{symbol}`");
    }
    Ok(Value::PackedFunc(symbol.into()))
}

fn prim_func_by_symbol(mach: &Machine, symbol: &str) -> Option<(String, Rc<spec_model::grammar::PrimFunc>)> {
    mach.module.prim_funcs().find_map(|(gv, f)| match f.attrs.get("global_symbol") {
        Some(AttrValue::Str(s)) if s == symbol => Some((gv.name.clone(), f.clone())),
        _ => None,
    })
}

fn tensor_arg(v: &Value, op: Op, what: &str, span: Span) -> EvalResult<TensorRef> {
    match v {
        Value::Tensor(t) => Ok(t.clone()),
        other => Err(op_error(op, format!("{what} must be a tensor, got {}", other.kind()), span)),
    }
}

/// SEM-9.2.2: calls the packed function `name` on `args`.
pub fn call_packed(mach: &mut Machine, name: &str, args: &[Value], span: Span) -> EvalResult<Value> {
    let op = Op::CallPacked;
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
        "oracle.copy" | "vm.builtin.copy" => {
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
        "vm.builtin.alloc_storage" => {
            if !(3..=4).contains(&args.len()) {
                return Err(op_error(op, format!("`{name}` takes 3 or 4 arguments, {} given", args.len()), span));
            }
            match (&args[1], &args[2], args.get(3)) {
                (Value::Prim(PrimScalar::Int(..)), Value::DataType(_), None | Some(Value::Str(_))) => {}
                _ => {
                    return Err(op_error(
                        op,
                        format!("`{name}` takes a size, a device index, a dtype and optionally a storage scope"),
                        span,
                    ))
                }
            }
            super::lowered::storage(op, &args[0], span)
        }
        "oracle.print" => {
            let line = args.iter().map(print_value).collect::<Vec<_>>().join(" ");
            mach.printed.push(line);
            Ok(Value::Tuple(Rc::new(Vec::new())))
        }
        _ => match prim_func_by_symbol(mach, name) {
            Some((gname, f)) => {
                let mut tensors = Vec::new();
                for a in args {
                    tensors.push(tensor_arg(a, op, "each argument of a PrimFunc", span)?);
                }
                run_prim_func(&f, &gname, &tensors, &[], span, &mut mach.fuel)?;
                Ok(Value::Tuple(Rc::new(Vec::new())))
            }
            None => bail!(ErrorKind::UnknownExternFunc, "SEM-8", span, "no packed function `{name}`"),
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
    let one = NDArray::from_scalars(dtype, Vec::new(), &[one]).map_err(|e| op_error(Op::CallPacked, e, span))?;
    let attrs = Default::default();
    let sum = arith(&Cx::new(Op::Add, &attrs, span), &[Value::Tensor(t.clone()), Value::tensor(one)], Arith::Add)?;
    if let Value::Tensor(s) = sum {
        let s = s.borrow().clone();
        *t.borrow_mut() = s;
    }
    Ok(())
}

/// Allocates the outputs of a destination-passing call from its `out_sinfo`: tensors
/// (zero-filled) whose shapes are evaluated in the current shape context.
fn alloc_outputs(op: Op, call: &Call, sc: &Scope, span: Span) -> EvalResult<(Value, Vec<TensorRef>)> {
    let Some(out) = call.sinfo_args.first() else {
        return Err(op_error(op, "no output StructInfo", span));
    };
    match &*out.kind {
        StructInfoKind::Tuple { fields } => {
            let ts = fields.iter().map(|f| alloc_output(op, f, sc, span)).collect::<EvalResult<Vec<_>>>()?;
            Ok((Value::Tuple(Rc::new(ts.iter().map(|t| Value::Tensor(t.clone())).collect())), ts))
        }
        _ => {
            let t = alloc_output(op, out, sc, span)?;
            Ok((Value::Tensor(t.clone()), vec![t]))
        }
    }
}

/// One output of a destination-passing call: a zero-filled tensor of the StructInfo's
/// dtype, its shape evaluated in the current shape context.
fn alloc_output(op: Op, si: &StructInfo, sc: &Scope, span: Span) -> EvalResult<TensorRef> {
    let StructInfoKind::Tensor { shape: Some(shape), dtype, .. } = &*si.kind else {
        return Err(op_error(op, "each output must be a tensor with a shape", span));
    };
    let dims: Vec<u64> = match &shape.kind {
        ExprKind::ShapeExpr(ds) => {
            let mut v = Vec::new();
            for d in ds {
                let x = eval_dim(d, &sc.shapes, op.def().rule, span)?;
                match u64::try_from(x) {
                    Ok(x) => v.push(x),
                    Err(_) => bail!(ErrorKind::NegativeDimension, op.def().rule, span, "output dimension {x}"),
                }
            }
            v
        }
        ExprKind::Var(x) => match sc.env.get(x) {
            Some(Value::Shape(s)) => s.iter().map(|d| *d as u64).collect(),
            _ => return Err(op_error(op, "the output shape variable holds no shape", span)),
        },
        _ => return Err(op_error(op, "an output shape must be a ShapeExpr or a variable", span)),
    };
    Ok(Rc::new(super::memory::Tracked::new(zeros(*dtype, dims, op, span)?)))
}

/// Refuses allocations beyond the memory budget (`MemoryExhausted`, not an abort).
pub(super) fn zeros(dtype: DataType, shape: Vec<u64>, op: Op, span: Span) -> EvalResult<NDArray> {
    let n = shape.iter().try_fold(1u64, |a, d| a.checked_mul(*d)).unwrap_or(u64::MAX);
    super::memory::reserve(n, dtype, || format!("{op}: a tensor of shape {shape:?}"), span)?;
    let zero = if dtype.is_float() {
        Scalar::Float(0.0)
    } else if dtype.is_bool() {
        Scalar::Bool(false)
    } else {
        Scalar::Int(0)
    };
    NDArray::from_scalars(dtype, shape, &vec![zero; n as usize]).map_err(|e| op_error(op, e, span))
}

fn tuple_of_tensors(v: &Value, op: Op, span: Span) -> EvalResult<Vec<TensorRef>> {
    match v {
        Value::Tuple(vs) => vs.iter().map(|x| tensor_arg(x, op, "each argument", span)).collect(),
        Value::Tensor(t) => Ok(vec![t.clone()]),
        other => Err(op_error(op, format!("the arguments must be a tuple of tensors, got {}", other.kind()), span)),
    }
}

fn unit() -> Value {
    Value::Tuple(Rc::new(Vec::new()))
}

/// `call_tir`'s arguments: its tensors, and its integer or boolean PrimValues (TVM
/// 0.27's scalar arguments, bound to the scalar parameters before `tir_vars`).
fn call_tir_args(op: Op, v: &Value, span: Span) -> EvalResult<(Vec<TensorRef>, Vec<i64>)> {
    let Value::Tuple(vs) = v else { return Ok((tuple_of_tensors(v, op, span)?, Vec::new())) };
    let (mut tensors, mut scalars) = (Vec::new(), Vec::new());
    for x in vs.iter() {
        match x {
            Value::Prim(PrimScalar::Int(i, _)) => scalars.push(*i),
            Value::Prim(PrimScalar::Bool(b)) => scalars.push(*b as i64),
            Value::Prim(PrimScalar::Float(..)) => {
                return Err(op_error(op, "call_tir passes integer and boolean PrimValues only", span))
            }
            _ => tensors.push(tensor_arg(x, op, "each argument", span)?),
        }
    }
    Ok((tensors, scalars))
}

/// `tir_vars`, when given, after the scalar arguments.
fn tir_vars(op: Op, args: &[Value], scalars: &mut Vec<i64>, span: Span) -> EvalResult<()> {
    match args.get(2) {
        Some(Value::Shape(s)) => scalars.extend(s.iter()),
        Some(other) => return Err(op_error(op, format!("`tir_vars` must be a shape, got {}", other.kind()), span)),
        None => {}
    }
    Ok(())
}

/// OP-call_tir (and OP-call_tir_with_grad, which evaluates exactly as call_tir: its
/// gradient attributes are read only by the Gradient pass): allocates the outputs,
/// calls the PrimFunc on inputs and outputs.
pub fn call_tir(mach: &mut Machine, op: Op, args: &[Value], call: &Call, span: Span, sc: &Scope) -> EvalResult<Value> {
    let Some(Value::PrimFunc(fname, f)) = args.first() else {
        return Err(op_error(op, "the callee must be a TIR PrimFunc", span));
    };
    let (inputs, mut scalars) = call_tir_args(op, args.get(1).unwrap_or(&unit()), span)?;
    tir_vars(op, args, &mut scalars, span)?;
    let (result, outputs) = alloc_outputs(op, call, sc, span)?;
    let all: Vec<TensorRef> = inputs.into_iter().chain(outputs).collect();
    run_prim_func(f, fname, &all, &scalars, span, &mut mach.fuel)?;
    Ok(result)
}

/// OP-call_tir_inplace, with E-15's reading: each argument named by an in-place index
/// is copied, the PrimFunc runs on the arguments (those copies in their places), then
/// the outputs at index -1 (allocated as call_tir's), then `tir_vars`; output `i` is
/// the copy of argument `inplace_indices[i]` after the call. The caller's tensors are
/// never written, so the call is pure, as its static rule says.
pub fn call_tir_inplace(mach: &mut Machine, args: &[Value], call: &Call, span: Span, sc: &Scope) -> EvalResult<Value> {
    let op = Op::CallTirInplace;
    let Some(Value::PrimFunc(fname, f)) = args.first() else {
        return Err(op_error(op, "the callee must be a TIR PrimFunc", span));
    };
    let indices: Vec<i64> = match call.attrs.get("inplace_indices") {
        Some(AttrValue::Int(i)) => vec![*i],
        Some(AttrValue::List(xs)) => xs
            .iter()
            .map(|x| match x {
                AttrValue::Int(i) => Ok(*i),
                _ => Err(op_error(op, "`inplace_indices` must be a list of integers", span)),
            })
            .collect::<EvalResult<_>>()?,
        _ => return Err(op_error(op, "`inplace_indices` must be a list of integers", span)),
    };
    let mut elems: Vec<Value> = match args.get(1) {
        Some(Value::Tuple(vs)) => vs.to_vec(),
        Some(v) => vec![v.clone()],
        None => Vec::new(),
    };
    let Some(out) = call.sinfo_args.first() else {
        return Err(op_error(op, "no output StructInfo", span));
    };
    let fields: Vec<StructInfo> = match &*out.kind {
        StructInfoKind::Tuple { fields } => fields.clone(),
        _ => vec![out.clone()],
    };
    if indices.len() != fields.len() {
        return Err(op_error(op, "one in-place index per output", span));
    }
    // E-15: the in-place arguments are copies, made before the call.
    let mut copies: Vec<Option<TensorRef>> = vec![None; elems.len()];
    for &j in &indices {
        let Ok(j) = usize::try_from(j) else { continue };
        let Some(v) = elems.get(j) else {
            return Err(op_error(op, format!("in-place index {j} is not an argument"), span));
        };
        if copies[j].is_some() {
            return Err(op_error(op, format!("in-place index {j} appears twice"), span));
        }
        let t = tensor_arg(v, op, "an in-place argument", span)?;
        let a = t.borrow().clone();
        super::memory::reserve(a.data.len() as u64, a.dtype, || format!("{op}: a copy of argument {j}"), span)?;
        let c = Rc::new(super::memory::Tracked::new(a));
        elems[j] = Value::Tensor(c.clone());
        copies[j] = Some(c);
    }
    let (inputs, mut scalars) = call_tir_args(op, &Value::Tuple(Rc::new(elems)), span)?;
    tir_vars(op, args, &mut scalars, span)?;
    let mut results = Vec::with_capacity(fields.len());
    let mut fresh = Vec::new();
    for (&j, si) in indices.iter().zip(&fields) {
        match usize::try_from(j).ok().and_then(|j| copies[j].clone()) {
            Some(c) => results.push(c),
            None if j == -1 => {
                let t = alloc_output(op, si, sc, span)?;
                fresh.push(t.clone());
                results.push(t);
            }
            None => return Err(op_error(op, format!("in-place index {j} is below -1"), span)),
        }
    }
    let all: Vec<TensorRef> = inputs.into_iter().chain(fresh).collect();
    run_prim_func(f, fname, &all, &scalars, span, &mut mach.fuel)?;
    Ok(match &*out.kind {
        StructInfoKind::Tuple { .. } => Value::Tuple(Rc::new(results.into_iter().map(Value::Tensor).collect())),
        _ => Value::Tensor(results.remove(0)),
    })
}

/// OP-call_dps_packed: as `call_tir`, with a packed function (which may also mutate its inputs).
pub fn call_dps_packed(mach: &mut Machine, args: &[Value], call: &Call, span: Span, sc: &Scope) -> EvalResult<Value> {
    let op = Op::CallDpsPacked;
    let Some(Value::PackedFunc(fname)) = args.first() else {
        return Err(op_error(op, "the callee must be a packed function", span));
    };
    let inputs = tuple_of_tensors(args.get(1).unwrap_or(&unit()), op, span)?;
    let (result, outputs) = alloc_outputs(op, call, sc, span)?;
    let all: Vec<Value> = inputs.into_iter().chain(outputs).map(Value::Tensor).collect();
    let fname = fname.clone();
    call_packed(mach, &fname, &all, span)?;
    Ok(result)
}

/// OP-call_packed and OP-call_pure_packed: the packed function (first argument) on the rest.
pub fn call_packed_op(mach: &mut Machine, op: Op, args: &[Value], span: Span) -> EvalResult<Value> {
    let fname: Rc<str> = match args.first() {
        Some(Value::PackedFunc(n)) | Some(Value::Str(n)) => n.clone(),
        _ => return Err(op_error(op, "the callee must be a packed function", span)),
    };
    call_packed(mach, &fname, &args[1..], span)
}

/// OP-shape_of: a new shape value.
pub fn shape_of(args: &[Value], span: Span) -> EvalResult<Value> {
    let t = tensor_arg(args.first().unwrap_or(&Value::Null), Op::ShapeOf, "the argument", span)?;
    let dims = t.borrow().shape.iter().map(|d| *d as i64).collect();
    Ok(Value::Shape(Rc::new(dims)))
}

/// OP-print: the arguments (with `format`, substituted for `{}`), one line.
pub fn print(mach: &mut Machine, args: &[Value], call: &Call) -> EvalResult<Value> {
    let texts: Vec<String> = args.iter().map(print_value).collect();
    let line = match call.attrs.get("format") {
        Some(AttrValue::Str(f)) if !f.is_empty() => substitute(f, &texts),
        _ => texts.join(" "),
    };
    mach.printed.push(line);
    Ok(unit())
}

/// OP-assert_op: an error when the condition is false. A condition the static rule
/// could not see is a boolean scalar (unknown rank or dtype) is checked here.
pub fn assert_op(args: &[Value], call: &Call, span: Span) -> EvalResult<Value> {
    let holds = match args.first() {
        Some(Value::Tensor(t)) => match (&t.borrow().data, t.borrow().shape.as_slice()) {
            (TensorData::Bool(b), []) if b.len() == 1 => b[0],
            (_, shape) => {
                let what = format!("a {} tensor of shape {shape:?}", t.borrow().dtype);
                return Err(op_error(
                    Op::AssertOp,
                    format!("the condition must be a boolean scalar, got {what}"),
                    span,
                ));
            }
        },
        Some(Value::Prim(PrimScalar::Bool(b))) => *b,
        Some(other) => {
            let what = other.kind();
            return Err(op_error(Op::AssertOp, format!("the condition must be a boolean scalar, got {what}"), span));
        }
        None => return Err(op_error(Op::AssertOp, "takes a condition", span)),
    };
    if holds {
        return Ok(unit());
    }
    let texts: Vec<String> = args.iter().skip(1).map(print_value).collect();
    let msg = match call.attrs.get("format") {
        Some(AttrValue::Str(f)) if !f.is_empty() => substitute(f, &texts),
        _ => "assertion failed".to_string(),
    };
    Err(op_error(Op::AssertOp, msg, span))
}

/// OP-cast: a run-time MatchCast that binds nothing.
pub fn cast(mach: &mut Machine, args: &[Value], call: &Call, span: Span, sc: &Scope) -> EvalResult<Value> {
    let (Some(v), Some(target)) = (args.first(), call.sinfo_args.first()) else {
        return Err(op_error(Op::Cast, "needs a value and a target StructInfo", span));
    };
    match_cast(mach, v, target, &sc.env, &sc.shapes, span)?;
    Ok(v.clone())
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
