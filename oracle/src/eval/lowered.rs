//! The lowered-memory operators' evaluation rules (issue 19): `builtin.alloc_tensor`,
//! `memory.*`, `vm.*` and `call_builtin_with_ctx` (proofs-notes/evaluation.md, E-16).
//!
//! - A storage (`memory.alloc_storage`, `vm.alloc_storage`, the builtin
//!   `vm.builtin.alloc_storage`) is a byte buffer: a 1-D `uint8` tensor of its size,
//!   zero-filled, counted in the memory budget like any tensor.
//! - A tensor allocated on a storage is a fresh zero-filled tensor of its shape and
//!   dtype, after the check that it fits: `0 <= offset` and `offset + bytes <= size`.
//!   It does not alias the storage or the other tensors on it (E-16).
//! - `builtin.alloc_tensor` is a fresh zero-filled tensor (TVM leaves it uninitialized).
//! - The kills are no-ops returning `()`; a killed value stays usable (E-16).
//! - `vm.call_tir_dyn(f, (t..., shape))` runs the PrimFunc `f` on the tensors with the
//!   shape's values as its scalar parameters, and returns `()`.
//! - `call_builtin_with_ctx(f, args)` calls the packed function `f` on the fields of
//!   `args` (the VM context is implicit).

use super::builtins::{self, zeros};
use super::machine::Machine;
use super::memory::bytes_of;
use super::tir::run_prim_func;
use super::value::{ErrorKind, EvalResult, PrimScalar, RuntimeError, TensorRef, Value};
use crate::bail;
use spec_model::grammar::DataType;
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

fn op_error(op: Op, msg: impl Into<String>, span: Span) -> RuntimeError {
    RuntimeError::new(ErrorKind::OpError, op.def().rule, msg, span)
}

fn unit() -> Value {
    Value::Tuple(Rc::new(Vec::new()))
}

/// A shape argument's dimensions (each `>= 0`).
fn dims(op: Op, v: &Value, span: Span) -> EvalResult<Vec<u64>> {
    let Value::Shape(s) = v else {
        return Err(op_error(op, format!("the shape must be a shape, got {}", v.kind()), span));
    };
    s.iter()
        .map(|&d| match u64::try_from(d) {
            Ok(d) => Ok(d),
            Err(_) => bail!(ErrorKind::NegativeDimension, op.def().rule, span, "dimension {d}"),
        })
        .collect()
}

fn dtype(op: Op, v: &Value, span: Span) -> EvalResult<DataType> {
    match v {
        Value::DataType(d) if !d.is_void() => Ok(*d),
        other => Err(op_error(op, format!("the dtype must be a known data type, got {}", other.kind()), span)),
    }
}

fn int(op: Op, v: &Value, what: &str, span: Span) -> EvalResult<i64> {
    match v {
        Value::Prim(PrimScalar::Int(i, _)) => Ok(*i),
        other => Err(op_error(op, format!("{what} must be an integer PrimValue, got {}", other.kind()), span)),
    }
}

/// A new storage of `size` bytes (the product of the size shape's dimensions).
pub fn storage(op: Op, size: &Value, span: Span) -> EvalResult<Value> {
    let ds = dims(op, size, span)?;
    let n = ds.iter().try_fold(1u64, |a, d| a.checked_mul(*d)).unwrap_or(u64::MAX);
    Ok(Value::tensor(zeros(DataType::uint(8), vec![n], op, span)?))
}

/// The byte size of a storage value.
fn storage_bytes(op: Op, v: &Value, span: Span) -> EvalResult<u64> {
    match v {
        Value::Tensor(t) => {
            let t = t.borrow();
            if t.dtype == DataType::uint(8) && t.shape.len() == 1 {
                return Ok(t.shape[0]);
            }
            Err(op_error(
                op,
                format!("the storage must be a storage, got a {} tensor of shape {:?}", t.dtype, t.shape),
                span,
            ))
        }
        other => Err(op_error(op, format!("the storage must be a storage, got {}", other.kind()), span)),
    }
}

