//! The packed functions (SEM-8, SEM-9.2.2): the same registry as the oracle's, with
//! the same names and meanings (README, "The `oracle` command"), and every PrimFunc of
//! the module under its `global_symbol`, called in destination-passing style.

use super::print::print_value;
use super::Run;
use crate::compile::Executable;
use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::kernels::over_budget;
use crate::tensor::Tensor;
use crate::value::Value;
use crate::with_num;
use spec_model::Span;
use std::rc::Rc;

/// The built-in packed functions.
pub const BUILTINS: &[&str] = &[
    "oracle.identity",
    "oracle.copy",
    "oracle.add_one_inplace",
    "oracle.copy_into",
    "oracle.print",
    "vm.builtin.alloc_storage",
    "vm.builtin.copy",
];

/// Is a packed function registered under `symbol`?
pub fn is_registered(exe: &Executable, symbol: &str) -> bool {
    BUILTINS.contains(&symbol) || exe.tir_symbols.contains_key(symbol)
}

fn error(message: impl Into<String>, span: Span) -> Error {
    Error::new(ErrorKind::OpError, "OP-call_packed", message, span)
}

fn tensor<'v>(v: &'v Value, what: &str, span: Span) -> Result<&'v Rc<Tensor>> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(error(format!("{what} must be a tensor, got {}", other.kind()), span)),
    }
}

/// `t += 1` in place, as `relax.add` computes it: integers wrap, floats round (float16
/// through float32); `bool` has no arithmetic (`OpError` of `OP-add`).
fn add_one_inplace(t: &Tensor, span: Span) -> Result<()> {
    fn wrap<T: Copy>(xs: &mut [T], f: impl Fn(T) -> T) {
        xs.iter_mut().for_each(|x| *x = f(*x));
    }
    let busy = || error("the argument is being read", span);
    macro_rules! ints {
        ($($d:ident => $t:ty),*) => {
            match t.dtype() {
                $(DType::$d => wrap(&mut t.elements_mut::<$t>().ok_or_else(busy)?, |x| x.wrapping_add(1)),)*
                DType::F16 => wrap(&mut t.elements_mut::<half::f16>().ok_or_else(busy)?, |x| {
                    half::f16::from_f32(x.to_f32() + 1.0)
                }),
                DType::F32 => wrap(&mut t.elements_mut::<f32>().ok_or_else(busy)?, |x| x + 1.0),
                DType::F64 => wrap(&mut t.elements_mut::<f64>().ok_or_else(busy)?, |x| x + 1.0),
                DType::Bool => {
                    return Err(Error::new(ErrorKind::OpError, "OP-add", "relax.add: bool tensors have no arithmetic", span))
                }
            }
        };
    }
    ints!(I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16, U32 => u32, U64 => u64);
    Ok(())
}

impl Run<'_> {
    /// SEM-9.2.2: calls the packed function `name` on `args`.
    pub(super) fn call_packed(&mut self, name: &str, args: &[Value], span: Span) -> Result<Value> {
        let arity = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(error(format!("`{name}` takes {n} arguments, {} given", args.len()), span))
            }
        };
        match name {
            "oracle.identity" => {
                arity(1)?;
                Ok(args[0].clone())
            }
            "oracle.copy" | "vm.builtin.copy" => {
                arity(1)?;
                let t = tensor(&args[0], "the argument", span)?;
                let copy = t.deep_copy(&self.memory).map_err(|e| over_budget(e, span))?;
                Ok(Value::tensor(copy))
            }
            "oracle.add_one_inplace" => {
                arity(1)?;
                add_one_inplace(tensor(&args[0], "the argument", span)?, span)?;
                Ok(args[0].clone())
            }
            "oracle.copy_into" => {
                arity(2)?;
                let (src, dst) = (tensor(&args[0], "the source", span)?, tensor(&args[1], "the destination", span)?);
                if src.shape() != dst.shape() || src.dtype() != dst.dtype() {
                    return Err(error("`oracle.copy_into`: source and destination differ in shape or dtype", span));
                }
                if !Rc::ptr_eq(src, dst) {
                    let (from, mut to) = (src.data(), dst.data_mut());
                    match (&from, &mut to) {
                        (Some(from), Some(to)) => with_num!(src.dtype(), T => {
                            let n = src.numel();
                            to.as_mut_slice::<T>(n).copy_from_slice(from.as_slice::<T>(n));
                        }),
                        _ => return Err(error("`oracle.copy_into`: a tensor is being used", span)),
                    }
                }
                Ok(Value::unit())
            }
            // The VM's storage allocation: (size, device index, dtype[, scope]) -> a storage.
            "vm.builtin.alloc_storage" => {
                let ok = matches!(args.len(), 3 | 4)
                    && matches!(args[1], Value::Prim(crate::value::Prim::Int(..)))
                    && matches!(args[2], Value::DataType(_))
                    && matches!(args.get(3), None | Some(Value::Str(_)));
                if !ok {
                    return Err(error(format!("`{name}` expects (size, device index, dtype[, scope])"), span));
                }
                self.new_storage(spec_model::ops::Op::CallPacked, args.first(), span)
            }
            "oracle.print" => {
                let line = args.iter().map(|a| print_value(self.exe, a)).collect::<Vec<_>>().join(" ");
                self.printed.push(line);
                Ok(Value::unit())
            }
            _ => match self.exe.tir_symbols.get(name) {
                Some(&index) => {
                    let tensors = args
                        .iter()
                        .map(|a| tensor(a, "each argument of a PrimFunc", span).cloned())
                        .collect::<Result<Vec<_>>>()?;
                    self.exe.tir[index].run(&tensors, &[], &mut self.fuel, span, &self.memory)?;
                    Ok(Value::unit())
                }
                None => {
                    Err(Error::new(ErrorKind::UnknownExternFunc, "SEM-8", format!("no packed function `{name}`"), span))
                }
            },
        }
    }
}
