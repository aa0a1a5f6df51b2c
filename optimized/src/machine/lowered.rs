//! The lowered-memory operators (issue 19), from their semantics
//! (proofs-notes/evaluation.md, E-16): a storage is a zeroed byte buffer (a 1-D `u8`
//! tensor of its size); a tensor placed in a storage is checked to fit
//! (`offset + bytes <= size`) and is its own zeroed buffer, not a view; the kills do
//! nothing; `vm.call_tir_dyn` runs a PrimFunc on its tensors with a shape's values as
//! scalars; `call_builtin_with_ctx` calls a packed function on a tuple's fields.

use super::Run;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::over_budget;
use crate::tensor::Tensor;
use crate::value::{Prim, Value};
use spec_model::grammar::DataType;
use spec_model::ops::Op;
use spec_model::Span;
use std::rc::Rc;

fn fail(op: Op, message: impl Into<String>, span: Span) -> Error {
    Error::new(ErrorKind::OpError, op.def().rule, message, span)
}

fn shape_of(op: Op, v: Option<&Value>, span: Span) -> Result<Vec<u64>> {
    let Some(Value::Shape(s)) = v else {
        return Err(fail(op, "the shape argument is not a shape", span));
    };
    let mut out = Vec::with_capacity(s.len());
    for &d in s.iter() {
        if d < 0 {
            return Err(Error::new(ErrorKind::NegativeDimension, op.def().rule, format!("dimension {d}"), span));
        }
        out.push(d as u64);
    }
    Ok(out)
}

fn dtype_of(op: Op, v: Option<&Value>, span: Span) -> Result<DataType> {
    match v {
        Some(Value::DataType(d)) if !d.is_void() => Ok(*d),
        _ => Err(fail(op, "the dtype argument is not a known data type", span)),
    }
}

fn int_of(op: Op, v: Option<&Value>, span: Span) -> Result<i64> {
    match v {
        Some(Value::Prim(Prim::Int(i, _))) => Ok(*i),
        _ => Err(fail(op, "an index or offset argument is not an integer PrimValue", span)),
    }
}

impl Run<'_> {
    fn zeroed(&self, op: Op, dtype: DataType, dims: &[u64], span: Span) -> Result<Rc<Tensor>> {
        let Some(d) = DType::of(dtype) else {
            return Err(fail(op, format!("a tensor of dtype {dtype} has no storage here"), span));
        };
        Ok(Rc::new(Tensor::zeros(d, dims, &self.memory).map_err(|e| over_budget(e, span))?))
    }

    /// A storage: a zeroed buffer of the size shape's element product in bytes.
    pub(super) fn new_storage(&self, op: Op, size: Option<&Value>, span: Span) -> Result<Value> {
        let dims = shape_of(op, size, span)?;
        let bytes = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).unwrap_or(u64::MAX);
        Ok(Value::Tensor(self.zeroed(op, DataType::uint(8), &[bytes], span)?))
    }

    /// SEM-9.1 for the lowered-memory operators.
    pub(super) fn lowered(&mut self, op: Op, args: &[Value], span: Span) -> Result<Value> {
        match op {
            Op::BuiltinAllocTensor => {
                let dims = shape_of(op, args.first(), span)?;
                let dtype = dtype_of(op, args.get(1), span)?;
                int_of(op, args.get(2), span)?;
                Ok(Value::Tensor(self.zeroed(op, dtype, &dims, span)?))
            }
            Op::MemoryAllocStorage | Op::VmAllocStorage => {
                let (device, dtype) = if op == Op::VmAllocStorage { (1, 2) } else { (1, 3) };
                int_of(op, args.get(device), span)?;
                dtype_of(op, args.get(dtype), span)?;
                self.new_storage(op, args.first(), span)
            }
            Op::MemoryAllocTensor | Op::VmAllocTensor => {
                let capacity = match args.first() {
                    Some(Value::Tensor(t)) if t.dtype() == DType::U8 && t.rank() == 1 => t.shape()[0],
                    _ => return Err(fail(op, "the first argument is not a storage", span)),
                };
                let offset = int_of(op, args.get(1), span)?;
                let dims = shape_of(op, args.get(2), span)?;
                let dtype = dtype_of(op, args.get(3), span)?;
                int_of(op, args.get(4), span)?;
                if offset < 0 {
                    return Err(fail(op, format!("negative offset {offset}"), span));
                }
                let width = if dtype.is_bool() {
                    1
                } else {
                    (u64::from(dtype.bits) * u64::from(dtype.lanes)).div_ceil(8).max(1)
                };
                let end = dims
                    .iter()
                    .try_fold(width, |n, &d| n.checked_mul(d))
                    .and_then(|b| b.checked_add(offset as u64))
                    .filter(|&e| e < usize::MAX as u64);
                if end.is_none_or(|e| e > capacity) {
                    return Err(fail(
                        op,
                        format!("{dims:?} x {dtype} from byte {offset} overruns the {capacity}-byte storage"),
                        span,
                    ));
                }
                Ok(Value::Tensor(self.zeroed(op, dtype, &dims, span)?))
            }
            Op::MemoryKillStorage | Op::MemoryKillTensor | Op::VmKillObject if args.len() == 1 => Ok(Value::unit()),
            Op::MemoryKillStorage | Op::MemoryKillTensor | Op::VmKillObject => {
                Err(fail(op, format!("kills one value, {} given", args.len()), span))
            }
            Op::VmCallTirDyn => {
                let Some(Value::Tuple(fields)) = args.get(1) else {
                    return Err(fail(op, "the second argument is not a tuple", span));
                };
                let Some((Value::Shape(scalars), rest)) = fields.split_last() else {
                    return Err(fail(op, "the tuple does not end in a shape", span));
                };
                let mut tensors = Vec::with_capacity(rest.len());
                for v in rest {
                    match v {
                        Value::Tensor(t) => tensors.push(t.clone()),
                        other => {
                            return Err(fail(op, format!("{} before the shape, not a tensor", other.kind()), span))
                        }
                    }
                }
                match args.first() {
                    Some(Value::PrimFunc(f)) => {
                        let exe = self.exe;
                        exe.tir[*f].run(&tensors, scalars, &mut self.fuel, span, &self.memory)?;
                    }
                    Some(Value::PackedFunc(name)) => {
                        let name = name.clone();
                        let mut all: Vec<Value> = tensors.into_iter().map(Value::Tensor).collect();
                        all.extend(scalars.iter().map(|&s| Value::Prim(Prim::Int(s, DataType::int(64)))));
                        self.call_packed(&name, &all, span)?;
                    }
                    _ => return Err(fail(op, "the callee is neither a PrimFunc nor a packed function", span)),
                }
                Ok(Value::unit())
            }
            Op::CallBuiltinWithCtx => match (args.first(), args.get(1)) {
                (Some(Value::PackedFunc(name)), Some(Value::Tuple(fields))) => {
                    let (name, fields) = (name.clone(), fields.clone());
                    self.call_packed(&name, &fields, span)
                }
                _ => Err(fail(op, "expects a packed function and a tuple", span)),
            },
            _ => Err(fail(op, "is not a lowered-memory operator", span)),
        }
    }
}