/// `alloc_tensor(storage, offset, shape, dtype, device)`: the fit check, then a fresh tensor.
fn alloc_on_storage(op: Op, args: &[Value], span: Span) -> EvalResult<Value> {
    let [st, offset, shape, dt, device] = args else {
        return Err(op_error(op, format!("takes 5 arguments, {} given", args.len()), span));
    };
    let size = storage_bytes(op, st, span)?;
    let offset = int(op, offset, "the offset", span)?;
    let shape = dims(op, shape, span)?;
    let dt = dtype(op, dt, span)?;
    int(op, device, "the device index", span)?;
    let Ok(offset) = u64::try_from(offset) else {
        return Err(op_error(op, format!("the offset {offset} is negative"), span));
    };
    let elements = shape.iter().try_fold(1u64, |a, d| a.checked_mul(*d));
    let bytes = elements.map(|n| bytes_of(n, dt) as u64).filter(|&b| b != u64::MAX && b != usize::MAX as u64);
    match bytes.and_then(|b| b.checked_add(offset)) {
        Some(end) if end <= size => {}
        _ => {
            return Err(op_error(
                op,
                format!(
                "a {dt} tensor of shape {shape:?} at byte offset {offset} does not fit in a storage of {size} bytes"
            ),
                span,
            ))
        }
    }
    Ok(Value::tensor(zeros(dt, shape, op, span)?))
}

/// SEM-9.1 for the lowered-memory operators.
pub fn apply(mach: &mut Machine, op: Op, args: &[Value], span: Span) -> EvalResult<Value> {
    let arg = |i: usize| args.get(i).cloned().unwrap_or(Value::Null);
    match op {
        Op::BuiltinAllocTensor => {
            let shape = dims(op, &arg(0), span)?;
            let dt = dtype(op, &arg(1), span)?;
            int(op, &arg(2), "the runtime device index", span)?;
            Ok(Value::tensor(zeros(dt, shape, op, span)?))
        }
        Op::MemoryAllocStorage => {
            int(op, &arg(1), "the virtual device index", span)?;
            dtype(op, &arg(3), span)?;
            storage(op, &arg(0), span)
        }
        Op::VmAllocStorage => {
            int(op, &arg(1), "the runtime device index", span)?;
            dtype(op, &arg(2), span)?;
            storage(op, &arg(0), span)
        }
        Op::MemoryAllocTensor | Op::VmAllocTensor => alloc_on_storage(op, args, span),
        Op::MemoryKillStorage | Op::MemoryKillTensor | Op::VmKillObject => match args {
            [_] => Ok(unit()),
            _ => Err(op_error(op, format!("takes 1 argument, {} given", args.len()), span)),
        },
        Op::VmCallTirDyn => call_tir_dyn(mach, args, span),
        Op::CallBuiltinWithCtx => {
            let (Some(Value::PackedFunc(name)), Some(Value::Tuple(fields))) = (args.first(), args.get(1)) else {
                return Err(op_error(op, "takes a packed function and a tuple of arguments", span));
            };
            let name = name.clone();
            builtins::call_packed(mach, &name, fields, span)
        }
        _ => Err(op_error(op, "not a lowered-memory operator", span)),
    }
}

/// OP-vm.call_tir_dyn: the tensors, then the shape's values as scalars.
fn call_tir_dyn(mach: &mut Machine, args: &[Value], span: Span) -> EvalResult<Value> {
    let op = Op::VmCallTirDyn;
    let Some(Value::Tuple(fields)) = args.get(1) else {
        return Err(op_error(op, "the arguments must be a tuple of tensors ending in a shape", span));
    };
    let Some((Value::Shape(scalars), tensors)) = fields.split_last() else {
        return Err(op_error(op, "the arguments must end in a shape", span));
    };
    let tensors: Vec<TensorRef> = tensors
        .iter()
        .map(|v| match v {
            Value::Tensor(t) => Ok(t.clone()),
            other => Err(op_error(
                op,
                format!("each argument before the shape must be a tensor, got {}", other.kind()),
                span,
            )),
        })
        .collect::<EvalResult<_>>()?;
    match args.first() {
        Some(Value::PrimFunc(name, f)) => {
            let (name, f) = (name.clone(), f.clone());
            run_prim_func(&f, &name, &tensors, scalars, span, &mut mach.fuel)?;
        }
        Some(Value::PackedFunc(name)) => {
            let name = name.clone();
            let mut vals: Vec<Value> = tensors.into_iter().map(Value::Tensor).collect();
            vals.extend(scalars.iter().map(|&s| Value::Prim(PrimScalar::Int(s, DataType::int(64)))));
            builtins::call_packed(mach, &name, &vals, span)?;
        }
        _ => return Err(op_error(op, "the callee must be a TIR PrimFunc or a packed function", span)),
    }
    Ok(unit())
}

#[cfg(test)]
mod tests {
    use super::super::ops::eval_op_standalone;
    use super::*;
    use spec_model::grammar::{Attrs, NDArray, Scalar};

    fn run(op: Op, args: Vec<Value>) -> EvalResult<Value> {
        eval_op_standalone(op, &args, &Attrs::default(), Span::SYNTHETIC)
    }

    fn shape(ds: &[i64]) -> Value {
        Value::Shape(Rc::new(ds.to_vec()))
    }

    fn i64v(i: i64) -> Value {
        Value::Prim(PrimScalar::Int(i, DataType::int(64)))
    }

    fn f32() -> Value {
        Value::DataType(DataType::float(32))
    }

    fn storage_of(bytes: i64) -> Value {
        run(Op::MemoryAllocStorage, vec![shape(&[bytes]), i64v(0), Value::Str("global".into()), f32()]).unwrap()
    }

    fn kind(r: EvalResult<Value>) -> ErrorKind {
        match r {
            Err(e) => e.kind,
            Ok(v) => panic!("expected an error, got {}", v.kind()),
        }
    }

    #[test]
    fn builtin_alloc_tensor_is_zeros_of_its_shape_and_dtype() {
        let Ok(Value::Tensor(t)) = run(Op::BuiltinAllocTensor, vec![shape(&[2, 0, 3]), f32(), i64v(0)]) else {
            panic!("a tensor")
        };
        assert_eq!(t.borrow().shape, vec![2, 0, 3]);
        let Ok(Value::Tensor(t)) = run(Op::BuiltinAllocTensor, vec![shape(&[2]), f32(), i64v(0)]) else {
            panic!("a tensor")
        };
        let zeros = NDArray::from_scalars(DataType::float(32), vec![2], &[Scalar::Float(0.0); 2]).unwrap();
        assert_eq!(*t.borrow(), zeros);
    }

    #[test]
    fn a_storage_is_a_zeroed_byte_buffer_of_its_size() {
        let Value::Tensor(s) = storage_of(24) else { panic!("a byte buffer") };
        assert_eq!((s.borrow().dtype, s.borrow().shape.clone()), (DataType::uint(8), vec![24]));
    }

    #[test]
    fn a_placed_tensor_must_fit_its_storage() {
        let place = |off: i64, ds: &[i64]| {
            run(Op::MemoryAllocTensor, vec![storage_of(24), i64v(off), shape(ds), f32(), i64v(0)])
        };
        assert!(place(0, &[2, 3]).is_ok());
        assert!(place(24, &[0]).is_ok());
        assert_eq!(kind(place(4, &[2, 3])), ErrorKind::OpError);
        assert_eq!(kind(place(-4, &[1])), ErrorKind::OpError);
        assert_eq!(kind(place(0, &[-1])), ErrorKind::NegativeDimension);
        // Byte counts that overflow u64 do not fit (and do not panic).
        assert_eq!(kind(place(i64::MAX, &[i64::MAX, i64::MAX])), ErrorKind::OpError);
        let not_storage =
            Value::tensor(NDArray::from_scalars(DataType::float(32), vec![6], &[Scalar::Float(0.0); 6]).unwrap());
        assert_eq!(
            kind(run(Op::VmAllocTensor, vec![not_storage, i64v(0), shape(&[1]), f32(), i64v(0)])),
            ErrorKind::OpError
        );
    }

    #[test]
    fn huge_allocations_hit_the_budget() {
        let huge = run(Op::BuiltinAllocTensor, vec![shape(&[1 << 40, 1 << 40]), f32(), i64v(0)]);
        assert_eq!(kind(huge), ErrorKind::MemoryExhausted);
        let storage = run(Op::VmAllocStorage, vec![shape(&[i64::MAX]), i64v(0), Value::DataType(DataType::uint(8))]);
        assert_eq!(kind(storage), ErrorKind::MemoryExhausted);
    }

    #[test]
    fn kills_are_no_ops_and_unknown_builtins_are_unknown() {
        for op in [Op::MemoryKillStorage, Op::MemoryKillTensor, Op::VmKillObject] {
            let Ok(Value::Tuple(fs)) = run(op, vec![storage_of(4)]) else { panic!("()") };
            assert!(fs.is_empty());
        }
        let args = vec![Value::PackedFunc("vm.builtin.nothing".into()), Value::Tuple(Rc::new(Vec::new()))];
        assert_eq!(kind(run(Op::CallBuiltinWithCtx, args)), ErrorKind::UnknownExternFunc);
    }
}
